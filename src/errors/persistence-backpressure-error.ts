import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link PersistenceBackpressureError}. */
export type PersistenceBackpressureErrorCode = typeof ErrorCode.PERSISTENCE_BACKPRESSURE

/** The fields a {@link PersistenceBackpressureError} may carry. */
export interface PersistenceBackpressureErrorFields {
  /** Events waiting to be written. */
  readonly pendingEvents?: number | undefined
  /** Their JSON size (UTF-16 code units). */
  readonly pendingBytes?: number | undefined
}

/** Unwritten events of a session reached the high-water mark while its last write failed; new events are refused until a write succeeds. */
export class PersistenceBackpressureError extends HarnessError {
  static override readonly brand: string = 'PersistenceBackpressureError'
  /** The stable code. */
  declare readonly code: PersistenceBackpressureErrorCode
  /** The session concerned. */
  readonly sessionId: string | undefined
  /** Events waiting to be written. */
  readonly pendingEvents: number | undefined
  /** Their JSON size (UTF-16 code units). */
  readonly pendingBytes: number | undefined

  /** @param options - the code, the session, what is wrong (named in the message), the fields and a cause */
  constructor(
    options: {
      code: PersistenceBackpressureErrorCode
      sessionId?: string | undefined
      detail: string
      cause?: unknown
    } & PersistenceBackpressureErrorFields,
  ) {
    super(
      options.code,
      options.sessionId === undefined ? options.detail : `session "${options.sessionId}": ${options.detail}`,
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.sessionId = options.sessionId
    this.pendingEvents = options.pendingEvents
    this.pendingBytes = options.pendingBytes
  }
}
