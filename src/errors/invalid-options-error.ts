import { ErrorCode } from './codes.js'
import { ConfigError } from './config-error.js'
import { fieldPath, joinField, type ValidationIssue } from './issue.js'

/**
 * An options object (of `createHarness`, an agent or a factory) failed its schema. Every issue is
 * reported at once; the message starts with the first issue's path:
 * `options.maxParallelToolCalls: must be a positive integer`.
 */
export class InvalidOptionsError extends ConfigError {
  static override readonly brand: string = 'InvalidOptionsError'
  /** The path of the first issue, e.g. `'maxParallelToolCalls'`, `'tools[0].name'`. */
  readonly field: string
  /** Every issue, in the order of the options' keys. */
  readonly issues: readonly ValidationIssue[]

  /**
   * @param options - the issues, the value at the first issue's path, and the name the message
   *   starts with (`'options'` by default)
   */
  constructor(options: { issues: readonly ValidationIssue[]; value: unknown; subject?: string }) {
    const first = options.issues[0] ?? { path: [], message: 'is invalid' }
    const field = fieldPath(first.path)
    const subject = options.subject ?? 'options'
    const more = options.issues.length > 1 ? ` (and ${options.issues.length - 1} more)` : ''
    super({
      code: ErrorCode.INVALID_OPTIONS,
      option: field,
      value: options.value,
      reason: first.message,
      message: `${joinField(subject, field)}: ${first.message}${more}`,
    })
    this.field = field
    this.issues = Object.freeze(options.issues.map((issue) => Object.freeze({ ...issue, path: [...issue.path] })))
  }
}
