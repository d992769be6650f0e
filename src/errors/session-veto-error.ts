import type { ErrorCode } from './codes.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link SessionVetoError}. */
export type SessionVetoErrorCode = typeof ErrorCode.APPEND_VETOED | typeof ErrorCode.CREATE_VETOED

/** The fields a {@link SessionVetoError} may carry besides its location. */
export interface SessionVetoErrorFields {
  /** For `APPEND_VETOED`: the label of the guard that vetoed. */
  readonly guard?: string | undefined
}

/** A commit guard vetoed an append, or a `session/created` listener vetoed a session. */
export class SessionVetoError extends SessionError<SessionVetoErrorCode> {
  static override readonly brand: string = 'SessionVetoError'
  /** For `APPEND_VETOED`: the label of the guard that vetoed. */
  readonly guard: string | undefined

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<SessionVetoErrorCode> & SessionVetoErrorFields) {
    super(options)
    this.guard = options.guard
  }
}
