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
export { HarnessClosedError } from './harness-closed-error.js'
export { HarnessCloseError, type CloseFailure } from './harness-close-error.js'
export { MissingPeerError } from './missing-peer-error.js'
