/**
 * The kernel: contexts, service keys, effects, the event bus, scopes, plugins and composition.
 *
 * @module
 */
export { bindOwner, type OwnerBindable } from './bind-owner.js'
export type {
  ComposedEntry,
  CompositionLayers,
  ConfigPatch,
  EntryPatch,
  InsertPatch,
  MergePatch,
  PluginEntry,
  TogglePatch,
} from './compose-layers.js'
export {
  type ChildOptions,
  Context,
  type ContextState,
  type DispatchOptions,
  type DisposeError,
  type DisposeReport,
  type ListenOptions,
} from './context.js'
export { createRootContext, type RootContextOptions } from './create-root-context.js'
export type { Cleanup, Disposer, EffectKind, EffectSetup } from './effect.js'
export {
  defineEvents,
  type Emit,
  type EventCatalog,
  type EventDescriptor,
  type EventMap,
  type EventMode,
  type DescriptorOfMode,
  isEventCatalog,
  type Parallel,
  type Serial,
  type Waterfall,
  type WaterfallNext,
} from './event-catalog.js'
export { ClockKey, IdsKey, LoggerKey } from './host-keys.js'
export { type Clock, type IdSource, type Logger, randomIds, stderrLogger, systemClock } from './host-services.js'
export {
  type EffectNode,
  type EventInspection,
  type ErrorSummary,
  type HarnessInspection,
  inspectContext,
  type PluginInspection,
  type ServiceInspection,
  summarizeError,
} from './inspect.js'
export {
  type KernelErrorEvent,
  type KernelEvents,
  type KernelErrorPhase,
  kernelEvents,
  type PluginState,
  type PluginStateEvent,
  type ServiceEvent,
} from './kernel-events.js'
export {
  type AnyPluginClass,
  definePlugin,
  isPluginClass,
  isPluginDefinition,
  type KeyReference,
  type PluginApplyResult,
  type PluginClass,
  type PluginClassStatics,
  type PluginDefinition,
  type PluginHandle,
  type PluginInput,
  type PluginInstance,
  type PluginSpec,
} from './plugin.js'
export type { ScopeGraph, ScopeKey, ScopeLink } from './scope-graph.js'
export { createScopedLayers, type ScopedLayers, type ScopedLayersOptions } from './scoped-layers.js'
export { defineService, isServiceKey, type ServiceKey } from './service-key.js'
export type { EventName, EventNameOfMode, ListenerOf, PayloadOf, ResultOf, YokeEvents } from './yoke-events.js'
