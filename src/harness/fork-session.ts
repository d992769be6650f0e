import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { freshSessionId, isStored } from '../persistence/fresh-session-id.js'
import { SessionForkError } from '../errors/session-fork-error.js'
import type { Context } from '../kernel/context.js'
import { IdsKey } from '../kernel/host-keys.js'
import { PersistenceKey } from '../persistence/persistence-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import type { PersistenceCoordinator } from '../persistence/persistence-coordinator.js'
import { planFork } from '../session/plan-fork.js'
import type { SessionHeader } from '../session/session-header.js'
import type { Session } from '../session/session.js'
import type { HarnessForkOptions } from './harness.js'

function forkExists(id: string, where: string): SessionForkError {
  return new SessionForkError({
    code: ErrorCode.SESSION_EXISTS,
    sessionId: id,
    detail: `${where} session has the fork id`,
  })
}

/** The fork's first check, extended to storage: the child id must be neither live nor stored. */
async function checkChildId(persistence: PersistenceCoordinator | undefined, id: string): Promise<void> {
  if (await isStored(persistence, id)) throw forkExists(id, 'a stored')
}

/**
 * Plans a fork of a stored log read with persistence `inspect` (nothing written, no lease). The
 * copyable events are the stored ones: when a repair is pending, the in-memory closers (and
 * salvaged tail records) past the committed events, as `readFrom` sees them, are never copied.
 */
async function planStoredFork(
  persistence: PersistenceCoordinator,
  sessionId: string,
  at: number | undefined,
): Promise<{ readonly seed: readonly unknown[]; readonly header: Partial<SessionHeader> }> {
  let inspected: Awaited<ReturnType<PersistenceCoordinator['inspect']>>
  try {
    inspected = await persistence.inspect(sessionId)
  } catch (error) {
    if (PersistenceError.is(error) && error.code === ErrorCode.SESSION_NOT_FOUND) {
      throw new SessionForkError({
        code: ErrorCode.SESSION_NOT_FOUND,
        sessionId,
        detail: 'no live or stored session to fork has this id',
        cause: error,
      })
    }
    throw error
  }
  const events = inspected.events
  const length = inspected.repairPending ? (await persistence.readFrom(sessionId, 0)).events.length : events.length
  return planFork(
    {
      id: sessionId,
      header: inspected.header,
      length,
      at: (seq) => (seq < length ? events[seq] : undefined),
      slice: (to) => events.slice(0, to),
    },
    at,
  )
}

/**
 * `harness.fork`: forks a live session through `sessions.fork`, or a stored one
 * read with persistence `inspect`, then flushes and disposes the child before resolving. The
 * source gains no event.
 *
 * @param ctx - the harness root
 * @param sessionId - the source's id
 * @param options - `at` (inclusive), `id`
 * @returns the disposed child (its `append` throws `SESSION_DISPOSED`)
 * @throws (as a rejection) `SessionForkError` `SESSION_EXISTS` (a given child id is live or stored; a generated one that is taken is skipped),
 *   `SESSION_NOT_FOUND`, `INVALID_BOUNDARY`, `OPEN_TURN`; read errors of a stored source; the
 *   child's flush error (the child is still disposed)
 * @internal
 */
export async function forkSession(ctx: Context, sessionId: string, options: HarnessForkOptions = {}): Promise<Session> {
  const sessions = ctx.get(SessionsKey)
  const persistence = ctx.getOptional(PersistenceKey)
  const id =
    options.id ??
    (await freshSessionId(
      () => ctx.get(IdsKey)('session'),
      (candidate) => sessions.get(candidate) !== undefined,
      persistence,
      (candidate, stored) => forkExists(candidate, stored ? 'a stored' : 'a live'),
    ))
  if (sessions.get(id) !== undefined) throw forkExists(id, 'a live')
  if (options.id !== undefined) await checkChildId(persistence, id)
  const at = options.at === undefined ? {} : { at: options.at }
  let child: Session
  const live = sessions.get(sessionId)
  if (live !== undefined || persistence === undefined) {
    child = sessions.fork(sessionId, { id, ...at })
  } else {
    const { seed, header } = await planStoredFork(persistence, sessionId, options.at)
    if (sessions.get(id) !== undefined) throw forkExists(id, 'a live')
    child = sessions.create({ id, seed, header })
  }
  try {
    await sessions.flush(child)
  } finally {
    await sessions.dispose(child)
  }
  return child
}
