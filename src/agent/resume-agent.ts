import type { Context } from '../kernel/context.js'
import { PersistenceKey } from '../persistence/persistence-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import type { StagedSession } from '../session/session-registry.js'
import type { ModelAdapter, ModelRoute } from '../model/model-adapter.js'
import type { SessionHeader } from '../session/session-header.js'
import type { AgentOptions } from './agent-options.js'

/** Options of `AgentRegistry.resume`. */
export interface ResumeAgentOptions {
  /** The agent options, field by field over the harness defaults and the recorded preset's options. */
  readonly options?: AgentOptions
  /**
   * The preset the caller expects. The agent always rebinds to the preset its session header
   * recorded; a different name rejects `PresetMismatchError`.
   *
   * @default the recorded preset
   */
  readonly preset?: string
  /**
   * This agent's model: the adapter is routed in the agent's scope layer (the harness route is
   * untouched), and its call fields replace the harness route's as option defaults.
   *
   * @default the harness `model`
   */
  readonly model?: ModelAdapter | ModelRoute
  /** Runs with the agent context before the agent is published. */
  readonly setup?: (ctx: Context) => void | Promise<void>
  /** Aborting it before publication rejects `AgentCreationAbortedError`. */
  readonly signal?: AbortSignal
}

/**
 * Stages the session a resumed agent drives: the persistence coordinator
 * prepares the log (crash-repair closers committed durably, the id reserved), `check` reads the
 * stored header (preset rebinding), then the session registry stages the session seeded with the
 * prepared events; publishing it binds the reservation.
 *
 * @param ctx - the `agent-loop` entry's context
 * @param sessionId - the stored session's id
 * @param check - runs with the prepared header before the session exists; a throw releases the preparation
 * @returns the staged session (its log ending in `session/end-seed`), what `check` returned, and
 *   `release`, which frees the reservation when the session is not published after all
 * @throws (as a rejection) every `prepare` error unchanged (`PersistenceError` `SESSION_NOT_FOUND`,
 *   `SESSION_LIVE`, `SESSION_RESERVED`, `SessionLockedError`, corruption errors), what `check`
 *   threw, or what `sessions.stage` threw (the preparation released in both cases)
 * @internal
 */
export async function prepareResumedSession<T>(
  ctx: Context,
  sessionId: string,
  check: (header: SessionHeader) => T,
): Promise<{ readonly staged: StagedSession; readonly checked: T; readonly release: () => Promise<void> }> {
  const persistence = ctx.get(PersistenceKey)
  const sessions = ctx.get(SessionsKey)
  const prepared = await persistence.prepare(sessionId)
  try {
    const checked = check(prepared.header)
    const staged = sessions.stage({ id: sessionId, seed: prepared.events, header: prepared.header })
    return { staged, checked, release: () => prepared.release() }
  } catch (error) {
    await prepared.release()
    throw error
  }
}
