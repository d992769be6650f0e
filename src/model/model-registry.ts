import type { Disposer } from '../kernel/effect.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import type { AdapterDefaults, CallConfig } from '../session/request-header.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import type { ModelAdapter, ModelInfo } from './model-adapter.js'
import type { ModelRequest } from './model-request.js'

/** Options of {@link ModelRegistry.register}. */
export interface ModelRegisterOptions {
  /** The provider ids to route to the adapter; defaults to `[adapter.provider]`. */
  readonly providers?: readonly string[]
}

/** Options of the scoped registry calls. */
export interface ModelScopeOptions {
  /** Resolve routes from this scope key's layer outward (nearest layer with the provider wins). */
  readonly scope?: ScopeKey
}

/** Options of {@link ModelRegistry.prepareCall}. */
export interface PrepareCallOptions extends ModelScopeOptions {
  /**
   * Runs at the innermost end of `llm/stream`, after every middleware and just before the adapter,
   * with the request the adapter would receive (the agent loop's `verifyReconstruction` check). A
   * throw rejects the stream's iteration with that error; the adapter is not called.
   */
  readonly beforeAdapter?: (request: ModelRequest) => void
}

/**
 * One registration: dispose it to remove its routes; `replace` swaps the adapter of every route
 * atomically (no call ever sees `NO_ADAPTER` in between).
 */
export interface ModelRegistration extends Disposer {
  /** The routed provider ids. */
  readonly providers: readonly string[]
  /**
   * Swaps the adapter of every route of this registration. Streams already started and calls
   * already prepared keep the adapter they bound.
   *
   * @param adapter - the new adapter
   * @throws {@link ModelRegistryError} `INVALID_ADAPTER`
   */
  replace(adapter: ModelAdapter): void
}

/** A call bound to its adapter, with model defaults filled in (`prepareCall`). */
export interface PreparedCall {
  /** The validated config, with `maxTokens` / `reasoningEffort` filled from model defaults. */
  readonly config: CallConfig
  /** Which config fields came from model defaults (so the loop does not persist them as choices). */
  readonly adapterDefaults?: AdapterDefaults
  /** What the routed adapter says about the model; absent for an unrouted provider. */
  readonly info?: ModelInfo
  /**
   * Streams the call through the `llm/stream` waterfall, once, for a request with the same
   * provider and model.
   *
   * @param request - the request
   * @returns the boundary-checked chunks
   * @throws {@link ModelRegistryError} `PREPARED_CALL_REUSED` or `PREPARED_CALL_MISMATCH`
   */
  stream(request: ModelRequest): AsyncIterable<StreamChunk>
}

/**
 * `services.models`: routes provider ids to adapters in scope layers, validates
 * requests, and enforces the chunk protocol at the adapter boundary. Registrations made through
 * `ctx.get(services.models)` are effects of `ctx` and land in `ctx.scope`'s layer.
 */
export interface ModelRegistry {
  /**
   * Routes providers to an adapter, all-or-nothing.
   *
   * @param adapter - the adapter
   * @param options - the provider ids (default `[adapter.provider]`)
   * @returns the registration
   * @throws {@link ModelRegistryError} `INVALID_PROVIDER`, `INVALID_ADAPTER` or `DUPLICATE_PROVIDER`
   */
  register(adapter: ModelAdapter, options?: ModelRegisterOptions): ModelRegistration
  /**
   * Asks the routed adapter's `describeModel`; a throw is reported and gives `undefined`.
   *
   * @param provider - a provider id
   * @param model - a model id
   * @param scope - resolve from this scope's layer
   * @returns the model info, or `undefined`
   */
  describe(provider: string, model: string, scope?: ScopeKey): ModelInfo | undefined
  /**
   * The provider ids visible from a scope, sorted.
   *
   * @param scope - resolve from this scope's layer (default: the global layer)
   * @returns the provider ids
   */
  providers(scope?: ScopeKey): readonly string[]
  /**
   * Validates a call config, binds the routed adapter and fills model defaults.
   *
   * @param config - the call config
   * @param options - the scope
   * @returns the prepared call
   * @throws {@link LlmError} `INVALID_REQUEST` (`detail.field`) or `UNSUPPORTED_REASONING_EFFORT` (`detail.allowed`)
   */
  prepareCall(config: CallConfig, options?: PrepareCallOptions): PreparedCall
  /**
   * Streams one request through the `llm/stream` waterfall; applies no defaults. Never throws for
   * a model outcome: every outcome is a `finish` chunk.
   *
   * @param request - the request
   * @param options - the scope
   * @returns the boundary-checked chunks
   */
  stream(request: ModelRequest, options?: ModelScopeOptions): AsyncIterable<StreamChunk>
}
