import type { Context } from '../kernel/context.js'
import type { ModelAdapter, ModelRoute } from '../model/model-adapter.js'
import type { Initiator } from '../scope/initiator.js'
import type { JsonObject } from '../session/json-value.js'
import type { Agent } from './agent.js'
import type { AgentOptions } from './agent-options.js'
import type { ResumeAgentOptions } from './resume-agent.js'

/** Options of {@link AgentRegistry.create}. */
export interface CreateAgentOptions {
  /**
   * The agent (= session) id.
   *
   * @default the harness id source's next `session` id
   */
  readonly id?: string
  /** The agent options, field by field over the harness defaults and the preset's options; validated strictly. */
  readonly options?: AgentOptions
  /**
   * A preset of this harness: its options sit under `options`, the session
   * header records it (`agentPreset`) and the agent's scope gets it as parent.
   *
   * @default none
   */
  readonly preset?: string
  /**
   * This agent's model: the adapter is routed in the agent's scope layer (the harness route is
   * untouched), and its call fields replace the harness route's as option defaults.
   *
   * @default the harness `model`
   */
  readonly model?: ModelAdapter | ModelRoute
  /**
   * Events the agent's session starts from: each is fully validated, a
   * `session/end-seed` marker follows (even for `[]`), and the driver continues from them (turn
   * numbering, inbox replay), as after a fork.
   *
   * @default none: an empty session
   */
  readonly seed?: readonly unknown[]
  /**
   * A JSON object for the embedder, stored as the session header's `metadata`.
   *
   * @default none
   */
  readonly meta?: JsonObject
  /** Runs with the agent context before the agent is published. */
  readonly setup?: (ctx: Context) => void | Promise<void>
  /** Aborting it before publication rejects {@link AgentCreationAbortedError}. */
  readonly signal?: AbortSignal
}

/**
 * The agents of one harness: `harness.agents`, `ctx.agents`. Creates and resumes agents and lists
 * the published ones. Through `ctx.agents` the agents it creates belong to that context: disposing
 * the context disposes them.
 */
export interface AgentRegistry {
  /** Which agent started the current piece of work. */
  readonly initiator: Initiator<Agent>
  /**
   * Creates and publishes an agent. Its options are, field by field, the harness
   * `maxParallelToolCalls` and model route's call fields (those of `model` instead, when given),
   * then the preset's options, then `options`.
   *
   * @param input - id, agent options, preset, model, seed, meta, setup and signal
   * @returns the published agent
   * @throws (as a rejection) `HarnessClosedError` once harness close began, `InvalidOptionsError`,
   *   `UnknownPresetError`, `AgentCreationAbortedError`, `AgentExistsError`, `PersistenceError`
   *   `SESSION_EXISTS` for a given id with a stored log (a generated id that is live or stored is
   *   skipped), or what `setup` threw; nothing stays published and the id stays reusable
   */
  create(input?: CreateAgentOptions): Promise<Agent>
  /**
   * Resumes a stored session as an agent: the crash-repair closers are committed first, then the
   * agent is built and published as by `create`. The agent rebinds to the preset its header
   * recorded, continues the turn numbering and replays the inbox (`queued: 'discard'` cancels what
   * it replays, durably, before publication); it never starts a turn by itself.
   *
   * @param sessionId - the stored session's id
   * @param input - agent options, expected preset, model, setup, signal and the queued policy
   * @returns the published agent
   * @throws (as a rejection) `HarnessClosedError`, `InvalidOptionsError`, `AgentExistsError` when
   *   an agent drives that id, every persistence `prepare` error unchanged, `PresetMismatchError`,
   *   `UnknownPresetError` for a recorded preset this harness lacks, `AgentCreationAbortedError`,
   *   what `setup` threw, or the discard's flush error; nothing stays published
   */
  resume(sessionId: string, input?: ResumeAgentOptions): Promise<Agent>
  /**
   * The option defaults `harness.createAgent` starts from: the harness `maxParallelToolCalls`,
   * then the call fields of the harness model route.
   *
   * @returns a fresh options object
   */
  harnessDefaults(): AgentOptions
  /**
   * The published agent with this id.
   *
   * @param id - the agent id
   * @returns the agent, or `undefined`
   */
  get(id: string): Agent | undefined
  /**
   * The published agents, in creation order.
   *
   * @returns a frozen array
   */
  list(): readonly Agent[]
  /**
   * Whether `value` is a request the agent loop built.
   *
   * @param value - anything
   * @returns `true` for a loop-built request
   */
  isLoopRequest(value: unknown): boolean
}
