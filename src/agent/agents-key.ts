import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { AgentRegistry } from './agent-registry.js'
import type { AgentEvents } from './agent-events.js'
import type { AgentLoopEvents } from './agent-loop-events.js'

/** The key of the agent registry, provided by the `agent-loop` entry. */
export const AgentsKey: ServiceKey<AgentRegistry> = defineService<AgentRegistry>('agents', 'the agent registry')

// What the agent feature adds to the package, merged by the package's name so the bundled
// declarations keep it: its events, typed for every `ctx.on` and dispatch, and its context accessor.
declare module 'yoke' {
  interface YokeEvents extends AgentEvents, AgentLoopEvents {}
  interface Context {
    /**
     * `ctx.get(AgentsKey)`, with this context as the owner of the agents it creates or resumes:
     * disposing this context disposes them. Throws `ServiceMissingError` when absent.
     */
    readonly agents: AgentRegistry
  }
}

defineContextAccessor('agents', AgentsKey)
