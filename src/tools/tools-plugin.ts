import { z } from 'zod'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import { SessionsKey } from '../session/sessions-key.js'
import { ToolsKey } from './tools-key.js'
import { registerApprovalEventTypes } from './approval-events.js'
import type { ToolDefinition } from './tool-definition.js'
import { toolEvents } from './tool-events.js'
import { createToolRegistry } from './harness-tool-registry.js'

/** The config of the `tools` entry. */
export interface ToolsEntryConfig {
  /**
   * Tools registered in the global layer when the entry starts (an effect of the entry).
   *
   * @default []
   */
  readonly tools?: readonly ToolDefinition[]
}

function isDefinitionLike(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return false
  const candidate = value as { name?: unknown; execute?: unknown; parameters?: unknown }
  return (
    typeof candidate.name === 'string' &&
    typeof candidate.execute === 'function' &&
    typeof candidate.parameters === 'object'
  )
}

/**
 * The zod schema of a `tools` option: an array of definitions from `defineTool`, each
 * name once (a repeat is an issue at `[i, 'name']`). Passes the definitions through by reference.
 *
 * @internal
 */
export const toolListSchema: z.ZodType<readonly ToolDefinition[]> = z
  .array(z.unknown(), { error: 'must be an array of tool definitions' })
  .superRefine((tools, context) => {
    const seen = new Set<string>()
    tools.forEach((tool, index) => {
      if (!isDefinitionLike(tool)) {
        context.addIssue({ code: 'custom', path: [index], message: 'must be a tool definition made by defineTool()' })
        return
      }
      const name = (tool as ToolDefinition).name
      if (seen.has(name))
        context.addIssue({ code: 'custom', path: [index, 'name'], message: `repeats the tool name "${name}"` })
      seen.add(name)
    })
  }) as unknown as z.ZodType<readonly ToolDefinition[]>

const configSchema = z.strictObject({ tools: toolListSchema.optional() })

/**
 * The `tools` entry of the default bundle: provides the {@link ToolRegistry} as `services.tools`,
 * registers the `tools/*` and `approval/request` events and, when the `session` entry runs, the
 * durable `approval/asked` and `approval/decided` event types; registers the configured `tools`
 * globally.
 *
 * @returns a fresh plugin definition
 */
export function toolsPlugin(): PluginDefinition<ToolsEntryConfig | undefined> {
  return definePlugin({
    name: 'tools',
    optional: [SessionsKey],
    provides: [ToolsKey],
    events: [toolEvents],
    config: configSchema.optional() as z.ZodType<ToolsEntryConfig | undefined>,
    apply(ctx, config) {
      ctx.provide(ToolsKey, createToolRegistry(ctx))
      const sessions = ctx.getOptional(SessionsKey)
      if (sessions !== undefined) registerApprovalEventTypes(sessions)
      const tools = config?.tools ?? []
      if (tools.length > 0) ctx.get(ToolsKey).register(tools)
    },
  })
}
