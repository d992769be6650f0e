import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { CompactionEngine } from './compaction-engine.js'

/** The key of the compaction engine, provided by the `compaction` entry (or any plugin that replaces it). */
export const CompactionKey: ServiceKey<CompactionEngine> = defineService<CompactionEngine>(
  'compaction',
  'the compaction engine',
)

declare module 'yoke' {
  interface Context {
    /**
     * `ctx.get(CompactionKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly compaction: CompactionEngine
  }
}

defineContextAccessor('compaction', CompactionKey)
