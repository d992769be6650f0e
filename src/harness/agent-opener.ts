import type { Agent } from '../agent/agent.js'
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { AgentOverrides } from './harness.js'

/** What {@link AgentOpener} opens agents with (the harness's own methods). */
export interface AgentOpenerHost {
  /** The live agent of an id. */
  live(sessionId: string): Agent | undefined
  /** `harness.resumeAgent`. */
  resume(sessionId: string, overrides: AgentOverrides): Promise<Agent>
  /** `harness.createAgent` with that id. */
  create(sessionId: string, overrides: AgentOverrides): Promise<Agent>
}

/**
 * `harness.openAgent`: the live agent, else a resume, else a create with that id.
 * Single-flight per id: a call made while one for the same id is pending joins it, so both get
 * the same agent and storage is read once.
 *
 * @internal
 */
export class AgentOpener {
  readonly #host: AgentOpenerHost
  readonly #pending = new Map<string, Promise<Agent>>()

  /** @param host - the harness methods to open with */
  constructor(host: AgentOpenerHost) {
    this.#host = host
  }

  /**
   * Opens the agent of `sessionId`.
   *
   * @param sessionId - the session id
   * @param overrides - used only when the agent is resumed or created
   * @returns the agent
   * @throws (as a rejection) what the resume or the create rejects with (a resume's
   *   `SESSION_NOT_FOUND` only leads to the create)
   */
  open(sessionId: string, overrides: AgentOverrides): Promise<Agent> {
    const live = this.#host.live(sessionId)
    if (live !== undefined) return Promise.resolve(live)
    const pending = this.#pending.get(sessionId)
    if (pending !== undefined) return pending
    const attempt = this.#open(sessionId, overrides)
    this.#pending.set(sessionId, attempt)
    const forget = (): void => {
      if (this.#pending.get(sessionId) === attempt) this.#pending.delete(sessionId)
    }
    attempt.then(forget, forget)
    return attempt
  }

  async #open(sessionId: string, overrides: AgentOverrides): Promise<Agent> {
    try {
      return await this.#host.resume(sessionId, overrides)
    } catch (error) {
      if (!PersistenceError.is(error) || error.code !== ErrorCode.SESSION_NOT_FOUND) throw error
    }
    return this.#host.create(sessionId, overrides)
  }
}
