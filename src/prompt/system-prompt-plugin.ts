import { z } from 'zod'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import { SystemPromptKey } from './system-prompt-key.js'
import { ToolsKey } from '../tools/tools-key.js'
import type { ToolRegistry } from '../tools/tool-registry.js'
import { type Instructions, instructionSections, instructionsSchema } from './instructions.js'
import type { ToolSchemaProvider } from './prompt-contribution.js'
import { systemPromptEvents } from './prompt-events.js'
import { createSystemPrompt } from './harness-system-prompt.js'

/** The config of the `system-prompt` entry. */
export interface SystemPromptEntryConfig {
  /**
   * The harness `instructions` option, registered in the global layer: a string is the section
   * `instructions` (order 0); each array entry a section (order defaults to 0).
   *
   * @default none
   */
  readonly instructions?: Instructions
  /**
   * The tool order: must contain `'*'` exactly once and no duplicate.
   *
   * @default by name, in code-unit order
   */
  readonly toolOrder?: readonly string[]
}

const toolOrderSchema = z
  .array(z.string({ error: 'must be a tool name or "*"' }), { error: 'must be an array of tool names with one "*"' })
  .superRefine((names, context) => {
    const markers = names.filter((name) => name === '*').length
    if (markers !== 1) context.addIssue({ code: 'custom', message: `must contain "*" exactly once (found ${markers})` })
    const seen = new Set<string>()
    for (const name of names) {
      if (seen.has(name) && name !== '*') context.addIssue({ code: 'custom', message: `lists "${name}" twice` })
      seen.add(name)
    }
  })

const configSchema = z.strictObject({
  instructions: instructionsSchema.optional(),
  toolOrder: toolOrderSchema.optional(),
})

/**
 * The part of the tool registry the `system-prompt` entry reads: the visible
 * schemas and definitions of a scope and, when the registry offers `knownNames`, every name known
 * there (restricted ones included), so a restricted name in `toolOrder` is simply absent.
 */
type ToolSchemaSource = Pick<ToolRegistry, 'schemas' | 'list'> & {
  readonly knownNames?: (scope?: ScopeKey) => readonly string[]
}

/** The one provider of the tool registry: its visible schemas, and every name it knows for the scope. */
function registryProvider(registry: ToolSchemaSource): ToolSchemaProvider {
  return (input) => {
    const known = registry.list(input.scope).map((tool) => tool.name)
    const knownNames = registry.knownNames
    if (typeof knownNames === 'function') known.push(...knownNames.call(registry, input.scope))
    return { schemas: registry.schemas(input.scope), knownNames: known }
  }
}

/**
 * The `system-prompt` entry of the default bundle: provides the
 * {@link SystemPrompt} as `services.systemPrompt`, registers the `system-prompt/*` events,
 * registers the harness `instructions` in the global layer, and registers the tool registry's
 * schemas as one tool-schema provider when the `tools` entry runs. Configure the tool order with
 * `{ id: 'system-prompt', merge: { toolOrder: ['read', '*'] } }`; an invalid `toolOrder` fails the
 * entry's config validation (issue path `['toolOrder']`).
 *
 * @returns a plugin definition
 * @example
 * ```ts
 * const harness = await createHarness({ instructions: 'You are helpful.', patches: [{ id: 'system-prompt', merge: { toolOrder: ['read', '*'] } }] })
 * ```
 */
export function systemPromptPlugin(): PluginDefinition<SystemPromptEntryConfig | undefined> {
  return definePlugin({
    name: 'system-prompt',
    optional: [ToolsKey],
    provides: [SystemPromptKey],
    events: [systemPromptEvents],
    config: configSchema.optional() as z.ZodType<SystemPromptEntryConfig | undefined>,
    apply(ctx, config) {
      const prompt = createSystemPrompt(ctx, config?.toolOrder === undefined ? {} : { toolOrder: config.toolOrder })
      ctx.provide(SystemPromptKey, prompt)
      for (const section of instructionSections(config?.instructions)) prompt.section(section)
      const tools: ToolSchemaSource | undefined = ctx.getOptional(ToolsKey)
      if (tools !== undefined) prompt.tools(registryProvider(tools))
    },
  })
}
