import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'
import type { LockHolder } from './lock-holder.js'

/** The codes of {@link LeaseLostError}. */
export type LeaseLostErrorCode = typeof ErrorCode.LEASE_LOST

/** The fields a {@link LeaseLostError} may carry. */
export interface LeaseLostErrorFields {
  /** The lease epoch that was lost. */
  readonly epoch?: number | undefined
  /** Who holds the lease now (the instance that took it over), when known. */
  readonly holder?: LockHolder | undefined
}

/** The lease to write a session is gone (taken over, released or expired); nothing was written. */
export class LeaseLostError extends HarnessError {
  static override readonly brand: string = 'LeaseLostError'
  /** The stable code. */
  declare readonly code: LeaseLostErrorCode
  /** The session concerned. */
  readonly sessionId: string | undefined
  /** The lease epoch that was lost. */
  readonly epoch: number | undefined
  /** Who holds the lease now (the instance that took it over), when known. */
  readonly holder: LockHolder | undefined

  /** @param options - the code, the session, what is wrong (named in the message), the fields and a cause */
  constructor(
    options: {
      code: LeaseLostErrorCode
      sessionId?: string | undefined
      detail: string
      cause?: unknown
    } & LeaseLostErrorFields,
  ) {
    super(
      options.code,
      options.sessionId === undefined ? options.detail : `session "${options.sessionId}": ${options.detail}`,
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.sessionId = options.sessionId
    this.epoch = options.epoch
    this.holder = options.holder
  }
}
