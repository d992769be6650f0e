import { UnknownPresetError } from '../errors/preset-errors.js'
import type { Context } from '../kernel/context.js'
import type { PresetAgentOptions } from './define-preset.js'

/**
 * A preset's handle and scope key: a frozen `{ name }`, compared by
 * identity. Its context is `root.child('preset:<name>', { scope: preset })`.
 */
export interface Preset {
  /** The preset's name. */
  readonly name: string
}

/**
 * The composed presets of one harness, `ctx.get(services.presets)`: what the agent registry
 * binds agents to. Filled once while the harness starts; a preset leaves it when its context is
 * disposed (harness close).
 */
export interface PresetRegistry {
  /**
   * The preset of that name.
   *
   * @param name - a preset name
   * @returns its handle, or `undefined` when this harness has no such preset
   */
  get(name: string): Preset | undefined
  /**
   * The preset names, in declaration order.
   *
   * @returns a fresh frozen array
   */
  names(): readonly string[]
  /**
   * The context of a preset of this harness (its scope is the preset).
   *
   * @param preset - a handle from {@link PresetRegistry.get}
   * @returns its context
   * @throws {@link UnknownPresetError} for a handle this registry does not hold
   */
  context(preset: Preset): Context
  /**
   * The agent options a preset gives the agents bound to it.
   *
   * @param preset - a handle from {@link PresetRegistry.get}
   * @returns its frozen options (`{}` when the definition has none)
   * @throws {@link UnknownPresetError} for a handle this registry does not hold
   */
  options(preset: Preset): PresetAgentOptions
}

/** @internal The registry with the write side the composition uses. */
export interface PresetRegistryControl {
  readonly registry: PresetRegistry
  /** Adds a composed preset with its agent options; the returned function removes it. */
  add(preset: Preset, context: Context, options?: PresetAgentOptions): () => void
}

interface PresetEntry {
  readonly preset: Preset
  readonly context: Context
  readonly options: PresetAgentOptions
}

const noOptions: PresetAgentOptions = Object.freeze({})

/** @internal Creates an empty preset registry. */
export function createPresetRegistry(): PresetRegistryControl {
  const byName = new Map<string, PresetEntry>()
  const entryOf = (preset: Preset): PresetEntry => {
    const entry = typeof preset === 'object' && preset !== null ? byName.get(preset.name) : undefined
    if (entry === undefined || entry.preset !== preset) {
      throw new UnknownPresetError({
        preset: String((preset as Partial<Preset> | null)?.name),
        known: [...byName.keys()],
      })
    }
    return entry
  }
  const registry: PresetRegistry = Object.freeze({
    get: (name: string) => byName.get(name)?.preset,
    names: () => Object.freeze([...byName.keys()]),
    context: (preset: Preset): Context => entryOf(preset).context,
    options: (preset: Preset): PresetAgentOptions => entryOf(preset).options,
  })
  return {
    registry,
    add(preset, context, options = noOptions) {
      const entry: PresetEntry = { preset, context, options }
      byName.set(preset.name, entry)
      return () => {
        if (byName.get(preset.name) === entry) byName.delete(preset.name)
      }
    },
  }
}

/**
 * Looks a preset up by name, as the agent registry does before creating or resuming an agent.
 *
 * @param registry - the harness's presets (`ctx.get(services.presets)`)
 * @param name - the preset asked for
 * @returns its handle
 * @throws {@link UnknownPresetError} `UNKNOWN_PRESET` with the sorted `known` names
 * @example
 * ```ts
 * const preset = resolvePreset(ctx.get(services.presets), 'reviewer')
 * agentCtx.scopes.bindParent(agent, preset)
 * ```
 */
export function resolvePreset(registry: PresetRegistry, name: string): Preset {
  const preset = registry.get(name)
  if (preset === undefined) throw new UnknownPresetError({ preset: name, known: registry.names() })
  return preset
}
