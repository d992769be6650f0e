import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { ToolConflictError } from '../errors/tool-conflict-error.js'
import { ToolRestrictionError } from '../errors/tool-restriction-error.js'
import { bindOwner } from '../kernel/bind-owner.js'
import { Context } from '../kernel/context.js'
import type { Disposer } from '../kernel/effect.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import type { ToolSchema } from '../session/request-header.js'
import { parseToolArgumentsSync } from './parse-tool-arguments.js'
import type { ToolDefinition } from './tool-definition.js'
import type { ToolGuard } from './tool-guard.js'
import { type ToolGuardRegistration, ToolLayers } from './tool-layers.js'
import { checkRestrictedNames, readRestriction, type ToolRestrictOptions } from './tool-restrictions.js'
import type {
  ToolRegistry,
  ResolvedTool,
  ToolCallRequest,
  ToolExecutionMode,
  ToolScopeOptions,
} from './tool-registry.js'

const NAME = /^[A-Za-z0-9_-]{1,64}$/

function isToolDefinition(value: unknown): value is ToolDefinition {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return false
  const candidate = value as Partial<Record<keyof ToolDefinition, unknown>>
  return (
    typeof candidate.name === 'string' &&
    NAME.test(candidate.name) &&
    typeof candidate.description === 'string' &&
    typeof candidate.parameters === 'object' &&
    candidate.parameters !== null &&
    typeof candidate.execute === 'function' &&
    (candidate.inputKind === 'zod' || candidate.inputKind === 'json-schema')
  )
}

function checkBatch(tools: unknown): readonly ToolDefinition[] {
  const batch: readonly unknown[] = Array.isArray(tools) ? tools : [tools]
  batch.forEach((tool, index) => {
    if (isToolDefinition(tool)) return
    throw new InvalidArgumentError({
      argument: Array.isArray(tools) ? `tools[${index}]` : 'tool',
      reason:
        'must be a tool definition made by defineTool() (a frozen declaration with name, description, parameters and execute)',
      value: tool,
    })
  })
  return batch as readonly ToolDefinition[]
}

/**
 * Builds the tool registry of one harness (the `tools` entry provides it as `services.tools`).
 *
 * @param ctx - the `tools` entry's context: the owner of registrations made through the registry itself
 * @returns the registry
 */
export function createToolRegistry(ctx: Context): ToolRegistry {
  return new HarnessToolRegistry(ctx)
}

/** The {@link ToolRegistry} {@link createToolRegistry} builds; `ctx.tools` views share its layers. */
export class HarnessToolRegistry implements ToolRegistry {
  readonly #layers: ToolLayers
  readonly #owner: Context

  /** @internal Use {@link createToolRegistry}; a view shares `layers`. */
  constructor(ctx: Context, layers?: ToolLayers) {
    this.#owner = ctx
    this.#layers = layers ?? new ToolLayers(ctx)
  }

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
  register(tools: ToolDefinition | readonly ToolDefinition[], options?: ToolScopeOptions): Disposer {
    const scope = this.#scopeOption(options)
    const batch = checkBatch(tools)
    const seen = new Set<string>()
    for (const definition of batch) {
      if (seen.has(definition.name)) throw new ToolConflictError({ toolName: definition.name, scope, inBatch: true })
      if (this.#layers.has(scope, definition.name)) throw new ToolConflictError({ toolName: definition.name, scope })
      seen.add(definition.name)
    }
    const names = Object.freeze([...seen].sort())
    const disposer = this.#owner.effect(
      () => {
        const remove = this.#layers.add(scope, batch)
        return () => {
          remove()
          if (names.length > 0) this.#layers.changed(scope, 'unregister', names)
        }
      },
      `tools:${names.join(',')}`,
    )
    if (names.length > 0) this.#layers.changed(scope, 'register', names)
    return disposer
  }

  /**
   * The visible definition of a name (restrictions applied).
   *
   * @param name - a tool name
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns the definition, or `undefined` when none is visible
   */
  get(name: string, scope?: ScopeKey): ToolDefinition | undefined {
    return this.#layers.resolve(name, this.#scopeArgument(scope))
  }

  /**
   * Every tool name the scope knows: registered in the global layer or along its chain, including
   * names a restriction hides (prompt assembly uses it so `toolOrder` may list a restricted tool).
   *
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns the names, sorted (code-unit order)
   */
  knownNames(scope?: ScopeKey): readonly string[] {
    return this.#layers.known(this.#scopeArgument(scope))
  }

  /**
   * Every visible definition, sorted by name.
   *
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns a frozen list, the same array while nothing changed
   */
  list(scope?: ScopeKey): readonly ToolDefinition[] {
    return this.#layers.view(this.#scopeArgument(scope)).definitions
  }

  /**
   * The model-facing schemas of the visible tools: `{ name, description, parameters }` only,
   * sorted by name (code-unit order), deep-frozen; cached per scope (the same array while nothing
   * changed, a new one after a `tools/change` that affects the scope).
   *
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns the frozen schemas
   */
  schemas(scope?: ScopeKey): readonly ToolSchema[] {
    return this.#layers.view(this.#scopeArgument(scope)).schemas
  }

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
  restrict(scope: ScopeKey | undefined, options: ToolRestrictOptions): Disposer {
    const target = this.#scopeValue(scope)
    if (target === undefined) throw new ToolRestrictionError({ problem: 'unscoped' })
    const restriction = readRestriction(options)
    checkRestrictedNames(restriction, this.#layers.inherited(target))
    const disposer = this.#owner.effect(
      () => {
        this.#layers.restrict(target, restriction)
        return () => {
          this.#layers.unrestrict(target, restriction)
          this.#layers.changed(target, 'unrestrict', restriction.names)
        }
      },
      `tools-restriction:${restriction.names.join(',')}`,
    )
    this.#layers.changed(target, 'restrict', restriction.names)
    return disposer
  }

  /**
   * Adds a guard to a layer, after the layer's other guards.
   *
   * @param guard - the check; see {@link ToolGuard} for its contract
   * @param options - the layer
   * @returns the disposer removing it (an effect of the view's context)
   * @throws {@link InvalidArgumentError} for a non-function
   */
  guard(guard: ToolGuard, options?: ToolScopeOptions): Disposer {
    const scope = this.#scopeOption(options)
    if (typeof guard !== 'function') {
      throw new InvalidArgumentError({ argument: 'guard', reason: 'a tool guard must be a function', value: guard })
    }
    const registration: ToolGuardRegistration = Object.freeze({ guard })
    return this.#owner.effect(() => {
      this.#layers.addGuard(scope, registration)
      return () => this.#layers.removeGuard(scope, registration)
    }, 'tools-guard')
  }

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
  executionMode(call: ToolCallRequest, scope?: ScopeKey): ToolExecutionMode {
    const resolved = this.#scopeArgument(scope)
    if (
      typeof call !== 'object' ||
      call === null ||
      typeof call.name !== 'string' ||
      typeof call.arguments !== 'string'
    )
      return 'exclusive'
    const definition = this.#layers.resolve(call.name, resolved)
    if (definition === undefined || typeof definition.isConcurrencySafe !== 'function') return 'exclusive'
    const parsed = parseToolArgumentsSync(call.arguments, definition)
    if (!parsed.ok) return 'exclusive'
    try {
      return definition.isConcurrencySafe(parsed.args) === true ? 'parallel' : 'exclusive'
    } catch {
      return 'exclusive'
    }
  }

  /**
   * The visible definition of a call's tool, for the scheduler's lookup stage.
   *
   * @param name - a tool name
   * @param scope - the scope to resolve from (default: the view's scope)
   * @returns `{ definition }`, or `undefined` for an unknown or hidden tool
   */
  resolve(name: string, scope?: ScopeKey): ResolvedTool | undefined {
    const definition = this.#layers.resolve(name, this.#scopeArgument(scope))
    return definition === undefined ? undefined : Object.freeze({ definition })
  }

  /**
   * The guards for a scope in run order (global first, then each chain scope from the farthest to
   * the nearest, each in registration order), for the scheduler's guard stage.
   *
   * @param scope - the scope (default: the view's scope)
   * @returns a frozen snapshot
   */
  guardsFor(scope?: ScopeKey): readonly ToolGuard[] {
    return this.#layers.guards(this.#scopeArgument(scope))
  }

  /** Owner-bound view: registrations become effects of `owner`, and `scope` defaults to `owner.scope`. */
  [bindOwner](owner: Context): HarnessToolRegistry {
    return new HarnessToolRegistry(owner, this.#layers)
  }

  /** A read's scope argument: absent → the view's scope. */
  #scopeArgument(scope: unknown): ScopeKey | undefined {
    return scope === undefined ? this.#owner.scope : this.#scopeValue(scope)
  }

  /** A registration's `scope` option: absent → the view's scope. */
  #scopeOption(options: ToolScopeOptions | undefined): ScopeKey | undefined {
    if (options !== undefined && (typeof options !== 'object' || options === null)) {
      throw new InvalidArgumentError({
        argument: 'options',
        reason: 'options must be an object { scope? }',
        value: options,
      })
    }
    return this.#scopeArgument(options?.scope)
  }

  /** A scope given explicitly: a `Context` stands for its scope (`undefined` = global); else an object key. */
  #scopeValue(scope: unknown): ScopeKey | undefined {
    if (scope === undefined) return undefined
    if (Context.is(scope)) return scope.scope
    if (typeof scope !== 'object' || scope === null) {
      throw new InvalidArgumentError({ argument: 'scope', reason: 'a scope key must be an object', value: scope })
    }
    return scope
  }
}
