import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { SessionRegistry } from './session-registry.js'

/** The key of the session registry, provided by the `session` entry. */
export const SessionsKey: ServiceKey<SessionRegistry> = defineService<SessionRegistry>(
  'sessions',
  'the session registry',
)

declare module 'yoke' {
  interface Context {
    /**
     * `ctx.get(SessionsKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly sessions: SessionRegistry
  }
}

defineContextAccessor('sessions', SessionsKey)
