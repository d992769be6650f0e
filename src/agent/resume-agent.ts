import type { Context } from '../kernel/context.js'
import { PersistenceKey } from '../persistence/persistence-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import type { StagedSession } from '../session/session-registry.js'
import type { ModelAdapter, ModelRoute } from '../model/model-adapter.js'
import type { SessionHeader } from '../session/session-header.js'
import type { OptionRule } from '../kernel/option-issues.js'
import type { Agent } from './agent.js'
import type { AgentOptions } from './agent-options.js'

/**
 * What a resume does with the messages its log still holds queued (prompts sent, or `run()` calls
 * made, that no turn claimed before the process stopped or the agent was disposed):
 *
 * - `'keep'`: they stay queued; the agent's next turn claims the oldest prompt first, before any
 *   prompt sent after the resume.
 * - `'discard'`: they are canceled before the agent is published (one canceled
 *   `agent/inbox/spliced` event per non-empty list, made durable before the resume resolves, so a
 *   later resume does not see them again); they never run.
 */
export type QueuedPolicy = 'keep' | 'discard'

/**
 * The option rule of a {@link QueuedPolicy}: `'keep'` or `'discard'`.
 *
 * @internal
 */
export const queuedPolicyRule: OptionRule = (value) =>
  value === 'keep' || value === 'discard' ? undefined : `must be 'keep' or 'discard' (got ${describeValue(value)})`

/** A short, safe rendering of a bad option value for its issue message. */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (value === null || typeof value !== 'object') return String(value)
  return Array.isArray(value) ? 'an array' : 'an object'
}

/**
 * Applies a resume's {@link QueuedPolicy} to the replayed inbox of a resumed agent that is not
 * published yet: `'discard'` cancels everything pending (`inbox.clear()`).
 *
 * @param agent - the resumed agent
 * @param policy - the policy (`undefined` is `'keep'`)
 * @returns how many messages were discarded
 * @throws the append's error (a list already spliced stays cleared)
 * @internal
 */
export function applyQueuedPolicy(agent: Agent, policy: QueuedPolicy | undefined): number {
  if (policy !== 'discard' || !agent.inbox.hasPending) return 0
  return agent.inbox.clear().length
}

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
  /**
   * What happens to the messages the log still holds queued: `'keep'` them for the next turns, or
   * `'discard'` them (logged, durable) before the agent is published. Any other value rejects
   * `InvalidOptionsError` (path `['queued']`).
   *
   * @default 'keep'
   */
  readonly queued?: QueuedPolicy
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
