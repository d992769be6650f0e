import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A submitted message is larger than the limit, measured as UTF-8 JSON. Nothing was written. */
export class MessageTooLargeError extends HarnessError {
  static override readonly brand: string = 'MessageTooLargeError'
  /** The stable code. */
  declare readonly code: typeof ErrorCode.MESSAGE_TOO_LARGE
  /** The session it was submitted to. */
  readonly sessionId: string
  /** The message's size in bytes (its JSON, UTF-8). */
  readonly bytes: number
  /** The limit in bytes. */
  readonly limit: number

  /** @param options - the session, the size and the limit */
  constructor(options: { sessionId: string; bytes: number; limit: number }) {
    super(
      ErrorCode.MESSAGE_TOO_LARGE,
      `the message for session "${options.sessionId}" is ${options.bytes} bytes of JSON, over the limit of ${options.limit}; nothing was submitted`,
    )
    this.sessionId = options.sessionId
    this.bytes = options.bytes
    this.limit = options.limit
  }
}
