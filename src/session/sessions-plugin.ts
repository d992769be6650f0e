import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import { ClockKey, IdsKey } from '../kernel/host-keys.js'
import { SessionsKey } from './sessions-key.js'
import { sessionEvents } from './session-events.js'
import { createSessionRegistry } from './harness-session-registry.js'

/**
 * The `session` entry of the default bundle: provides the session registry as
 * `services.sessions` and registers the `session/*` events. Stopping it disposes every live
 * session.
 *
 * @returns a fresh plugin definition
 */
export function sessionsPlugin(): PluginDefinition {
  return definePlugin({
    name: 'session',
    provides: [SessionsKey],
    events: [sessionEvents],
    apply(ctx) {
      const registry = createSessionRegistry(ctx, ctx.get(ClockKey), ctx.get(IdsKey))
      ctx.provide(SessionsKey, registry)
      return () => registry.disposeAll()
    },
  })
}
