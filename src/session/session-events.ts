import { defineEvents, type Emit, type EventCatalog, type Parallel } from '../kernel/event-catalog.js'
import type { FlushCheckpoint } from './flush-checkpoint.js'
import type { SessionEvent } from './session-event.js'
import type { Session } from './session.js'

/** Payload of `session/created`, `session/flush` and `session/disposed`. */
export interface SessionLifecyclePayload {
  /** The session concerned. */
  readonly session: Session
}

/** Payload of `session/flush`. */
export interface SessionFlushPayload extends SessionLifecyclePayload {
  /** The turn checkpoint asking, if any: persistence decides from it whether this flush syncs. */
  readonly checkpoint?: FlushCheckpoint
}

/** Payload of `session/disposed`. */
export interface SessionDisposedPayload extends SessionLifecyclePayload {
  /**
   * `true` when a `session/created` listener vetoed the session (only the listeners that saw it
   * are told): it never became live, so nothing of it may be stored; absent for a dispose.
   */
  readonly vetoed?: true
}

/** Payload of `session/event`: one committed event. */
export interface SessionEventPayload {
  /** The session that committed it. */
  readonly session: Session
  /** The committed, frozen event (`=== session.at(event.seq)`). */
  readonly event: SessionEvent
}

/** The live `session/*` events of the `sessions` service. */
export type SessionEvents = {
  /** A session was created; a synchronous throw vetoes it. */
  readonly 'session/created': Emit<SessionLifecyclePayload>
  /** An event was committed; listener failures are contained. */
  readonly 'session/event': Emit<SessionEventPayload>
  /** A flush barrier: persistence writes the session out. */
  readonly 'session/flush': Parallel<SessionFlushPayload>
  /** A session was disposed, or vetoed at creation; listeners run in parallel. */
  readonly 'session/disposed': Parallel<SessionDisposedPayload>
}

/** The catalog of {@link SessionEvents}, registered by the `session` entry. */
export const sessionEvents: EventCatalog<SessionEvents> = defineEvents<SessionEvents>({
  'session/created': 'emit',
  'session/event': 'emit',
  'session/flush': 'parallel',
  'session/disposed': 'parallel',
})
