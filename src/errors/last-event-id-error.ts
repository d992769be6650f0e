import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** Why a `Last-Event-ID` was refused. */
export type LastEventIdProblem = 'not-a-seq' | 'beyond-log'

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}

/**
 * A resume point (`Last-Event-ID`) that a session stream cannot start after: not a seq (a
 * non-negative integer in decimal), or a seq beyond the session's last event. Nothing is read or
 * appended. The SSE helpers answer it with a 400 response.
 *
 * @example
 * ```ts
 * try { streamSession(agent, { lastEventId: 'abc' }) } catch (error) {
 *   if (LastEventIdError.is(error)) console.log(error.problem, error.value)
 * }
 * ```
 */
export class LastEventIdError extends HarnessError {
  static override readonly brand: string = 'LastEventIdError'
  /** The refused value, as given. */
  readonly value: unknown
  /** `'not-a-seq'` or `'beyond-log'`. */
  readonly problem: LastEventIdProblem
  /** The session whose log was asked. */
  readonly sessionId: string
  /** The seq of the session's last event (`-1` for an empty log). */
  readonly lastSeq: number

  /** @param options - the value, the problem, the session and its last seq */
  constructor(options: { value: unknown; problem: LastEventIdProblem; sessionId: string; lastSeq: number }) {
    const where = `session ${JSON.stringify(options.sessionId)}`
    super(
      ErrorCode.INVALID_LAST_EVENT_ID,
      options.problem === 'not-a-seq'
        ? `Last-Event-ID ${describe(options.value)} is not a seq (a non-negative integer) of ${where}`
        : `Last-Event-ID ${describe(options.value)} is beyond the log of ${where} (last seq ${options.lastSeq})`,
    )
    this.value = options.value
    this.problem = options.problem
    this.sessionId = options.sessionId
    this.lastSeq = options.lastSeq
  }
}
