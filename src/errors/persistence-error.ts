import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link PersistenceError}. */
export type PersistenceErrorCode =
  | typeof ErrorCode.SESSION_NOT_FOUND
  | typeof ErrorCode.SESSION_EXISTS
  | typeof ErrorCode.SESSION_LIVE
  | typeof ErrorCode.LIVE_TURN_OPEN
  | typeof ErrorCode.SESSION_RESERVED
  | typeof ErrorCode.INVALID_SESSION_ID
  | typeof ErrorCode.REPAIR_REQUIRED
  | typeof ErrorCode.WRITE_FAILED
  | typeof ErrorCode.WRITE_TIMEOUT
  | typeof ErrorCode.ROLLBACK_FAILED
  | typeof ErrorCode.CLOSE_FAILED
  | typeof ErrorCode.CLOSED

/** The fields a {@link PersistenceError} may carry. */
export interface PersistenceErrorFields {
  /** Why, when the code alone does not say. */
  readonly reason?: string | undefined
  /** `ROLLBACK_FAILED`: `[write, rollback]`; `CLOSE_FAILED`: one per failed session. */
  readonly errors?: readonly unknown[] | undefined
  /** `WRITE_TIMEOUT`: the storage call that timed out (`append`, `create`, `acquire`, `release`, `close`). */
  readonly operation?: string | undefined
  /** `WRITE_TIMEOUT`: the write timeout that elapsed, in milliseconds. */
  readonly timeoutMs?: number | undefined
}

/** A persistence operation failed: an unknown, taken, live or reserved session, a bad id, a failed or timed-out write, rollback or close, or a closed adapter. */
export class PersistenceError extends HarnessError {
  static override readonly brand: string = 'PersistenceError'
  /** The stable code. */
  declare readonly code: PersistenceErrorCode
  /** The session concerned. */
  readonly sessionId: string | undefined
  /** Why, when the code alone does not say. */
  readonly reason: string | undefined
  /** `ROLLBACK_FAILED`: `[write, rollback]`; `CLOSE_FAILED`: one per failed session. */
  readonly errors: readonly unknown[] | undefined
  /** `WRITE_TIMEOUT`: the storage call that timed out (`append`, `create`, `acquire`, `release`, `close`). */
  readonly operation: string | undefined
  /** `WRITE_TIMEOUT`: the write timeout that elapsed, in milliseconds. */
  readonly timeoutMs: number | undefined

  /** @param options - the code, the session, what is wrong (named in the message), the fields and a cause */
  constructor(
    options: {
      code: PersistenceErrorCode
      sessionId?: string | undefined
      detail: string
      cause?: unknown
    } & PersistenceErrorFields,
  ) {
    super(
      options.code,
      options.sessionId === undefined ? options.detail : `session "${options.sessionId}": ${options.detail}`,
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.sessionId = options.sessionId
    this.reason = options.reason
    this.errors = options.errors === undefined ? undefined : Object.freeze([...options.errors])
    this.operation = options.operation
    this.timeoutMs = options.timeoutMs
  }
}
