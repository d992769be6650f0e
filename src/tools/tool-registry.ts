import type { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { ToolConflictError } from '../errors/tool-conflict-error.js'
import type { Disposer } from '../kernel/effect.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import type { ToolSchema } from '../session/request-header.js'
import type { ToolDefinition } from './tool-definition.js'
import type { ToolGuard } from './tool-guard.js'
import type { ToolRestrictOptions } from './tool-restrictions.js'

/** How a call may be scheduled: next to its neighbours, or alone. */
export type ToolExecutionMode = 'parallel' | 'exclusive'

/** Options of {@link ToolRegistry.register} and {@link ToolRegistry.guard}. */
export interface ToolScopeOptions {
  /**
   * The layer: a scope key (a `Context` stands for its scope). Through a view made from a
   * context, registrations are effects of that context either way.
   *
   * @default the view's context's scope; the global layer for unscoped contexts
   */
  readonly scope?: ScopeKey
}

/** A call as {@link ToolRegistry.executionMode} classifies it. */
export interface ToolCallRequest {
  /** The tool name the model asked for. */
  readonly name: string
  /** The model's raw argument text. */
  readonly arguments: string
}

/** What the registry resolves a call to (for the scheduler): the visible definition. */
export interface ResolvedTool {
  /** The definition the call runs. */
  readonly definition: ToolDefinition
}

/**
 * The tool registry: one global layer and one layer per scope key, with
 * nearest-scope-wins resolution along the scope chain, restrictions and guards.
 * `harness.tools` and `ctx.tools` are views of one per-harness registry: a view made from a context
 * owns what it registers (undone when that context disposes) and defaults `scope` to that
 * context's scope. Every committed change dispatches one `tools/change`.
 *
 * @example
 * ```ts
 * const stop = harness.tools.register([readTool, writeTool])
 * harness.tools.schemas() // [{ name: 'read', … }, { name: 'write', … }]
 * await stop()
 * ```
 */
export interface ToolRegistry {
  /**
   * Registers one tool or a batch in one layer, as an effect of the view's context. The batch is
   * checked whole first: an invalid entry or a conflict throws and registers nothing. Emits one
   * `tools/change { kind: 'register' }`, and `unregister` when the disposer runs.
   *
   * @param tools - a definition from `defineTool`, or an array of them
   * @param options - the layer
   * @returns the disposer removing the whole batch
   * @throws {@link InvalidArgumentError} for a value that is not a definition; {@link ToolConflictError}
   *   for a name already in the layer or repeated in the batch; `ContextDisposedError` through a disposed context
   */
  register(tools: ToolDefinition | readonly ToolDefinition[], options?: ToolScopeOptions): Disposer
  /**
   * The visible definition of a name (restrictions applied).
   *
   * @param name - a tool name
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns the definition, or `undefined` when none is visible
   */
  get(name: string, scope?: ScopeKey): ToolDefinition | undefined
  /**
   * Every tool name the scope knows: registered in the global layer or along its chain, including
   * names a restriction hides (prompt assembly uses it so `toolOrder` may list a restricted tool).
   *
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns the names, sorted (code-unit order)
   */
  knownNames(scope?: ScopeKey): readonly string[]
  /**
   * Every visible definition, sorted by name.
   *
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns a frozen list, the same array while nothing changed
   */
  list(scope?: ScopeKey): readonly ToolDefinition[]
  /**
   * The model-facing schemas of the visible tools: `{ name, description, parameters }` only,
   * sorted by name (code-unit order), deep-frozen; cached per scope (the same array while nothing
   * changed, a new one after a `tools/change` that affects the scope).
   *
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns the frozen schemas
   */
  schemas(scope?: ScopeKey): readonly ToolSchema[]
  /**
   * Restricts the tools a scope inherits (from the global layer and its ancestors), for it and
   * every descendant; its own and its descendants' tools are never filtered.
   * The filters are copied. Emits `tools/change { kind: 'restrict' }`, and `unrestrict` when lifted.
   *
   * @param scope - the restricted scope (a `Context` stands for its scope)
   * @param options - `allow` and/or `deny` lists of inherited names
   * @returns the disposer that lifts this restriction (an effect of the view's context)
   * @throws {@link ToolRestrictionError} `unscoped` (the global scope), `empty` (no name listed) or
   *   `unknown-name` (`names`, `known`); {@link InvalidArgumentError} for a malformed value
   */
  restrict(scope: ScopeKey | undefined, options: ToolRestrictOptions): Disposer
  /**
   * Adds a guard to a layer, after the layer's other guards.
   *
   * @param guard - the check; see {@link ToolGuard} for its contract
   * @param options - the layer
   * @returns the disposer removing it (an effect of the view's context)
   * @throws {@link InvalidArgumentError} for a non-function
   */
  guard(guard: ToolGuard, options?: ToolScopeOptions): Disposer
  /**
   * Classifies a call, failing closed: `'parallel'` only when the visible
   * definition exists, the arguments parse and validate, and its `isConcurrencySafe(args)`
   * returns exactly `true` (it receives the parsed, validated arguments). Synchronous: a zod
   * schema is run with `safeParse`, so one with an asynchronous refinement classifies its calls
   * `'exclusive'`. Never throws for the call's content.
   *
   * @param call - the tool name and the raw argument text
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns `'parallel'` or `'exclusive'`
   * @throws {@link InvalidArgumentError} for a scope that is not an object
   */
  executionMode(call: ToolCallRequest, scope?: ScopeKey): ToolExecutionMode
  /**
   * The visible definition of a call's tool, for the scheduler's lookup stage.
   *
   * @param name - a tool name
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns `{ definition }`, or `undefined` for an unknown or hidden tool
   */
  resolve(name: string, scope?: ScopeKey): ResolvedTool | undefined
  /**
   * The guards for a scope in run order (global first, then each chain scope from the farthest to
   * the nearest, each in registration order), for the scheduler's guard stage.
   *
   * @param scope - the scope (default: the view's scope)
   * @returns a frozen snapshot
   */
  guardsFor(scope?: ScopeKey): readonly ToolGuard[]
}
