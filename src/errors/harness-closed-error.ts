import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** An operation was called on a harness after `close()` had been called. */
export class HarnessClosedError extends HarnessError {
  static override readonly brand: string = 'HarnessClosedError'
  /** The refused operation, e.g. `'createAgent'`. */
  readonly operation: string

  /** @param options - the refused operation */
  constructor(options: { operation: string }) {
    super(ErrorCode.HARNESS_CLOSED, `the harness is closed (operation: ${options.operation})`)
    this.operation = options.operation
  }
}
