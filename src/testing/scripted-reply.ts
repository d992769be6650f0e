import type { JsonObject } from '../session/json-value.js'
import type { LlmFailure } from '../session/llm-failure.js'
import type { StreamChunk, TokenUsage } from '../session/stream-chunk.js'

/** One tool call of a {@link ScriptedReply}. */
export interface ScriptedToolCall {
  /** The call id; defaults to `call_<k>`, `k` counting tool calls across the whole script from 1. */
  readonly id?: string
  /** The tool name. */
  readonly name: string
  /** Raw JSON text, or an object to `JSON.stringify`; absent means `'{}'`. */
  readonly arguments?: string | JsonObject
}

/** A scripted failure: a code plus any other {@link LlmFailure} fields (the rest get defaults). */
export interface ScriptedFailure extends Partial<LlmFailure> {
  /** The failure code, e.g. `'RATE_LIMIT'`. */
  readonly code: string
}

/**
 * One scripted model reply, used by `scriptedModel` and, for the fields that
 * make sense on the wire, by `startMockOpenAIServer`.
 */
export interface ScriptedReply {
  /** The text block. */
  readonly text?: string
  /** The reasoning block, emitted before the text. */
  readonly reasoning?: string
  /** Tool-call blocks, emitted after the text. */
  readonly toolCalls?: readonly ScriptedToolCall[]
  /** The usage chunk. */
  readonly usage?: TokenUsage
  /** The finish reason; default `'tool-calls'` with tool calls, else `'stop'`. */
  readonly finish?: 'stop' | 'tool-calls' | 'max-tokens'
  /** Finish with this failure instead (message, retryable and phase get defaults). */
  readonly failure?: ScriptedFailure
  /** Wait this long before the first chunk. */
  readonly delayMs?: number
  /** Wait this long between chunks. */
  readonly chunkDelayMs?: number
  /** Split deltas into pieces of this many code points (default: one delta per block). */
  readonly chunkSize?: number
  /** Emit starts and deltas, then wait for the abort. */
  readonly hang?: boolean
  /** Emit exactly these chunks instead (protocol tests). */
  readonly chunks?: readonly StreamChunk[]
}
