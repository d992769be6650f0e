import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { PresetRegistry } from './preset-registry.js'

/**
 * The key of the composed presets. `createHarness` provides it on the root before any plugin
 * starts and fills it once the entries started; no entry may provide it.
 */
export const PresetsKey: ServiceKey<PresetRegistry> = defineService<PresetRegistry>('presets', 'the composed presets')
