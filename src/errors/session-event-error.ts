import type { ErrorCode } from './codes.js'
import type { ValidationIssue } from './issue.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link SessionEventError}. */
export type SessionEventErrorCode =
  | typeof ErrorCode.NOT_JSON
  | typeof ErrorCode.INVALID_ENVELOPE
  | typeof ErrorCode.UNKNOWN_EVENT_TYPE
  | typeof ErrorCode.RESERVED_EVENT_TYPE
  | typeof ErrorCode.INVALID_PAYLOAD

/** The fields a {@link SessionEventError} may carry besides its location. */
export interface SessionEventErrorFields {
  /** The JS access path of the offending value (`data.message.content[0].text`). */
  readonly path?: string | undefined
  /** Why the value is rejected. */
  readonly reason?: string | undefined
  /** The envelope or option field concerned (`seq`, `options.ignorable`). */
  readonly field?: string | undefined
  /** The value that was expected. */
  readonly expected?: unknown | undefined
  /** Every schema issue, paths relative to the event root. */
  readonly issues?: readonly ValidationIssue[] | undefined
}

/** A session event is malformed: not JSON, a bad envelope, an unknown or reserved type, or a payload that fails its schema. */
export class SessionEventError extends SessionError<SessionEventErrorCode> {
  static override readonly brand: string = 'SessionEventError'
  /** The JS access path of the offending value (`data.message.content[0].text`). */
  readonly path: string | undefined
  /** Why the value is rejected. */
  readonly reason: string | undefined
  /** The envelope or option field concerned (`seq`, `options.ignorable`). */
  readonly field: string | undefined
  /** The value that was expected. */
  readonly expected: unknown | undefined
  /** Every schema issue, paths relative to the event root. */
  readonly issues: readonly ValidationIssue[] | undefined

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<SessionEventErrorCode> & SessionEventErrorFields) {
    super(options)
    this.path = options.path
    this.reason = options.reason
    this.field = options.field
    this.expected = options.expected
    this.issues = options.issues === undefined ? undefined : Object.freeze([...options.issues])
  }
}
