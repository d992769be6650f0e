import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A service key was provided twice in one realm. The first provider stays in place. */
export class ServiceConflictError extends HarnessError {
  static override readonly brand: string = 'ServiceConflictError'
  /** The key name, e.g. `'acme/ledger'`. */
  readonly key: string
  /** The context path (or entry) that already provides the key. */
  readonly existingProvider: string
  /** The context path (or entry) whose provide was refused. */
  readonly attemptedProvider: string

  /** @param options - the key and both providers */
  constructor(options: { key: string; existingProvider: string; attemptedProvider: string }) {
    super(
      ErrorCode.SERVICE_CONFLICT,
      `service "${options.key}" is already provided by "${options.existingProvider}" (attempted by "${options.attemptedProvider}")`,
    )
    this.key = options.key
    this.existingProvider = options.existingProvider
    this.attemptedProvider = options.attemptedProvider
  }
}
