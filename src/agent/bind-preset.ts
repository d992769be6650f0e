import { PresetMismatchError, UnknownPresetError } from '../errors/preset-errors.js'
import type { Context } from '../kernel/context.js'
import { PresetsKey } from '../scope/presets-key.js'
import type { Preset, PresetRegistry } from '../scope/preset-registry.js'
import type { AgentOptions } from './agent-options.js'

const noPresets: PresetRegistry = Object.freeze({
  get: () => undefined,
  names: () => Object.freeze([]),
  context: (preset: Preset): Context => {
    throw new UnknownPresetError({ preset: String(preset.name), known: [] })
  },
  options: (preset: Preset): AgentOptions => {
    throw new UnknownPresetError({ preset: String(preset.name), known: [] })
  },
})

/** The presets of the harness `ctx` belongs to (none for a root made without `createHarness`). */
function presetsOf(ctx: Context): PresetRegistry {
  return ctx.getOptional(PresetsKey) ?? noPresets
}

function lookUp(presets: PresetRegistry, name: string): Preset {
  const preset = presets.get(name)
  if (preset === undefined) throw new UnknownPresetError({ preset: name, known: presets.names() })
  return preset
}

/** A preset an agent is bound to, with the options it gives. */
export interface PresetBinding {
  /** The preset's handle, the parent of the agent's scope. */
  readonly preset: Preset
  /** Its agent options. */
  readonly options: AgentOptions
}

/**
 * The preset a new agent asks for, looked up before anything
 * is created.
 *
 * @param ctx - the agent registry's context
 * @param name - the `preset` option, if any
 * @returns the binding, or `undefined` without a name
 * @throws {@link UnknownPresetError} `UNKNOWN_PRESET` (`preset`, `known`) for a name this harness lacks
 * @internal
 */
export function presetForCreate(ctx: Context, name: string | undefined): PresetBinding | undefined {
  if (name === undefined) return undefined
  const presets = presetsOf(ctx)
  const preset = lookUp(presets, name)
  return { preset, options: presets.options(preset) }
}

/**
 * The preset a resumed agent rebinds to: the one its session
 * header recorded (`agentPreset`; none recorded → none).
 *
 * @param ctx - the agent registry's context
 * @param recorded - `header.agentPreset`
 * @param requested - the caller's `preset` option, if any
 * @returns the binding, or `undefined` when none was recorded
 * @throws {@link PresetMismatchError} `PRESET_MISMATCH` when `requested` differs from `recorded`;
 *   {@link UnknownPresetError} when this harness lacks the recorded preset
 * @internal
 */
export function presetForResume(
  ctx: Context,
  recorded: string | undefined,
  requested: string | undefined,
): PresetBinding | undefined {
  if (requested !== undefined && requested !== recorded) throw new PresetMismatchError({ recorded, requested })
  return presetForCreate(ctx, recorded)
}

/**
 * An agent's options, field by field: the base (the harness `maxParallelToolCalls`
 * and the call fields of the model route), then the preset's options, then the caller's. A field
 * set to `undefined` does not hide a lower layer's value.
 *
 * @param layers - lowest first
 * @returns the merged, unvalidated options
 * @internal
 */
export function layerAgentOptions(...layers: readonly (AgentOptions | undefined)[]): AgentOptions {
  const merged: Record<string, unknown> = {}
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) if (value !== undefined) merged[key] = value
  }
  return merged as AgentOptions
}
