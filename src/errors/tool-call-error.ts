import { causeOf } from './cause-of.js'
import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The options of every {@link ToolCallError} subclass. */
export interface ToolCallErrorOptions {
  /** The tool's name. */
  readonly toolName: string
  /** The call id, when known. */
  readonly callId?: string | undefined
  /** The result message (the text after `Tool error (<CODE>): `). */
  readonly message: string
  /** The underlying error, if any. */
  readonly cause?: unknown
}

/**
 * Base of the errors a tool result stands for. Tool failures never throw into the
 * loop — they become results whose `error.name` is one of these classes' names; the classes exist
 * so hosts can route on them (e.g. a call signal aborted by its deadline has a
 * {@link ToolTimeoutError} as its reason).
 */
export class ToolCallError extends HarnessError {
  static override readonly brand: string = 'ToolCallError'
  /** The tool's name. */
  readonly toolName: string
  /** The call id, when known. */
  readonly callId: string | undefined

  /**
   * @param code - the result code
   * @param options - the tool, the call, the message and a cause
   */
  constructor(code: ErrorCode, options: ToolCallErrorOptions) {
    super(code, options.message, causeOf(options))
    this.toolName = options.toolName
    this.callId = options.callId
  }
}

/** `UNKNOWN_TOOL`: no visible tool has the name. */
export class UnknownToolError extends ToolCallError {
  static override readonly brand: string = 'UnknownToolError'
  /** @param options - the tool, the call and the message */
  constructor(options: ToolCallErrorOptions) {
    super(ErrorCode.UNKNOWN_TOOL, options)
  }
}

/** `INVALID_ARGUMENTS`: the arguments are not a JSON object or fail the input schema. */
export class ToolArgumentsError extends ToolCallError {
  static override readonly brand: string = 'ToolArgumentsError'
  /** @param options - the tool, the call and the message */
  constructor(options: ToolCallErrorOptions) {
    super(ErrorCode.INVALID_ARGUMENTS, options)
  }
}

/** `TOOL_DENIED`: a policy, guard or approval denied the call. */
export class ToolDeniedError extends ToolCallError {
  static override readonly brand: string = 'ToolDeniedError'
  /** @param options - the tool, the call and the message */
  constructor(options: ToolCallErrorOptions) {
    super(ErrorCode.TOOL_DENIED, options)
  }
}

/** `TOOL_FAILED`: the body threw, or returned an invalid or error result. */
export class ToolFailedError extends ToolCallError {
  static override readonly brand: string = 'ToolFailedError'
  /** @param options - the tool, the call and the message */
  constructor(options: ToolCallErrorOptions) {
    super(ErrorCode.TOOL_FAILED, options)
  }
}

/** `TOOL_TIMEOUT`: the call's deadline expired. */
export class ToolTimeoutError extends ToolCallError {
  static override readonly brand: string = 'ToolTimeoutError'
  /** @param options - the tool, the call and the message */
  constructor(options: ToolCallErrorOptions) {
    super(ErrorCode.TOOL_TIMEOUT, options)
  }
}

/** `TOOL_ABORTED_BEFORE_DISPATCH` or `TOOL_ABORTED`: the turn was cancelled before or during the call. */
export class ToolAbortedError extends ToolCallError {
  static override readonly brand: string = 'ToolAbortedError'
  /** @param options - the code, the tool, the call and the message */
  constructor(
    options: ToolCallErrorOptions & {
      readonly code: typeof ErrorCode.TOOL_ABORTED | typeof ErrorCode.TOOL_ABORTED_BEFORE_DISPATCH
    },
  ) {
    super(options.code, options)
  }
}

/** `TOOL_SCHEDULER_FAILED`: the scheduler itself failed, so the call was closed without running. */
export class ToolSchedulerError extends ToolCallError {
  static override readonly brand: string = 'ToolSchedulerError'
  /** @param options - the tool, the call and the message */
  constructor(options: ToolCallErrorOptions) {
    super(ErrorCode.TOOL_SCHEDULER_FAILED, options)
  }
}
