import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/**
 * A submit with `busy: 'reject'` found the session busy: a worker is driving a turn of it, or
 * messages submitted earlier are still waiting. Nothing was written.
 */
export class SessionBusyError extends HarnessError {
  static override readonly brand: string = 'SessionBusyError'
  /** The stable code. */
  declare readonly code: typeof ErrorCode.SESSION_BUSY
  /** The busy session. */
  readonly sessionId: string

  /** @param options - the session */
  constructor(options: { sessionId: string }) {
    super(
      ErrorCode.SESSION_BUSY,
      `session "${options.sessionId}" is busy (a turn is running or earlier messages are pending); nothing was submitted`,
    )
    this.sessionId = options.sessionId
  }
}
