import type { LlmFailure } from '../session/llm-failure.js'
import { causeOf } from './cause-of.js'
import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** Options of {@link LlmError} besides the failure. */
export interface LlmErrorOptions {
  /** How many model calls were made before the failure stood (set by `withRetry`). */
  readonly attempts?: number
  /** The underlying error, if any. */
  readonly cause?: unknown
}

/**
 * A model call failed. `code` is `failure.code` (e.g. `'RATE_LIMIT'`,
 * `'HTTP_404'`, `'FINISH_OTHER'`) and `message` is `failure.message`; the failure itself is kept,
 * frozen, on {@link LlmError.failure}. Thrown by `prepareCall`, `withRetry` and adapters that
 * prefer throwing to yielding a failure (the registry normalizes it to a `finish` chunk).
 */
export class LlmError extends HarnessError {
  static override readonly brand: string = 'LlmError'
  /** The failure, frozen. */
  readonly failure: LlmFailure
  /** How many model calls were made, when known (`withRetry`). */
  readonly attempts: number | undefined

  /**
   * @param failure - the failure as data; copied and frozen
   * @param options - the attempt count and a cause
   */
  constructor(failure: LlmFailure, options: LlmErrorOptions = {}) {
    // Model failure codes are open-ended (`HTTP_<status>`, `FINISH_<REASON>`): the cast widens the
    // union of named codes to whatever the failure carries.
    super(failure.code as ErrorCode, failure.message, causeOf(options))
    this.failure = Object.freeze({ ...failure })
    this.attempts = options.attempts
  }
}
