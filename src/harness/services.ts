// Each feature's key module also merges that feature's events and context accessor into the
// package. The type of `services` names no key module, so these empty type exports are what keeps
// those modules, and their merges, in the bundled declarations (the JavaScript build erases them).
export type {} from '../agent/agents-key.js'
export type {} from '../compaction/compaction-key.js'
export type {} from '../model/models-key.js'
export type {} from '../persistence/persistence-key.js'
export type {} from '../prompt/system-prompt-key.js'
export type {} from '../session/sessions-key.js'
export type {} from '../tools/tools-key.js'
import type { AgentRegistry } from '../agent/agent-registry.js'
import type { CompactionEngine } from '../compaction/compaction-engine.js'
import type { Clock, IdSource, Logger } from '../kernel/host-services.js'
import type { ServiceKey } from '../kernel/service-key.js'
import type { ModelRegistry } from '../model/model-registry.js'
import type { PersistenceCoordinator } from '../persistence/persistence-coordinator.js'
import type { SystemPrompt } from '../prompt/system-prompt.js'
import type { PresetRegistry } from '../scope/preset-registry.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { ToolRegistry } from '../tools/tool-registry.js'
import { AgentsKey } from '../agent/agents-key.js'
import { CompactionKey } from '../compaction/compaction-key.js'
import { ClockKey, hostKeyNames, IdsKey, LoggerKey } from '../kernel/host-keys.js'
import { ModelsKey } from '../model/models-key.js'
import { PersistenceKey } from '../persistence/persistence-key.js'
import { SystemPromptKey } from '../prompt/system-prompt-key.js'
import { PresetsKey } from '../scope/presets-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import { ToolsKey } from '../tools/tools-key.js'

/**
 * The core service keys in one place, each declared by the feature that owns it. The host keys
 * (`clock`, `ids`, `logger`) and `presets` are provided on the root before any plugin starts; the
 * others by the default bundle's entries.
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
  /** The composed presets, provided on the root by `createHarness`; no entry may provide it. */
  readonly presets: ServiceKey<PresetRegistry>
} = Object.freeze({
  clock: ClockKey,
  ids: IdsKey,
  logger: LoggerKey,
  sessions: SessionsKey,
  persistence: PersistenceKey,
  models: ModelsKey,
  tools: ToolsKey,
  systemPrompt: SystemPromptKey,
  agents: AgentsKey,
  compaction: CompactionKey,
  presets: PresetsKey,
})

/** @internal The keys a harness root provides itself before any entry starts: no entry may provide them. */
export const harnessRootKeys: ReadonlySet<string> = new Set([...hostKeyNames, PresetsKey.name])
