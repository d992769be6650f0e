import type { Context } from '../kernel/context.js'
import { services } from '../kernel/services.js'
import type { Session } from '../session/session.js'
import type { AgentOptions } from './agent-options.js'

/** Options of `AgentRegistry.resume` (04-agent.md §13.4). */
export interface ResumeAgentOptions {
  /** The agent options, validated strictly. */
  readonly options?: AgentOptions
  /** Runs with the agent context before the agent is published. */
  readonly setup?: (ctx: Context) => void | Promise<void>
  /** Aborting it before publication rejects `AgentCreationAbortedError`. */
  readonly signal?: AbortSignal
}

/**
 * Makes the live session a resumed agent drives (04-agent.md §13.4): the persistence coordinator
 * prepares the log (crash-repair closers committed durably, the id reserved), then the session
 * registry creates the session seeded with the prepared events, which binds the reservation.
 *
 * @param ctx - the `agent-loop` entry's context
 * @param sessionId - the stored session's id
 * @param signal - aborts the `prepare`
 * @returns the live session, its log ending in `session/end-seed`
 * @throws (as a rejection) every `prepare` error unchanged (`PersistenceError` `SESSION_NOT_FOUND`,
 *   `SESSION_LIVE`, `SESSION_RESERVED`, `SessionLockedError`, corruption errors), or what
 *   `sessions.create` threw (the preparation released)
 * @internal
 */
export async function prepareResumedSession(ctx: Context, sessionId: string, signal: AbortSignal | undefined): Promise<Session> {
  const persistence = ctx.get(services.persistence)
  const sessions = ctx.get(services.sessions)
  const prepared = await persistence.prepare(sessionId, signal === undefined ? {} : { signal })
  try {
    return sessions.create({ id: sessionId, seed: prepared.events, header: prepared.header })
  } catch (error) {
    await prepared.release()
    throw error
  }
}
