/**
 * The chunks of the AI SDK UI message stream (protocol v1) that Yoke sends, typed after the AI SDK 6
 * `UIMessageChunk` shapes, so that a route can emit them without loading the AI SDK.
 *
 * @module
 */

/** How an assistant message finished, as the AI SDK names it. */
export type UIFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other'

/** Opens the assistant message; `messageId` is the id the client gives it. */
export interface UIStartChunk {
  /** Always `'start'`. */
  readonly type: 'start'
  /** The assistant message's id. */
  readonly messageId?: string
}

/** Opens one model call (a step) of the assistant message. */
export interface UIStartStepChunk {
  /** Always `'start-step'`. */
  readonly type: 'start-step'
}

/** Closes the current step. */
export interface UIFinishStepChunk {
  /** Always `'finish-step'`. */
  readonly type: 'finish-step'
}

/** Opens, or closes, a text or reasoning part. */
export interface UIPartBoundaryChunk {
  /** Which boundary of which kind of part. */
  readonly type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'
  /** The part id, unique within the message. */
  readonly id: string
}

/** Appends text to an open text or reasoning part. */
export interface UIPartDeltaChunk {
  /** Which kind of part. */
  readonly type: 'text-delta' | 'reasoning-delta'
  /** The part id. */
  readonly id: string
  /** The appended text. */
  readonly delta: string
}

/** A tool call starts streaming its input. */
export interface UIToolInputStartChunk {
  /** Always `'tool-input-start'`. */
  readonly type: 'tool-input-start'
  /** The call id. */
  readonly toolCallId: string
  /** The tool name. */
  readonly toolName: string
  /** Set when the part is a `dynamic-tool` part rather than a `tool-<name>` one. */
  readonly dynamic?: boolean
}

/** More raw input text of a streaming tool call. */
export interface UIToolInputDeltaChunk {
  /** Always `'tool-input-delta'`. */
  readonly type: 'tool-input-delta'
  /** The call id. */
  readonly toolCallId: string
  /** The appended raw input text. */
  readonly inputTextDelta: string
}

/** A tool call's complete input. */
export interface UIToolInputAvailableChunk {
  /** Always `'tool-input-available'`. */
  readonly type: 'tool-input-available'
  /** The call id. */
  readonly toolCallId: string
  /** The tool name. */
  readonly toolName: string
  /** The parsed input. */
  readonly input: unknown
  /** Set when the part is a `dynamic-tool` part. */
  readonly dynamic?: boolean
}

/** A tool call whose input is unusable: not JSON, or cut off by a cancel. */
export interface UIToolInputErrorChunk {
  /** Always `'tool-input-error'`. */
  readonly type: 'tool-input-error'
  /** The call id. */
  readonly toolCallId: string
  /** The tool name. */
  readonly toolName: string
  /** The raw input text. */
  readonly input: unknown
  /** Why the input is unusable. */
  readonly errorText: string
  /** Set when the part is a `dynamic-tool` part. */
  readonly dynamic?: boolean
}

/** A tool call's output. */
export interface UIToolOutputAvailableChunk {
  /** Always `'tool-output-available'`. */
  readonly type: 'tool-output-available'
  /** The call id. */
  readonly toolCallId: string
  /** The output. */
  readonly output: unknown
  /** Set when the part is a `dynamic-tool` part. */
  readonly dynamic?: boolean
}

/** A tool call that failed. */
export interface UIToolOutputErrorChunk {
  /** Always `'tool-output-error'`. */
  readonly type: 'tool-output-error'
  /** The call id. */
  readonly toolCallId: string
  /** What went wrong. */
  readonly errorText: string
  /** Set when the part is a `dynamic-tool` part. */
  readonly dynamic?: boolean
}

/** The turn failed; the client shows `errorText`. */
export interface UIErrorChunk {
  /** Always `'error'`. */
  readonly type: 'error'
  /** The text to show. */
  readonly errorText: string
}

/** The turn was cancelled. */
export interface UIAbortChunk {
  /** Always `'abort'`. */
  readonly type: 'abort'
  /** Who cancelled: `'user'`, `'parent'`, `'disposed'`, `'timeout'` or `'hook'`. */
  readonly reason?: string
}

/** The assistant message is complete. */
export interface UIFinishChunk {
  /** Always `'finish'`. */
  readonly type: 'finish'
  /** How it finished. */
  readonly finishReason?: UIFinishReason
}

/**
 * One chunk of the UI message stream as Yoke sends it: the subset of the AI SDK 6 `UIMessageChunk`
 * union that a Yoke turn produces, field for field, so the AI SDK's own reader (`useChat`,
 * `readUIMessageStream`) accepts every one.
 */
export type UIMessageChunk =
  | UIStartChunk
  | UIStartStepChunk
  | UIFinishStepChunk
  | UIPartBoundaryChunk
  | UIPartDeltaChunk
  | UIToolInputStartChunk
  | UIToolInputDeltaChunk
  | UIToolInputAvailableChunk
  | UIToolInputErrorChunk
  | UIToolOutputAvailableChunk
  | UIToolOutputErrorChunk
  | UIErrorChunk
  | UIAbortChunk
  | UIFinishChunk
