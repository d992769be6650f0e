import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A patch (or its `before`/`after`) names an entry id that does not exist. */
export class UnknownEntryError extends HarnessError {
  static override readonly brand: string = 'UnknownEntryError'
  /** The unknown id. */
  readonly id: string
  /** The patch that named it: `'patches[1]'`. */
  readonly patch: string
  /** Every id known at that point of the composition. */
  readonly knownIds: readonly string[]

  /** @param options - the unknown id, the patch and the known ids */
  constructor(options: { id: string; patch: string; knownIds: readonly string[] }) {
    super(
      ErrorCode.UNKNOWN_ENTRY,
      `patch ${options.patch} targets entry "${options.id}", which does not exist (known: ${options.knownIds.join(', ') || 'none'})`,
    )
    this.id = options.id
    this.patch = options.patch
    this.knownIds = Object.freeze([...options.knownIds])
  }
}
