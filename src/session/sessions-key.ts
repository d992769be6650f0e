import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { SessionRegistry } from './session-registry.js'
import type { SessionEvents } from './session-events.js'

/** The key of the session registry, provided by the `session` entry. */
export const SessionsKey: ServiceKey<SessionRegistry> = defineService<SessionRegistry>(
  'sessions',
  'the session registry',
)

// What the session feature adds to the package, merged by the package's name so the bundled
// declarations keep it: its events, typed for every `ctx.on` and dispatch, and its context accessor.
declare module 'yoke' {
  interface YokeEvents extends SessionEvents {}
  interface Context {
    /**
     * `ctx.get(SessionsKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly sessions: SessionRegistry
  }
}

defineContextAccessor('sessions', SessionsKey)
