import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { PersistenceCoordinator } from './persistence-coordinator.js'

/** The key of the persistence coordinator, provided by the `persistence` entry. */
export const PersistenceKey: ServiceKey<PersistenceCoordinator> = defineService<PersistenceCoordinator>(
  'persistence',
  'the persistence coordinator',
)

declare module 'yoke' {
  interface Context {
    /**
     * `ctx.get(PersistenceKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly persistence: PersistenceCoordinator
  }
}

defineContextAccessor('persistence', PersistenceKey)
