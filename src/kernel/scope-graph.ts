import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { ScopeLinkError } from '../errors/scope-link-error.js'
import type { Disposer } from './effect.js'

/** A scope key: any object, compared by identity. The agent loop uses the `Agent` handle. */
export type ScopeKey = object

/** A parent link between two scope keys; dispose it to unlink. */
export interface ScopeLink extends Disposer {
  /**
   * Moves the link to another parent (cycle-checked).
   *
   * @param parent - the new parent
   * @throws {@link ScopeLinkError} `reason: 'cycle'`, or when the link was disposed
   */
  rebind(parent: ScopeKey): void
}

/** The parent links between scope keys of one harness; events flow up these chains. */
export interface ScopeGraph {
  /**
   * Links `key` to one parent, as an effect of the calling context.
   *
   * @param key - the child scope key
   * @param parent - its parent
   * @returns the link
   * @throws {@link ScopeLinkError} `already-bound` or `cycle`
   */
  bindParent(key: ScopeKey, parent: ScopeKey): ScopeLink
  /**
   * The key, then its ancestors, nearest first.
   *
   * @param key - any scope key
   * @returns `[key, parent, grandparent, …]`
   */
  chain(key: ScopeKey): readonly ScopeKey[]
}

interface LinkState {
  parent: ScopeKey
  live: boolean
}

interface CachedChain {
  readonly version: number
  readonly chain: readonly ScopeKey[]
  readonly set: ReadonlySet<ScopeKey>
}

/** @internal The per-root store behind every context's `scopes` view. */
export class ScopeStore {
  #links = new WeakMap<ScopeKey, LinkState>()
  #cache = new WeakMap<ScopeKey, CachedChain>()
  #version = 0

  link(key: ScopeKey, parent: ScopeKey): LinkState {
    if (this.#links.has(key)) throw new ScopeLinkError({ reason: 'already-bound', key })
    this.#checkCycle(key, parent)
    const state: LinkState = { parent, live: true }
    this.#links.set(key, state)
    this.#version++
    return state
  }

  rebind(key: ScopeKey, state: LinkState, parent: ScopeKey): void {
    if (!state.live) throw new ScopeLinkError({ reason: 'already-bound', key })
    this.#checkCycle(key, parent)
    state.parent = parent
    this.#version++
  }

  unlink(key: ScopeKey, state: LinkState): void {
    if (!state.live) return
    state.live = false
    if (this.#links.get(key) === state) this.#links.delete(key)
    this.#version++
  }

  chain(key: ScopeKey): readonly ScopeKey[] {
    return this.#cached(key).chain
  }

  /** The admission set of a dispatch scoped to `key`: the key and its ancestors. */
  admission(key: ScopeKey): ReadonlySet<ScopeKey> {
    return this.#cached(key).set
  }

  #cached(key: ScopeKey): CachedChain {
    if ((typeof key !== 'object' && typeof key !== 'function') || key === null) {
      throw new InvalidArgumentError({ argument: 'scope', reason: 'a scope key must be an object', value: key })
    }
    const hit = this.#cache.get(key)
    if (hit !== undefined && hit.version === this.#version) return hit
    const chain: ScopeKey[] = [key]
    let current = this.#links.get(key)
    while (current !== undefined) {
      chain.push(current.parent)
      current = this.#links.get(current.parent)
    }
    const entry: CachedChain = { version: this.#version, chain: Object.freeze(chain), set: new Set(chain) }
    this.#cache.set(key, entry)
    return entry
  }

  #checkCycle(key: ScopeKey, parent: ScopeKey): void {
    let current: ScopeKey | undefined = parent
    while (current !== undefined) {
      if (current === key) throw new ScopeLinkError({ reason: 'cycle', key })
      current = this.#links.get(current)?.parent
    }
  }
}
