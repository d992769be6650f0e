import type { PluginEntry } from '../kernel/compose-layers.js'
import type { HarnessOptions } from './harness-options.js'

/**
 * The default bundle: the first composition layer, with stable ids users patch. Each chapter's
 * issue adds its entry here (`session`, `persistence`, `model`, `tools`, `system-prompt`,
 * `agent-loop`, `retry`, `compaction`, in that order), its config built from `options`.
 *
 * @internal
 */
export function defaultBundle(_options: HarnessOptions): readonly PluginEntry[] {
  return []
}
