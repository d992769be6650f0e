import type { PluginEntry } from '../kernel/compose-layers.js'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import type { HarnessOptions } from './harness-options.js'

/**
 * The ids of the default bundle, in start-order position (01-kernel.md §7.1). They are a stable
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
 * A reserved entry: it holds its id and position in the bundle so patches naming it compose,
 * and provides nothing. Each chapter's issue replaces one with the real plugin.
 */
function reservedEntry(id: string): PluginEntry {
  const plugin: PluginDefinition = definePlugin({ name: id, apply() {} })
  return { id, plugin }
}

/**
 * The default bundle: the first composition layer, with stable ids users patch. Each chapter's
 * issue swaps its reserved entry for the real one, its config built from `options`.
 *
 * @internal
 */
export function defaultBundle(_options: HarnessOptions): readonly PluginEntry[] {
  return defaultEntryIds.map(reservedEntry)
}
