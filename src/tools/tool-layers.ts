import type { Context } from '../kernel/context.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import { createScopedLayers, type ScopedLayers } from '../kernel/scoped-layers.js'
import type { ToolSchema } from '../session/request-header.js'
import type { ToolsChangePayload } from './tool-events.js'
import type { ToolDefinition } from './tool-definition.js'
import type { ToolGuard } from './tool-guard.js'
import { admitsAll, type ToolRestriction } from './tool-restrictions.js'
import { deepFreeze, markDeepFrozen } from '../session/deep-freeze.js'

/** @internal One registered definition; its identity tells a disposer which entry it owns. */
export interface ToolRegistration {
  /** The definition. */
  readonly definition: ToolDefinition
}

/** @internal One registered guard; a wrapper, so the same function may be registered twice. */
export interface ToolGuardRegistration {
  /** The guard. */
  readonly guard: ToolGuard
}

type Layer = Map<string, ToolRegistration>

/** What a scope sees, cached until the registry or the scope chain changes. */
interface ScopeView {
  version: number
  chain: readonly ScopeKey[]
  readonly definitions: readonly ToolDefinition[]
  readonly schemas: readonly ToolSchema[]
}

const noChain: readonly ScopeKey[] = Object.freeze([])

function byName(left: ToolDefinition, right: ToolDefinition): number {
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0
}

function sameItems<T>(left: readonly T[], right: readonly T[]): boolean {
  if (left === right) return true
  if (left.length !== right.length) return false
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false
  return true
}

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  if (!Object.isFrozen(value)) return false
  for (const child of Object.values(value)) if (!isDeepFrozen(child)) return false
  return true
}

/**
 * @internal The shared state behind every `ToolRegistry` view of one harness: the global
 * layer and one layer per scope key, the restrictions and guards per scope, and the per-scope
 * view cache. Resolution walks `ctx.scopes.chain(scope)` nearest first, then the global layer.
 */
export class ToolLayers {
  readonly #ctx: Context
  /** The definitions: a global layer plus one per scope key, name → registration. */
  readonly #definitions: ScopedLayers<Layer>
  readonly #restrictions = new WeakMap<ScopeKey, ToolRestriction[]>()
  readonly #globalGuards: ToolGuardRegistration[] = []
  readonly #guards = new WeakMap<ScopeKey, ToolGuardRegistration[]>()
  readonly #views = new WeakMap<ScopeKey, ScopeView>()
  #globalView: ScopeView | undefined
  readonly #schemas = new WeakMap<ToolDefinition, ToolSchema>()
  /** Bumped by every committed change that can alter what a scope sees. */
  #version = 0

  /** @param ctx - the registry's context: `tools/change` is dispatched and scope chains read through it */
  constructor(ctx: Context) {
    this.#ctx = ctx
    this.#definitions = createScopedLayers<Layer>({
      scopes: ctx.scopes,
      create: () => new Map(),
      isEmpty: (layer) => layer.size === 0,
    })
  }

  /** The scope's chain, nearest first; empty for the global layer. */
  chain(scope: ScopeKey | undefined): readonly ScopeKey[] {
    return scope === undefined ? noChain : this.#ctx.scopes.chain(scope)
  }

  /** Whether the layer of `scope` already has `name`. */
  has(scope: ScopeKey | undefined, name: string): boolean {
    return (scope === undefined ? this.#definitions.global : this.#definitions.peek(scope))?.has(name) === true
  }

  /** The names `scope` inherits: those of the global layer and of its ancestors' layers. */
  inherited(scope: ScopeKey): ReadonlySet<string> {
    const names = new Set<string>(this.#definitions.global.keys())
    for (const key of this.chain(scope).slice(1))
      for (const name of this.#definitions.peek(key)?.keys() ?? []) names.add(name)
    return names
  }

  /** Every name registered in the global layer or a layer of `scope`'s chain, visible or hidden by a restriction, sorted. */
  known(scope: ScopeKey | undefined): readonly string[] {
    const names = new Set<string>(this.#definitions.global.keys())
    for (const layer of this.#definitions.chain(scope)) for (const name of layer.keys()) names.add(name)
    return [...names].sort()
  }

  /** The visible definition of `name` from `scope`: the nearest layer with it, if the restrictions nearer than that layer admit it. */
  resolve(name: string, scope: ScopeKey | undefined): ToolDefinition | undefined {
    const chain = this.chain(scope)
    for (let depth = 0; depth < chain.length; depth++) {
      const registration = this.#definitions.peek(chain[depth] as ScopeKey)?.get(name)
      if (registration !== undefined) return this.#admitted(name, chain, depth) ? registration.definition : undefined
    }
    const registration = this.#definitions.global.get(name)
    return registration !== undefined && this.#admitted(name, chain, chain.length) ? registration.definition : undefined
  }

  /** The visible definitions and their schemas, sorted by name; the same arrays while nothing changed. */
  view(scope: ScopeKey | undefined): {
    readonly definitions: readonly ToolDefinition[]
    readonly schemas: readonly ToolSchema[]
  } {
    const chain = this.chain(scope)
    const hit = scope === undefined ? this.#globalView : this.#views.get(scope)
    if (hit !== undefined && hit.version === this.#version && sameItems(hit.chain, chain)) return hit
    const definitions = this.#collect(chain)
    let view: ScopeView
    if (hit !== undefined && sameItems(hit.definitions, definitions)) {
      view = hit
      view.version = this.#version
      view.chain = chain
    } else {
      view = {
        version: this.#version,
        chain,
        definitions: Object.freeze(definitions),
        schemas: Object.freeze(definitions.map((definition) => this.#schemaOf(definition))),
      }
    }
    if (scope === undefined) this.#globalView = view
    else this.#views.set(scope, view)
    return view
  }

  /** Adds a (checked, conflict-free) batch to the layer of `scope`; returns what removes exactly that batch. */
  add(scope: ScopeKey | undefined, definitions: readonly ToolDefinition[]): () => void {
    const registrations: readonly ToolRegistration[] = definitions.map((definition) => Object.freeze({ definition }))
    const undo = this.#definitions.attach(scope, (layer) => {
      for (const registration of registrations) layer.set(registration.definition.name, registration)
      return () => {
        for (const registration of registrations) {
          if (layer.get(registration.definition.name) === registration) layer.delete(registration.definition.name)
        }
      }
    })
    this.#version++
    return () => {
      undo()
      this.#version++
    }
  }

  /** Adds a restriction on `scope`. */
  restrict(scope: ScopeKey, restriction: ToolRestriction): void {
    let list = this.#restrictions.get(scope)
    if (list === undefined) {
      list = []
      this.#restrictions.set(scope, list)
    }
    list.push(restriction)
    this.#version++
  }

  /** Lifts one restriction on `scope`. */
  unrestrict(scope: ScopeKey, restriction: ToolRestriction): void {
    const list = this.#restrictions.get(scope)
    const index = list?.indexOf(restriction) ?? -1
    if (list !== undefined && index !== -1) list.splice(index, 1)
    if (list?.length === 0) this.#restrictions.delete(scope)
    this.#version++
  }

  /** Adds a guard to the layer of `scope` (after the others). */
  addGuard(scope: ScopeKey | undefined, registration: ToolGuardRegistration): void {
    let list = scope === undefined ? this.#globalGuards : this.#guards.get(scope)
    if (list === undefined) {
      list = []
      this.#guards.set(scope as ScopeKey, list)
    }
    list.push(registration)
  }

  /** Removes one guard registration. */
  removeGuard(scope: ScopeKey | undefined, registration: ToolGuardRegistration): void {
    const list = scope === undefined ? this.#globalGuards : this.#guards.get(scope)
    const index = list?.indexOf(registration) ?? -1
    if (list !== undefined && index !== -1) list.splice(index, 1)
    if (scope !== undefined && list?.length === 0) this.#guards.delete(scope)
  }

  /** The guards for `scope` in run order: global first, then each chain scope from the farthest to the nearest. */
  guards(scope: ScopeKey | undefined): readonly ToolGuard[] {
    const chain = this.chain(scope)
    const guards = this.#globalGuards.map((registration) => registration.guard)
    for (let depth = chain.length - 1; depth >= 0; depth--) {
      for (const registration of this.#guards.get(chain[depth] as ScopeKey) ?? []) guards.push(registration.guard)
    }
    return Object.freeze(guards)
  }

  /**
   * Dispatches one `tools/change` (with `{ scope }` for a scoped layer, so listeners tagged with
   * that scope or an ancestor hear it). Listener throws are contained by the bus; a dispatch that
   * cannot happen at all (the catalog is not registered) is logged and rolls nothing back.
   */
  changed(scope: ScopeKey | undefined, kind: ToolsChangePayload['kind'], names: readonly string[]): void {
    const payload: ToolsChangePayload = Object.freeze({ scope, kind, names })
    try {
      this.#ctx.emit('tools/change', payload, scope === undefined ? undefined : { scope })
    } catch (error) {
      this.#ctx.logger.error('tools/change could not be dispatched', { error, kind, names })
    }
  }

  /** Whether every restriction on `chain[0 … until - 1]` (the scopes nearer than the resolving layer) admits `name`. */
  #admitted(name: string, chain: readonly ScopeKey[], until: number): boolean {
    for (let depth = 0; depth < until; depth++) {
      if (!admitsAll(this.#restrictions.get(chain[depth] as ScopeKey), name)) return false
    }
    return true
  }

  /** Every visible definition from a chain: each name from its nearest layer, hidden names never falling back. */
  #collect(chain: readonly ScopeKey[]): ToolDefinition[] {
    const seen = new Set<string>()
    const visible: ToolDefinition[] = []
    const visit = (layer: Layer | undefined, depth: number): void => {
      for (const [name, registration] of layer ?? []) {
        if (seen.has(name)) continue
        seen.add(name)
        if (this.#admitted(name, chain, depth)) visible.push(registration.definition)
      }
    }
    for (let depth = 0; depth < chain.length; depth++) visit(this.#definitions.peek(chain[depth] as ScopeKey), depth)
    visit(this.#definitions.global, chain.length)
    return visible.sort(byName)
  }

  /** The model-facing schema of a definition (only its three fields, deep-frozen), built once per definition. */
  #schemaOf(definition: ToolDefinition): ToolSchema {
    let schema = this.#schemas.get(definition)
    if (schema === undefined) {
      const parameters = isDeepFrozen(definition.parameters)
        ? definition.parameters
        : deepFreeze(structuredClone(definition.parameters))
      // Recorded so prompt assembly shares it instead of cloning it on every step.
      schema = markDeepFrozen(Object.freeze({ name: definition.name, description: definition.description, parameters }))
      this.#schemas.set(definition, schema)
    }
    return schema
  }
}
