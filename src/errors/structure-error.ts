import type { ErrorCode } from './codes.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link StructureError}. */
export type StructureErrorCode =
  | typeof ErrorCode.TURN_OPEN
  | typeof ErrorCode.TURN_NUMBER
  | typeof ErrorCode.TURN_MISMATCH
  | typeof ErrorCode.NO_OPEN_TURN
  | typeof ErrorCode.STEP_OPEN
  | typeof ErrorCode.STEP_NUMBER
  | typeof ErrorCode.STEP_MISMATCH
  | typeof ErrorCode.NO_OPEN_STEP
  | typeof ErrorCode.UNANSWERED_TOOL_CALL
  | typeof ErrorCode.UNKNOWN_TOOL_CALL
  | typeof ErrorCode.DUPLICATE_TOOL_CALL
  | typeof ErrorCode.MESSAGE_ID_REUSED
  | typeof ErrorCode.HEADER_REASON

/** The fields a {@link StructureError} may carry besides its location. */
export interface StructureErrorFields {
  /** What the structure expected (`{ turn, step }` or a number). */
  readonly expected?: unknown | undefined
  /** What the event named. */
  readonly actual?: unknown | undefined
  /** For `UNANSWERED_TOOL_CALL`: the unanswered calls, in table order. */
  readonly callIds?: readonly string[] | undefined
  /** The tool call concerned. */
  readonly callId?: string | undefined
  /** For `MESSAGE_ID_REUSED`: the reused id. */
  readonly messageId?: string | undefined
}

/** An event breaks the turn/step nesting, numbering or tool-call pairing. */
export class StructureError extends SessionError<StructureErrorCode> {
  static override readonly brand: string = 'StructureError'
  /** What the structure expected (`{ turn, step }` or a number). */
  readonly expected: unknown | undefined
  /** What the event named. */
  readonly actual: unknown | undefined
  /** For `UNANSWERED_TOOL_CALL`: the unanswered calls, in table order. */
  readonly callIds: readonly string[] | undefined
  /** The tool call concerned. */
  readonly callId: string | undefined
  /** For `MESSAGE_ID_REUSED`: the reused id. */
  readonly messageId: string | undefined

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<StructureErrorCode> & StructureErrorFields) {
    super(options)
    this.expected = options.expected
    this.actual = options.actual
    this.callIds = options.callIds === undefined ? undefined : Object.freeze([...options.callIds])
    this.callId = options.callId
    this.messageId = options.messageId
  }
}
