import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { type Context, kernelOf } from './context.js'
import type { Disposer } from './effect.js'
import { type OptionRule, optionIssues, optionRule, throwOptionIssues } from './option-issues.js'
import type { ScopeGraph, ScopeKey } from './scope-graph.js'

/** Options of {@link createScopedLayers}. */
export interface ScopedLayersOptions<L> {
  /** The scope graph whose parent links order the chain (any context's `ctx.scopes` of the harness). */
  readonly scopes: ScopeGraph
  /** Builds an empty layer: once for the global layer, then on demand for a scope's first registration. */
  create(): L
  /** Whether a layer holds nothing; a scoped layer is reclaimed when an undo leaves it empty. Must not throw. */
  isEmpty(layer: L): boolean
  /**
   * The effect label of each registration, as `inspect()` shows it.
   *
   * @default 'scoped-layer'
   */
  readonly label?: string
}

/**
 * Per-scope layers of one registry: a global layer plus one layer per
 * scope key that has a live registration. The building block behind prompt contributions, tools
 * and other registries whose entries are inherited down a scope chain.
 */
export interface ScopedLayers<L> {
  /** The global layer (registrations through unscoped contexts). */
  readonly global: L
  /**
   * The key's own layer, chain-blind. Never creates one.
   *
   * @param key - a scope key
   * @returns the layer, or `undefined` when the key has no live registration
   */
  peek(key: ScopeKey): L | undefined
  /**
   * The existing layers of the key's chain, farthest ancestor first, the key's own last. The
   * global layer is not included. Never creates a layer; O(chain length).
   *
   * @param key - a scope key; `undefined` → `[]`
   * @returns the layers
   */
  chain(key: ScopeKey | undefined): readonly L[]
  /**
   * Merges named entries over the global layer and the chain: global entries first, then each
   * chain layer, nearest last; a later entry with the same name replaces the earlier one in
   * place (the first insertion position is kept). Never creates a layer.
   *
   * @param key - a scope key; `undefined` → the global layer only
   * @param pick - the named entries of one layer, in that layer's order; must not throw
   * @returns a fresh map
   */
  merge<V>(key: ScopeKey | undefined, pick: (layer: L) => Iterable<readonly [string, V]>): Map<string, V>
  /**
   * Registers something in the layer of `owner.scope` (created on demand; the global layer when
   * the owner is unscoped) as an effect of `owner`: disposing the owner, or calling the returned
   * disposer, runs the undo. The undo is installed before `notify` runs; a throwing `notify` is
   * reported to `kernel/error` (`phase: 'listener'`) and the logger, and the registration stays.
   *
   * @param owner - the context that owns the registration and decides its layer
   * @param action - mutates the layer and returns its undo; may throw (then nothing is registered)
   * @param notify - called once the registration is in place (e.g. to emit a change event)
   * @returns the disposer
   * @throws {@link ContextDisposedError} when `owner` is disposing or disposed (nothing runs);
   *   what `action` throws; {@link InvalidArgumentError} when `action` does not return a function
   */
  register(owner: Context, action: (layer: L) => () => void, notify?: () => void): Disposer
  /**
   * Like {@link ScopedLayers.register} without the effect, for a registry that names the layer
   * itself and owns the effect around it (tools and model routes): runs `action` on the layer of
   * `key` (created on demand; the global layer for `undefined`) and returns its undo, which also
   * reclaims the layer once it is empty.
   *
   * @param key - a scope key; `undefined` → the global layer
   * @param action - mutates the layer and returns its undo; may throw (then nothing is registered)
   * @returns the undo
   * @throws what `action` throws; {@link InvalidArgumentError} when `action` does not return a function
   */
  attach(key: ScopeKey | undefined, action: (layer: L) => () => void): () => void
  /**
   * The first value `pick` finds walking the key's chain nearest first (the key's own layer, then
   * its ancestors'), then the global layer: nearest-scope-wins resolution. Never creates a layer.
   *
   * @param key - a scope key; `undefined` → the global layer only
   * @param pick - a layer's value, or `undefined` to go on outward; must not throw
   * @returns the nearest value, or `undefined`
   */
  find<V>(key: ScopeKey | undefined, pick: (layer: L) => V | undefined): V | undefined
}

interface ScopedLayer<L> {
  readonly value: L
  registrations: number
}

const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  scopes: (value) => {
    const graph = value as { readonly chain?: unknown } | null
    return typeof graph === 'object' && graph !== null && typeof graph.chain === 'function'
      ? undefined
      : 'must be a ScopeGraph (ctx.scopes)'
  },
  create: optionRule.function,
  isEmpty: optionRule.function,
  label: optionRule.string,
})

/**
 * Creates the scoped layers of one registry. Scoped layers are held weakly by key, so a scope key
 * nobody references any more takes its layer with it.
 *
 * @param options - the scope graph, the layer factory and its emptiness test
 * @returns the layers
 * @throws {@link InvalidOptionsError} for options that are not an object, a missing or ill-typed
 *   `scopes` / `create` / `isEmpty`, a `label` that is not a string, or an unknown key
 * @example
 * ```ts
 * const layers = createScopedLayers({ scopes: root.scopes, create: () => new Map<string, string>(), isEmpty: (map) => map.size === 0 })
 * layers.register(agentCtx, (layer) => { layer.set('x', 'A'); return () => layer.delete('x') })
 * layers.merge(agentKey, (layer) => layer) // Map { 'x' => 'A' }
 * ```
 */
export function createScopedLayers<L>(options: ScopedLayersOptions<L>): ScopedLayers<L> {
  const issues = optionIssues(options, optionRules, '{ scopes, create, isEmpty, label? }', [
    'scopes',
    'create',
    'isEmpty',
  ])
  throwOptionIssues(issues, options, 'createScopedLayers options')
  const { scopes, create, isEmpty } = options
  const label = options.label ?? 'scoped-layer'
  const global = create()
  const layers = new WeakMap<ScopeKey, ScopedLayer<L>>()

  const reclaim = (key: ScopeKey, layer: ScopedLayer<L>): void => {
    if (layer.registrations === 0 && layers.get(key) === layer && isEmpty(layer.value)) layers.delete(key)
  }

  const chain = (key: ScopeKey | undefined): L[] => {
    if (key === undefined) return []
    const keys = scopes.chain(key)
    const found: L[] = []
    for (let index = keys.length - 1; index >= 0; index--) {
      const layer = layers.get(keys[index] as ScopeKey)
      if (layer !== undefined) found.push(layer.value)
    }
    return found
  }

  const registerScoped = (key: ScopeKey, action: (layer: L) => () => void): (() => void) => {
    let layer = layers.get(key)
    if (layer === undefined) {
      layer = { value: create(), registrations: 0 }
      layers.set(key, layer)
    }
    const home = layer
    let undo: () => void
    try {
      undo = checkedUndo(action(home.value))
    } catch (error) {
      reclaim(key, home)
      throw error
    }
    home.registrations++
    return () => {
      try {
        undo()
      } finally {
        home.registrations--
        reclaim(key, home)
      }
    }
  }

  const attach = (key: ScopeKey | undefined, action: (layer: L) => () => void): (() => void) =>
    key === undefined ? checkedUndo(action(global)) : registerScoped(key, action)

  return Object.freeze({
    global,
    peek: (key: ScopeKey) => layers.get(key)?.value,
    chain,
    merge<V>(key: ScopeKey | undefined, pick: (layer: L) => Iterable<readonly [string, V]>): Map<string, V> {
      const merged = new Map<string, V>()
      for (const [name, value] of pick(global)) merged.set(name, value)
      for (const layer of chain(key)) for (const [name, value] of pick(layer)) merged.set(name, value)
      return merged
    },
    register(owner: Context, action: (layer: L) => () => void, notify?: () => void): Disposer {
      checkAction(action)
      const key = owner.scope
      const disposer = owner.effect(() => attach(key, action), label)
      if (notify !== undefined) {
        try {
          notify()
        } catch (error) {
          kernelOf(owner).report({ error, phase: 'listener', label: `${label}:notify`, context: owner.path })
        }
      }
      return disposer
    },
    attach(key: ScopeKey | undefined, action: (layer: L) => () => void): () => void {
      checkAction(action)
      return attach(key, action)
    },
    find<V>(key: ScopeKey | undefined, pick: (layer: L) => V | undefined): V | undefined {
      if (key !== undefined) {
        for (const scope of scopes.chain(key)) {
          const layer = layers.get(scope)
          if (layer === undefined) continue
          const value = pick(layer.value)
          if (value !== undefined) return value
        }
      }
      return pick(global)
    },
  })
}

function checkAction(action: unknown): void {
  if (typeof action !== 'function') {
    throw new InvalidArgumentError({
      argument: 'action',
      reason: 'a layer registration must be a function',
      value: action,
    })
  }
}

function checkedUndo(undo: unknown): () => void {
  if (typeof undo !== 'function') {
    throw new InvalidArgumentError({
      argument: 'action result',
      reason: 'a layer registration must return its undo function',
      value: undo,
    })
  }
  return undo as () => void
}
