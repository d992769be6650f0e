import type { JsonObject } from '../session/json-value.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'
import type { ToolContentBlock } from './tool-definition.js'
import { thrownMessage, toolErrorResult } from './tool-error-result.js'
import type { ToolResult, ToolResultCode, ToolResultFailure } from './tool-result.js'
import { isPlainObject } from '../kernel/is-plain-object.js'

/** Options of {@link normalizeToolReturn}. */
export interface NormalizeToolReturnOptions {
  /**
   * Also accept an `error: { code, message }` key (on an `isError: true` result), as a
   * middleware's output (the normalized {@link ToolResult} form) may carry. A tool body's return
   * may not.
   *
   * @default false
   */
  readonly allowError?: boolean
}

/** A checked part, or why it is invalid (the message names the field). */
type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string }

type AdditionalContext = string | readonly ToolContentBlock[]

const RESULT_KEYS: ReadonlySet<PropertyKey> = new Set([
  'content',
  'isError',
  'meta',
  'concludesTurn',
  'additionalContexts',
])
const RESULT_CODES: ReadonlySet<unknown> = new Set<ToolResultCode>([
  'UNKNOWN_TOOL',
  'INVALID_ARGUMENTS',
  'TOOL_DENIED',
  'TOOL_FAILED',
  'TOOL_TIMEOUT',
  'TOOL_ABORTED_BEFORE_DISPATCH',
  'TOOL_ABORTED',
  'TOOL_SCHEDULER_FAILED',
])

const ok = <T>(value: T): Checked<T> => ({ ok: true, value })
const invalid = (problem: string): { readonly ok: false; readonly problem: string } => ({ ok: false, problem })

/** The first own key of `value` not in `allowed`, if any. */
function extraKey(value: object, allowed: ReadonlySet<PropertyKey>): string | undefined {
  for (const key of Reflect.ownKeys(value)) if (!allowed.has(key)) return String(key)
  return undefined
}

const ERROR_KEYS: ReadonlySet<PropertyKey> = new Set(['code', 'message'])
const RESULT_KEYS_WITH_ERROR: ReadonlySet<PropertyKey> = new Set([...RESULT_KEYS, 'error'])
const TEXT_KEYS: ReadonlySet<PropertyKey> = new Set(['type', 'text'])
const IMAGE_KEYS: ReadonlySet<PropertyKey> = new Set(['type', 'mediaType', 'uri'])

function checkBlock(block: unknown, path: string): Checked<ToolContentBlock> {
  if (!isPlainObject(block)) return invalid(`${path} is not a content block`)
  const type = block['type']
  if (type === 'text') {
    const extra = extraKey(block, TEXT_KEYS)
    if (extra !== undefined) return invalid(`${path}.${extra} is not a text block field`)
    const text = block['text']
    if (typeof text !== 'string') return invalid(`${path}.text is not a string`)
    return ok(Object.freeze({ type, text }))
  }
  if (type === 'image') {
    const extra = extraKey(block, IMAGE_KEYS)
    if (extra !== undefined) return invalid(`${path}.${extra} is not an image block field`)
    const mediaType = block['mediaType']
    if (typeof mediaType !== 'string' || !mediaType.startsWith('image/'))
      return invalid(`${path}.mediaType is not an image media type (image/…)`)
    const uri = block['uri']
    if (typeof uri !== 'string' || uri.length === 0) return invalid(`${path}.uri is not a non-empty string`)
    return ok(Object.freeze({ type, mediaType, uri }))
  }
  if (typeof type === 'string') return invalid(`${path} is a "${type}" block; only text and image blocks are allowed`)
  return invalid(`${path} is not a content block`)
}

function checkBlocks(blocks: readonly unknown[], path: string): Checked<readonly ToolContentBlock[]> {
  const copies: ToolContentBlock[] = []
  for (let index = 0; index < blocks.length; index++) {
    const checked = checkBlock(blocks[index], `${path}[${index}]`)
    if (!checked.ok) return checked
    copies.push(checked.value)
  }
  return ok(Object.freeze(copies))
}

function checkContent(content: unknown): Checked<readonly ToolContentBlock[]> {
  if (typeof content === 'string') return ok(Object.freeze([Object.freeze({ type: 'text', text: content } as const)]))
  if (Array.isArray(content)) return checkBlocks(content, 'content')
  return invalid('content is not a string or an array of text and image blocks')
}

function checkContexts(contexts: unknown): Checked<readonly AdditionalContext[]> {
  if (!Array.isArray(contexts)) return invalid('additionalContexts is not an array')
  const copies: AdditionalContext[] = []
  for (let index = 0; index < contexts.length; index++) {
    const context: unknown = contexts[index]
    const path = `additionalContexts[${index}]`
    if (typeof context === 'string') copies.push(context)
    else if (Array.isArray(context)) {
      const checked = checkBlocks(context, path)
      if (!checked.ok) return checked
      copies.push(checked.value)
    } else return invalid(`${path} is not a string or an array of text and image blocks`)
  }
  return ok(Object.freeze(copies))
}

function checkError(error: unknown): Checked<ToolResultFailure> {
  if (!isPlainObject(error)) return invalid('error is not an object { code, message }')
  const extra = extraKey(error, ERROR_KEYS)
  if (extra !== undefined) return invalid(`error.${extra} is not an error field`)
  const code = error['code']
  if (!RESULT_CODES.has(code)) return invalid('error.code is not a tool result code')
  const message = error['message']
  if (typeof message !== 'string') return invalid('error.message is not a string')
  return ok(Object.freeze({ code: code as ToolResultCode, message }))
}

function checkBoolean(value: unknown, field: string): Checked<boolean> {
  if (value === undefined) return ok(false)
  return typeof value === 'boolean' ? ok(value) : invalid(`${field} is not a boolean`)
}

function checkObject(value: Record<PropertyKey, unknown>, allowError: boolean): Checked<ToolResult> {
  const extra = extraKey(value, allowError ? RESULT_KEYS_WITH_ERROR : RESULT_KEYS)
  if (extra !== undefined) return invalid(`${extra} is not a result field`)
  const content = checkContent(value['content'])
  if (!content.ok) return content
  const isError = checkBoolean(value['isError'], 'isError')
  if (!isError.ok) return isError
  const concludesTurn = checkBoolean(value['concludesTurn'], 'concludesTurn')
  if (!concludesTurn.ok) return concludesTurn
  let meta: JsonObject | undefined
  const rawMeta = value['meta']
  if (rawMeta !== undefined) {
    if (!isPlainObject(rawMeta)) return invalid('meta is not a plain JSON object')
    try {
      meta = snapshotJson(rawMeta, 'meta') as JsonObject
    } catch {
      return invalid('meta is not a plain JSON object')
    }
  }
  let contexts: readonly AdditionalContext[] = Object.freeze([])
  const rawContexts = value['additionalContexts']
  if (rawContexts !== undefined) {
    const checked = checkContexts(rawContexts)
    if (!checked.ok) return checked
    contexts = checked.value
  }
  let error: ToolResultFailure | undefined
  const rawError = value['error']
  if (rawError !== undefined) {
    const checked = checkError(rawError)
    if (!checked.ok) return checked
    if (!isError.value) return invalid('error is set on a result whose isError is not true')
    error = checked.value
  }
  return ok(
    Object.freeze({
      content: content.value,
      isError: isError.value,
      ...(error === undefined ? {} : { error }),
      ...(meta === undefined ? {} : { meta }),
      concludesTurn: concludesTurn.value,
      additionalContexts: contexts,
    }),
  )
}

function check(value: unknown, allowError: boolean): Checked<ToolResult> {
  if (value === undefined) return ok(success(Object.freeze([])))
  if (typeof value === 'string' || Array.isArray(value)) {
    const content = checkContent(value)
    return content.ok ? ok(success(content.value)) : content
  }
  if (isPlainObject(value)) return checkObject(value, allowError)
  const kind = value === null ? 'null' : typeof value === 'object' ? 'a non-plain object' : `a ${typeof value}`
  return invalid(`${kind} is not a tool result (expected undefined, a string, content blocks or { content, … })`)
}

function success(content: readonly ToolContentBlock[]): ToolResult {
  return Object.freeze({ content, isError: false, concludesTurn: false, additionalContexts: Object.freeze([]) })
}

/**
 * Normalizes what a tool body (or a middleware) returned into a frozen {@link ToolResult}:
 * `undefined` → no content; a string → one text block; text and image blocks as
 * they are; the object form with `content`, `isError?`, `meta?` (a lossless-JSON plain object),
 * `concludesTurn?` and `additionalContexts?` (strings or block arrays), and no other key. Blocks
 * and `meta` are copied. A value that breaks a rule becomes a `TOOL_FAILED` result whose message
 * names the field (`"read" returned an invalid result: meta is not a plain JSON object`). Never
 * throws, even for a hostile value.
 *
 * @param value - the returned value
 * @param toolName - the tool's name, for the message
 * @param options - `allowError` to accept a middleware's `error` key
 * @returns the frozen result
 */
export function normalizeToolReturn(
  value: unknown,
  toolName: string,
  options?: NormalizeToolReturnOptions,
): ToolResult {
  let checked: Checked<ToolResult>
  try {
    checked = check(value, options?.allowError === true)
  } catch (error) {
    checked = invalid(`reading it threw: ${thrownMessage(error)}`)
  }
  return checked.ok
    ? checked.value
    : toolErrorResult('TOOL_FAILED', `"${toolName}" returned an invalid result: ${checked.problem}`)
}
