import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link PromptRenderError}. */
export type PromptRenderErrorCode =
  | typeof ErrorCode.PROMPT_VARIABLE_MALFORMED
  | typeof ErrorCode.PROMPT_VARIABLE_UNKNOWN
  | typeof ErrorCode.PROMPT_VARIABLE_UNDEFINED

const MAX_REFERENCE = 40

/** A `{{variable}}` reference could not be rendered. */
export class PromptRenderError extends HarnessError {
  static override readonly brand: string = 'PromptRenderError'
  /** The reference as written (cut to 40 characters plus `…`). */
  readonly reference: string
  /** The variable name, when one was parsed. */
  readonly variable: string | undefined
  /** The section (or context) name. */
  readonly section: string
  /** Whether `section` names a section or a runtime context. */
  readonly sectionKind: 'section' | 'context'
  /** For `PROMPT_VARIABLE_UNKNOWN`: the registered variable names, sorted. */
  readonly registered: readonly string[] | undefined

  /** @param options - the code, the reference, the variable, the section and its kind, and the registered names */
  constructor(options: {
    code: PromptRenderErrorCode
    reference: string
    variable?: string | undefined
    section: string
    sectionKind: 'section' | 'context'
    registered?: readonly string[] | undefined
  }) {
    const reference =
      options.reference.length > MAX_REFERENCE ? `${options.reference.slice(0, MAX_REFERENCE)}…` : options.reference
    const where = `${options.sectionKind} "${options.section}"`
    let message: string
    if (options.code === ErrorCode.PROMPT_VARIABLE_MALFORMED)
      message = `malformed variable reference "${reference}" in ${where}`
    else if (options.code === ErrorCode.PROMPT_VARIABLE_UNKNOWN) {
      const registered =
        options.registered === undefined || options.registered.length === 0 ? 'none' : options.registered.join(', ')
      message = `unknown variable "{{${options.variable ?? ''}}}" in ${where} (registered: ${registered})`
    } else message = `variable "{{${options.variable ?? ''}}}" has no value in this assembly (${where})`
    super(options.code, message)
    this.reference = reference
    this.variable = options.variable
    this.section = options.section
    this.sectionKind = options.sectionKind
    this.registered = options.registered === undefined ? undefined : Object.freeze([...options.registered])
  }
}
