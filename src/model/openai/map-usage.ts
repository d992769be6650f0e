/**
 * Chat Completions `usage` → {@link TokenUsage}.
 *
 * @module
 */
import type { JsonValue } from '../../session/json-value.js'
import { isJsonValue } from '../../session/snapshot/snapshot-json.js'
import type { TokenUsage } from '../../session/stream-chunk.js'

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined
}

/**
 * Maps a provider usage object: `hits = prompt_tokens_details.cached_tokens ??
 * prompt_cache_hit_tokens`; `inputTokens = max(0, prompt_tokens − (hits ?? 0))`;
 * `cacheReadTokens = hits` when reported; `outputTokens = completion_tokens`; `reasoningTokens =
 * completion_tokens_details.reasoning_tokens` when reported; `raw` = the object verbatim. Counts
 * that are not non-negative safe integers count as not reported (0 for the required ones).
 *
 * @internal
 */
export function mapUsage(raw: Readonly<Record<string, unknown>>): TokenUsage {
  const hits = count(field(raw['prompt_tokens_details'], 'cached_tokens')) ?? count(raw['prompt_cache_hit_tokens'])
  const prompt = count(raw['prompt_tokens']) ?? 0
  const usage: { -readonly [K in keyof TokenUsage]: TokenUsage[K] } = {
    inputTokens: Math.max(0, prompt - (hits ?? 0)),
    outputTokens: count(raw['completion_tokens']) ?? 0,
  }
  if (hits !== undefined) usage.cacheReadTokens = hits
  const reasoning = count(field(raw['completion_tokens_details'], 'reasoning_tokens'))
  if (reasoning !== undefined) usage.reasoningTokens = reasoning
  if (isJsonValue(raw)) usage.raw = raw as JsonValue
  return usage
}
