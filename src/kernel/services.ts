import type { AgentRegistry } from '../agent/agent-registry.js'
import type { CompactionEngine } from '../compaction/compaction-engine.js'
import type { ModelRegistry } from '../model/model-registry.js'
import type { PersistenceCoordinator } from '../persistence/persistence-coordinator.js'
import type { SystemPrompt } from '../prompt/system-prompt.js'
import type { PresetRegistry } from '../scope/preset-registry.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { ToolRegistry } from '../tools/tool-registry.js'
import type { Clock, IdSource, Logger } from './host-services.js'
import { defineService, type ServiceKey } from './service-key.js'

/**
 * The core service keys. The host keys (`clock`, `ids`, `logger`) are provided on the root before
 * any plugin starts; the others by the default bundle's entries as their chapters land.
 */
export const services: {
  /** The harness clock (host service). */
  readonly clock: ServiceKey<Clock>
  /** The harness id source (host service). */
  readonly ids: ServiceKey<IdSource>
  /** The harness logger (host service). */
  readonly logger: ServiceKey<Logger>
  /** The session registry (entry `session`). */
  readonly sessions: ServiceKey<SessionRegistry>
  /** The persistence coordinator (entry `persistence`). */
  readonly persistence: ServiceKey<PersistenceCoordinator>
  /** The model registry (entry `model`). */
  readonly models: ServiceKey<ModelRegistry>
  /** The tool registry (entry `tools`). */
  readonly tools: ServiceKey<ToolRegistry>
  /** The system prompt (entry `system-prompt`). */
  readonly systemPrompt: ServiceKey<SystemPrompt>
  /** The agent registry (entry `agent-loop`). */
  readonly agents: ServiceKey<AgentRegistry>
  /** The compaction engine (entry `compaction`). */
  readonly compaction: ServiceKey<CompactionEngine>
  /**
   * The composed presets (06-prompt-scope.md §5), provided on the root by `createHarness` before
   * any plugin starts and filled once the entries started; no entry may provide it.
   */
  readonly presets: ServiceKey<PresetRegistry>
} = Object.freeze({
  clock: defineService<Clock>('clock', 'the harness clock'),
  ids: defineService<IdSource>('ids', 'the harness id source'),
  logger: defineService<Logger>('logger', 'the harness logger'),
  sessions: defineService<SessionRegistry>('sessions', 'the session registry'),
  persistence: defineService<PersistenceCoordinator>('persistence', 'the persistence coordinator'),
  models: defineService<ModelRegistry>('models', 'the model registry'),
  tools: defineService<ToolRegistry>('tools', 'the tool registry'),
  systemPrompt: defineService<SystemPrompt>('system-prompt', 'the system prompt'),
  agents: defineService<AgentRegistry>('agents', 'the agent registry'),
  compaction: defineService<CompactionEngine>('compaction', 'the compaction engine'),
  presets: defineService<PresetRegistry>('presets', 'the composed presets'),
})

/**
 * @internal The keys the harness itself provides on the root before any plugin starts (the host
 * keys, plus `presets` under `createHarness`), which no entry may provide.
 */
export const hostKeyNames: ReadonlySet<string> = new Set(['clock', 'ids', 'logger', 'presets'])
