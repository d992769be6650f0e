import type { ErrorCode } from './codes.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link SessionHeaderError}. */
export type SessionHeaderErrorCode = typeof ErrorCode.INVALID_HEADER

/** The fields a {@link SessionHeaderError} may carry besides its location. */
export interface SessionHeaderErrorFields {
  /** The header key concerned. */
  readonly field?: string | undefined
}

/** A session header is malformed. */
export class SessionHeaderError extends SessionError<SessionHeaderErrorCode> {
  static override readonly brand: string = 'SessionHeaderError'
  /** The header key concerned. */
  readonly field: string | undefined

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<SessionHeaderErrorCode> & SessionHeaderErrorFields) {
    super(options)
    this.field = options.field
  }
}
