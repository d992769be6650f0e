import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'
import type { LockHolder } from './lock-holder.js'

/** The codes of {@link SessionLockedError}. */
export type SessionLockedErrorCode = typeof ErrorCode.SESSION_LOCKED

/** The fields a {@link SessionLockedError} may carry. */
export interface SessionLockedErrorFields {
  /** Who holds it, when readable. */
  readonly holder?: LockHolder | undefined
  /** The lock file or row. */
  readonly location?: string | undefined
}

/** Another writer (process or adapter instance) holds the session lease. */
export class SessionLockedError extends HarnessError {
  static override readonly brand: string = 'SessionLockedError'
  /** The stable code. */
  declare readonly code: SessionLockedErrorCode
  /** The session concerned. */
  readonly sessionId: string | undefined
  /** Who holds it, when readable. */
  readonly holder: LockHolder | undefined
  /** The lock file or row. */
  readonly location: string | undefined

  /** @param options - the code, the session, what is wrong (named in the message), the fields and a cause */
  constructor(
    options: {
      code: SessionLockedErrorCode
      sessionId?: string | undefined
      detail: string
      cause?: unknown
    } & SessionLockedErrorFields,
  ) {
    super(
      options.code,
      options.sessionId === undefined ? options.detail : `session "${options.sessionId}": ${options.detail}`,
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.sessionId = options.sessionId
    this.holder = options.holder
    this.location = options.location
  }
}
