import { AgentExistsError } from '../errors/agent-errors.js'
import { ErrorCode } from '../errors/codes.js'
import { HarnessClosedError } from '../errors/harness-closed-error.js'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { bindOwner } from '../kernel/bind-owner.js'
import type { Context } from '../kernel/context.js'
import { checkOptions } from '../kernel/option-issues.js'
import type { Disposer } from '../kernel/effect.js'
import { IdsKey } from '../kernel/host-keys.js'
import { ModelsKey } from '../model/models-key.js'
import { PersistenceKey } from '../persistence/persistence-key.js'
import { reserveNewSession } from '../persistence/reserve-new-session.js'
import { SessionsKey } from '../session/sessions-key.js'
import type { ModelAdapter, ModelRoute } from '../model/model-adapter.js'
import { modelOptionIssues, type ResolvedModelRoute, resolveModelRoute } from '../model/model-plugin.js'
import { ModelRouter } from '../model/model-router.js'
import type { Initiator, InitiatorControl } from '../scope/initiator.js'
import type { StagedSession } from '../session/session-registry.js'
import type { Agent } from './agent.js'
import type { AgentRegistry, CreateAgentOptions } from './agent-registry.js'
import { type AgentOptions, validateAgentOptions } from './agent-options.js'
import { registerAgentVariables } from './agent-variables.js'
import { layerAgentOptions, type PresetBinding, presetForCreate, presetForResume } from './bind-preset.js'
import type { LoopRequestMarks } from './request-builder.js'
import { CREATE_AGENT_RULES, RESUME_AGENT_RULES } from './check-registry-options.js'
import { assertNotStored, CreationSignal } from './creation-signal.js'
import { freshSessionId } from '../persistence/fresh-session-id.js'
import { createReactLoopAgent } from './react-loop-agent.js'
import { applyQueuedPolicy, prepareResumedSession, type ResumeAgentOptions } from './resume-agent.js'

/** What a new driver is built with, once the options are layered. */
interface AgentPlan {
  readonly options: AgentOptions
  readonly preset: PresetBinding | undefined
  readonly route: ResolvedModelRoute | undefined
}

function checkModel(model: unknown): ResolvedModelRoute | undefined {
  if (model === undefined) return undefined
  const issues = modelOptionIssues(model).map((issue) => ({ ...issue, path: ['model', ...issue.path] }))
  if (issues.length > 0) throw new InvalidOptionsError({ issues, value: model })
  return resolveModelRoute(model as ModelAdapter | ModelRoute)
}

/** The state every owner view of one harness's registry shares. */
interface RegistryCore {
  readonly ctx: Context
  readonly initiator: InitiatorControl<Agent>
  readonly marks: LoopRequestMarks
  readonly defaults: AgentOptions
  readonly live: Map<string, Agent>
  readonly pending: Set<Promise<unknown>>
  readonly closing: AbortController
  closed: Promise<void> | undefined
  readonly views: WeakMap<Context, HarnessAgentRegistry>
}

/**
 * Builds the agent registry of one harness (the `agent-loop` entry provides it as `harness.agents`).
 *
 * @param ctx - the `agent-loop` entry's context (the owner of agents created through `harness.agents`)
 * @param initiator - the harness initiator
 * @param marks - the harness loop-request marks
 * @param defaults - the harness-level option defaults (`maxParallelToolCalls`)
 * @returns the registry, with the `close` the entry runs when it stops
 */
export function createAgentRegistry(
  ctx: Context,
  initiator: InitiatorControl<Agent>,
  marks: LoopRequestMarks,
  defaults: AgentOptions = {},
): HarnessAgentRegistry {
  return new HarnessAgentRegistry(ctx, initiator, marks, defaults)
}

/**
 * The agents of one harness: `harness.agents`, `ctx.agents`. Creates
 * agent drivers and lists the published ones. Users see it as {@link AgentRegistry}.
 */
export class HarnessAgentRegistry implements AgentRegistry {
  // Not readonly: forOwner() points a new view at this registry's core.
  #core: RegistryCore
  /** The context that owns the agents created through this view. */
  #owner: Context

  /**
   * @param ctx - the `agent-loop` entry's context (the owner of agents created through `harness.agents`)
   * @param initiator - the harness initiator
   * @param marks - the harness loop-request marks
   * @param defaults - the harness-level option defaults (`maxParallelToolCalls`)
   */
  constructor(ctx: Context, initiator: InitiatorControl<Agent>, marks: LoopRequestMarks, defaults: AgentOptions = {}) {
    this.#core = {
      ctx,
      initiator,
      marks,
      defaults: Object.freeze({ ...defaults }),
      live: new Map(),
      pending: new Set(),
      closing: new AbortController(),
      closed: undefined,
      views: new WeakMap(),
    }
    this.#owner = ctx
    this.#core.views.set(ctx, this)
  }

  /**
   * The same registry with `owner` as the owner of the agents it creates or resumes: disposing
   * `owner` disposes them, and a creation still pending rejects {@link ContextDisposedError}.
   * `ctx.agents` is `harness.agents.forOwner(ctx)`.
   *
   * @param owner - a context of this harness
   * @returns the view (one per owner)
   */
  forOwner(owner: Context): HarnessAgentRegistry {
    const core = this.#core
    let view = core.views.get(owner)
    if (view === undefined) {
      view = new HarnessAgentRegistry(core.ctx, core.initiator, core.marks)
      view.#core = core
      view.#owner = owner
      core.views.set(owner, view)
    }
    return view
  }

  /** Owner-bound view: `ctx.get(services.agents)` is {@link HarnessAgentRegistry.forOwner}`(ctx)`. */
  [bindOwner](owner: Context): HarnessAgentRegistry {
    return this.forOwner(owner)
  }

  /** Which agent started the current piece of work. */
  get initiator(): Initiator<Agent> {
    return this.#core.initiator
  }

  /**
   * Creates and publishes an agent. Its options are, field by field, the
   * harness `maxParallelToolCalls` and model route's call fields (those of `model` instead, when
   * given), then the preset's options, then `options`.
   *
   * @param input - id, agent options, preset, model, seed, meta, setup and signal
   * @returns the published agent
   * @throws (as a rejection) {@link HarnessClosedError} once harness close began,
   *   {@link InvalidOptionsError}, {@link UnknownPresetError}, {@link AgentCreationAbortedError},
   *   {@link AgentExistsError}, `PersistenceError` `SESSION_EXISTS` for a given id with a stored log (a generated id that is live or stored is skipped), or
   *   what `setup` threw; nothing stays published and the id stays reusable
   */
  create(input?: CreateAgentOptions): Promise<Agent> {
    return this.#track('createAgent', async () => {
      const options = checkOptions(
        input,
        CREATE_AGENT_RULES,
        '{ id?, options?, preset?, model?, seed?, meta?, setup?, signal? }',
      )
      const creation = new CreationSignal(
        options.signal,
        this.#core.closing.signal,
        'createAgent',
        this.#foreignOwner(),
      )
      creation.check()
      const caller = validateAgentOptions(options.options)
      const route = checkModel(options.model)
      const preset = presetForCreate(this.#core.ctx, options.preset)
      const plan = this.#plan(preset, route, caller)
      const given = options.id
      if (given !== undefined) {
        if (this.#core.live.has(given)) throw new AgentExistsError({ agentId: given })
        await assertNotStored(this.#core.ctx, given)
      }
      const id = given ?? (await this.#freshId())
      creation.check()
      if (this.#core.live.has(id)) throw new AgentExistsError({ agentId: id })
      const header = {
        ...(preset === undefined ? {} : { agentPreset: preset.preset.name }),
        ...(options.meta === undefined ? {} : { metadata: options.meta }),
      }
      const staged = this.#core.ctx
        .get(SessionsKey)
        .stage({ id, header, ...(options.seed === undefined ? {} : { seed: options.seed }) })
      // The lease is held before the agent resolves: of two harnesses creating one id, one wins.
      let release: (() => Promise<void>) | undefined
      try {
        release = await reserveNewSession(this.#core.ctx.getOptional(PersistenceKey), id)
        creation.check()
      } catch (error) {
        staged.discard()
        await release?.()
        throw error
      }
      return this.#publish(staged, release, plan, options, creation, 'create')
    })
  }

  /** A generated session id that is neither live nor stored (a taken one is skipped). */
  #freshId(): Promise<string> {
    const ctx = this.#core.ctx
    const ids = ctx.get(IdsKey)
    return freshSessionId(
      () => ids('session'),
      (id) => this.#core.live.has(id),
      ctx.getOptional(PersistenceKey),
      (id, stored) =>
        stored
          ? new PersistenceError({
              code: ErrorCode.SESSION_EXISTS,
              sessionId: id,
              detail: 'every generated id drawn has a stored log',
            })
          : new AgentExistsError({ agentId: id }),
    )
  }

  /**
   * Resumes a stored session as an agent: persistence `prepare` commits the
   * crash-repair closers, then the agent is built and published as by `create`, with `source: 'resume'`. The agent rebinds to the preset
   * its header recorded. The driver continues the turn numbering and replays the inbox; it never
   * starts a turn by itself. With `queued: 'discard'` the replayed inbox is cleared (logged) after
   * `setup` and before publication, and the resume resolves once that is durable.
   *
   * @param sessionId - the stored session's id
   * @param input - agent options, expected preset, model, setup, signal and the queued policy
   * @returns the published agent
   * @throws (as a rejection) {@link HarnessClosedError}, {@link InvalidOptionsError},
   *   {@link AgentExistsError} when an agent drives that id, every `prepare` error unchanged,
   *   {@link PresetMismatchError}, {@link UnknownPresetError} for a recorded preset this harness
   *   lacks, {@link AgentCreationAbortedError}, what `setup` threw, or the discard's append or
   *   flush error; nothing stays published (after a flush error the discard stays committed in
   *   memory and persistence retries its write like any failed background write, at the latest
   *   when the harness closes)
   */
  resume(sessionId: string, input?: ResumeAgentOptions): Promise<Agent> {
    return this.#track('resumeAgent', async () => {
      const options = checkOptions(input, RESUME_AGENT_RULES, '{ options?, preset?, model?, setup?, signal?, queued? }')
      const creation = new CreationSignal(
        options.signal,
        this.#core.closing.signal,
        'resumeAgent',
        this.#foreignOwner(),
      )
      creation.check()
      const caller = validateAgentOptions(options.options)
      const route = checkModel(options.model)
      if (this.#core.live.has(sessionId)) throw new AgentExistsError({ agentId: sessionId })
      const {
        staged,
        checked: plan,
        release,
      } = await prepareResumedSession(this.#core.ctx, sessionId, (header) => {
        creation.check()
        if (this.#core.live.has(sessionId)) throw new AgentExistsError({ agentId: sessionId })
        return this.#plan(presetForResume(this.#core.ctx, header.agentPreset, options.preset), route, caller)
      })
      return this.#publish(staged, release, plan, options, creation, 'resume')
    })
  }

  /** The owner when it is not the registry's own context (whose stop disposes every agent anyway). */
  #foreignOwner(): Context | undefined {
    return this.#owner === this.#core.ctx ? undefined : this.#owner
  }

  /** Layers and validates the options of a new driver. */
  #plan(preset: PresetBinding | undefined, route: ResolvedModelRoute | undefined, caller: AgentOptions): AgentPlan {
    const base = route === undefined ? this.harnessDefaults() : { ...this.#core.defaults, ...route.defaults }
    return { options: validateAgentOptions(layerAgentOptions(base, preset?.options, caller)), preset, route }
  }

  /** Runs `operation` as a pending create or resume, which harness close awaits. */
  #track<T>(name: string, operation: () => Promise<T>): Promise<T> {
    if (this.#core.closed !== undefined) return Promise.reject(new HarnessClosedError({ operation: name }))
    const pending = operation()
    this.#core.pending.add(pending)
    const forget = (): void => {
      this.#core.pending.delete(pending)
    }
    pending.then(forget, forget)
    return pending
  }

  /**
   * Builds and publishes the agent of a staged session: the driver, setup, then publication — session registry,
   * agent registry (the collision point), `session/created`, `agent/created`,
   * `agent/session-start`. Undoes everything on a failure; a resume's reservation is released.
   */
  async #publish(
    staged: StagedSession,
    release: (() => Promise<void>) | undefined,
    plan: AgentPlan,
    options: CreateAgentOptions | ResumeAgentOptions,
    creation: CreationSignal,
    source: 'create' | 'resume',
  ): Promise<Agent> {
    const { session } = staged
    // The owner's disposal disposes the agent; registered before the driver exists, so no window leaks it.
    const owner = this.#foreignOwner()
    let owned: Agent | undefined
    let ownerEffect: Disposer | undefined
    // What dispose runs once the agent is published: set only then, so a creation undone earlier unpublishes nothing.
    let unpublish: (() => Promise<void>) | undefined
    const undo = async (agent: Agent | undefined): Promise<void> => {
      if (agent !== undefined) await agent.ctx.dispose()
      staged.discard()
      await release?.()
      await ownerEffect?.()
    }
    let agent: Agent | undefined
    /** How many replayed messages the resume's queued policy discarded. */
    let discarded = 0
    try {
      if (owner !== undefined) {
        creation.check()
        ownerEffect = owner.effect(
          () => async () => {
            await owned?.dispose()
          },
          `agent:${session.id}`,
        )
      }
      agent = createReactLoopAgent({
        parent: this.#core.ctx,
        session,
        options: plan.options,
        initiator: this.#core.initiator,
        marks: this.#core.marks,
        unpublish: () => unpublish?.() ?? Promise.resolve(),
      })
      registerAgentVariables(agent)
      if (plan.preset !== undefined) agent.ctx.scopes.bindParent(agent, plan.preset.preset)
      if (plan.route !== undefined)
        agent.ctx.get(ModelsKey).register(plan.route.adapter, { providers: [plan.route.provider] })
      await creation.race(Promise.resolve(options.setup?.(agent.ctx)))
      creation.check()
      if (source === 'resume') discarded = applyQueuedPolicy(agent, (options as ResumeAgentOptions).queued)
      const published = agent
      staged.publish(() => {
        if (this.#core.live.has(session.id)) throw new AgentExistsError({ agentId: session.id })
        this.#core.live.set(session.id, published)
      })
    } catch (error) {
      if (agent !== undefined && this.#core.live.get(session.id) === agent) this.#core.live.delete(session.id)
      await undo(agent)
      throw error
    }
    const sessions = this.#core.ctx.get(SessionsKey)
    const published = agent
    owned = published
    unpublish = async () => {
      // Not awaited: when the owner's teardown is what disposes the agent, it awaits this dispose.
      void ownerEffect?.()
      this.#core.live.delete(session.id)
      this.#core.ctx.emit('agent/disposed', { agent: published })
      await sessions.dispose(session)
    }
    this.#core.ctx.emit('agent/created', { agent: published })
    this.#core.ctx.emit('agent/session-start', { agent: published, source })
    if (discarded > 0) {
      // A discard that a crash could undo would replay the prompts at the next resume.
      try {
        await sessions.flush(session)
      } catch (error) {
        // The dispose fails on the same write; the flush error is the one to report.
        await published.dispose().catch(() => undefined)
        throw error
      }
    }
    return published
  }

  /**
   * The option defaults `harness.createAgent` starts from: the harness
   * `maxParallelToolCalls`, then the call fields of the harness model route.
   *
   * @returns a fresh options object
   */
  harnessDefaults(): AgentOptions {
    const models = this.#core.ctx.get(ModelsKey)
    const route = models instanceof ModelRouter ? models.defaults : undefined
    return { ...this.#core.defaults, ...route }
  }

  /**
   * The published agent with this id.
   *
   * @param id - the agent id
   * @returns the agent, or `undefined`
   */
  get(id: string): Agent | undefined {
    return this.#core.live.get(id)
  }

  /**
   * The published agents, in creation order.
   *
   * @returns a frozen array
   */
  list(): readonly Agent[] {
    return Object.freeze([...this.#core.live.values()])
  }

  /**
   * Whether `value` is a request the agent loop built.
   *
   * @param value - anything
   * @returns `true` for a loop-built request
   */
  isLoopRequest(value: unknown): boolean {
    return this.#core.marks.isLoopRequest(value)
  }

  /**
   * Harness close, first step: closes the initiator, refuses new creates and
   * resumes, makes pending ones reject {@link HarnessClosedError}, awaits them, gives running
   * turns `drainMs` to finish, then disposes every agent (a turn still running ends aborted
   * `{ kind: 'disposed' }`). Idempotent.
   *
   * @param drainMs - how long running and queued turns may still take (`Infinity`: no limit)
   * @returns resolves once every agent is disposed
   */
  close(drainMs = 0): Promise<void> {
    this.#core.closed ??= this.#close(drainMs)
    return this.#core.closed
  }

  async #close(drainMs: number): Promise<void> {
    this.#core.initiator.close()
    this.#core.closing.abort()
    while (this.#core.pending.size > 0) await Promise.allSettled([...this.#core.pending])
    if (drainMs > 0) await drain([...this.#core.live.values()], drainMs)
    await Promise.allSettled([...this.#core.live.values()].map((agent) => agent.dispose()))
  }
}

/** Resolves once every agent is idle, or after `drainMs` (never rejects: `whenIdle` does not). */
async function drain(agents: readonly Agent[], drainMs: number): Promise<void> {
  const idle = Promise.all(agents.map((agent) => agent.whenIdle()))
  if (drainMs === Number.POSITIVE_INFINITY) {
    await idle
    return
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<void>((resolve) => {
    // Past 2^31 − 1 ms Node fires a timer at once; that long is "until idle" in practice.
    timer = setTimeout(resolve, Math.min(drainMs, 2_147_483_647))
  })
  try {
    await Promise.race([idle, deadline])
  } finally {
    clearTimeout(timer)
  }
}
