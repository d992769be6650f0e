import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The kinds of system-prompt contribution. */
export type PromptContributionKind = 'section' | 'context' | 'variable' | 'tools' | 'suppressor'

/** The codes of {@link PromptRegistrationError}. */
export type PromptRegistrationErrorCode =
  | typeof ErrorCode.INVALID_PROMPT_CONTRIBUTION
  | typeof ErrorCode.DUPLICATE_PROMPT_CONTRIBUTION

/**
 * A system-prompt contribution was refused; nothing was registered. For
 * `DUPLICATE_PROMPT_CONTRIBUTION`, `name` holds the taken contribution name; test the class with `PromptRegistrationError.is()`.
 */
export class PromptRegistrationError extends HarnessError {
  static override readonly brand: string = 'PromptRegistrationError'
  /** The contribution kind. */
  readonly kind: PromptContributionKind
  /** For `INVALID_PROMPT_CONTRIBUTION`: the offending field. */
  readonly field: string | undefined
  /** For `INVALID_PROMPT_CONTRIBUTION`: the offending value. */
  readonly value: unknown
  /** For `DUPLICATE_PROMPT_CONTRIBUTION`: the layer's scope key; absent (no own property) for the global layer. */
  declare readonly scope?: object

  /** @param options - the code and its fields */
  constructor(
    options:
      | {
          code: typeof ErrorCode.INVALID_PROMPT_CONTRIBUTION
          kind: PromptContributionKind
          field: string
          value?: unknown
          reason: string
        }
      | {
          code: typeof ErrorCode.DUPLICATE_PROMPT_CONTRIBUTION
          kind: PromptContributionKind
          name: string
          scope?: object | undefined
        },
  ) {
    const message =
      options.code === ErrorCode.INVALID_PROMPT_CONTRIBUTION
        ? `invalid ${options.kind} contribution: ${options.field} ${options.reason}`
        : `a ${options.kind} named "${options.name}" is already registered in ${options.scope === undefined ? 'the global layer; register through an agent or preset context to shadow it' : 'this scope'}`
    super(options.code, message)
    this.kind = options.kind
    this.field = options.code === ErrorCode.INVALID_PROMPT_CONTRIBUTION ? options.field : undefined
    this.value = options.code === ErrorCode.INVALID_PROMPT_CONTRIBUTION ? options.value : undefined
    // The field is `name`: for a duplicate it is the taken contribution name
    // (identify the class with `is()`, which reads the brand, not `error.name`).
    if (options.code === ErrorCode.DUPLICATE_PROMPT_CONTRIBUTION) this.name = options.name
    if (options.code === ErrorCode.DUPLICATE_PROMPT_CONTRIBUTION && options.scope !== undefined) {
      Object.defineProperty(this, 'scope', {
        value: options.scope,
        enumerable: true,
        writable: false,
        configurable: true,
      })
    }
  }
}
