/**
 * The error hierarchy: {@link HarnessError} and one subclass per failure.
 *
 * @module
 */
export { ErrorCode } from './codes.js'
export { HarnessError, type HarnessErrorClass } from './harness-error.js'
export type { ValidationIssue } from './issue.js'
export { InvalidArgumentError } from './invalid-argument-error.js'
export { ContextDisposedError } from './context-disposed-error.js'
export { ServiceConflictError } from './service-conflict-error.js'
export { ServiceMissingError } from './service-missing-error.js'
export { MissingServicesError, type MissingService } from './missing-services-error.js'
export { UnknownEventError } from './unknown-event-error.js'
export { EventModeError } from './event-mode-error.js'
export { EventConflictError } from './event-conflict-error.js'
export { WaterfallNextError } from './waterfall-next-error.js'
export { ScopeLinkError } from './scope-link-error.js'
export { InvalidPluginError } from './invalid-plugin-error.js'
export { PluginConfigError } from './plugin-config-error.js'
export { PluginCycleError } from './plugin-cycle-error.js'
export { PluginStartError, type RollbackError } from './plugin-start-error.js'
export { CompositionError, type CompositionErrorReason } from './composition-error.js'
export { UnknownEntryError } from './unknown-entry-error.js'
export { ConfigError } from './config-error.js'
export { InvalidOptionsError } from './invalid-options-error.js'
export { type OutputIssue, OutputValidationError } from './output-validation-error.js'
export { HarnessClosedError } from './harness-closed-error.js'
export { HarnessCloseError, type CloseFailure } from './harness-close-error.js'
export { MissingPeerError } from './missing-peer-error.js'
export { SessionError, type SessionErrorLocation, type SessionErrorOptions } from './session-error.js'
export { SessionEventError, type SessionEventErrorCode, type SessionEventErrorFields } from './session-event-error.js'
export { SurfaceError, type SurfaceErrorCode, type SurfaceErrorFields } from './surface-error.js'
export { StructureError, type StructureErrorCode, type StructureErrorFields } from './structure-error.js'
export { SessionStateError, type SessionStateErrorCode } from './session-state-error.js'
export { SessionVetoError, type SessionVetoErrorCode, type SessionVetoErrorFields } from './session-veto-error.js'
export {
  SessionHeaderError,
  type SessionHeaderErrorCode,
  type SessionHeaderErrorFields,
} from './session-header-error.js'
export {
  SessionRegistryError,
  type SessionRegistryErrorCode,
  type SessionRegistryErrorFields,
} from './session-registry-error.js'
export { SessionForkError, type SessionForkErrorCode, type SessionForkErrorFields } from './session-fork-error.js'
export { EventTypeError, type EventTypeErrorCode, type EventTypeErrorFields } from './event-type-error.js'
export type { LockHolder } from './lock-holder.js'
export { PersistenceError, type PersistenceErrorCode, type PersistenceErrorFields } from './persistence-error.js'
export {
  PersistenceCorruptionError,
  type PersistenceCorruptionErrorCode,
  type PersistenceCorruptionErrorFields,
} from './persistence-corruption-error.js'
export {
  SessionFormatUnsupportedError,
  type SessionFormatUnsupportedErrorCode,
  type SessionFormatUnsupportedErrorFields,
} from './session-format-unsupported-error.js'
export {
  SessionLockedError,
  type SessionLockedErrorCode,
  type SessionLockedErrorFields,
} from './session-locked-error.js'
export { LeaseLostError, type LeaseLostErrorCode, type LeaseLostErrorFields } from './lease-lost-error.js'
export { SessionBusyError } from './session-busy-error.js'
export { MessageTooLargeError } from './message-too-large-error.js'
export { SeqConflictError, type SeqConflictErrorCode, type SeqConflictErrorFields } from './seq-conflict-error.js'
export {
  PersistenceBackpressureError,
  type PersistenceBackpressureErrorCode,
  type PersistenceBackpressureErrorFields,
} from './persistence-backpressure-error.js'
export { LlmError, type LlmErrorOptions } from './llm-error.js'
export {
  ModelRegistryError,
  type ModelRegistryErrorCode,
  type ModelRegistryErrorOptions,
} from './model-registry-error.js'
export { ScriptedModelError, type ScriptedModelErrorCode } from './scripted-model-error.js'
export { ToolDefinitionError } from './tool-definition-error.js'
export { ToolConflictError } from './tool-conflict-error.js'
export { ToolRestrictionError, type ToolRestrictionProblem } from './tool-restriction-error.js'
export { ApprovalNotPendingError } from './approval-not-pending-error.js'
export { AgentOverridesMismatchError } from './agent-overrides-mismatch-error.js'
export {
  ToolAbortedError,
  ToolArgumentsError,
  ToolCallError,
  type ToolCallErrorOptions,
  ToolDeniedError,
  ToolFailedError,
  ToolSchedulerError,
  ToolTimeoutError,
  UnknownToolError,
} from './tool-call-error.js'
export {
  type PromptContributionKind,
  PromptRegistrationError,
  type PromptRegistrationErrorCode,
} from './prompt-registration-error.js'
export {
  PromptAssemblyError,
  type PromptAssemblyErrorCode,
  type PromptAssemblyErrorFields,
} from './prompt-assembly-error.js'
export { PromptRenderError, type PromptRenderErrorCode } from './prompt-render-error.js'
export { PresetMismatchError, PresetSetupError, UnknownPresetError } from './preset-errors.js'
export { InitiatorError, type InitiatorErrorCode } from './initiator-error.js'
export {
  AgentBusyError,
  AgentCreationAbortedError,
  AgentDisposedError,
  AgentExistsError,
  DuplicateMessageError,
  InvalidMessageError,
  MissingModelError,
  ReconstructionError,
  RequestNotFoundError,
  type RunDiscardReason,
  RunDiscardedError,
  StreamOverflowError,
} from './agent-errors.js'
export {
  CompactionError,
  type CompactionErrorCode,
  type CompactionErrorFields,
  type InvalidRangeReason,
} from './compaction-error.js'
export { LastEventIdError, type LastEventIdProblem } from './last-event-id-error.js'
