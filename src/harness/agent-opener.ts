import type { Agent } from '../agent/agent.js'
import { AgentOverridesMismatchError } from '../errors/agent-overrides-mismatch-error.js'
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { overridesDifference } from './agent-overrides.js'
import type { AgentOverrides, ResumeOverrides } from './harness.js'

/** What {@link AgentOpener} opens agents with (the harness's own methods). */
export interface AgentOpenerHost {
  /** The live agent of an id. */
  live(sessionId: string): Agent | undefined
  /** `harness.resumeAgent`. */
  resume(sessionId: string, overrides: ResumeOverrides): Promise<Agent>
  /** `harness.createAgent` with that id (`queued` left out). */
  create(sessionId: string, overrides: AgentOverrides): Promise<Agent>
}

/**
 * `harness.openAgent`: the live agent, else a resume, else a create with that id.
 * Single-flight per id: a call made while one for the same id is pending joins it, so both get
 * the same agent and storage is read once. It remembers the overrides each agent of its harness
 * was built with, so a call with other overrides is refused instead of silently returning an agent
 * that ignores them.
 *
 * @internal
 */
export class AgentOpener {
  readonly #host: AgentOpenerHost
  readonly #pending = new Map<string, Promise<Agent>>()
  /** The overrides each agent was created, resumed or opened with through the harness. */
  readonly #built = new WeakMap<Agent, AgentOverrides>()

  /** @param host - the harness methods to open with */
  constructor(host: AgentOpenerHost) {
    this.#host = host
  }

  /**
   * Records the overrides an agent is being built with (`createAgent`, `resumeAgent`).
   *
   * @param attempt - the pending create or resume
   * @param overrides - what the caller passed
   * @returns `attempt`
   */
  remember(attempt: Promise<Agent>, overrides: AgentOverrides): Promise<Agent> {
    attempt.then(
      (agent) => this.#built.set(agent, overrides),
      () => undefined,
    )
    return attempt
  }

  /**
   * Opens the agent of `sessionId`.
   *
   * @param sessionId - the session id
   * @param overrides - used when the agent is resumed or created; compared with a live one's
   * @returns the agent
   * @throws (as a rejection) {@link AgentOverridesMismatchError} when the live (or joined) agent
   *   runs with other overrides; what the resume or the create rejects with (a resume's
   *   `SESSION_NOT_FOUND` only leads to the create)
   */
  open(sessionId: string, overrides: ResumeOverrides): Promise<Agent> {
    const live = this.#host.live(sessionId)
    if (live !== undefined) return this.#matching(live, overrides)
    const pending = this.#pending.get(sessionId)
    if (pending !== undefined) return pending.then((agent) => this.#matching(agent, overrides))
    const attempt = this.remember(this.#open(sessionId, overrides), overrides)
    this.#pending.set(sessionId, attempt)
    const forget = (): void => {
      if (this.#pending.get(sessionId) === attempt) this.#pending.delete(sessionId)
    }
    attempt.then(forget, forget)
    return attempt
  }

  /** The agent, when `overrides` match the ones it runs with. */
  async #matching(agent: Agent, overrides: AgentOverrides): Promise<Agent> {
    const fields = overridesDifference(agent, this.#built.get(agent), overrides)
    if (fields.length > 0) throw new AgentOverridesMismatchError({ agentId: agent.id, fields })
    return agent
  }

  async #open(sessionId: string, overrides: ResumeOverrides): Promise<Agent> {
    try {
      return await this.#host.resume(sessionId, overrides)
    } catch (error) {
      if (!PersistenceError.is(error) || error.code !== ErrorCode.SESSION_NOT_FOUND) throw error
    }
    const { queued: _resumeOnly, ...created } = overrides
    return this.#host.create(sessionId, created)
  }
}
