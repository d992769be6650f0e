import { defineEvents, type Emit, type EventCatalog } from '../kernel/event-catalog.js'

/**
 * Payload of `session/write-failed`: a background write of a session failed. It is reported once;
 * automatic writes pause until the next event or an explicit flush.
 */
export interface SessionWriteFailedPayload {
  /** The session. */
  readonly sessionId: string
  /** The write error. */
  readonly error: unknown
  /** Events kept for the retry. */
  readonly pendingEvents: number
}

/** The live events of the `persistence` entry. */
export type PersistenceEvents = {
  /** A background write failed; events are kept and retried on the next enqueue or flush. */
  readonly 'session/write-failed': Emit<SessionWriteFailedPayload>
}

/** The catalog of {@link PersistenceEvents}. */
export const persistenceEvents: EventCatalog<PersistenceEvents> = defineEvents<PersistenceEvents>({
  'session/write-failed': 'emit',
})
