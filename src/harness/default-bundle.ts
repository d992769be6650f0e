import { agentLoopPlugin } from '../agent/agent-loop-plugin.js'
import { BasicCompactionPlugin } from '../compaction/basic-compaction-plugin.js'
import type { PluginEntry } from '../kernel/compose-layers.js'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import { modelPlugin } from '../model/model-plugin.js'
import { retryPlugin } from '../model/retry/retry-plugin.js'
import { persistencePlugin } from '../persistence/persistence-plugin.js'
import { systemPromptPlugin } from '../prompt/system-prompt-plugin.js'
import { sessionsPlugin } from '../session/sessions-plugin.js'
import { toolsPlugin } from '../tools/tools-plugin.js'
import type { HarnessOptions } from './harness-options.js'

/**
 * The ids of the default bundle, in start-order position. They are a stable
 * contract: users disable, configure and place entries by these ids.
 */
const defaultEntryIds = [
  'session',
  'persistence',
  'model',
  'tools',
  'system-prompt',
  'agent-loop',
  'retry',
  'compaction',
] as const

/**
 * The reserved plugins: each holds its id and position in the bundle so patches naming it
 * compose, and provides nothing; an id without its real plugin keeps its reserved one. Built
 * once (frozen, inert), so composing the same options twice gives deep-equal entries.
 */
const reservedPlugins: Readonly<Record<string, PluginDefinition>> = Object.freeze(
  Object.fromEntries(defaultEntryIds.map((id) => [id, definePlugin({ name: id, apply() {} })])),
)

/** The real entries' plugins, built once like the reserved ones, so composing twice gives deep-equal entries. */
const sessionPlugin: PluginDefinition = sessionsPlugin()
const persistenceEntryPlugin = persistencePlugin()
const modelEntryPlugin = modelPlugin()
const retryEntryPlugin = retryPlugin()
const systemPromptEntryPlugin = systemPromptPlugin()
const toolsEntryPlugin = toolsPlugin()
const agentLoopEntryPlugin = agentLoopPlugin()

function reservedEntry(id: string): PluginEntry {
  return { id, plugin: reservedPlugins[id] as PluginDefinition }
}

/**
 * The default bundle: the first composition layer, with stable ids users patch. Each entry gets
 * its real plugin, its config built from `options`; an id without one keeps its reserved entry.
 *
 * @internal
 */
export function defaultBundle(options: HarnessOptions): readonly PluginEntry[] {
  return defaultEntryIds.map((id): PluginEntry => {
    if (id === 'session') return { id, plugin: sessionPlugin }
    if (id === 'persistence') {
      // No store at all: the entry stays in the list (patches may name it) but does not start.
      if (options.persistence === false)
        return { id, plugin: persistenceEntryPlugin as PluginDefinition<unknown>, config: {}, disabled: true }
      const config = {
        ...(options.persistence === undefined ? {} : { adapter: options.persistence }),
        ...(options.writeBehind === undefined ? {} : { writeBehind: options.writeBehind }),
        ...(options.writeTimeoutMs === undefined ? {} : { writeTimeoutMs: options.writeTimeoutMs }),
        ...(options.durability === undefined ? {} : { durability: options.durability }),
      }
      return { id, plugin: persistenceEntryPlugin as PluginDefinition<unknown>, config }
    }
    if (id === 'model') {
      const config = options.model === undefined ? {} : { model: options.model }
      return { id, plugin: modelEntryPlugin as PluginDefinition<unknown>, config }
    }
    if (id === 'tools') {
      return {
        id,
        plugin: toolsEntryPlugin as PluginDefinition<unknown>,
        ...(options.tools === undefined ? {} : { config: { tools: options.tools } }),
      }
    }
    if (id === 'system-prompt') {
      const config = options.instructions === undefined ? {} : { instructions: options.instructions }
      return { id, plugin: systemPromptEntryPlugin as PluginDefinition<unknown>, config }
    }
    if (id === 'agent-loop') {
      const config = {
        ...(options.maxParallelToolCalls === undefined ? {} : { maxParallelToolCalls: options.maxParallelToolCalls }),
        ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
      }
      return { id, plugin: agentLoopEntryPlugin as PluginDefinition<unknown>, config }
    }
    if (id === 'retry') {
      // The harness model route's `retry` is the retry entry's config; patches merge over it.
      const retry = options.model !== undefined && 'adapter' in options.model ? options.model.retry : undefined
      return {
        id,
        plugin: retryEntryPlugin as PluginDefinition<unknown>,
        ...(retry === undefined ? {} : { config: retry }),
      }
    }
    if (id === 'compaction') return { id, plugin: BasicCompactionPlugin as PluginDefinition<unknown> }
    return reservedEntry(id)
  })
}
