import { ErrorCode } from './codes.js'
import { causeOf } from './cause-of.js'
import { HarnessError } from './harness-error.js'

/** A positional argument was not acceptable (bad label, key name, event name, listener, …). */
export class InvalidArgumentError extends HarnessError {
  static override readonly brand: string = 'InvalidArgumentError'
  /** Which argument was rejected, e.g. `'label'` or `'effect result'`. */
  readonly argument: string
  /** Why it was rejected. */
  readonly reason: string
  /** The rejected value, as passed. */
  readonly value: unknown

  /** @param options - the argument, the reason, the value and an optional cause */
  constructor(options: { argument: string; reason: string; value?: unknown; cause?: unknown }) {
    super(ErrorCode.INVALID_ARGUMENT, `invalid ${options.argument}: ${options.reason}`, causeOf(options))
    this.argument = options.argument
    this.reason = options.reason
    this.value = options.value
  }
}
