import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** An event was dispatched with another mode than the one its definition binds. */
export class EventModeError extends HarnessError {
  static override readonly brand: string = 'EventModeError'
  /** The event name. */
  readonly event: string
  /** The mode the catalog defines. */
  readonly defined: string
  /** The mode the caller dispatched with. */
  readonly attempted: string

  /** @param options - the event and both modes */
  constructor(options: { event: string; defined: string; attempted: string }) {
    super(
      ErrorCode.EVENT_MODE_MISMATCH,
      `event "${options.event}" is defined as "${options.defined}" but was dispatched as "${options.attempted}"`,
    )
    this.event = options.event
    this.defined = options.defined
    this.attempted = options.attempted
  }
}
