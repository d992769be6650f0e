import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { PersistenceCoordinator } from './persistence-coordinator.js'
import type { PersistenceEvents } from './persistence-events.js'

/** The key of the persistence coordinator, provided by the `persistence` entry. */
export const PersistenceKey: ServiceKey<PersistenceCoordinator> = defineService<PersistenceCoordinator>(
  'persistence',
  'the persistence coordinator',
)

// What the persistence feature adds to the package, merged by the package's name so the bundled
// declarations keep it: its events, typed for every `ctx.on` and dispatch, and its context accessor.
declare module 'yoke' {
  interface YokeEvents extends PersistenceEvents {}
  interface Context {
    /**
     * `ctx.get(PersistenceKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly persistence: PersistenceCoordinator
  }
}

defineContextAccessor('persistence', PersistenceKey)
