import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link SessionFormatUnsupportedError}. */
export type SessionFormatUnsupportedErrorCode =
  | typeof ErrorCode.FORMAT_TOO_NEW
  | typeof ErrorCode.FORMAT_TOO_OLD
  | typeof ErrorCode.UNKNOWN_EVENT_TYPE
  | typeof ErrorCode.SCHEMA_TOO_NEW

/** The fields a {@link SessionFormatUnsupportedError} may carry. */
export interface SessionFormatUnsupportedErrorFields {
  /** The version found in storage. */
  readonly storedVersion?: number | undefined
  /** The version this library reads. */
  readonly supportedVersion?: number | undefined
  /** Whether the stored format is newer or older. */
  readonly direction?: 'newer' | 'older' | undefined
  /** `UNKNOWN_EVENT_TYPE`: the unknown type. */
  readonly eventType?: string | undefined
  /** `UNKNOWN_EVENT_TYPE`: its seq. */
  readonly seq?: number | undefined
  /** Where the log is. */
  readonly location?: string | undefined
}

/** A stored log uses a format this version cannot read: too new, too old, or an unknown required event type. */
export class SessionFormatUnsupportedError extends HarnessError {
  static override readonly brand: string = 'SessionFormatUnsupportedError'
  /** The stable code. */
  declare readonly code: SessionFormatUnsupportedErrorCode
  /** The session concerned. */
  readonly sessionId: string | undefined
  /** The version found in storage. */
  readonly storedVersion: number | undefined
  /** The version this library reads. */
  readonly supportedVersion: number | undefined
  /** Whether the stored format is newer or older. */
  readonly direction: 'newer' | 'older' | undefined
  /** `UNKNOWN_EVENT_TYPE`: the unknown type. */
  readonly eventType: string | undefined
  /** `UNKNOWN_EVENT_TYPE`: its seq. */
  readonly seq: number | undefined
  /** Where the log is. */
  readonly location: string | undefined

  /** @param options - the code, the session, what is wrong (named in the message), the fields and a cause */
  constructor(
    options: {
      code: SessionFormatUnsupportedErrorCode
      sessionId?: string | undefined
      detail: string
      cause?: unknown
    } & SessionFormatUnsupportedErrorFields,
  ) {
    super(
      options.code,
      options.sessionId === undefined ? options.detail : `session "${options.sessionId}": ${options.detail}`,
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.sessionId = options.sessionId
    this.storedVersion = options.storedVersion
    this.supportedVersion = options.supportedVersion
    this.direction = options.direction
    this.eventType = options.eventType
    this.seq = options.seq
    this.location = options.location
  }
}
