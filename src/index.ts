/**
 * Yoke: a durable, embeddable agent runtime for Node.js.
 *
 * Start with {@link createHarness}; write plugins with {@link definePlugin}, typed services with
 * {@link defineService} and events with {@link defineEvents}. Every failure is a
 * {@link HarnessError} with a stable `code`.
 *
 * @example
 * ```ts
 * import { createHarness, definePlugin } from 'yoke'
 *
 * const hello = definePlugin({ name: 'hello', apply: (ctx) => ctx.effect(() => () => console.log('bye')) })
 * await using harness = await createHarness({ plugins: [hello] })
 * console.log(harness.describe())
 * ```
 *
 * @module
 */
export {
  CompositionError,
  ConfigError,
  ContextDisposedError,
  ErrorCode,
  EventConflictError,
  EventModeError,
  HarnessClosedError,
  HarnessCloseError,
  HarnessError,
  InvalidArgumentError,
  InvalidOptionsError,
  InvalidPluginError,
  MissingPeerError,
  MissingServicesError,
  PluginConfigError,
  PluginCycleError,
  PluginStartError,
  ScopeLinkError,
  ServiceConflictError,
  ServiceMissingError,
  UnknownEntryError,
  UnknownEventError,
  WaterfallNextError,
} from './errors/index.js'
export type {
  CloseFailure,
  CompositionErrorReason,
  HarnessErrorClass,
  MissingService,
  RollbackError,
  ValidationIssue,
} from './errors/index.js'
export {
  composeEntries,
  createHarness,
  describeHarness,
} from './harness/index.js'
export type {
  DescribedEntry,
  Harness,
  HarnessDescription,
  HarnessOptions,
} from './harness/index.js'
export {
  bindOwner,
  Context,
  createRootContext,
  defineEvents,
  definePlugin,
  defineService,
  inspectContext,
  isEventCatalog,
  isPluginClass,
  isPluginDefinition,
  isServiceKey,
  kernelEvents,
  randomIds,
  services,
  stderrLogger,
  summarizeError,
  systemClock,
} from './kernel/index.js'
export type {
  AnyPluginClass,
  ChildOptions,
  Cleanup,
  Clock,
  ComposedEntry,
  CompositionLayers,
  ConfigPatch,
  ContextState,
  DescriptorOfMode,
  DispatchOptions,
  DisposeError,
  Disposer,
  DisposeReport,
  EffectKind,
  EffectNode,
  EffectSetup,
  Emit,
  EntryPatch,
  ErrorSummary,
  EventCatalog,
  EventDescriptor,
  EventInspection,
  EventMap,
  EventMode,
  EventName,
  EventNameOfMode,
  HarnessInspection,
  IdSource,
  InsertPatch,
  KernelErrorEvent,
  KernelErrorPhase,
  KernelEvents,
  KeyReference,
  ListenerOf,
  ListenOptions,
  Logger,
  MergePatch,
  OwnerBindable,
  Parallel,
  PayloadOf,
  PluginApplyResult,
  PluginClass,
  PluginClassStatics,
  PluginDefinition,
  PluginEntry,
  PluginHandle,
  PluginInput,
  PluginInspection,
  PluginInstance,
  PluginSpec,
  PluginState,
  PluginStateEvent,
  ResultOf,
  RootContextOptions,
  ScopeGraph,
  ScopeKey,
  ScopeLink,
  Serial,
  ServiceEvent,
  ServiceInspection,
  ServiceKey,
  TogglePatch,
  Waterfall,
  WaterfallNext,
  YokeEvents,
} from './kernel/index.js'
