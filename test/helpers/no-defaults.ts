import type { EntryPatch } from 'yoke'

/** The ids of the default bundle, in order. */
export const defaultIds = [
  'session',
  'persistence',
  'model',
  'tools',
  'system-prompt',
  'agent-loop',
  'retry',
  'compaction',
] as const

/** Eight patches disabling every default entry. */
export const disableDefaults: readonly EntryPatch[] = defaultIds.map((id) => ({ id, disabled: true }))
