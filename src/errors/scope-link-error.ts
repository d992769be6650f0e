import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A scope parent link was refused: the key is already linked, or the link would close a cycle. */
export class ScopeLinkError extends HarnessError {
  static override readonly brand: string = 'ScopeLinkError'
  /** Why the link was refused. */
  readonly reason: 'already-bound' | 'cycle'
  /** The scope key being linked. */
  readonly key: object

  /** @param options - the reason and the key */
  constructor(options: { reason: 'already-bound' | 'cycle'; key: object }) {
    const what = options.reason === 'cycle' ? 'the link would close a cycle' : 'the key already has a parent'
    super(ErrorCode.SCOPE_LINK, `cannot link scope ${describeKey(options.key)}: ${what}`)
    this.reason = options.reason
    this.key = options.key
  }
}

function describeKey(key: object): string {
  const id: unknown = (key as { id?: unknown }).id
  if (typeof id === 'string') return `"${id}"`
  const name = key.constructor?.name
  return name ? `(a ${name})` : '(an object)'
}
