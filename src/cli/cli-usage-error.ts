import { ErrorCode } from '../errors/codes.js'
import { HarnessError } from '../errors/harness-error.js'

/**
 * A `yoke` command line that cannot run: an unknown command or flag, a missing or extra
 * argument, a bad `--format` (exit code 2). Code `INVALID_ARGUMENT`.
 */
export class CliUsageError extends HarnessError {
  static override readonly brand: string = 'CliUsageError'

  /** @param message - what is wrong, and what to run instead */
  constructor(message: string) {
    super(ErrorCode.INVALID_ARGUMENT, message)
  }
}
