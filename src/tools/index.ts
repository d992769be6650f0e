/**
 * Tools (05-tools.md): definitions, the scoped registry, the scheduler and its per-call pipeline,
 * approvals, the repeat-tool reminder.
 *
 * @module
 */
export type { ApprovalAskOptions, ApprovalBroker, ApprovalDecision, ApprovalOutcome, PendingApproval } from './approval-broker.js'
export type { ToolAgent, ToolCallInfo } from './tool-call-info.js'
export type { JsonSchemaObject, ToolArgs, ToolContentBlock, ToolContext, ToolDefinition, ToolReturn, ToolReturnObject, ToolSpec } from './tool-definition.js'
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
export type { ToolContextMessage, ToolResult, ToolResultCode, ToolResultFailure, ToolStepOutcome } from './tool-result.js'
export { defaultToolRunOptions, type RunToolCalls, type ToolRunOptions, type ToolStepContext, type ToolStepReport } from './tool-step-context.js'
