/**
 * Scopes (06-prompt-scope.md §4–§6): per-scope registry layers inherited down a scope chain,
 * presets as standing scopes composed once per harness, and the per-harness initiator that
 * records which agent started a piece of work.
 *
 * @module
 */
export {
  type PresetAgentOptions,
  type PresetDefinition,
  type PresetSpec,
  definePreset,
} from './define-preset.js'
export {
  createInitiator,
  type Initiator,
  type InitiatorAgent,
  type InitiatorControl,
} from './initiator.js'
export { type Preset, type PresetRegistry, resolvePreset } from './preset-registry.js'
export { createScopedLayers, type ScopedLayers, type ScopedLayersOptions } from './scoped-layers.js'
