/**
 * Chat Completions `finish_reason` → `finish` chunk.
 *
 * @module
 */
import type { FinishChunk } from '../../session/stream-chunk.js'
import { modelFailure } from '../failure-defaults.js'

/**
 * Maps a provider finish reason: `stop` → `stop`; `tool_calls`, `function_call` → `tool-calls`;
 * `length` → `max-tokens`; `content_filter` → error `CONTENT_FILTER`;
 * `insufficient_system_resource` → error `SERVER` (retryable); anything else → error
 * `FINISH_<REASON>` (upper-cased, `-` → `_`). `providerFinishReason` is always the raw value.
 *
 * @internal
 */
export function mapFinishReason(reason: string): FinishChunk {
  const base = { type: 'finish', providerFinishReason: reason } as const
  switch (reason) {
    case 'stop':
      return { ...base, reason: 'stop' }
    case 'tool_calls':
    case 'function_call':
      return { ...base, reason: 'tool-calls' }
    case 'length':
      return { ...base, reason: 'max-tokens' }
    case 'content_filter':
      return {
        ...base,
        reason: 'error',
        failure: modelFailure('CONTENT_FILTER', 'the provider content filter stopped the output', 'streaming'),
      }
    case 'insufficient_system_resource':
      return {
        ...base,
        reason: 'error',
        failure: modelFailure('SERVER', 'the provider stopped the output: insufficient system resource', 'streaming'),
      }
    default: {
      const code = `FINISH_${reason.toUpperCase().replaceAll('-', '_')}`
      return {
        ...base,
        reason: 'error',
        failure: modelFailure(code, `the provider finished with an unknown reason "${reason}"`, 'streaming'),
      }
    }
  }
}
