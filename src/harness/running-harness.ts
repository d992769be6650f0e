import type { Agent } from '../agent/agent.js'
import type { AgentRegistry } from '../agent/agent-registry.js'
import { HarnessCloseError } from '../errors/harness-close-error.js'
import { HarnessClosedError } from '../errors/harness-closed-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { type Context, type DisposeError, kernelOf, type ListenOptions } from '../kernel/context.js'
import type { Disposer } from '../kernel/effect.js'
import type { EventName, ListenerOf } from '../kernel/yoke-events.js'
import { type HarnessInspection, inspectKernel } from '../kernel/inspect.js'
import { AgentsKey } from '../agent/agents-key.js'
import { HarnessAgentRegistry } from '../agent/harness-agent-registry.js'
import type { PersistenceCoordinator } from '../persistence/persistence-coordinator.js'
import type { PresetComposition } from '../scope/compose-presets.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { Session } from '../session/session.js'
import type { ToolRegistry } from '../tools/tool-registry.js'
import type { SystemPrompt } from '../prompt/system-prompt.js'
import { AgentOpener } from './agent-opener.js'
import { registryOptionsOf, resumeOptionsOf } from './agent-overrides.js'
import type { HarnessDescription } from './describe-harness.js'
import { checkOptions, checkOptionsArgument, type OptionRule, optionRule } from '../kernel/option-issues.js'
import { forkSession } from './fork-session.js'
import type {
  AgentOverrides,
  Harness,
  HarnessCloseOptions,
  HarnessForkOptions,
  ResumeOverrides,
  SessionHistory,
  SessionSummary,
} from './harness.js'
import { listSessions } from './list-sessions.js'
import { readSession } from './read-session.js'

/** `createAgent` options: `sessionId` plus the overrides (their values checked by `registryOptionsOf`). */
const CREATE_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({
  sessionId: optionRule.string,
  preset: optionRule.any,
  model: optionRule.any,
  options: optionRule.any,
  tools: optionRule.any,
  instructions: optionRule.any,
  signal: optionRule.any,
})
/** `fork` options; `at` is checked by the fork, a set `id` must be a string (the fork checks the rest). */
const FORK_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({ at: optionRule.any, id: optionRule.string })

/** The `drainMs` of `close(options)`: a number ≥ 0 (`Infinity` allowed); 0 when absent. */
function drainMsOf(options: HarnessCloseOptions | undefined): number {
  const { drainMs = 0 } = checkOptionsArgument(options, CLOSE_RULES, '{ drainMs? }')
  return drainMs
}

const CLOSE_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({
  drainMs: (value: unknown) =>
    typeof value === 'number' && value >= 0 ? undefined : 'must be a number of milliseconds ≥ 0 (Infinity allowed)',
})

/** The sessions named by the persistence entry's `CLOSE_FAILED` error, in its order. */
function unflushedSessionsOf(errors: readonly DisposeError[]): string[] {
  const ids: string[] = []
  for (const { error } of errors) {
    if (!PersistenceError.is(error) || error.code !== 'CLOSE_FAILED') continue
    for (const failure of error.errors ?? []) {
      const id = (failure as { readonly sessionId?: unknown }).sessionId
      if (typeof id === 'string' && !ids.includes(id)) ids.push(id)
    }
  }
  return ids
}

/**
 * The {@link Harness} `createHarness` returns: service getters over the root, the agent methods
 * (create, resume, open, fork, list) and the close sequence.
 *
 * @internal
 */
export class RunningHarness implements Harness {
  readonly ctx: Context
  readonly #description: HarnessDescription
  readonly #listeners: Context
  readonly #presets: PresetComposition
  readonly #pending = new Set<Promise<unknown>>()
  readonly #opener: AgentOpener
  #closing: Promise<void> | undefined

  /**
   * @param ctx - the started root
   * @param listeners - the context of `harness.on` listeners (made before any plugin)
   * @param presets - the composed presets
   * @param description - what `describe()` returns
   */
  constructor(ctx: Context, listeners: Context, presets: PresetComposition, description: HarnessDescription) {
    this.ctx = ctx
    this.#listeners = listeners
    this.#presets = presets
    this.#description = description
    this.#opener = new AgentOpener({
      live: (sessionId) => this.ctx.agents.get(sessionId),
      resume: (sessionId, overrides) => this.ctx.agents.resume(sessionId, resumeOptionsOf(overrides)),
      create: (sessionId, overrides) => this.ctx.agents.create({ ...registryOptionsOf(overrides), id: sessionId }),
    })
  }

  get closed(): boolean {
    return this.#closing !== undefined
  }

  get sessions(): SessionRegistry {
    return this.ctx.sessions
  }

  get persistence(): PersistenceCoordinator {
    return this.ctx.persistence
  }

  get tools(): ToolRegistry {
    return this.ctx.tools
  }

  get systemPrompt(): SystemPrompt {
    return this.ctx.systemPrompt
  }

  get agents(): AgentRegistry {
    return this.ctx.agents
  }

  createAgent(options: AgentOverrides & { readonly sessionId?: string } = {}): Promise<Agent> {
    return this.#track('createAgent', () => {
      const { sessionId, ...overrides } = checkOptions(
        options,
        CREATE_RULES,
        '{ sessionId?, preset?, model?, options?, tools?, instructions?, signal? }',
      )
      return this.#opener.remember(
        this.ctx.agents.create({
          ...registryOptionsOf(overrides),
          ...(sessionId === undefined ? {} : { id: sessionId }),
        }),
        overrides,
      )
    })
  }

  resumeAgent(sessionId: string, options: ResumeOverrides = {}): Promise<Agent> {
    return this.#track('resumeAgent', () =>
      this.#opener.remember(this.ctx.agents.resume(sessionId, resumeOptionsOf(options)), options),
    )
  }

  openAgent(sessionId: string, options: ResumeOverrides = {}): Promise<Agent> {
    return this.#track('openAgent', () => {
      // Checked even when the agent is live (and the overrides are not used), so bad input never passes.
      registryOptionsOf(options)
      return this.#opener.open(sessionId, options)
    })
  }

  fork(sessionId: string, options: HarnessForkOptions = {}): Promise<Session> {
    return this.#track('fork', () =>
      forkSession(this.ctx, sessionId, checkOptions(options, FORK_RULES, '{ at?, id? }')),
    )
  }

  listSessions(): Promise<SessionSummary[]> {
    return this.#track('listSessions', () => listSessions(this.ctx))
  }

  readSession(sessionId: string): Promise<SessionHistory> {
    return this.#track('readSession', () => readSession(this.ctx, sessionId))
  }

  describe(): HarnessDescription {
    return this.#description
  }

  inspect(): HarnessInspection {
    return inspectKernel(kernelOf(this.ctx))
  }

  on<N extends EventName>(name: N, listener: ListenerOf<N>, options?: ListenOptions): Disposer {
    if (this.closed) throw new HarnessClosedError({ operation: 'on' })
    return this.#listeners.on(name, listener, options)
  }

  close(options?: HarnessCloseOptions): Promise<void> {
    if (this.#closing !== undefined) return this.#closing
    let drainMs: number
    try {
      drainMs = drainMsOf(options)
    } catch (error) {
      return Promise.reject(error)
    }
    this.#closing = this.#close(drainMs)
    return this.#closing
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  /** Runs a harness operation: refused after close, awaited by close while pending. */
  #track<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new HarnessClosedError({ operation }))
    let pending: Promise<T>
    try {
      pending = run()
    } catch (error) {
      return Promise.reject(error)
    }
    this.#pending.add(pending)
    const forget = (): void => {
      this.#pending.delete(pending)
    }
    pending.then(forget, forget)
    return pending
  }

  /**
   * Pending creates, resumes, opens and forks settle (harness close makes pending creates
   * reject `HarnessClosedError`), every agent is disposed, then the presets, then the plugins
   * stop in reverse start order and the root is disposed.
   */
  async #close(drainMs: number): Promise<void> {
    const errors: DisposeError[] = []
    const agents = this.ctx.getOptional(AgentsKey)
    // Only the built-in registry has a close step; a registry from a replaced entry closes with its plugin.
    const closingAgents = agents instanceof HarnessAgentRegistry ? agents.close(drainMs) : Promise.resolve()
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending])
    try {
      await closingAgents
    } catch (error) {
      errors.push({ label: 'agents', error })
    }
    errors.push(...(await this.#presets.dispose()))
    errors.push(...(await this.ctx.dispose()).errors)
    if (errors.length > 0) throw new HarnessCloseError({ errors, unflushedSessions: unflushedSessionsOf(errors) })
  }
}
