import type { ErrorCode } from './codes.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link SessionStateError}. */
export type SessionStateErrorCode = typeof ErrorCode.SESSION_DISPOSED | typeof ErrorCode.REENTRANT_APPEND

/** The session cannot take the append now: it was disposed, or the append is reentrant. */
export class SessionStateError extends SessionError<SessionStateErrorCode> {
  static override readonly brand: string = 'SessionStateError'

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<SessionStateErrorCode>) {
    super(options)
  }
}
