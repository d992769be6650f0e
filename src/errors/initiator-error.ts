import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link InitiatorError}. */
export type InitiatorErrorCode = typeof ErrorCode.NO_INITIATOR | typeof ErrorCode.INITIATOR_CLOSED

/** The initiator has no frame (`require()`), or the harness is closing (`run()`). */
export class InitiatorError extends HarnessError {
  static override readonly brand: string = 'InitiatorError'

  /** @param options - the code */
  constructor(options: { code: InitiatorErrorCode }) {
    super(
      options.code,
      options.code === ErrorCode.NO_INITIATOR
        ? 'no agent initiated this work: initiator.require() was called outside any agent frame'
        : 'the harness is closing: no new agent frames can start',
    )
  }
}
