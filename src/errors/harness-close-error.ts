import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** One failure met while closing a harness. */
export interface CloseFailure {
  /** The effect label (or step) that failed. */
  readonly label: string
  /** What it threw. */
  readonly error: unknown
}

/** `close()` ran every step, but some failed. The harness is closed all the same. */
export class HarnessCloseError extends HarnessError {
  static override readonly brand: string = 'HarnessCloseError'
  /** Every failure, in teardown order. */
  readonly errors: readonly CloseFailure[]
  /** Ids of sessions whose events could not be flushed. */
  readonly unflushedSessions: readonly string[]

  /** @param options - the failures and the unflushed sessions */
  constructor(options: { errors: readonly CloseFailure[]; unflushedSessions: readonly string[] }) {
    const first = options.errors[0]
    const reason =
      first === undefined
        ? ''
        : `: ${first.label}: ${first.error instanceof Error ? first.error.message : String(first.error)}`
    super(ErrorCode.CLOSE_FAILED, `closing the harness failed in ${options.errors.length} place(s)${reason}`)
    this.errors = Object.freeze([...options.errors])
    this.unflushedSessions = Object.freeze([...options.unflushedSessions])
  }
}
