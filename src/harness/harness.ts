import type { Agent } from '../agent/agent.js'
import type { AgentOptions } from '../agent/agent-options.js'
import type { AgentRegistry } from '../agent/agent-registry.js'
import type { QueuedPolicy } from '../agent/resume-agent.js'
import type { Context, ListenOptions } from '../kernel/context.js'
import type { Disposer } from '../kernel/effect.js'
import type { EventName, ListenerOf } from '../kernel/yoke-events.js'
import type { HarnessInspection } from '../kernel/inspect.js'
import type { ModelAdapter, ModelRoute } from '../model/model-adapter.js'
import type { PersistenceCoordinator } from '../persistence/persistence-coordinator.js'
import type { Instructions } from '../prompt/instructions.js'
import type { Message } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { SessionHeader } from '../session/session-header.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { ToolDefinition } from '../tools/tool-definition.js'
import type { ToolRegistry } from '../tools/tool-registry.js'
import type { SystemPrompt } from '../prompt/system-prompt.js'
import type { HarnessDescription } from './describe-harness.js'
import type { AgentStreamEvent } from '../stream/agent-stream-event.js'

/**
 * What {@link Harness.createAgent}, {@link Harness.resumeAgent} and {@link Harness.openAgent} take.
 */
export interface AgentOverrides {
  /**
   * A preset of this harness. On create its options sit under `options`;
   * on resume it must equal the preset the session recorded (`PresetMismatchError` otherwise).
   *
   * @default none on create; the recorded preset on resume
   */
  readonly preset?: string
  /**
   * This agent's model, routed in its own scope layer (the harness route is untouched); a route's
   * call fields replace the harness route's as option defaults.
   *
   * @default the harness `model`
   */
  readonly model?: ModelAdapter | ModelRoute
  /**
   * The agent options, field by field over the harness `maxParallelToolCalls` and model route,
   * then the preset's options.
   *
   * @default {}
   */
  readonly options?: AgentOptions
  /**
   * Tools registered through `agent.ctx`: visible to this agent only, removed when it is disposed.
   *
   * @default []
   */
  readonly tools?: readonly ToolDefinition[]
  /**
   * Instructions registered through `agent.ctx` like the harness option (a string is the section
   * `instructions`): a same-named global section is shadowed for this agent only.
   *
   * @default none
   */
  readonly instructions?: Instructions
  /** Aborting it before publication rejects `AgentCreationAbortedError`. */
  readonly signal?: AbortSignal
}

/**
 * What {@link Harness.resumeAgent} and {@link Harness.openAgent} take: the overrides plus what
 * happens to the prompts the stored log still holds queued.
 */
export interface ResumeOverrides extends AgentOverrides {
  /**
   * The prompts (and steering) queued before the process stopped or the agent was disposed, that
   * no turn claimed: `'keep'` them (the next turns run them first, oldest first), or `'discard'`
   * them: one canceled `agent/inbox/spliced` event per list, durable before the call resolves, so
   * they never run and a later resume does not see them (when that write fails, the call rejects
   * with the flush error and publishes nothing; persistence retries the write like any failed
   * background write). Applies only when the call resumes a stored session: `openAgent` ignores it
   * for a live agent and for a new one. Any other value rejects `InvalidOptionsError` (path
   * `['queued']`).
   *
   * @default 'keep'
   */
  readonly queued?: QueuedPolicy
}

/** What {@link Harness.readSession} returns: a session's history, read without changing anything. */
export interface SessionHistory {
  /** The session id. */
  readonly id: string
  /** The session header. */
  readonly header: SessionHeader
  /**
   * The events, in seq order. For a stored log with an interrupted turn they end with the
   * crash-repair closers a resume would write (`repairPending` is then `true`); they are not written.
   */
  readonly events: readonly AgentStreamEvent[]
  /** The model history the events make (what `session.deriveMessages()` returns). */
  readonly messages: readonly Message[]
  /** `true` when the session is live in this harness (read from memory, unflushed events included). */
  readonly live: boolean
  /** `true` when the stored log needs a repair that a resume would write first (a torn tail, closers). */
  readonly repairPending: boolean
}

/** One entry of {@link Harness.listSessions}: a session header's identity and whether it is live here. */
export interface SessionSummary {
  /** The session id. */
  readonly id: string
  /** The header's `createdAt`. */
  readonly createdAt: number
  /** The fork parent, when the session is a fork. */
  readonly parentSession?: string
  /** `true` when the session is live in this harness. */
  readonly live: boolean
}

/** Options of {@link Harness.fork}. */
export interface HarnessForkOptions {
  /**
   * The last seq to copy (inclusive).
   *
   * @default the source's last (stored) seq
   */
  readonly at?: number
  /**
   * The child's id.
   *
   * @default the harness id source's next `session` id
   */
  readonly id?: string
}

/** Options of {@link Harness.close}. */
export interface HarnessCloseOptions {
  /**
   * How long turns that are running or queued when `close` is called may take to finish, in
   * milliseconds (`Infinity`: as long as they need). Turns still running after it end aborted
   * `{ kind: 'disposed' }`, with their interrupted tool calls closed in the log. Meanwhile the
   * harness refuses new agents, but agents already open still take `run()` calls: stop your
   * servers from taking requests before closing.
   *
   * @defaultValue 0 (end running turns at once)
   */
  readonly drainMs?: number
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
   * The session registry: `ctx.get(services.sessions)`, bound to the root.
   *
   * @throws `ServiceMissingError` when a patch disabled the `session` entry
   */
  readonly sessions: SessionRegistry
  /**
   * The persistence coordinator: `ctx.get(services.persistence)`.
   *
   * @throws `ServiceMissingError` when a patch disabled the `persistence` entry
   */
  readonly persistence: PersistenceCoordinator
  /**
   * The tool registry: `ctx.get(services.tools)`, bound to the root, so tools
   * registered through it default to the global layer and live until the harness closes.
   *
   * @throws `ServiceMissingError` when a patch disabled the `tools` entry
   */
  readonly tools: ToolRegistry
  /**
   * The system prompt: `ctx.get(services.systemPrompt)`, bound to the root, so
   * sections, contexts and variables registered through it are global and live until close.
   *
   * @throws `ServiceMissingError` when a patch disabled the `system-prompt` entry
   */
  readonly systemPrompt: SystemPrompt
  /**
   * The agent registry: `ctx.get(services.agents)`.
   *
   * @throws `ServiceMissingError` when a patch disabled the `agent-loop` entry
   */
  readonly agents: AgentRegistry
  /**
   * Creates an agent: `agents.create` with `id = sessionId`, the preset, the layered
   * options and the model, and a setup that registers `tools` and `instructions` through
   * `agent.ctx` (this agent's only, removed with it).
   *
   * @param options - the overrides and the session id
   * @returns the published agent
   * @throws (as a rejection) {@link HarnessClosedError} after close; `PersistenceError`
   *   `SESSION_EXISTS` for a given `sessionId` with a stored log; {@link AgentExistsError} for a live one (a generated id that is taken is skipped);
   *   {@link UnknownPresetError}; {@link AgentCreationAbortedError}; {@link InvalidOptionsError}.
   *   A failure publishes and persists nothing and leaves the id reusable.
   */
  createAgent(options?: AgentOverrides & { readonly sessionId?: string }): Promise<Agent>
  /**
   * Resumes a stored session as an agent: `agents.resume`; crash repair is
   * committed first; the agent rebinds to the recorded preset; no turn starts.
   *
   * @param sessionId - the stored session's id
   * @param options - the overrides
   * @returns the published agent
   * @throws (as a rejection) {@link HarnessClosedError} after close; {@link AgentExistsError};
   *   `PersistenceError` `SESSION_NOT_FOUND`; `SessionLockedError`; `SessionFormatUnsupportedError`;
   *   `PersistenceCorruptionError`; {@link PresetMismatchError}; {@link UnknownPresetError};
   *   `InvalidOptionsError` (a `queued` other than `'keep'` or `'discard'`)
   * @example
   * ```ts
   * // after a restart: drop what the previous process left queued, then serve the new request
   * const agent = await harness.resumeAgent(userId, { queued: 'discard' })
   * const result = await agent.run(prompt)
   * ```
   */
  resumeAgent(sessionId: string, options?: ResumeOverrides): Promise<Agent>
  /**
   * The live agent of that id, else the stored session resumed, else a new agent created with
   * that id. Concurrent calls for one id share one attempt: they resolve to the same
   * agent and read storage once. A live agent (or the one a joined attempt opens) is returned only
   * when the given overrides match the ones it runs with: each override left out matches;
   * `preset` is compared with the recorded preset, each `options` field with the agent's resolved
   * options, `model` and `instructions` by value with the ones it was built with, `tools` by name;
   * `signal` and `queued` are not compared.
   *
   * @param sessionId - the session id
   * @param options - the overrides; `queued` applies only to a resume
   * @returns the agent
   * @throws (as a rejection) {@link AgentOverridesMismatchError} `AGENT_OVERRIDES_MISMATCH` when
   *   the agent is live with other overrides (its `fields` name them; the agent is untouched); what
   *   {@link Harness.resumeAgent} or {@link Harness.createAgent} reject with
   */
  openAgent(sessionId: string, options?: ResumeOverrides): Promise<Agent>
  /**
   * Reads a session's history without opening it: never appends an event, never writes or takes
   * a lease (unlike `openAgent`, whose resume logs a `session/end-seed` marker and commits crash
   * repair). A session live in this harness is read from memory; a stored one through persistence
   * `inspect`, so a log another process holds can be read too.
   *
   * @param sessionId - the session id
   * @returns the header, events, model history and whether a repair is pending
   * @throws (as a rejection) {@link HarnessClosedError} after close; `PersistenceError`
   *   `SESSION_NOT_FOUND`; the read errors of persistence `inspect`
   *   (`PersistenceCorruptionError`, `SessionFormatUnsupportedError`, …)
   * @example
   * ```ts
   * const { messages } = await harness.readSession(userId)
   * for (const message of messages) console.log(message.role, message.content)
   * ```
   */
  readSession(sessionId: string): Promise<SessionHistory>
  /**
   * Forks a live or a stored session: the inclusive prefix up to `at` becomes a new
   * session with a lineage header (`parentSession`, `seedLength`), flushed, then disposed. A stored
   * source is read with persistence `inspect`, so nothing is written to it. The source gains no
   * event. Drive the child with `resumeAgent(child.id)`.
   *
   * @param sessionId - the source session's id
   * @param options - `at`, `id`
   * @returns the child, a read-only snapshot (its `append` throws `SESSION_DISPOSED`)
   * @throws (as a rejection) {@link HarnessClosedError}; `SessionForkError` `SESSION_EXISTS`,
   *   `SESSION_NOT_FOUND`, `INVALID_BOUNDARY`, `OPEN_TURN`; read errors of a stored source
   */
  fork(sessionId: string, options?: HarnessForkOptions): Promise<Session>
  /**
   * Every session of this harness, live or stored: one entry per id, newest
   * `createdAt` first, ties by id. Reads headers only.
   *
   * @returns the summaries
   * @throws (as a rejection) {@link HarnessClosedError} after close
   */
  listSessions(): Promise<SessionSummary[]>
  /**
   * Describes the composed entries this harness was built from.
   *
   * @returns the same description `describeHarness(options)` returns
   */
  describe(): HarnessDescription
  /**
   * A synchronous, JSON-safe snapshot of plugins, services, events and effects.
   *
   * @returns the inspection
   */
  inspect(): HarnessInspection
  /**
   * Listens untagged, so the listener hears dispatches of every scope. The
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
   * Closes the harness: new agents are refused at once (`closed` is set), running turns are
   * given `drainMs` to finish, the rest end aborted `{ kind: 'disposed' }`, every session is
   * flushed and its lease released, then plugins stop in reverse start order and the root is
   * disposed. Idempotent: every call returns the promise of the first (its options win).
   *
   * @param options - `drainMs`: how long running and queued turns may still take
   * @returns resolves once nothing can call back into the harness
   * @throws {@link InvalidArgumentError} (as a rejection, nothing closed) for a bad `drainMs`;
   *   {@link HarnessCloseError} (as a rejection) when a step failed; every step still ran
   * @example
   * ```ts
   * process.once('SIGTERM', () => {
   *   server.close() // stop taking requests first
   *   void harness.close({ drainMs: 10_000 }) // then let turns in flight finish, for up to 10 s
   * })
   * ```
   */
  close(options?: HarnessCloseOptions): Promise<void>
  /** Same as {@link Harness.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>
}
