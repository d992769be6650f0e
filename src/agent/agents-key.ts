import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { AgentRegistry } from './agent-registry.js'

/** The key of the agent registry, provided by the `agent-loop` entry. */
export const AgentsKey: ServiceKey<AgentRegistry> = defineService<AgentRegistry>('agents', 'the agent registry')

declare module 'yoke' {
  interface Context {
    /**
     * `ctx.get(AgentsKey)`, with this context as the owner of the agents it creates or resumes:
     * disposing this context disposes them. Throws `ServiceMissingError` when absent.
     */
    readonly agents: AgentRegistry
  }
}

defineContextAccessor('agents', AgentsKey)
