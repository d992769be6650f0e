/**
 * Tools: definitions, the scoped registry, the scheduler and its per-call pipeline,
 * approvals, the repeat-tool reminder.
 *
 * @module
 */
export type {
  ApprovalAskOptions,
  ApprovalBroker,
  ApprovalDecision,
  ApprovalOutcome,
  PendingApproval,
} from './approval-broker.js'
export {
  type ApprovalAllowedEventData,
  type ApprovalAskedEventData,
  approvalAskedEventDataSchema,
  type ApprovalCancelledEventData,
  type ApprovalDecidedEventData,
  approvalDecidedEventDataSchema,
  type ApprovalDeniedEventData,
  registerApprovalEventTypes,
} from './approval-events.js'
export { type ApprovalBrokerOptions, createApprovalBroker } from './create-approval-broker.js'
export {
  type RepeatToolReminderConfig,
  type RepeatToolReminderOptions,
  repeatToolReminder,
} from './repeat-tool-reminder.js'
export type { ToolAgent, ToolCallInfo } from './tool-call-info.js'
export type {
  JsonSchemaObject,
  ToolArgs,
  ToolContentBlock,
  ToolContext,
  ToolDefinition,
  ToolResultInit,
  ToolReturn,
  ToolSpec,
} from './tool-definition.js'
export {
  type ApprovalRequestPayload,
  type PreExecuteDecision,
  type ToolEvents,
  toolEvents,
  type ToolsAbandonedPayload,
  type ToolsChangePayload,
  type ToolsExecutePayload,
  type ToolsPostExecutePayload,
  type ToolsPreExecutePayload,
  type ToolsProgressPayload,
  type ToolsResultPayload,
} from './tool-events.js'
export {
  type ToolContextMessage,
  type ToolResult,
  type ToolResultCode,
  type ToolResultFailure,
  type ToolStepOutcome,
  toolResult,
} from './tool-result.js'
export type {
  ResolvedTool,
  ToolCallRequest,
  ToolExecutionMode,
  ToolRegistry,
  ToolScopeOptions,
} from './tool-registry.js'
export { createToolRegistry, HarnessToolRegistry } from './harness-tool-registry.js'
export type { ToolGuard } from './tool-guard.js'
export type { ToolRestrictOptions } from './tool-restrictions.js'
export { type ToolsEntryConfig, toolsPlugin } from './tools-plugin.js'
export {
  defaultToolRunOptions,
  type RunToolCalls,
  type ToolRunOptions,
  type ToolStepContext,
  type ToolStepReport,
} from './tool-step-context.js'
export {
  formatSchemaIssues,
  type ParsedToolArguments,
  type ParsedToolArgumentsFailure,
  type ParsedToolArgumentsSuccess,
  parseToolArguments,
  type ToolSchemaIssue,
} from './parse-tool-arguments.js'
export {
  resultErrorOf,
  thrownMessage,
  type ToolErrorExtras,
  toolErrorName,
  toolErrorResult,
} from './tool-error-result.js'
export { defineTool } from './define-tool.js'
export { type NormalizeToolReturnOptions, normalizeToolReturn } from './normalize-tool-return.js'
export { TRUNCATION_META_KEY, type TruncateToolResultOptions, truncateToolResult } from './truncate-tool-result.js'
export { toolResultMessage } from './tool-result-message.js'
export { runToolCalls } from './run-tool-calls.js'
