import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { ModelRegistry } from './model-registry.js'
import type { ModelEvents } from './model-events.js'
import type { RequestErrorEvents } from './retry/retry-events.js'

/** The key of the model registry, provided by the `model` entry. */
export const ModelsKey: ServiceKey<ModelRegistry> = defineService<ModelRegistry>('models', 'the model registry')

// What the model feature adds to the package, merged by the package's name so the bundled
// declarations keep it: its events, typed for every `ctx.on` and dispatch, and its context accessor.
declare module 'yoke' {
  interface YokeEvents extends ModelEvents, RequestErrorEvents {}
  interface Context {
    /**
     * `ctx.get(ModelsKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly models: ModelRegistry
  }
}

defineContextAccessor('models', ModelsKey)
