import type { ErrorCode } from './codes.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link EventTypeError}. */
export type EventTypeErrorCode =
  | typeof ErrorCode.INVALID_EVENT_TYPE_NAME
  | typeof ErrorCode.DUPLICATE_EVENT_TYPE
  | typeof ErrorCode.SURFACE_NOT_ALLOWED

/** The fields a {@link EventTypeError} may carry besides its location. */
export interface EventTypeErrorFields {
  /** The type name concerned. */
  readonly eventType?: string | undefined
}

/** A session event type registration was refused; nothing was registered. */
export class EventTypeError extends SessionError<EventTypeErrorCode> {
  static override readonly brand: string = 'EventTypeError'
  /** The type name concerned. */
  readonly eventType: string | undefined

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<EventTypeErrorCode> & EventTypeErrorFields) {
    super(options)
    this.eventType = options.eventType
  }
}
