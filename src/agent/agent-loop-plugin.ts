import { z } from 'zod'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import { maxStepsSchema } from './agent-options.js'
import { AgentsKey } from './agents-key.js'
import { ModelsKey } from '../model/models-key.js'
import { SystemPromptKey } from '../prompt/system-prompt-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import { ToolsKey } from '../tools/tools-key.js'
import { createInitiator } from '../scope/initiator.js'
import type { Agent } from './agent.js'
import { agentEvents } from './agent-events.js'
import { agentLoopEvents } from './agent-loop-events.js'
import { requestErrorEvents } from '../model/retry/retry-events.js'
import { createAgentRegistry } from './harness-agent-registry.js'
import { createLoopRequestMarks } from './request-builder.js'

/** The config of the `agent-loop` entry. */
export interface AgentLoopEntryConfig {
  /** The harness `maxParallelToolCalls`, the default of every agent's options. */
  readonly maxParallelToolCalls?: number
  /** The harness `maxSteps`, the default of every agent's options (25 when absent). */
  readonly maxSteps?: number
}

const configSchema = z.strictObject({
  maxParallelToolCalls: z.number().int().positive().optional(),
  maxSteps: maxStepsSchema.optional(),
})

/**
 * The `agent-loop` entry: defines the agent events, owns the harness initiator and
 * loop-request marks, and provides `services.agents`. At stop it disposes every agent.
 *
 * @returns the plugin definition
 * @example
 * ```ts
 * const harness = await createHarness({ model })
 * const agent = await harness.agents.create()
 * ```
 */
export function agentLoopPlugin(): PluginDefinition<AgentLoopEntryConfig | undefined> {
  return definePlugin({
    name: 'agent-loop',
    inject: [SessionsKey, ModelsKey, SystemPromptKey],
    optional: [ToolsKey],
    provides: [AgentsKey],
    events: [agentEvents, agentLoopEvents, requestErrorEvents],
    config: configSchema.optional() as z.ZodType<AgentLoopEntryConfig | undefined>,
    apply(ctx, config) {
      const initiator = createInitiator<Agent>()
      // Registered first, so it is torn down last: once every agent is disposed.
      ctx.effect(() => () => initiator.dispose(), 'initiator')
      const registry = createAgentRegistry(ctx, initiator, createLoopRequestMarks(), {
        ...(config?.maxParallelToolCalls === undefined ? {} : { maxParallelToolCalls: config.maxParallelToolCalls }),
        ...(config?.maxSteps === undefined ? {} : { maxSteps: config.maxSteps }),
      })
      ctx.effect(() => () => registry.close(), 'agents')
      ctx.provide(AgentsKey, registry)
    },
  })
}
