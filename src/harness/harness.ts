import type { Agent } from '../agent/agent.js'
import type { AgentOptions } from '../agent/agent-options.js'
import type { AgentRegistry } from '../agent/agent-registry.js'
import type { Context, ListenOptions } from '../kernel/context.js'
import type { Disposer } from '../kernel/effect.js'
import type { EventName, ListenerOf } from '../kernel/event-catalog.js'
import type { HarnessInspection } from '../kernel/inspect.js'
import type { PersistenceCoordinator } from '../persistence/persistence-coordinator.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { ToolRegistry } from '../tools/tool-registry.js'
import type { HarnessDescription } from './describe-harness.js'

/** What {@link Harness.createAgent} takes (the supported subset of `AgentOverrides`). */
export interface CreateAgentOverrides {
  /** The session (= agent) id; generated when absent. */
  readonly sessionId?: string
  /** The agent options, field by field over the harness defaults. */
  readonly options?: AgentOptions
  /** Aborting it before publication rejects `AgentCreationAbortedError`. */
  readonly signal?: AbortSignal
}

/** What {@link Harness.resumeAgent} takes (the supported subset of `AgentOverrides`). */
export interface ResumeAgentOverrides {
  /** The agent options, field by field over the harness defaults. */
  readonly options?: AgentOptions
  /** Aborting it before publication rejects `AgentCreationAbortedError`. */
  readonly signal?: AbortSignal
}

/**
 * A running harness: the root context with its started plugins. Build one with `createHarness()`;
 * close it with {@link Harness.close} (or `await using`).
 *
 * @example
 * ```ts
 * await using harness = await createHarness({ plugins: [metrics] })
 * console.log(harness.describe().entries.map((entry) => entry.id))
 * ```
 */
export interface Harness {
  /** The root context (label `harness`); plugins' contexts are its children. */
  readonly ctx: Context
  /** `true` from the moment {@link Harness.close} is first called. */
  readonly closed: boolean
  /**
   * The session registry: `ctx.get(services.sessions)`, bound to the root (09-api.md H1).
   *
   * @throws `ServiceMissingError` when a patch disabled the `session` entry
   */
  readonly sessions: SessionRegistry
  /**
   * The persistence coordinator: `ctx.get(services.persistence)` (09-api.md H1).
   *
   * @throws `ServiceMissingError` when a patch disabled the `persistence` entry
   */
  readonly persistence: PersistenceCoordinator
  /**
   * The tool registry: `ctx.get(services.tools)`, bound to the root (09-api.md H1), so tools
   * registered through it default to the global layer and live until the harness closes.
   *
   * @throws `ServiceMissingError` when a patch disabled the `tools` entry
   */
  readonly tools: ToolRegistry
  /**
   * The agent registry: `ctx.get(services.agents)` (09-api.md H1).
   *
   * @throws `ServiceMissingError` when a patch disabled the `agent-loop` entry
   */
  readonly agents: AgentRegistry
  /**
   * Creates an agent (09-api.md H2): `agents.create` with the harness `maxParallelToolCalls` and
   * the harness model route's call fields under `options.options`.
   *
   * @param options - the session id, agent options and a signal
   * @returns the published agent
   * @throws (as a rejection) {@link HarnessClosedError} after close; what `agents.create` rejects with
   */
  createAgent(options?: CreateAgentOverrides): Promise<Agent>
  /**
   * Resumes a stored session as an agent (09-api.md H3): `agents.resume` with the harness
   * defaults under `options.options`. Crash repair is committed first; no turn starts.
   *
   * @param sessionId - the stored session's id
   * @param options - the agent options and a signal
   * @returns the published agent
   * @throws (as a rejection) {@link HarnessClosedError} after close; what `agents.resume` rejects
   *   with (`AgentExistsError`, `PersistenceError` `SESSION_NOT_FOUND`, …)
   */
  resumeAgent(sessionId: string, options?: ResumeAgentOverrides): Promise<Agent>
  /**
   * Describes the composed entries this harness was built from (09-api.md; 01-kernel.md M10).
   *
   * @returns the same description `describeHarness(options)` returns
   */
  describe(): HarnessDescription
  /**
   * A synchronous, JSON-safe snapshot of plugins, services, events and effects (01-kernel.md I1).
   *
   * @returns the inspection
   */
  inspect(): HarnessInspection
  /**
   * Listens untagged, so the listener hears dispatches of every scope (09-api.md H7). The
   * listener lives in a context made before any plugin, so at close it is removed only after
   * every plugin stopped: it hears the shutdown (`kernel/plugin-state`, `session/disposed`).
   *
   * @param name - a defined event
   * @param listener - its listener, typed by the event's mode
   * @param options - `prepend` to run before the others
   * @returns a disposer
   * @throws {@link UnknownEventError} for an undefined event; {@link HarnessClosedError} after close
   */
  on<N extends EventName>(name: N, listener: ListenerOf<N>, options?: ListenOptions): Disposer
  /**
   * Closes the harness: stops plugins in reverse start order and disposes the root. Idempotent:
   * every call returns the same promise; `closed` is set at once.
   *
   * @returns resolves once nothing can call back into the harness
   * @throws {@link HarnessCloseError} (as a rejection) when a step failed; every step still ran
   */
  close(): Promise<void>
  /** Same as {@link Harness.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>
}
