import { ContextDisposedError } from '../errors/context-disposed-error.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { ServiceConflictError } from '../errors/service-conflict-error.js'
import { ServiceMissingError } from '../errors/service-missing-error.js'
import { UnknownEventError } from '../errors/unknown-event-error.js'
import { bindOwner } from './bind-owner.js'
import { type Disposer, EffectRecord, type EffectHost, type EffectKind, type EffectSetup } from './effect.js'
import type { ListenerRecord } from './event-bus.js'
import { type EventCatalog, type EventMode, isEventCatalog } from './event-catalog.js'
import type { Logger } from './host-services.js'
import type { KernelErrorPhase } from './kernel-events.js'
import { checkOptionsArgument, type OptionRule, optionRule } from './option-issues.js'
import { type KernelState, type ProviderRecord, ServiceRealm } from './kernel-state.js'
import type { ScopeGraph, ScopeKey, ScopeLink } from './scope-graph.js'
import { isServiceKey, keyNameOf, type ServiceKey } from './service-key.js'
import type { EventName, EventNameOfMode, ListenerOf, PayloadOf, ResultOf } from './yoke-events.js'

/** The lifecycle state of a {@link Context}. */
export type ContextState = 'active' | 'disposing' | 'disposed'

/** Options of {@link Context.child}. */
export interface ChildOptions {
  /** Tags the child (and its descendants) with a scope key; a nested tag shadows it. */
  readonly scope?: ScopeKey
  /** Opens a new realm for these keys: provides there do not conflict with the parent's, gets there never fall back. */
  readonly isolate?: readonly ServiceKey<unknown>[]
}

/** Options of {@link Context.on} and {@link Context.once}. */
export interface ListenOptions {
  /**
   * Call this listener before the others (most recently prepended first).
   *
   * @default false
   */
  readonly prepend?: boolean
}

/** The keys of {@link ChildOptions}; `scope` and `isolate` are checked by `child` itself. */
const CHILD_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({
  scope: optionRule.any,
  isolate: optionRule.any,
})
/** The keys of {@link ListenOptions}. */
const LISTEN_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({ prepend: optionRule.boolean })

/** Options of a dispatch. */
export interface DispatchOptions {
  /** Route to untagged listeners and those tagged with any key in this key's chain. Without it: untagged only. */
  readonly scope?: ScopeKey
  /** Names what the dispatch is about (e.g. a session id) in `kernel/error` reports of its listeners. */
  readonly subject?: string
}

/** One failed cleanup met during a teardown. */
export interface DisposeError {
  /** The effect label. */
  readonly label: string
  /** What the cleanup threw. */
  readonly error: unknown
}

/** What {@link Context.dispose} resolves with; it never rejects. */
export interface DisposeReport {
  /** Every failed cleanup, in teardown order (those of child contexts included). */
  readonly errors: readonly DisposeError[]
}

/** @internal How a context is spawned by the kernel (plain children and plugin contexts). */
export interface SpawnSpec {
  readonly label: string
  readonly effectLabel: string
  readonly kind: EffectKind
  readonly owner: string
  readonly scope: ScopeKey | undefined
  readonly isolate: readonly string[] | undefined
  readonly onDisposing?: () => void
  readonly onDisposed?: () => void
}

const contextBrand = Symbol.for('yoke.context')
const agentBrand = Symbol.for('yoke.agent')
/**
 * The longest context label. Features label a child with a prefix and an id (`agent:<session id>`),
 * and every id valid elsewhere must fit: 256 leaves room for a prefix of up to 128 characters
 * besides a 128-character id.
 */
const maxLabelLength = 256
const labelPattern = new RegExp(`^[^/]{1,${maxLabelLength}}$`)

let spawn: (parent: Context, spec: SpawnSpec) => Context
let stateOf: (context: Context) => KernelState<Context>
let effectsOf: (context: Context) => readonly EffectRecord[]
let providedIn: (context: Context, key: string) => ProviderRecord<Context> | undefined
let siblingLabelsIn: (context: Context) => readonly string[]

/** A key's name: the fast path for a key object, else keyNameOf's checks (a name string, or a typed error). */
function nameOfKey(key: ServiceKey<unknown>): string {
  const name = (key as { readonly name?: unknown } | null | undefined)?.name
  return typeof name === 'string' && isServiceKey(key) ? name : keyNameOf(key)
}

/**
 * A node of the harness's context tree: it owns effects (services, listeners, child contexts,
 * plugins), dispatches events and resolves services. Get one from a harness (`harness.ctx`) or
 * from a plugin's `apply(ctx)`. The context knows nothing of
 * plugins: `ctx.plugin()` is added by the module that starts run-time plugins. Each feature adds its own
 * typed accessor (`ctx.sessions`, `ctx.models`, …) by declaration merging; each is `ctx.get(key)`
 * for that feature's key and throws {@link ServiceMissingError} when nothing provides it.
 *
 * @example
 * ```ts
 * const root = createRootContext()
 * const child = root.child('worker')
 * child.effect(() => { const timer = setInterval(tick, 1000); return () => clearInterval(timer) })
 * await root.dispose() // clears the interval
 * ```
 */
export class Context {
  /** The local name, e.g. `'persistence'`. */
  readonly label: string
  /** The path from the root, e.g. `'harness/agent-loop/agent#2'`. */
  readonly path: string
  /** The parent context (`undefined` for the root). */
  readonly parent: Context | undefined
  /** The id of the nearest plugin entry, `'harness'` at the root. */
  readonly owner: string
  /** The nearest scope tag, if any. */
  readonly scope: ScopeKey | undefined

  readonly #kernel: KernelState<Context>
  readonly #realm: ServiceRealm<Context>
  readonly #effects = new Set<EffectRecord>()
  readonly #inflight = new Set<Promise<void>>()
  /**
   * Per label of the live children: the highest `#n` given and how many are live. A label's entry
   * goes with its last live child (its number may then start over, as a disposed child's path may
   * be given again), so a parent that spawns one child per session id does not grow with the ids.
   */
  readonly #siblingCounts = new Map<string, { count: number; live: number }>()
  /** The last path segments of the live children, so a label such as `x#2` cannot take a used one. */
  readonly #childSegments = new Set<string>()
  /** Created on the first read of {@link Context.signal}: an unread signal needs no controller and no abort reason. */
  #abort: AbortController | undefined
  #signalAborted = false
  readonly #host: EffectHost
  readonly #spec: SpawnSpec | undefined
  #parentRecord: EffectRecord | undefined
  #state: ContextState = 'active'
  #disposing: Promise<DisposeReport> | undefined
  #facades: Map<ProviderRecord<Context>, unknown> | undefined
  #scopes: ScopeGraph | undefined

  static {
    spawn = (parent, spec) => parent.#spawn(spec)
    stateOf = (context) => context.#kernel
    effectsOf = (context) => [...context.#effects]
    providedIn = (context, key) => context.#realm.resolve(key).providers.get(key)
    siblingLabelsIn = (context) => [...context.#siblingCounts.keys()]
  }

  /** @internal Use {@link createRootContext}, a harness, or {@link Context.child}. */
  constructor(
    kernel: KernelState<Context>,
    parent?: { context: Context; path: string; realm: ServiceRealm<Context>; spec: SpawnSpec },
  ) {
    this.#kernel = kernel
    this.parent = parent?.context
    this.#spec = parent?.spec
    this.label = parent?.spec.label ?? 'harness'
    this.path = parent?.path ?? 'harness'
    this.owner = parent?.spec.owner ?? 'harness'
    this.scope = parent?.spec.scope
    this.#realm = parent?.realm ?? new ServiceRealm<Context>(undefined, undefined)
    if (parent === undefined) kernel.realms.add(this.#realm)
    Object.defineProperty(this, contextBrand, { value: true })
    this.#host = {
      detach: (record) => {
        this.#effects.delete(record)
      },
      track: (promise) => {
        this.#inflight.add(promise)
        const forget = (): void => {
          this.#inflight.delete(promise)
        }
        promise.then(forget, forget)
      },
      report: (error, phase, label) => this.#report(error, phase, label),
    }
  }

  /**
   * Whether `value` is a context from any loaded copy of Yoke.
   *
   * @param value - anything
   * @returns `true` for a context
   */
  static is(value: unknown): value is Context {
    return typeof value === 'object' && value !== null && contextBrand in value
  }

  /** `'active'`, then `'disposing'` once {@link Context.dispose} began, then `'disposed'`. */
  get state(): ContextState {
    return this.#state
  }

  /** Aborted (reason: a {@link ContextDisposedError}) when disposal starts. */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      this.#abort = new AbortController()
      if (this.#signalAborted) this.#abort.abort(this.#disposedReason())
    }
    return this.#abort.signal
  }

  /** The harness logger. */
  get logger(): Logger {
    return this.#kernel.logger
  }

  /** The scope graph of this harness; links made through it are effects of this context. */
  get scopes(): ScopeGraph {
    this.#scopes ??= {
      bindParent: (key, parent) => this.#bindParent(key, parent),
      chain: (key) => this.#kernel.scopes.chain(key),
    }
    return this.#scopes
  }

  /** The nearest scope key that is an agent handle (this context's scope chain, then the enclosing contexts'), else `undefined`. */
  get agent(): ScopeKey | undefined {
    // The nearest: this context's scope chain first, then those of the enclosing tags (a child
    // tagged with a scope of its own inside an agent's context still belongs to that agent).
    let seen: ScopeKey | undefined
    for (let context: Context | undefined = this; context !== undefined; context = context.parent) {
      const scope = context.scope
      if (scope === undefined || scope === seen) continue
      seen = scope
      for (const key of this.#kernel.scopes.chain(scope)) {
        if (agentBrand in key) return key
      }
    }
    return undefined
  }

  /**
   * Creates a child context, registered as an effect of this one (label `context:<label>`).
   *
   * @param label - 1–256 characters without `/`; repeated sibling labels get `#2`, `#3`, … in `path`
   * @param options - a scope tag and keys to isolate
   * @returns the child
   * @throws {@link InvalidArgumentError} for a bad label (`argument: 'label'`), options that are not
   *   an object or hold an unknown key (`'options'`, `'options.<key>'`), a `scope` that is not an
   *   object or an `isolate` that is not an array of service keys; {@link ContextDisposedError} once
   *   disposal began
   */
  child(label: string, options: ChildOptions = {}): Context {
    this.#assertActive('child')
    if (typeof label !== 'string' || !labelPattern.test(label)) {
      throw new InvalidArgumentError({
        argument: 'label',
        reason: `a context label must be 1–${maxLabelLength} characters without "/" (got ${JSON.stringify(label)})`,
        value: label,
      })
    }
    checkOptionsArgument(options, CHILD_RULES, '{ scope?, isolate? }')
    if (options.scope !== undefined && (typeof options.scope !== 'object' || options.scope === null)) {
      throw new InvalidArgumentError({
        argument: 'scope',
        reason: 'a scope key must be an object',
        value: options.scope,
      })
    }
    if (options.isolate !== undefined && !Array.isArray(options.isolate)) {
      throw new InvalidArgumentError({
        argument: 'isolate',
        reason: 'must be an array of service keys',
        value: options.isolate,
      })
    }
    return this.#spawn({
      label,
      effectLabel: `context:${label}`,
      kind: 'context',
      owner: this.owner,
      scope: options.scope ?? this.scope,
      isolate: options.isolate?.map((key) => keyNameOf(key)),
    })
  }

  /**
   * Registers an effect: runs `setup` now and keeps what it returns as the cleanup, run when the
   * returned disposer is called or this context disposes (last in, first out).
   *
   * @param setup - returns nothing, a cleanup, or a promise of either; may throw (then nothing is registered)
   * @param label - shown by `inspect()`
   * @returns the disposer
   * @throws what `setup` throws; {@link InvalidArgumentError} for a `setup` that is not a function, a
   *   `label` that is not a string (both before `setup` runs) or another return value; {@link ContextDisposedError}
   */
  effect(setup: EffectSetup, label = 'effect'): Disposer {
    this.#assertActive('effect')
    if (typeof label !== 'string')
      throw new InvalidArgumentError({ argument: 'label', reason: 'an effect label must be a string', value: label })
    const record = EffectRecord.fromSetup(this.#host, label, 'effect', setup)
    this.#effects.add(record)
    return record.disposer
  }

  /**
   * Provides a service in this context's realm, as an effect (label `service:<name>`).
   *
   * @param key - the service key
   * @param value - the service (not `undefined`)
   * @returns the disposer that withdraws it
   * @throws {@link ServiceConflictError} when the realm already has a provider; {@link InvalidArgumentError}; {@link ContextDisposedError}
   */
  provide<T>(key: ServiceKey<T>, value: T): Disposer {
    this.#assertActive('provide')
    const name = keyNameOf(key)
    if (value === undefined) {
      throw new InvalidArgumentError({ argument: 'value', reason: `service "${name}" cannot be provided as undefined` })
    }
    const realm = this.#realm.resolve(name)
    const existing = realm.providers.get(name)
    if (existing !== undefined) {
      throw new ServiceConflictError({
        key: name,
        existingProvider: existing.context.path,
        attemptedProvider: this.path,
      })
    }
    const bindable =
      (typeof value === 'object' || typeof value === 'function') &&
      value !== null &&
      typeof (value as { [bindOwner]?: unknown })[bindOwner] === 'function'
    const provider: ProviderRecord<Context> = { key: name, value, context: this, bindable }
    realm.providers.set(name, provider)
    const record = new EffectRecord(this.#host, `service:${name}`, 'service', () => {
      if (realm.providers.get(name) !== provider) return
      realm.providers.delete(name)
      this.#kernel.emitKernel('kernel/service', { key: name, kind: 'withdrawn', owner: this.owner })
    })
    this.#effects.add(record)
    this.#kernel.emitKernel('kernel/service', { key: name, kind: 'provided', owner: this.owner })
    return record.disposer
  }

  /**
   * Resolves a service in this context's realm (an owner-bound facade when the value offers one).
   *
   * @param key - the service key
   * @returns the service
   * @throws {@link ServiceMissingError} when nothing provides it
   */
  get<T>(key: ServiceKey<T>): T {
    const name = nameOfKey(key)
    const provider = this.#realm.resolve(name).providers.get(name)
    if (provider === undefined) {
      throw new ServiceMissingError({ key: name, requestedBy: this.path, owner: this.owner })
    }
    return (provider.bindable ? this.#facade(provider) : provider.value) as T
  }

  /**
   * Like {@link Context.get}, but returns `undefined` for a missing key instead of throwing.
   *
   * @param key - the service key
   * @returns the service, or `undefined`
   */
  getOptional<T>(key: ServiceKey<T>): T | undefined {
    const name = nameOfKey(key)
    const provider = this.#realm.resolve(name).providers.get(name)
    if (provider === undefined) return undefined
    return (provider.bindable ? this.#facade(provider) : provider.value) as T
  }

  /**
   * Registers a catalog of event definitions, as an effect (label `events`).
   *
   * @param catalog - from {@link defineEvents}
   * @returns the disposer; a name stays defined until its last registration is disposed
   * @throws {@link EventConflictError} when a name is defined with another mode
   */
  registerEvents(catalog: EventCatalog): Disposer {
    this.#assertActive('registerEvents')
    if (!isEventCatalog(catalog)) {
      throw new InvalidArgumentError({
        argument: 'catalog',
        reason: 'use defineEvents() to build a catalog',
        value: catalog,
      })
    }
    const undo = this.#kernel.bus.define(catalog)
    const record = new EffectRecord(this.#host, 'events', 'events', undo)
    this.#effects.add(record)
    return record.disposer
  }

  /**
   * Adds a listener, as an effect (label `listener:<name>`), tagged with this context's scope.
   *
   * @param name - a defined event name
   * @param listener - its signature follows the event's mode; see the mode's contract in `docs/kernel.md`
   * @param options - `prepend`
   * @returns the disposer that removes it
   * @throws {@link UnknownEventError}; {@link InvalidArgumentError} for a non-function listener, or
   *   options that are not `{ prepend? }` with a boolean `prepend` (`argument: 'options'`,
   *   `'options.<key>'`); {@link ContextDisposedError}
   */
  on<N extends EventName>(name: N, listener: ListenerOf<N>, options?: ListenOptions): Disposer {
    return this.#listen('on', name, listener, options, false)
  }

  /**
   * Like {@link Context.on}; the registration is disposed just before the first call.
   *
   * @param name - a defined event name
   * @param listener - the listener
   * @param options - `prepend`
   * @returns the disposer
   * @throws as {@link Context.on}
   */
  once<N extends EventName>(name: N, listener: ListenerOf<N>, options?: ListenOptions): Disposer {
    return this.#listen('once', name, listener, options, true)
  }

  /**
   * Dispatches an `emit` event: listeners run synchronously in order; failures are contained and
   * reported to `kernel/error`. A no-op through a disposed context.
   *
   * @param name - an `emit` event
   * @param payload - its payload
   * @param options - the routing scope
   * @throws {@link UnknownEventError}, {@link EventModeError} (synchronously, before any listener)
   */
  emit<N extends EventNameOfMode<'emit'>>(name: N, payload: PayloadOf<N>, options?: DispatchOptions): void {
    if (this.#state === 'disposed') return
    const error = this.#kernel.bus.validate(name, 'emit')
    if (error !== undefined) throw error
    this.#kernel.bus.emit(name, payload, this.#admission(options), options?.subject)
  }

  /**
   * Whether a dispatch of `name` through this context could reach a listener: `false` when the
   * event is defined, this context is not disposed and no listener of any scope is registered,
   * so the caller may compute the no-listener result itself (the default of a waterfall, the
   * `undefined` of a serial) without the dispatch's promise chain. `true` otherwise, including for
   * a dispatch that would fail: the caller then dispatches and gets that failure.
   *
   * @param name - an event name
   * @param mode - the dispatch mode the caller would use
   * @returns whether the caller must dispatch
   * @internal
   */
  listens(name: EventName, mode: EventMode): boolean {
    return this.#checkDispatch(name, mode) !== undefined || this.#kernel.bus.listens(name)
  }

  /**
   * Dispatches a `parallel` event: every listener starts in order, then all are awaited.
   *
   * @param name - a `parallel` event
   * @param payload - its payload
   * @param options - the routing scope
   * @returns resolves when all settled; rejects with one `AggregateError` of every failure, in listener order
   */
  parallel<N extends EventNameOfMode<'parallel'>>(
    name: N,
    payload: PayloadOf<N>,
    options?: DispatchOptions,
  ): Promise<void> {
    const error = this.#checkDispatch(name, 'parallel')
    if (error !== undefined) return Promise.reject(error)
    return this.#kernel.bus.parallel(name, payload, this.#admission(options))
  }

  /**
   * Dispatches a `serial` event: listeners run one at a time; the first result that is not
   * `undefined` wins and later listeners are not called.
   *
   * @param name - a `serial` event
   * @param payload - its payload
   * @param options - the routing scope
   * @returns the first result, or `undefined`; rejects with the first failure, unchanged
   */
  serial<N extends EventNameOfMode<'serial'>>(
    name: N,
    payload: PayloadOf<N>,
    options?: DispatchOptions,
  ): Promise<ResultOf<N> | undefined> {
    const error = this.#checkDispatch(name, 'serial')
    if (error !== undefined) return Promise.reject(error)
    return this.#kernel.bus.serial(name, payload, this.#admission(options)) as Promise<ResultOf<N> | undefined>
  }

  /**
   * Dispatches a `waterfall` event: listeners wrap `inner` as middleware (first = outermost).
   *
   * @param name - a `waterfall` event
   * @param payload - its payload (never mutated by `next(replacement)`)
   * @param inner - the innermost default
   * @param options - the routing scope
   * @returns the outermost listener's result; rejects with an uncaught failure, unchanged (a listener
   *   that catches it and settles with `undefined` has no opinion, so the failure stands)
   */
  waterfall<N extends EventNameOfMode<'waterfall'>>(
    name: N,
    payload: PayloadOf<N>,
    inner: (payload: PayloadOf<N>) => ResultOf<N> | Promise<ResultOf<N>>,
    options?: DispatchOptions,
  ): Promise<ResultOf<N>> {
    return this.#waterfall(name, payload, inner, options, undefined) as Promise<ResultOf<N>>
  }

  /**
   * {@link Context.waterfall} with `each` applied to every listener's own result before the
   * listener outside it receives it from `next()` (and before it becomes the dispatch's result):
   * for middleware whose results are normalized after each layer (tool middleware). `inner`'s
   * result is taken as it is.
   *
   * @internal
   */
  waterfallEach<N extends EventNameOfMode<'waterfall'>>(
    name: N,
    payload: PayloadOf<N>,
    inner: (payload: PayloadOf<N>) => ResultOf<N> | Promise<ResultOf<N>>,
    each: (value: unknown) => ResultOf<N>,
    options?: DispatchOptions,
  ): Promise<ResultOf<N>> {
    return this.#waterfall(name, payload, inner, options, each) as Promise<ResultOf<N>>
  }

  #waterfall(
    name: string,
    payload: unknown,
    inner: unknown,
    options: DispatchOptions | undefined,
    each: ((value: unknown) => unknown) | undefined,
  ): Promise<unknown> {
    const error = this.#checkDispatch(name, 'waterfall')
    if (error !== undefined) return Promise.reject(error)
    return this.#kernel.bus.waterfall(
      name,
      payload,
      inner as (payload: unknown) => unknown,
      this.#admission(options),
      each,
    )
  }

  /**
   * Disposes this context: aborts {@link Context.signal}, tears its effects down last in, first
   * out (each awaited), then detaches from the parent. Idempotent; never rejects.
   *
   * @returns the report of failed cleanups
   */
  dispose(): Promise<DisposeReport> {
    if (this.#disposing !== undefined) return this.#disposing
    this.#state = 'disposing'
    this.#spec?.onDisposing?.()
    this.#signalAborted = true
    this.#abort?.abort(this.#disposedReason())
    this.#disposing = this.#teardown()
    if (this.#parentRecord !== undefined) void this.#parentRecord.disposer()
    return this.#disposing
  }

  async #teardown(): Promise<DisposeReport> {
    const errors: DisposeError[] = []
    const records = [...this.#effects].reverse()
    for (const record of records) {
      if (record.child !== undefined) {
        void record.run()
        const report = (await record.child.dispose()) as DisposeReport
        errors.push(...report.errors)
        continue
      }
      if (record.started) continue
      try {
        await record.run()
      } catch (error) {
        errors.push({ label: record.label, error })
        this.#report(error, 'dispose', record.label)
      }
    }
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
    // `disposing` is observable until dispose() has returned, even with nothing to tear down.
    if (records.length === 0) await undefined
    this.#state = 'disposed'
    this.#spec?.onDisposed?.()
    return Object.freeze({ errors: Object.freeze(errors) })
  }

  #spawn(spec: SpawnSpec): Context {
    const siblings = this.#siblingCounts.get(spec.label) ?? { count: 0, live: 0 }
    let count = siblings.count + 1
    let segment = count > 1 ? `${spec.label}#${count}` : spec.label
    while (this.#childSegments.has(segment)) segment = `${spec.label}#${++count}`
    siblings.count = count
    siblings.live++
    this.#siblingCounts.set(spec.label, siblings)
    this.#childSegments.add(segment)
    const path = `${this.path}/${segment}`
    let realm = this.#realm
    const isolated = spec.isolate !== undefined && spec.isolate.length > 0
    if (isolated) {
      realm = new ServiceRealm(this.#realm, new Set(spec.isolate))
      this.#kernel.realms.add(realm)
    }
    const child = new Context(this.#kernel, { context: this, path, realm, spec })
    const record = new EffectRecord(this.#host, spec.effectLabel, spec.kind, async () => {
      await child.dispose()
      this.#childSegments.delete(segment)
      if (--siblings.live === 0 && this.#siblingCounts.get(spec.label) === siblings) {
        this.#siblingCounts.delete(spec.label)
      }
      // An isolated realm lives exactly as long as its context.
      if (isolated) this.#kernel.realms.delete(realm)
    })
    record.child = child
    record.inspectChildren = () => effectsOf(child)
    child.#parentRecord = record
    this.#effects.add(record)
    return child
  }

  #listen(
    operation: string,
    name: string,
    listener: unknown,
    options: ListenOptions | undefined,
    once: boolean,
  ): Disposer {
    this.#assertActive(operation)
    if (!this.#kernel.bus.isDefined(name)) throw new UnknownEventError({ event: name })
    if (typeof listener !== 'function') {
      throw new InvalidArgumentError({
        argument: 'listener',
        reason: `a "${name}" listener must be a function`,
        value: listener,
      })
    }
    if (options !== undefined) checkOptionsArgument(options, LISTEN_RULES, '{ prepend? }')
    const bus = this.#kernel.bus
    const listenerRecord: ListenerRecord = {
      name,
      fn: listener as ListenerRecord['fn'],
      home: this,
      scope: this.scope,
      once,
      dead: false,
      dispose: () => {},
    }
    const record = new EffectRecord(this.#host, `listener:${name}`, 'listener', () => bus.remove(listenerRecord))
    listenerRecord.dispose = () => {
      void record.disposer()
    }
    bus.add(listenerRecord, options?.prepend === true)
    this.#effects.add(record)
    return record.disposer
  }

  #bindParent(key: ScopeKey, parent: ScopeKey): ScopeLink {
    this.#assertActive('bindParent')
    for (const [argument, value] of [
      ['key', key],
      ['parent', parent],
    ] as const) {
      if (typeof value !== 'object' || value === null) {
        throw new InvalidArgumentError({ argument, reason: 'a scope key must be an object', value })
      }
    }
    const store = this.#kernel.scopes
    const state = store.link(key, parent)
    const record = new EffectRecord(this.#host, 'scope-link', 'scope-link', () => store.unlink(key, state))
    this.#effects.add(record)
    const link = record.disposer as ScopeLink
    Object.defineProperty(link, 'rebind', { value: (next: ScopeKey) => store.rebind(key, state, next) })
    return link
  }

  #disposedReason(): ContextDisposedError {
    return new ContextDisposedError({ context: this.path, operation: 'dispose' })
  }

  #checkDispatch(name: string, mode: EventMode): Error | undefined {
    if (this.#state === 'disposed') return new ContextDisposedError({ context: this.path, operation: mode })
    return this.#kernel.bus.validate(name, mode)
  }

  #admission(options: DispatchOptions | undefined): ReadonlySet<ScopeKey> | undefined {
    const scope = options?.scope
    return scope === undefined ? undefined : this.#kernel.scopes.admission(scope)
  }

  #facade(provider: ProviderRecord<Context>): unknown {
    this.#facades ??= new Map()
    if (this.#facades.has(provider)) return this.#facades.get(provider)
    const facade = (provider.value as { [bindOwner]: (owner: Context) => unknown })[bindOwner](this)
    this.#facades.set(provider, facade)
    return facade
  }

  #assertActive(operation: string): void {
    if (this.#state !== 'active') throw new ContextDisposedError({ context: this.path, operation })
  }

  #report(error: unknown, phase: KernelErrorPhase, label: string): void {
    this.#kernel.report({ error, phase, label, context: this.path })
  }
}

/** @internal Spawns a context with kernel-only options (plugin contexts). */
export function spawnContext(parent: Context, spec: SpawnSpec): Context {
  return spawn(parent, spec)
}

/** @internal The shared per-root state of a context. */
export function kernelOf(context: Context): KernelState<Context> {
  return stateOf(context)
}

/** @internal The live effect records of a context, in registration order. */
export function effectRecordsOf(context: Context): readonly EffectRecord[] {
  return effectsOf(context)
}

/** @internal The provider of `key` visible from a context, without binding a facade. */
export function providerOf(context: Context, key: string): ProviderRecord<Context> | undefined {
  return providedIn(context, key)
}

/** @internal The labels a context keeps a sibling count for (those of its live children). */
export function siblingLabelsOf(context: Context): readonly string[] {
  return siblingLabelsIn(context)
}
