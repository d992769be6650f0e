import type { Message } from '../session/message.js'
import type { ToolSchema } from '../session/request-header.js'
import type { ResponseFormat, ToolChoice } from '../session/response-format.js'

/** Why a model call is made. */
export type ModelPurpose = 'conversation' | 'compaction' | 'title'

/** Facts about a request that are not sent as model input. */
export interface ModelRequestMetadata {
  /** The session the call belongs to; adapters may send it as a header. */
  readonly sessionId?: string
  /** Why the call is made. */
  readonly purpose: ModelPurpose
}

/**
 * One model call: everything an adapter needs, as plain data. The registry
 * validates it before the adapter sees it and deep-freezes it (the signal excepted).
 */
export interface ModelRequest {
  /** The provider route id; non-empty. */
  readonly provider: string
  /** The adapter-owned model id; non-empty. */
  readonly model: string
  /** The system prompt. */
  readonly system?: string
  /** The conversation: user and assistant messages (tool results have the user role). */
  readonly messages: readonly Message[]
  /** The tools offered, names unique. */
  readonly tools?: readonly ToolSchema[]
  /**
   * Which tools the model may call; absent is the same as `'auto'`. `'none'` keeps the tool
   * schemas in the request (so the prompt is unchanged) but forbids calls.
   */
  readonly toolChoice?: ToolChoice
  /** The JSON shape the final answer must have; absent means free text. */
  readonly responseFormat?: ResponseFormat
  /** The output ceiling: a positive safe integer. */
  readonly maxTokens?: number
  /** The sampling temperature: finite, in [0, 2]. */
  readonly temperature?: number
  /** Stop sequences: non-empty strings. */
  readonly stop?: readonly string[]
  /** The reasoning effort, e.g. `'high'`; non-empty. */
  readonly reasoningEffort?: string
  /** Facts that are not model input. */
  readonly metadata: ModelRequestMetadata
  /** Aborts the call; adapters stop I/O promptly. */
  readonly signal: AbortSignal
}
