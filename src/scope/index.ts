/**
 * Scopes: presets as standing scopes composed once per harness, and the per-harness initiator
 * that records which agent started a piece of work. The per-scope registry layers live in the
 * kernel, next to the scope graph they follow.
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
