import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** One required service key that no enabled entry (or host service) provides. */
export interface MissingService {
  /** The entry (or runtime plugin) id that requires the key. */
  readonly plugin: string
  /** The key name. */
  readonly key: string
  /** A disabled entry that would provide the key, when there is one. */
  readonly disabledProvider?: string
}

/** Planning found required keys that nothing provides; every pair is listed at once. */
export class MissingServicesError extends HarnessError {
  static override readonly brand: string = 'MissingServicesError'
  /** Every unsatisfied `(plugin, key)` pair, in entry order then key order. */
  readonly missing: readonly MissingService[]

  /** @param options - the unsatisfied pairs */
  constructor(options: { missing: readonly MissingService[] }) {
    const list = options.missing
      .map((item) => {
        const hint = item.disabledProvider === undefined ? '' : ` (provider "${item.disabledProvider}" is disabled)`
        return `"${item.plugin}" needs "${item.key}"${hint}`
      })
      .join(', ')
    super(ErrorCode.SERVICES_MISSING, `required services are not provided: ${list}`)
    this.missing = Object.freeze(options.missing.map((item) => Object.freeze({ ...item })))
  }
}
