import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { JsonArray, JsonObject } from '../session/json-value.js'
import type { ToolContentBlock } from './tool-definition.js'
import type { ToolResult } from './tool-result.js'

/** Options of {@link truncateToolResult} (the agent's `toolResultMaxBytes` and `toolResultSpill`). */
export interface TruncateToolResultOptions {
  /** The limit on the UTF-8 bytes of the result's text blocks; a positive safe integer. */
  readonly limitBytes: number
  /** `'meta'` keeps the untruncated content in `meta["yoke:truncation"].full` (log-only); `'none'` or absent keeps nothing. */
  readonly spill?: 'meta' | 'none' | undefined
}

/** The meta key truncation records itself under. */
export const TRUNCATION_META_KEY = 'yoke:truncation'

/** The UTF-8 length of a code point (a lone surrogate counts 3, as the U+FFFD it encodes to). */
function codePointBytes(codePoint: number): number {
  if (codePoint < 0x80) return 1
  if (codePoint < 0x800) return 2
  return codePoint < 0x10000 ? 3 : 4
}

/** The longest prefix of `text` of at most `budget` UTF-8 bytes that ends on a code-point boundary. */
function headOf(text: string, budget: number): string {
  let index = 0
  let bytes = 0
  while (index < text.length) {
    const codePoint = text.codePointAt(index)!
    const size = codePointBytes(codePoint)
    if (bytes + size > budget) break
    bytes += size
    index += codePoint > 0xffff ? 2 : 1
  }
  return text.slice(0, index)
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}

/** The longest suffix of `text` of at most `budget` UTF-8 bytes that starts on a code-point boundary. */
function tailOf(text: string, budget: number): string {
  let index = text.length
  let bytes = 0
  while (index > 0) {
    const unit = text.charCodeAt(index - 1)
    const pair = isLowSurrogate(unit) && index >= 2 && isHighSurrogate(text.charCodeAt(index - 2))
    const size = pair ? 4 : codePointBytes(unit)
    if (bytes + size > budget) break
    bytes += size
    index -= pair ? 2 : 1
  }
  return text.slice(index)
}

/** Throws for a call {@link truncateToolResult} cannot serve; a handful of `typeof` tests, once per result. */
function checkArguments(result: ToolResult, options: TruncateToolResultOptions): void {
  if (typeof result !== 'object' || result === null || !Array.isArray(result.content)) {
    throw new InvalidArgumentError({
      argument: 'result',
      reason: 'must be a tool result with a content array',
      value: result,
    })
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError({
      argument: 'options',
      reason: 'must be an options object { limitBytes, spill? }',
      value: options,
    })
  }
  for (const key of Object.keys(options)) {
    if (key !== 'limitBytes' && key !== 'spill') {
      throw new InvalidArgumentError({
        argument: 'options',
        reason: `unknown option "${key}" (allowed: limitBytes, spill)`,
        value: options,
      })
    }
  }
  const limitBytes = options.limitBytes
  if (!Number.isSafeInteger(limitBytes) || limitBytes <= 0) {
    throw new InvalidArgumentError({
      argument: 'limitBytes',
      reason: `must be a positive safe integer (got ${String(limitBytes)})`,
      value: limitBytes,
    })
  }
  // 'none' is the agent option's own word for "no spill" (agent-options toolResultSpill).
  const spill: unknown = options.spill
  if (spill !== undefined && spill !== 'meta' && spill !== 'none') {
    throw new InvalidArgumentError({ argument: 'spill', reason: "must be 'meta', 'none' or undefined", value: spill })
  }
}

/**
 * Applies the result size limit. When the UTF-8 bytes of all text blocks exceed
 * `limitBytes`, the text blocks are joined with `\n` into one text block placed first (other
 * blocks keep their order after it, uncounted and uncut) and cut to `head + marker + tail`, with
 * marker `\n[… tool output truncated: <original> bytes in total, limit <limit> bytes …]\n`; head
 * and tail split the remaining budget (head ⌊budget/2⌋) and are cut back to code-point boundaries,
 * so the text never exceeds the limit (unless the limit is smaller than the marker itself, when
 * the text is the marker alone). `meta["yoke:truncation"]` records `{ originalBytes, limitBytes }`,
 * plus `full` (the untruncated content) with `spill: 'meta'`; other meta keys are kept. Linear in
 * the result's size.
 *
 * @param result - the committed result (after post-execute)
 * @param options - the limit and the spill mode
 * @returns `result` itself when it is within the limit, else a new frozen result
 * @throws {@link InvalidArgumentError} `argument: 'result'` for a result without a `content`
 *   array; `argument: 'options'` for options that are not an object or carry a key other than
 *   `limitBytes` and `spill`; `argument: 'limitBytes'` for a limit that is not a positive safe
 *   integer; `argument: 'spill'` for a spill mode other than `'meta'` or `'none'`
 */
export function truncateToolResult(result: ToolResult, options: TruncateToolResultOptions): ToolResult {
  checkArguments(result, options)
  const limitBytes = options.limitBytes
  const texts: string[] = []
  const others: ToolContentBlock[] = []
  let originalBytes = 0
  for (const block of result.content) {
    if (block.type === 'text') {
      texts.push(block.text)
      originalBytes += Buffer.byteLength(block.text, 'utf8')
    } else others.push(block)
  }
  if (originalBytes <= limitBytes) return result
  const joined = texts.join('\n')
  const marker = `\n[… tool output truncated: ${originalBytes} bytes in total, limit ${limitBytes} bytes …]\n`
  const budget = Math.max(0, limitBytes - Buffer.byteLength(marker, 'utf8'))
  const headBudget = Math.floor(budget / 2)
  const text = headOf(joined, headBudget) + marker + tailOf(joined, budget - headBudget)
  const truncation: JsonObject = Object.freeze({
    originalBytes,
    limitBytes,
    ...(options.spill === 'meta' ? { full: result.content as unknown as JsonArray } : {}),
  })
  return Object.freeze({
    ...result,
    content: Object.freeze([Object.freeze({ type: 'text', text } as const), ...others]),
    meta: Object.freeze({ ...result.meta, [TRUNCATION_META_KEY]: truncation }),
  })
}
