import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { CompactionEngine } from './compaction-engine.js'
import type { CompactionEvents } from './compaction-events.js'

/** The key of the compaction engine, provided by the `compaction` entry (or any plugin that replaces it). */
export const CompactionKey: ServiceKey<CompactionEngine> = defineService<CompactionEngine>(
  'compaction',
  'the compaction engine',
)

// What the compaction feature adds to the package, merged by the package's name so the bundled
// declarations keep it: its events, typed for every `ctx.on` and dispatch, and its context accessor.
declare module 'yoke' {
  interface YokeEvents extends CompactionEvents {}
  interface Context {
    /**
     * `ctx.get(CompactionKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly compaction: CompactionEngine
  }
}

defineContextAccessor('compaction', CompactionKey)
