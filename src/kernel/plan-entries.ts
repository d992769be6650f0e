import { type MissingService, MissingServicesError } from '../errors/missing-services-error.js'
import { PluginCycleError } from '../errors/plugin-cycle-error.js'
import { ServiceConflictError } from '../errors/service-conflict-error.js'
import type { ComposedEntry } from './compose-layers.js'
import { type NormalizedPlugin, normalizePlugin } from './plugin.js'

/** @internal One entry with its normalized plugin. */
export interface PlannedEntry {
  readonly entry: ComposedEntry
  readonly plugin: NormalizedPlugin
}

/** @internal The result of planning: conflicts and missing keys checked, the start order fixed. */
export interface Plan {
  /** Every entry, normalized, in composition order (disabled ones too). */
  readonly entries: readonly PlannedEntry[]
  /** The enabled entries in start order. */
  readonly order: readonly PlannedEntry[]
  /** Each enabled entry's position in `order`. */
  readonly startIndex: ReadonlyMap<string, number>
}

/** A small binary min-heap of composition indexes, so the earliest startable entry starts first. */
class IndexHeap {
  readonly #items: number[] = []

  get size(): number {
    return this.#items.length
  }

  push(value: number): void {
    const items = this.#items
    items.push(value)
    let index = items.length - 1
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (items[parent]! <= value) break
      items[index] = items[parent]!
      index = parent
    }
    items[index] = value
  }

  pop(): number {
    const items = this.#items
    const top = items[0]!
    const last = items.pop()!
    if (items.length > 0) {
      let index = 0
      for (;;) {
        const left = 2 * index + 1
        if (left >= items.length) break
        const right = left + 1
        const child = right < items.length && items[right]! < items[left]! ? right : left
        if (items[child]! >= last) break
        items[index] = items[child]!
        index = child
      }
      items[index] = last
    }
    return top
  }
}

function findCycle(
  remaining: readonly number[],
  dependencies: readonly (readonly number[])[],
  ids: readonly string[],
): string[] {
  const left = new Set(remaining)
  const start = remaining[0]!
  const path: number[] = []
  const position = new Map<number, number>()
  let current = start
  for (;;) {
    const seen = position.get(current)
    if (seen !== undefined) return [...path.slice(seen), current].map((index) => ids[index]!)
    position.set(current, path.length)
    path.push(current)
    const next = dependencies[current]!.find((dependency) => left.has(dependency))
    if (next === undefined) return [...path, current].map((index) => ids[index]!)
    current = next
  }
}

/**
 * Plans a composition: provider conflicts, every missing key at once, then the
 * deterministic start order with cycle detection. Runs no plugin code.
 *
 * @param composed - the composed entries
 * @param rootKeys - the keys the root provides itself (no entry may provide them; every entry may inject them)
 * @internal
 */
export function planEntries(composed: readonly ComposedEntry[], rootKeys: ReadonlySet<string>): Plan {
  const entries = composed.map((entry) => ({ entry, plugin: normalizePlugin(entry.plugin) }))
  const enabled = entries.filter((planned) => !planned.entry.disabled)
  const providers = new Map<string, number>()
  enabled.forEach((planned, index) => {
    for (const key of planned.plugin.provides) {
      const existing = providers.get(key)
      if (rootKeys.has(key) || existing !== undefined) {
        throw new ServiceConflictError({
          key,
          existingProvider: existing === undefined ? 'harness' : `harness/${enabled[existing]!.entry.id}`,
          attemptedProvider: `harness/${planned.entry.id}`,
        })
      }
      providers.set(key, index)
    }
  })
  const missing: MissingService[] = []
  for (const planned of enabled) {
    for (const key of planned.plugin.inject) {
      if (rootKeys.has(key) || providers.has(key)) continue
      const disabled = entries.find((other) => other.entry.disabled && other.plugin.provides.includes(key))
      missing.push(
        disabled === undefined
          ? { plugin: planned.entry.id, key }
          : { plugin: planned.entry.id, key, disabledProvider: disabled.entry.id },
      )
    }
  }
  if (missing.length > 0) throw new MissingServicesError({ missing })
  const dependencies = enabled.map((planned, index) => {
    const after = new Set<number>()
    for (const key of [...planned.plugin.inject, ...planned.plugin.optional]) {
      const provider = providers.get(key)
      if (provider !== undefined && provider !== index) after.add(provider)
    }
    return [...after]
  })
  const dependents: number[][] = enabled.map(() => [])
  const waiting = dependencies.map((list, index) => {
    for (const dependency of list) dependents[dependency]!.push(index)
    return list.length
  })
  const ready = new IndexHeap()
  waiting.forEach((count, index) => {
    if (count === 0) ready.push(index)
  })
  const order: PlannedEntry[] = []
  const startIndex = new Map<string, number>()
  while (ready.size > 0) {
    const index = ready.pop()
    const planned = enabled[index]!
    startIndex.set(planned.entry.id, order.length)
    order.push(planned)
    for (const dependent of dependents[index]!) {
      if (--waiting[dependent]! === 0) ready.push(dependent)
    }
  }
  if (order.length < enabled.length) {
    const remaining = enabled.map((_, index) => index).filter((index) => !startIndex.has(enabled[index]!.entry.id))
    throw new PluginCycleError({
      cycle: findCycle(
        remaining,
        dependencies,
        enabled.map((planned) => planned.entry.id),
      ),
    })
  }
  return { entries, order, startIndex }
}
