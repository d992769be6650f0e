import type { Context } from '../kernel/context.js'
import { PersistenceKey } from '../persistence/persistence-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import type { SessionHeader } from '../session/session-header.js'
import type { SessionSummary } from './harness.js'

function summaryOf(header: SessionHeader, live: boolean): SessionSummary {
  return {
    id: header.id,
    createdAt: header.createdAt,
    ...(header.parentSession === undefined ? {} : { parentSession: header.parentSession }),
    live,
  }
}

/**
 * `harness.listSessions`: the live sessions of this harness and the stored ones
 * (persistence `list`, headers only), one entry per id (a live session's own header wins), newest
 * `createdAt` first, ties by id in code-unit order.
 *
 * @param ctx - the harness root
 * @returns fresh summaries
 * @throws (as a rejection) what persistence `list` rejects with
 * @internal
 */
export async function listSessions(ctx: Context): Promise<SessionSummary[]> {
  const persistence = ctx.getOptional(PersistenceKey)
  const stored = persistence === undefined ? [] : await persistence.list()
  const byId = new Map<string, SessionSummary>()
  for (const header of stored) byId.set(header.id, summaryOf(header, false))
  for (const session of ctx.get(SessionsKey).list()) byId.set(session.id, summaryOf(session.header, true))
  return [...byId.values()].sort(
    (left, right) => right.createdAt - left.createdAt || (left.id < right.id ? -1 : left.id > right.id ? 1 : 0),
  )
}
