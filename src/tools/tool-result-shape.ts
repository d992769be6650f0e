/**
 * The normalized tool result and its codes: what middleware receives and the log records.
 *
 * @module
 */
import type { JsonObject } from '../session/json-value.js'
import type { UserMessage } from '../session/message.js'
import type { ToolContentBlock } from './tool-definition.js'

/** The runtime's result codes. */
export type ToolResultCode =
  | 'UNKNOWN_TOOL'
  | 'INVALID_ARGUMENTS'
  | 'TOOL_DENIED'
  | 'TOOL_FAILED'
  | 'TOOL_TIMEOUT'
  | 'TOOL_ABORTED_BEFORE_DISPATCH'
  | 'TOOL_ABORTED'
  | 'TOOL_SCHEDULER_FAILED'

/** Why a result is an error. */
export interface ToolResultFailure {
  /** The result code. */
  readonly code: ToolResultCode
  /** The message (the text after `Tool error (<CODE>): `). */
  readonly message: string
}

/**
 * The normalized result of one call, what `tools/execute` and
 * `tools/post-execute` middleware receive and return. Frozen when handed to a listener.
 */
export interface ToolResult {
  /** Text and image blocks. */
  readonly content: readonly ToolContentBlock[]
  /** Whether the call failed. */
  readonly isError: boolean
  /** Set by the runtime for its own failures (and `TOOL_FAILED` for a tool's `isError` result). */
  readonly error?: ToolResultFailure
  /** Tool-specific facts (lossless-JSON plain object). */
  readonly meta?: JsonObject
  /** Ends the turn after this step (ignored on an error result). */
  readonly concludesTurn: boolean
  /** Messages for the model's next step. */
  readonly additionalContexts: readonly (string | readonly ToolContentBlock[])[]
}

/** A step's tool outcome: `concluded` when a committed success concluded the turn. */
export type ToolStepOutcome = 'concluded' | 'owed'

/** The message an additional context becomes, for the agent's next-step inbox. */
export type ToolContextMessage = UserMessage
