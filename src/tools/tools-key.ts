import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { ToolRegistry } from './tool-registry.js'
import type { ToolEvents } from './tool-events.js'

/** The key of the tool registry, provided by the `tools` entry. */
export const ToolsKey: ServiceKey<ToolRegistry> = defineService<ToolRegistry>('tools', 'the tool registry')

// What the tool feature adds to the package, merged by the package's name so the bundled
// declarations keep it: its events, typed for every `ctx.on` and dispatch, and its context accessor.
declare module 'yoke' {
  interface YokeEvents extends ToolEvents {}
  interface Context {
    /**
     * `ctx.get(ToolsKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly tools: ToolRegistry
  }
}

defineContextAccessor('tools', ToolsKey)
