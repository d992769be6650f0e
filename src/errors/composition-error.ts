import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** Why a composition of plugin entries and patches was refused. */
export type CompositionErrorReason = 'duplicate-id' | 'invalid-id' | 'invalid-patch' | 'invalid-entry'

/** The `plugins` / `patches` layers cannot be composed (duplicate or invalid id, malformed patch). */
export class CompositionError extends HarnessError {
  static override readonly brand: string = 'CompositionError'
  /** What is wrong. */
  readonly reason: CompositionErrorReason
  /** The entry id concerned, when there is one. */
  readonly id: string | undefined
  /** Where the problem is: `'plugins[2]'` or `'patches[0]'`. */
  readonly patch: string | undefined

  /** @param options - the reason, the id and the offending layer position, and details */
  constructor(options: { reason: CompositionErrorReason; id?: string; patch?: string; detail?: string }) {
    const where = options.patch === undefined ? '' : `${options.patch}: `
    const what = options.id === undefined ? '' : ` "${options.id}"`
    const detail = options.detail === undefined ? '' : ` (${options.detail})`
    super(ErrorCode.COMPOSITION_INVALID, `${where}${options.reason}${what}${detail}`)
    this.reason = options.reason
    this.id = options.id
    this.patch = options.patch
  }
}
