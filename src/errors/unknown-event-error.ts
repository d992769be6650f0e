import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** An event name was used that no registered catalog defines. */
export class UnknownEventError extends HarnessError {
  static override readonly brand: string = 'UnknownEventError'
  /** The undefined event name. */
  readonly event: string

  /** @param options - the event name */
  constructor(options: { event: string }) {
    super(ErrorCode.UNKNOWN_EVENT, `event "${options.event}" is not defined by any registered catalog`)
    this.event = options.event
  }
}
