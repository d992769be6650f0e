import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { Context } from '../kernel/context.js'
import { PersistenceKey } from '../persistence/persistence-key.js'
import type { Message } from '../session/message.js'
import type { SessionEvent } from '../session/session-event.js'
import { SessionsKey } from '../session/sessions-key.js'
import { SurfaceState } from '../session/surface-state.js'
import type { AgentStreamEvent } from '../stream/agent-stream-event.js'
import type { SessionHistory } from './harness.js'

/**
 * `harness.readSession`: a live session's history from memory, else a stored one's through
 * persistence `inspect` (no lease, no write). Nothing is appended anywhere.
 *
 * @param ctx - the harness root
 * @param sessionId - the session id
 * @returns the history (frozen)
 * @throws (as a rejection) `PersistenceError` `SESSION_NOT_FOUND`, and what `inspect` rejects with
 * @internal
 */
export async function readSession(ctx: Context, sessionId: string): Promise<SessionHistory> {
  const live = ctx.get(SessionsKey).get(sessionId)
  if (live !== undefined) {
    return Object.freeze({
      id: live.id,
      header: live.header,
      events: live.events as readonly AgentStreamEvent[],
      messages: live.deriveMessages(),
      live: true,
      repairPending: false,
    })
  }
  const persistence = ctx.getOptional(PersistenceKey)
  if (persistence === undefined) {
    throw new PersistenceError({
      code: ErrorCode.SESSION_NOT_FOUND,
      sessionId,
      detail: 'the session is not live and this harness has no persistence',
    })
  }
  const inspected = await persistence.inspect(sessionId)
  return Object.freeze({
    id: inspected.header.id,
    header: inspected.header,
    events: inspected.events as readonly AgentStreamEvent[],
    messages: messagesOf(inspected.events),
    live: false,
    repairPending: inspected.repairPending,
  })
}

/** The model history of a checked log: its surface replayed as a session's would be. */
function messagesOf(events: readonly SessionEvent[]): readonly Message[] {
  const surface = new SurfaceState((seq) => events[seq] as SessionEvent)
  for (const event of events) surface.apply(event, surface.check(event, { type: event.type, seq: event.seq }))
  return surface.derived()
}
