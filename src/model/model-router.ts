import { ErrorCode } from '../errors/codes.js'
import { LlmError } from '../errors/llm-error.js'
import { ModelRegistryError } from '../errors/model-registry-error.js'
import { bindOwner } from '../kernel/bind-owner.js'
import type { Context } from '../kernel/context.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import { createScopedLayers, type ScopedLayers } from '../kernel/scoped-layers.js'
import { ClockKey } from '../kernel/host-keys.js'
import type { CallConfig } from '../session/request-header.js'
import { RelayedStream } from './relayed-stream.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import { adapterBoundary, failedStream } from './adapter-boundary.js'
import { modelFailure } from './failure-defaults.js'
import { effortFailure, fillModelDefaults } from './fill-model-defaults.js'
import { freezeRequest } from './freeze-request.js'
import type { ModelAdapter, ModelInfo } from './model-adapter.js'
import type { LlmStreamPayload } from './model-events.js'
import type {
  ModelRegisterOptions,
  ModelRegistration,
  ModelRegistry,
  ModelScopeOptions,
  PrepareCallOptions,
  PreparedCall,
} from './model-registry.js'
import type { ModelRequest } from './model-request.js'
import { withResponseFormatInstruction } from './response-format-instruction.js'
import {
  invalidRequestFailure,
  isProviderId,
  validateCallConfig,
  validateModelRequest,
} from './validate-model-request.js'

/**
 * The call-config defaults of a {@link ModelRoute}: the route's
 * provider, `model ?? adapter.defaultModel`, and its other call-config fields.
 */
export interface ModelRouteDefaults extends Partial<CallConfig> {
  /** The provider the route's adapter is registered under. */
  readonly provider: string
}

/** Options of {@link createModelRouter}. */
export interface ModelRouterOptions {
  /** The call-config defaults of the harness `model` option, read by the agent loop. */
  readonly defaults?: ModelRouteDefaults
}

/** One registration's current adapter, shared by all of its routes (so `replace` is one assignment). */
interface Binding {
  adapter: ModelAdapter
}

/** What a prepared call bound, keyed by the prepared call object. */
interface PreparedState {
  readonly adapter: ModelAdapter | undefined
  readonly info: ModelInfo | undefined
  readonly scope: ScopeKey | undefined
  readonly beforeAdapter: ((request: ModelRequest) => void) | undefined
  used: boolean
}

type Layer = Map<string, Binding>

function checkAdapter(adapter: unknown): asserts adapter is ModelAdapter {
  const candidate = adapter as { stream?: unknown; describeModel?: unknown; supportsResponseFormat?: unknown } | null
  if (
    (typeof adapter !== 'object' && typeof adapter !== 'function') ||
    candidate === null ||
    typeof candidate.stream !== 'function' ||
    (candidate.describeModel !== undefined && typeof candidate.describeModel !== 'function') ||
    (candidate.supportsResponseFormat !== undefined && typeof candidate.supportsResponseFormat !== 'boolean')
  ) {
    throw new ModelRegistryError({
      code: ErrorCode.INVALID_ADAPTER,
      message:
        'a model adapter must be an object with a stream() method (describeModel, if any, a function; supportsResponseFormat, if any, a boolean)',
      value: adapter,
    })
  }
}

function checkProviders(adapter: ModelAdapter, options: ModelRegisterOptions | undefined): readonly string[] {
  const providers: unknown = options?.providers ?? [adapter.provider]
  if (!Array.isArray(providers) || providers.length === 0) {
    throw new ModelRegistryError({
      code: ErrorCode.INVALID_PROVIDER,
      message: 'providers must be a non-empty array of provider ids',
      value: providers,
    })
  }
  const seen = new Set<string>()
  for (const provider of providers as unknown[]) {
    if (!isProviderId(provider)) {
      throw new ModelRegistryError({
        code: ErrorCode.INVALID_PROVIDER,
        message: `${JSON.stringify(String(provider))} is not a provider id (^[a-z0-9][a-z0-9._-]{0,63}$)`,
        value: provider,
      })
    }
    if (seen.has(provider)) {
      throw new ModelRegistryError({
        code: ErrorCode.DUPLICATE_PROVIDER,
        message: `provider "${provider}" is listed twice`,
        provider,
      })
    }
    seen.add(provider)
  }
  return Object.freeze([...seen])
}

/**
 * Builds the default {@link ModelRegistry} of one harness (the `model` entry provides it as
 * `services.models`).
 *
 * @param ctx - the `model` entry's context, which dispatches the registry's events
 * @param options - the call-config defaults of the harness `model` option
 * @returns the router
 */
export function createModelRouter(ctx: Context, options: ModelRouterOptions = {}): ModelRouter {
  return new ModelRouter(ctx, options)
}

/**
 * The default {@link ModelRegistry} (`services.models`, the `model` entry): routes provider ids to
 * adapters in a global layer plus one layer per scope key, validates and freezes requests,
 * dispatches `llm/stream`, and enforces the chunk protocol at the adapter boundary.
 * Resolved through `ctx.get(services.models)`, it is bound to `ctx`: `register` then lands in
 * `ctx.scope`'s layer (global without a scope) and is an effect of `ctx`. Calls without a `scope`
 * option resolve from the global layer, whichever context they come through.
 */
export class ModelRouter implements ModelRegistry {
  /** The call-config defaults of the harness `model` option (a route's fields); `undefined` without one. */
  readonly defaults: ModelRouteDefaults | undefined
  readonly #ctx: Context
  /** The routes: a global layer plus one per scope key, provider id → binding. */
  readonly #routes: ScopedLayers<Layer>
  /** The last verified messages array per conversation, keyed by its first message. */
  readonly #prefixes = new WeakMap<object, readonly object[]>()
  readonly #prepared = new WeakMap<PreparedCall, PreparedState>()
  /** Containers known to be deep-frozen (never copied again). */
  readonly #frozen = new WeakSet<object>()
  /** Messages and tool schemas known valid and deep-frozen (never validated again). */
  readonly #verified = new WeakSet<object>()

  /** Use {@link createModelRouter}; `ctx` dispatches the registry's events. */
  constructor(ctx: Context, options: ModelRouterOptions = {}) {
    this.#ctx = ctx
    this.defaults = options.defaults
    this.#routes = createScopedLayers<Layer>({
      scopes: ctx.scopes,
      create: () => new Map(),
      isEmpty: (layer) => layer.size === 0,
    })
  }

  /**
   * Routes providers to an adapter in the global layer (through a bound facade: the owner's scope
   * layer), all-or-nothing, as an effect; emits `llm/adapters-change`.
   *
   * @param adapter - the adapter
   * @param options - the provider ids (default `[adapter.provider]`)
   * @returns the registration (a disposer with `providers` and `replace`)
   * @throws {@link ModelRegistryError} `INVALID_ADAPTER`, `INVALID_PROVIDER` or `DUPLICATE_PROVIDER`
   */
  register(adapter: ModelAdapter, options?: ModelRegisterOptions): ModelRegistration {
    return this.#register(this.#ctx, adapter, options)
  }

  /**
   * Asks the routed adapter's `describeModel`; a throw is reported (logger `warn`) and gives `undefined`.
   *
   * @param provider - a provider id
   * @param model - a model id
   * @param scope - resolve from this scope's layer outward
   * @returns the model info, or `undefined`
   */
  describe(provider: string, model: string, scope?: ScopeKey): ModelInfo | undefined {
    const binding = this.#resolve(provider, scope)
    return binding === undefined ? undefined : this.#describeWith(binding.adapter, provider, model)
  }

  /**
   * The provider ids visible from a scope (its chain's layers and the global one), sorted.
   *
   * @param scope - the scope key; the global layer alone without one
   * @returns a frozen list
   */
  providers(scope?: ScopeKey): readonly string[] {
    const names = new Set(this.#routes.global.keys())
    for (const layer of this.#routes.chain(scope)) for (const name of layer.keys()) names.add(name)
    return Object.freeze([...names].sort())
  }

  /**
   * Validates a call config against the request rules, binds the routed adapter and fills `maxTokens` and
   * `reasoningEffort` from its model defaults (listed in `adapterDefaults`). An unrouted provider
   * is not an error: the prepared call then has no `info`.
   *
   * @param config - the call config
   * @param options - the scope to route from
   * @returns the prepared call (frozen); its `stream` runs once
   * @throws {@link LlmError} `INVALID_REQUEST` (`detail.field`) or `UNSUPPORTED_REASONING_EFFORT` (`detail.allowed`)
   */
  prepareCall(config: CallConfig, options?: PrepareCallOptions): PreparedCall {
    const violation = validateCallConfig(config)
    if (violation !== undefined) throw new LlmError(invalidRequestFailure(violation))
    const scope = options?.scope
    const adapter = this.#resolve(config.provider, scope)?.adapter
    const info = adapter === undefined ? undefined : this.#describeWith(adapter, config.provider, config.model)
    const filled = fillModelDefaults(config, info)
    const state: PreparedState = { adapter, info, scope, beforeAdapter: options?.beforeAdapter, used: false }
    const prepared: PreparedCall = Object.freeze({
      config: filled.config,
      ...(filled.adapterDefaults === undefined ? {} : { adapterDefaults: filled.adapterDefaults }),
      ...(info === undefined ? {} : { info }),
      stream: (request: ModelRequest) => this.#streamPrepared(prepared, state, request),
    })
    this.#prepared.set(prepared, state)
    return prepared
  }

  /**
   * Streams one request through the `llm/stream` waterfall (with `{ scope }`), applying no
   * defaults. Never throws for a model outcome; a middleware's throw rejects the iteration.
   *
   * @param request - the request
   * @param options - the scope to route from
   * @returns the boundary-checked chunks
   */
  stream(request: ModelRequest, options?: ModelScopeOptions): AsyncIterable<StreamChunk> {
    return this.#dispatch(Object.freeze({ request }), options?.scope)
  }

  /** @internal Owner-bound facade: `register` lands in `owner.scope`'s layer, as an effect of `owner`. */
  [bindOwner](owner: Context): ModelRouter {
    const facade = Object.create(this) as ModelRouter
    const methods: PropertyDescriptorMap = {}
    for (const name of Object.getOwnPropertyNames(ModelRouter.prototype)) {
      const method: unknown = Reflect.get(this, name)
      if (name !== 'constructor' && typeof method === 'function') methods[name] = { value: method.bind(this) }
    }
    methods['register'] = {
      value: (adapter: ModelAdapter, options?: ModelRegisterOptions) => this.#register(owner, adapter, options),
    }
    Object.defineProperties(facade, methods)
    return facade
  }

  #register(owner: Context, adapter: ModelAdapter, options: ModelRegisterOptions | undefined): ModelRegistration {
    checkAdapter(adapter)
    const providers = checkProviders(adapter, options)
    const scope = owner.scope
    const existing = scope === undefined ? this.#routes.global : this.#routes.peek(scope)
    for (const provider of providers) {
      if (existing?.has(provider)) {
        throw new ModelRegistryError({
          code: ErrorCode.DUPLICATE_PROVIDER,
          message: `provider "${provider}" is already routed in this ${scope === undefined ? 'global' : 'scope'} layer`,
          provider,
        })
      }
    }
    const binding: Binding = { adapter }
    let live = false
    const disposer = owner.effect(
      () => {
        const undo = this.#routes.attach(scope, (layer) => {
          for (const provider of providers) layer.set(provider, binding)
          return () => {
            for (const provider of providers) if (layer.get(provider) === binding) layer.delete(provider)
          }
        })
        live = true
        this.#changed(providers, scope)
        return () => {
          live = false
          undo()
          this.#changed(providers, scope)
        }
      },
      `model-route:${providers.join(',')}`,
    )
    const replace = (next: ModelAdapter): void => {
      checkAdapter(next)
      if (!live) return
      binding.adapter = next
      this.#changed(providers, scope)
    }
    Object.defineProperties(disposer, {
      providers: { value: providers, enumerable: true },
      replace: { value: replace },
    })
    return disposer as ModelRegistration
  }

  #changed(providers: readonly string[], scope: ScopeKey | undefined): void {
    if (scope === undefined) this.#ctx.emit('llm/adapters-change', Object.freeze({ providers }))
    else this.#ctx.emit('llm/adapters-change', Object.freeze({ providers, scope }), { scope })
  }

  #resolve(provider: string, scope: ScopeKey | undefined): Binding | undefined {
    return this.#routes.find(scope, (layer) => layer.get(provider))
  }

  #describeWith(adapter: ModelAdapter, provider: string, model: string): ModelInfo | undefined {
    if (adapter.describeModel === undefined) return undefined
    try {
      const info = adapter.describeModel(model)
      return typeof info === 'object' && info !== null ? info : undefined
    } catch (error) {
      this.#ctx.logger.warn(
        `describeModel of provider "${provider}" threw for model "${model}"; treating the model as undescribed`,
        {
          provider,
          model,
          error,
        },
      )
      return undefined
    }
  }

  #streamPrepared(prepared: PreparedCall, state: PreparedState, request: ModelRequest): AsyncIterable<StreamChunk> {
    if (state.used) {
      throw new ModelRegistryError({
        code: ErrorCode.PREPARED_CALL_REUSED,
        message: 'a prepared call streams once; prepare a new call',
        provider: prepared.config.provider,
      })
    }
    const candidate = request as Partial<ModelRequest> | null
    if (
      typeof candidate !== 'object' ||
      candidate === null ||
      candidate.provider !== prepared.config.provider ||
      candidate.model !== prepared.config.model
    ) {
      throw new ModelRegistryError({
        code: ErrorCode.PREPARED_CALL_MISMATCH,
        message: `the request must be for ${prepared.config.provider}/${prepared.config.model}, as prepared`,
        provider: prepared.config.provider,
        value:
          candidate === null || typeof candidate !== 'object'
            ? candidate
            : { provider: candidate.provider, model: candidate.model },
      })
    }
    state.used = true
    return this.#dispatch(Object.freeze({ request, prepared }), state.scope)
  }

  #dispatch(payload: LlmStreamPayload, scope: ScopeKey | undefined): AsyncIterable<StreamChunk> {
    // With no middleware the stream is the innermost step's own, with no waterfall promise and no
    // relay generator around every chunk; a throw still surfaces when the stream is iterated.
    if (!this.#ctx.listens('llm/stream', 'waterfall')) {
      try {
        return this.#innermost(payload, scope)
      } catch (error) {
        const failed: Promise<AsyncIterable<StreamChunk>> = Promise.reject(error)
        failed.catch(() => {})
        return new RelayedStream(failed)
      }
    }
    const source = this.#ctx.waterfall(
      'llm/stream',
      payload,
      (current) => this.#innermost(current, scope),
      scope === undefined ? undefined : { scope },
    )
    // A rejection (a middleware's throw) surfaces when the stream is iterated, never unhandled.
    source.catch(() => {})
    return new RelayedStream(source)
  }

  /**
   * How many leading messages of `messages` are, by identity, the ones of the last verified request
   * of the same conversation (keyed by its first message): those are valid and deep-frozen already,
   * so a growing session costs one pointer comparison per old message instead of set lookups.
   */
  #knownPrefix(messages: unknown): number {
    if (!Array.isArray(messages) || messages.length === 0) return 0
    const first: unknown = messages[0]
    if (typeof first !== 'object' || first === null) return 0
    const last = this.#prefixes.get(first)
    if (last === undefined) return 0
    const limit = Math.min(last.length, messages.length)
    let index = 0
    while (index < limit && last[index] === messages[index]) index++
    return index
  }

  #rememberPrefix(messages: readonly object[]): void {
    const first = messages[0]
    if (first !== undefined && Object.isFrozen(messages)) this.#prefixes.set(first, messages)
  }

  /**
   * The innermost `llm/stream` step: validate, freeze, bind, check the effort, add the response
   * format instruction for an adapter without native support, then the boundary.
   */
  #innermost(payload: LlmStreamPayload, scope: ScopeKey | undefined): AsyncIterable<StreamChunk> {
    const prepared = payload.prepared
    const state = prepared === undefined ? undefined : this.#prepared.get(prepared)
    state?.beforeAdapter?.(payload.request)
    let violation: ReturnType<typeof validateModelRequest>
    let request: ModelRequest
    let knownPrefix = 0
    try {
      knownPrefix = this.#knownPrefix(payload.request.messages)
      violation = validateModelRequest(payload.request, this.#verified, knownPrefix)
      request = violation === undefined ? freezeRequest(payload.request, this.#frozen, knownPrefix) : payload.request
    } catch (error) {
      // A throwing getter or proxy trap: the request cannot be read as data.
      const reason = error instanceof Error ? error.message : String(error)
      violation = { field: 'request', value: undefined, message: `could not be read (${reason})` }
      request = payload.request
    }
    if (violation !== undefined) return failedStream(invalidRequestFailure(violation))
    for (let index = knownPrefix; index < request.messages.length; index++)
      this.#verified.add(request.messages[index] as object)
    this.#rememberPrefix(request.messages)
    for (const tool of request.tools ?? []) this.#verified.add(tool)
    // A middleware may pass another request with the prepared call: its binding holds for the same provider only.
    const bound = state?.adapter !== undefined && prepared?.config.provider === request.provider ? state : undefined
    const adapter = bound?.adapter ?? this.#resolve(request.provider, scope)?.adapter
    if (adapter === undefined) {
      return failedStream(
        modelFailure('NO_ADAPTER', `no adapter serves provider "${request.provider}"`, 'pre-request', {
          detail: Object.freeze({ provider: request.provider }),
        }),
      )
    }
    if (request.reasoningEffort !== undefined) {
      const info =
        bound !== undefined && prepared?.config.model === request.model
          ? bound.info
          : this.#describeWith(adapter, request.provider, request.model)
      const failure = effortFailure(request.reasoningEffort, info)
      if (failure !== undefined) return failedStream(failure)
    }
    const clock = this.#ctx.getOptional(ClockKey)
    // An adapter without a wire field for the format gets it as an instruction in `system`.
    const sent = adapter.supportsResponseFormat === true ? request : withResponseFormatInstruction(request)
    return adapterBoundary(adapter, sent, {
      ...(clock === undefined ? {} : { clock }),
      onCloseError: (error) =>
        this.#ctx.logger.warn(`closing the stream of provider "${request.provider}" failed`, { error }),
    })
  }
}
