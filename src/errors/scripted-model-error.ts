import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link ScriptedModelError}. */
export type ScriptedModelErrorCode = typeof ErrorCode.SCRIPT_INCOMPLETE | typeof ErrorCode.SCRIPT_OVERRUN

/**
 * A scripted model's `assertComplete()` failed: a request came after the script
 * ran out (`SCRIPT_OVERRUN`, checked first) or entries were left unused (`SCRIPT_INCOMPLETE`).
 */
export class ScriptedModelError extends HarnessError {
  static override readonly brand: string = 'ScriptedModelError'
  /** For `SCRIPT_INCOMPLETE`: how many entries were left. */
  readonly remaining: number | undefined
  /** For `SCRIPT_OVERRUN`: how many requests found no entry. */
  readonly overrun: number | undefined

  /** @param options - the code and its count */
  constructor(
    options:
      | { code: typeof ErrorCode.SCRIPT_INCOMPLETE; remaining: number }
      | { code: typeof ErrorCode.SCRIPT_OVERRUN; overrun: number },
  ) {
    const message =
      options.code === ErrorCode.SCRIPT_OVERRUN
        ? `scripted model: ${options.overrun} request(s) came after the script ran out`
        : `scripted model: ${options.remaining} scripted repl${options.remaining === 1 ? 'y was' : 'ies were'} not used`
    super(options.code, message)
    this.remaining = options.code === ErrorCode.SCRIPT_INCOMPLETE ? options.remaining : undefined
    this.overrun = options.code === ErrorCode.SCRIPT_OVERRUN ? options.overrun : undefined
  }
}
