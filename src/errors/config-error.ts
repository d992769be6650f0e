import { ErrorCode } from './codes.js'
import { causeOf } from './cause-of.js'
import { HarnessError } from './harness-error.js'

/**
 * Bad configuration or an unusable environment (a missing runtime capability, a `dir` that is a
 * file). {@link InvalidOptionsError} is the subclass for options objects that fail their schema.
 */
export class ConfigError extends HarnessError {
  static override readonly brand: string = 'ConfigError'
  /** The option (its path, e.g. `tools[0].name`) concerned. */
  readonly option: string
  /** The offending value. */
  readonly value: unknown
  /** Why it is unusable. */
  readonly reason: string

  /**
   * @param options - the option, its value, the reason, an optional code
   *   (`CONFIG_INVALID` by default) and cause
   */
  constructor(options: {
    option: string
    value?: unknown
    reason: string
    code?: typeof ErrorCode.CONFIG_INVALID | typeof ErrorCode.ZSTD_UNAVAILABLE | typeof ErrorCode.INVALID_OPTIONS
    message?: string
    cause?: unknown
  }) {
    super(
      options.code ?? ErrorCode.CONFIG_INVALID,
      options.message ?? `${options.option}: ${options.reason}`,
      causeOf(options),
    )
    this.option = options.option
    this.value = options.value
    this.reason = options.reason
  }
}
