import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A catalog tried to define an already-defined event name with another mode. */
export class EventConflictError extends HarnessError {
  static override readonly brand: string = 'EventConflictError'
  /** The event name. */
  readonly event: string
  /** The mode already registered. */
  readonly existing: string
  /** The mode the new catalog asked for. */
  readonly attempted: string

  /** @param options - the event and both modes */
  constructor(options: { event: string; existing: string; attempted: string }) {
    super(
      ErrorCode.EVENT_CONFLICT,
      `event "${options.event}" is already defined as "${options.existing}" (attempted "${options.attempted}")`,
    )
    this.event = options.event
    this.existing = options.existing
    this.attempted = options.attempted
  }
}
