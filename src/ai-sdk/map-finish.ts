/**
 * The AI SDK `finish` part's reason and usage → Yoke's `finish` and `usage` chunks.
 *
 * @module
 */
import { modelFailure } from '../model/failure-defaults.js'
import type { JsonValue } from '../session/json-value.js'
import { isJsonValue } from '../session/snapshot/snapshot-json.js'
import type { FinishChunk, TokenUsage } from '../session/stream-chunk.js'

type Fields = Readonly<Record<string, unknown>>

function record(value: unknown): Fields | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/**
 * Maps a finish reason: v2 gives a string, v3 and v4 `{ unified, raw }`. `stop` and `other` →
 * `stop` (the assembler turns a message with tool calls into `tool-calls` anyway); `tool-calls` →
 * `tool-calls`; `length` → `max-tokens`; `content-filter` → error `CONTENT_FILTER`; `error` →
 * error `FINISH_ERROR`; an unknown value → error `FINISH_<VALUE>`. `providerFinishReason` is the raw
 * reason when the provider gave one, else the unified one.
 *
 * @param finishReason - the part's `finishReason`
 * @returns the finish chunk
 * @internal
 */
export function mapFinishReason(finishReason: unknown): FinishChunk {
  const fields = record(finishReason)
  const unified = typeof finishReason === 'string' ? finishReason : String(fields?.['unified'] ?? 'unknown')
  const raw = typeof fields?.['raw'] === 'string' ? fields['raw'] : undefined
  const base = { type: 'finish', providerFinishReason: raw ?? unified } as const
  switch (unified) {
    case 'stop':
    case 'other':
    case 'unknown':
      return { ...base, reason: 'stop' }
    case 'tool-calls':
      return { ...base, reason: 'tool-calls' }
    case 'length':
      return { ...base, reason: 'max-tokens' }
    case 'content-filter':
      return {
        ...base,
        reason: 'error',
        failure: modelFailure('CONTENT_FILTER', 'the provider content filter stopped the output', 'streaming'),
      }
    default: {
      const code = `FINISH_${unified.toUpperCase().replaceAll('-', '_')}`
      return {
        ...base,
        reason: 'error',
        failure: modelFailure(code, `the provider finished with reason "${unified}"`, 'streaming'),
      }
    }
  }
}

/** The usage object as JSON, `undefined` counts left out (a logged chunk must be lossless JSON). */
function usageJson(usage: Fields): JsonValue | undefined {
  try {
    const copy: unknown = JSON.parse(JSON.stringify(usage))
    return isJsonValue(copy) ? (copy as JsonValue) : undefined
  } catch {
    return undefined
  }
}

/**
 * Maps a usage object of any version. v3/v4: `inputTokens.noCache` (else `total − cacheRead −
 * cacheWrite`), `cacheRead`, `cacheWrite`, `outputTokens.total` (else `text + reasoning`),
 * `outputTokens.reasoning`. v2: `inputTokens − cachedInputTokens`, `cachedInputTokens`,
 * `outputTokens`, `reasoningTokens`. The whole AI SDK usage object (the provider's own `raw`
 * inside it for v3/v4) is kept verbatim in `raw`, so every part the provider reported survives.
 *
 * @param value - the part's `usage`
 * @returns the token usage, or `undefined` when the part has none
 * @internal
 */
export function mapUsage(value: unknown): TokenUsage | undefined {
  const usage = record(value)
  if (usage === undefined) return undefined
  const result: { -readonly [K in keyof TokenUsage]: TokenUsage[K] } = { inputTokens: 0, outputTokens: 0 }
  const input = record(usage['inputTokens'])
  const output = record(usage['outputTokens'])
  if (input !== undefined || output !== undefined) {
    const cacheRead = count(input?.['cacheRead'])
    const cacheWrite = count(input?.['cacheWrite'])
    const total = count(input?.['total'])
    result.inputTokens = count(input?.['noCache']) ?? Math.max(0, (total ?? 0) - (cacheRead ?? 0) - (cacheWrite ?? 0))
    const text = count(output?.['text'])
    const reasoning = count(output?.['reasoning'])
    result.outputTokens =
      count(output?.['total']) ?? (text !== undefined || reasoning !== undefined ? (text ?? 0) + (reasoning ?? 0) : 0)
    if (cacheRead !== undefined) result.cacheReadTokens = cacheRead
    if (cacheWrite !== undefined) result.cacheWriteTokens = cacheWrite
    if (reasoning !== undefined) result.reasoningTokens = reasoning
  } else {
    const cached = count(usage['cachedInputTokens'])
    result.inputTokens = Math.max(0, (count(usage['inputTokens']) ?? 0) - (cached ?? 0))
    result.outputTokens = count(usage['outputTokens']) ?? 0
    if (cached !== undefined) result.cacheReadTokens = cached
    const reasoning = count(usage['reasoningTokens'])
    if (reasoning !== undefined) result.reasoningTokens = reasoning
  }
  const raw = usageJson(usage)
  if (raw !== undefined) result.raw = raw
  return result
}
