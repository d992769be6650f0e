import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { ModelRegistry } from './model-registry.js'

/** The key of the model registry, provided by the `model` entry. */
export const ModelsKey: ServiceKey<ModelRegistry> = defineService<ModelRegistry>('models', 'the model registry')

declare module 'yoke' {
  interface Context {
    /**
     * `ctx.get(ModelsKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly models: ModelRegistry
  }
}

defineContextAccessor('models', ModelsKey)
