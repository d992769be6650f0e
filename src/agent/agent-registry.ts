import { AgentCreationAbortedError, AgentExistsError } from '../errors/agent-errors.js'
import type { Context } from '../kernel/context.js'
import { services } from '../kernel/services.js'
import type { InitiatorControl } from '../scope/initiator.js'
import type { Agent } from './agent.js'
import { type AgentOptions, validateAgentOptions } from './agent-options.js'
import type { LoopRequestMarks } from './build-request.js'
import { ModelRouter } from '../model/model-router.js'
import { ReactLoopAgent } from './react-loop-agent.js'
import { prepareResumedSession, type ResumeAgentOptions } from './resume-agent.js'
import type { Session } from '../session/session.js'

/** Options of {@link AgentRegistry.create} (04-agent.md §13.1). */
export interface CreateAgentOptions {
  /** The agent (= session) id; generated when absent. */
  readonly id?: string
  /** The agent options, validated strictly. */
  readonly options?: AgentOptions
  /** Runs with the agent context before the agent is published. */
  readonly setup?: (ctx: Context) => void | Promise<void>
  /** Aborting it before publication rejects {@link AgentCreationAbortedError}. */
  readonly signal?: AbortSignal
}

/**
 * The agents of one harness (04-agent.md §13): `harness.agents`, `ctx.agents`. Creates
 * {@link ReactLoopAgent} drivers and lists the published ones.
 */
export class AgentRegistry {
  readonly #ctx: Context
  readonly #initiator: InitiatorControl<Agent>
  readonly #marks: LoopRequestMarks
  readonly #live = new Map<string, Agent>()
  readonly #defaults: AgentOptions

  /**
   * @param ctx - the `agent-loop` entry's context (the owner of created agents)
   * @param initiator - the harness initiator
   * @param marks - the harness loop-request marks
   * @param defaults - the harness-level option defaults (`maxParallelToolCalls`)
   * @internal
   */
  constructor(ctx: Context, initiator: InitiatorControl<Agent>, marks: LoopRequestMarks, defaults: AgentOptions = {}) {
    this.#ctx = ctx
    this.#defaults = Object.freeze({ ...defaults })
    this.#initiator = initiator
    this.#marks = marks
  }

  /**
   * Creates and publishes an agent (04-agent.md §13.2).
   *
   * @param options - id, agent options, setup and signal
   * @returns the published agent
   * @throws (as a rejection) {@link InvalidOptionsError}, {@link AgentExistsError},
   *   {@link AgentCreationAbortedError}, or what `setup` threw; nothing stays published
   */
  async create(options: CreateAgentOptions = {}): Promise<Agent> {
    const agentOptions = validateAgentOptions(options.options)
    if (options.signal?.aborted === true) throw new AgentCreationAbortedError({ reason: options.signal.reason })
    if (options.id !== undefined && this.#live.has(options.id)) throw new AgentExistsError({ agentId: options.id })
    const session = this.#ctx.get(services.sessions).create(options.id === undefined ? {} : { id: options.id })
    return this.#publish(session, agentOptions, options, 'create')
  }

  /**
   * Resumes a stored session as an agent (04-agent.md §13.4): persistence `prepare` commits the
   * crash-repair closers, then §13.2 runs with `source: 'resume'`. The driver continues the turn
   * numbering and replays the inbox; it never starts a turn by itself.
   *
   * @param sessionId - the stored session's id
   * @param options - agent options, setup and signal
   * @returns the published agent
   * @throws (as a rejection) {@link InvalidOptionsError}, {@link AgentExistsError} when an agent
   *   drives that id, every `prepare` error unchanged, {@link AgentCreationAbortedError}, or what
   *   `setup` threw; nothing stays published
   */
  async resume(sessionId: string, options: ResumeAgentOptions = {}): Promise<Agent> {
    const agentOptions = validateAgentOptions(options.options)
    if (options.signal?.aborted === true) throw new AgentCreationAbortedError({ reason: options.signal.reason })
    if (this.#live.has(sessionId)) throw new AgentExistsError({ agentId: sessionId })
    const session = await prepareResumedSession(this.#ctx, sessionId, options.signal)
    return this.#publish(session, agentOptions, options, 'resume')
  }

  /** §13.2 steps 2–3 over a registered session; undoes everything on a failure. */
  async #publish(session: Session, agentOptions: AgentOptions, options: ResumeAgentOptions, source: 'create' | 'resume'): Promise<Agent> {
    const sessions = this.#ctx.get(services.sessions)
    let agent: ReactLoopAgent
    try {
      agent = new ReactLoopAgent({ parent: this.#ctx, session, options: agentOptions, initiator: this.#initiator, marks: this.#marks })
    } catch (error) {
      await sessions.dispose(session)
      throw error
    }
    try {
      await options.setup?.(agent.ctx)
      const signal: AbortSignal | undefined = options.signal
      if (signal?.aborted === true) throw new AgentCreationAbortedError({ reason: signal.reason })
      if (this.#live.has(session.id)) throw new AgentExistsError({ agentId: session.id })
    } catch (error) {
      await agent.ctx.dispose()
      await sessions.dispose(session)
      throw error
    }
    this.#live.set(session.id, agent)
    agent.onDispose(async () => {
      this.#live.delete(session.id)
      this.#ctx.emit('agent/disposed', { agent })
      await sessions.dispose(session)
    })
    this.#ctx.emit('agent/created', { agent })
    this.#ctx.emit('agent/session-start', { agent, source })
    return agent
  }

  /**
   * The option defaults `harness.createAgent` starts from (09-api.md H2): the harness
   * `maxParallelToolCalls`, then the call fields of the harness model route.
   *
   * @returns a fresh options object
   */
  harnessDefaults(): AgentOptions {
    const models = this.#ctx.get(services.models)
    const route = models instanceof ModelRouter ? models.defaults : undefined
    return { ...this.#defaults, ...route }
  }

  /**
   * The published agent with this id.
   *
   * @param id - the agent id
   * @returns the agent, or `undefined`
   */
  get(id: string): Agent | undefined {
    return this.#live.get(id)
  }

  /**
   * The published agents, in creation order.
   *
   * @returns a frozen array
   */
  list(): readonly Agent[] {
    return Object.freeze([...this.#live.values()])
  }

  /**
   * Whether `value` is a request the agent loop built (04-agent.md §12.3).
   *
   * @param value - anything
   * @returns `true` for a loop-built request
   */
  isLoopRequest(value: unknown): boolean {
    return this.#marks.isLoopRequest(value)
  }

  /**
   * Disposes every agent (harness close, 09-api.md H8).
   *
   * @returns resolves once every agent is disposed
   * @internal
   */
  async disposeAll(): Promise<void> {
    await Promise.allSettled([...this.#live.values()].map((agent) => agent.dispose()))
  }
}
