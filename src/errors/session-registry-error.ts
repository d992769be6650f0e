import type { ErrorCode } from './codes.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link SessionRegistryError}. */
export type SessionRegistryErrorCode =
  | typeof ErrorCode.INVALID_SESSION_ID
  | typeof ErrorCode.SESSION_EXISTS
  | typeof ErrorCode.SESSION_NOT_FOUND
  | typeof ErrorCode.FLUSH_FAILED
  | typeof ErrorCode.DISPOSE_FAILED

/** The fields a {@link SessionRegistryError} may carry besides its location. */
export interface SessionRegistryErrorFields {
  /** For `FLUSH_FAILED` and `DISPOSE_FAILED`: every listener failure, in registration order. */
  readonly errors?: readonly unknown[] | undefined
}

/** A session registry operation failed: a bad or taken id, an unknown session, or failed flush/dispose listeners. */
export class SessionRegistryError extends SessionError<SessionRegistryErrorCode> {
  static override readonly brand: string = 'SessionRegistryError'
  /** For `FLUSH_FAILED` and `DISPOSE_FAILED`: every listener failure, in registration order. */
  readonly errors: readonly unknown[] | undefined

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<SessionRegistryErrorCode> & SessionRegistryErrorFields) {
    super(options)
    this.errors = options.errors === undefined ? undefined : Object.freeze([...options.errors])
  }
}
