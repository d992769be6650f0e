import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { ToolRegistry } from './tool-registry.js'

/** The key of the tool registry, provided by the `tools` entry. */
export const ToolsKey: ServiceKey<ToolRegistry> = defineService<ToolRegistry>('tools', 'the tool registry')

declare module 'yoke' {
  interface Context {
    /**
     * `ctx.get(ToolsKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly tools: ToolRegistry
  }
}

defineContextAccessor('tools', ToolsKey)
