import { CompositionError } from '../errors/composition-error.js'
import { UnknownEntryError } from '../errors/unknown-entry-error.js'
import { entryIdOf, isPluginClass, isPluginDefinition, normalizePlugin, type PluginInput } from './plugin.js'
import { isPlainObject } from './is-plain-object.js'

/** A plugin in a layer, with an explicit id, config or disabled flag. */
export interface PluginEntry {
  /**
   * The entry id, `^[a-z0-9][a-z0-9-]{0,63}$`.
   *
   * @default the plugin's name in kebab case
   */
  readonly id?: string
  /** The plugin definition or class. */
  readonly plugin: PluginInput
  /** The config handed to the plugin's schema and `apply`. */
  readonly config?: unknown
  /**
   * Whether the entry is kept in the list but not started.
   *
   * @default false
   */
  readonly disabled?: boolean
}

/** Replaces the whole config of entry `id`. */
export interface ConfigPatch {
  /** The target entry. */
  readonly id: string
  /** The new config; `undefined` replaces it too (the entry then has none). */
  readonly config: unknown
  /** Also set the disabled flag. */
  readonly disabled?: boolean
}

/** Deep-merges into the config of entry `id` (plain objects merge, anything else replaces, `undefined` removes). */
export interface MergePatch {
  /** The target entry. */
  readonly id: string
  /** What to merge. */
  readonly merge: object
  /** Also set the disabled flag. */
  readonly disabled?: boolean
}

/** Disables or re-enables entry `id`. */
export interface TogglePatch {
  /** The target entry. */
  readonly id: string
  /** The new flag. */
  readonly disabled: boolean
}

/** Inserts a new entry (placed before/after another, or at the end), or swaps the plugin of an existing one. */
export interface InsertPatch {
  /** The new (or swapped) entry id. */
  readonly id: string
  /** The plugin. */
  readonly plugin: PluginInput
  /** Its config (a swap replaces the old config with this, absent → `undefined`). */
  readonly config?: unknown
  /** Its disabled flag. */
  readonly disabled?: boolean
  /** Place it right before this entry. */
  readonly before?: string
  /** Place it right after this entry. */
  readonly after?: string
}

/** One patch of `options.patches`. */
export type EntryPatch = ConfigPatch | MergePatch | TogglePatch | InsertPatch

/** One entry after composition. */
export interface ComposedEntry {
  /** The entry id. */
  readonly id: string
  /** The plugin. */
  readonly plugin: PluginInput
  /** The config as given (validated only at start). */
  readonly config: unknown
  /** Whether the entry is disabled. */
  readonly disabled: boolean
  /** Which layer added it: `'default'`, `'plugins[i]'` or `'patches[j]'`. */
  readonly source: string
  /** The patches that changed it, in order. */
  readonly patchedBy: readonly string[]
}

/** The `plugins` and `patches` layers of the harness options. */
export interface CompositionLayers {
  /** Plugins appended after the default bundle. */
  readonly plugins?: readonly (PluginInput | PluginEntry)[] | undefined
  /** Patches applied, in order, to the composed list. */
  readonly patches?: readonly EntryPatch[] | undefined
}

interface Node {
  id: string
  plugin: PluginInput
  config: unknown
  disabled: boolean
  source: string
  patchedBy: string[]
  previous: Node | undefined
  next: Node | undefined
}

const idPattern = /^[a-z0-9][a-z0-9-]{0,63}$/

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/**
 * Deep-merges `patch` into `base` without mutating either: plain objects merge key by key,
 * recursively; any other value replaces; an `undefined` value removes its key.
 *
 * @internal
 */
export function mergeConfig(base: unknown, patch: object): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  if (isPlainObject(base)) for (const [key, value] of Object.entries(base)) define(result, key, value)
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) delete result[key]
    // A plain patch object is merged into a fresh object even over a non-object: its `undefined` keys are removed too.
    else if (isPlainObject(value)) define(result, key, mergeConfig(result[key], value))
    else define(result, key, value)
  }
  return result
}

class EntryList {
  #head: Node | undefined
  #tail: Node | undefined
  readonly #index = new Map<string, Node>()

  get(id: string): Node | undefined {
    return this.#index.get(id)
  }

  ids(): string[] {
    const ids: string[] = []
    for (let node = this.#head; node !== undefined; node = node.next) ids.push(node.id)
    return ids
  }

  insert(node: Node, anchor?: { node: Node; before: boolean }): void {
    this.#index.set(node.id, node)
    if (anchor === undefined) {
      node.previous = this.#tail
      node.next = undefined
      if (this.#tail === undefined) this.#head = node
      else this.#tail.next = node
      this.#tail = node
      return
    }
    const previous = anchor.before ? anchor.node.previous : anchor.node
    const next = anchor.before ? anchor.node : anchor.node.next
    node.previous = previous
    node.next = next
    if (previous === undefined) this.#head = node
    else previous.next = node
    if (next === undefined) this.#tail = node
    else next.previous = node
  }

  unlink(node: Node): void {
    if (node.previous === undefined) this.#head = node.next
    else node.previous.next = node.next
    if (node.next === undefined) this.#tail = node.previous
    else node.next.previous = node.previous
    this.#index.delete(node.id)
  }

  entries(): ComposedEntry[] {
    const entries: ComposedEntry[] = []
    for (let node = this.#head; node !== undefined; node = node.next) {
      entries.push(
        Object.freeze({
          id: node.id,
          plugin: node.plugin,
          config: node.config,
          disabled: node.disabled,
          source: node.source,
          patchedBy: Object.freeze([...node.patchedBy]),
        }),
      )
    }
    return entries
  }
}

function node(id: string, plugin: PluginInput, config: unknown, disabled: boolean, source: string): Node {
  return { id, plugin, config, disabled, source, patchedBy: [], previous: undefined, next: undefined }
}

function checkId(id: unknown, where: string): string {
  if (typeof id !== 'string' || !idPattern.test(id)) {
    throw new CompositionError({
      reason: 'invalid-id',
      ...(typeof id === 'string' ? { id } : {}),
      patch: where,
      detail: `entry ids must match ${idPattern}`,
    })
  }
  return id
}

function layerEntry(
  item: unknown,
  where: string,
): { id: string; plugin: PluginInput; config: unknown; disabled: boolean } {
  if (isPluginDefinition(item) || isPluginClass(item)) {
    return {
      id: checkId(entryIdOf(normalizePlugin(item).name), where),
      plugin: item,
      config: undefined,
      disabled: false,
    }
  }
  // A function can only be meant as a plugin class: normalizing it names what it lacks.
  if (typeof item === 'function') normalizePlugin(item)
  if (typeof item !== 'object' || item === null || !('plugin' in item)) {
    throw new CompositionError({
      reason: 'invalid-entry',
      patch: where,
      detail: 'expected a plugin or { id?, plugin, config?, disabled? }',
    })
  }
  const entry = item as PluginEntry
  const plugin = normalizePlugin(entry.plugin)
  if (entry.disabled !== undefined && typeof entry.disabled !== 'boolean') {
    throw new CompositionError({ reason: 'invalid-entry', patch: where, detail: 'disabled must be a boolean' })
  }
  return {
    id: checkId(entry.id ?? entryIdOf(plugin.name), where),
    plugin: entry.plugin,
    config: entry.config,
    disabled: entry.disabled === true,
  }
}

/** The fields a patch may have. */
const patchFields: readonly string[] = ['id', 'plugin', 'config', 'merge', 'disabled', 'before', 'after']

function applyPatch(list: EntryList, patch: unknown, where: string): void {
  if (typeof patch !== 'object' || patch === null) {
    throw new CompositionError({
      reason: 'invalid-patch',
      patch: where,
      detail: 'a patch must be an object with an id',
    })
  }
  const fields = patch as Partial<InsertPatch & MergePatch & ConfigPatch>
  if (typeof fields.id !== 'string') {
    throw new CompositionError({ reason: 'invalid-patch', patch: where, detail: 'a patch needs a string id' })
  }
  const id = fields.id
  // A typo (`disabld: true`) must not be a silent no-op.
  const unknown = Object.keys(patch).find((key) => !patchFields.includes(key))
  if (unknown !== undefined) {
    throw new CompositionError({
      reason: 'invalid-patch',
      id,
      patch: where,
      detail: `unknown patch field "${unknown}" (known: ${patchFields.join(', ')})`,
    })
  }
  const has = (key: string): boolean => key in patch && (patch as Record<string, unknown>)[key] !== undefined
  // `config` replaces the whole config, with `undefined` like any other value.
  const hasConfig = 'config' in patch
  if (hasConfig && has('merge')) {
    throw new CompositionError({ reason: 'invalid-patch', id, patch: where, detail: 'config and merge are exclusive' })
  }
  if (has('before') && has('after')) {
    throw new CompositionError({ reason: 'invalid-patch', id, patch: where, detail: 'before and after are exclusive' })
  }
  if (has('disabled') && typeof fields.disabled !== 'boolean') {
    throw new CompositionError({ reason: 'invalid-patch', id, patch: where, detail: 'disabled must be a boolean' })
  }
  if (has('merge') && (typeof fields.merge !== 'object' || fields.merge === null)) {
    throw new CompositionError({ reason: 'invalid-patch', id, patch: where, detail: 'merge must be an object' })
  }
  const anchorId = fields.before ?? fields.after
  const anchorNode = anchorId === undefined ? undefined : list.get(anchorId)
  if (anchorId !== undefined && anchorNode === undefined) {
    throw new UnknownEntryError({ id: anchorId, patch: where, knownIds: list.ids() })
  }
  const target = list.get(id)
  if (has('plugin')) {
    normalizePlugin(fields.plugin)
    const config = has('merge') ? mergeConfig(undefined, fields.merge as object) : fields.config
    if (target === undefined) {
      const inserted = node(checkId(id, where), fields.plugin as PluginInput, config, fields.disabled === true, where)
      list.insert(
        inserted,
        anchorNode === undefined ? undefined : { node: anchorNode, before: fields.before !== undefined },
      )
      return
    }
    target.plugin = fields.plugin as PluginInput
    target.config = config
    if (anchorNode !== undefined && anchorNode !== target) {
      list.unlink(target)
      list.insert(target, { node: anchorNode, before: fields.before !== undefined })
    }
  } else {
    if (target === undefined) throw new UnknownEntryError({ id, patch: where, knownIds: list.ids() })
    if (has('before') || has('after')) {
      throw new CompositionError({ reason: 'invalid-patch', id, patch: where, detail: 'before/after need a plugin' })
    }
    if (hasConfig) target.config = fields.config
    else if (has('merge')) target.config = mergeConfig(target.config, fields.merge as object)
  }
  if (has('disabled')) target.disabled = fields.disabled === true
  target.patchedBy.push(where)
}

/**
 * Composes the default layer, `plugins` and `patches` into the entry list.
 * Pure: runs no plugin code, mutates nothing.
 *
 * @internal
 */
export function composeLayers(defaults: readonly PluginEntry[], layers: CompositionLayers): ComposedEntry[] {
  const list = new EntryList()
  const add = (item: unknown, where: string, source: string): void => {
    const entry = layerEntry(item, where)
    if (list.get(entry.id) !== undefined) {
      throw new CompositionError({ reason: 'duplicate-id', id: entry.id, patch: where })
    }
    list.insert(node(entry.id, entry.plugin, entry.config, entry.disabled, source))
  }
  for (const [index, entry] of defaults.entries()) add(entry, `default[${index}]`, 'default')
  for (const [index, item] of (layers.plugins ?? []).entries()) add(item, `plugins[${index}]`, `plugins[${index}]`)
  for (const [index, patch] of (layers.patches ?? []).entries()) applyPatch(list, patch, `patches[${index}]`)
  return list.entries()
}
