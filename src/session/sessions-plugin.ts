import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import { services } from '../kernel/services.js'
import { sessionEvents } from './session-events.js'
import { SessionRegistry } from './session-registry.js'

/**
 * The `session` entry of the default bundle: provides the {@link SessionRegistry} as
 * `services.sessions` and registers the `session/*` events. Stopping it disposes every live
 * session.
 *
 * @returns a fresh plugin definition
 */
export function sessionsPlugin(): PluginDefinition {
  return definePlugin({
    name: 'session',
    provides: [services.sessions],
    events: [sessionEvents],
    apply(ctx) {
      const registry = new SessionRegistry(ctx, ctx.get(services.clock), ctx.get(services.ids))
      ctx.provide(services.sessions, registry)
      return () => registry.disposeAll()
    },
  })
}
