import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** What is wrong with a restriction. */
export type ToolRestrictionProblem = 'unscoped' | 'empty' | 'unknown-name'

/** A tool restriction was refused; nothing was restricted. */
export class ToolRestrictionError extends HarnessError {
  static override readonly brand: string = 'ToolRestrictionError'
  /** What is wrong. */
  readonly problem: ToolRestrictionProblem
  /** For `unknown-name`: the listed names the scope does not inherit. */
  readonly names: readonly string[] | undefined
  /** For `unknown-name`: the names the scope inherits, sorted. */
  readonly known: readonly string[] | undefined

  /** @param options - the problem and, for `unknown-name`, the unknown and known names */
  constructor(
    options:
      | { problem: 'unscoped' | 'empty' }
      | { problem: 'unknown-name'; names: readonly string[]; known: readonly string[] },
  ) {
    let message: string
    if (options.problem !== 'unknown-name') {
      message =
        options.problem === 'unscoped'
          ? 'a restriction needs a scope: the global layer cannot be restricted'
          : 'a restriction needs a non-empty allow or deny list'
    } else {
      const listed = options.names.map((name) => `"${name}"`).join(', ')
      const known = options.known.length === 0 ? '(none)' : options.known.join(', ')
      message = `cannot restrict ${listed}: the scope does not inherit ${options.names.length === 1 ? 'that tool' : 'those tools'} (inherited: ${known})`
    }
    super(ErrorCode.INVALID_RESTRICTION, message)
    this.problem = options.problem
    this.names = options.problem === 'unknown-name' ? Object.freeze([...options.names]) : undefined
    this.known = options.problem === 'unknown-name' ? Object.freeze([...options.known]) : undefined
  }
}
