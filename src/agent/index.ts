/**
 * The agent loop: the `Agent` handle, its driver, request construction and reconstruction.
 *
 * @module
 */
export { type AgentEvents, agentEvents, type InboxClaimedPayload, type InboxMessagePayload } from './agent-events.js'
export type { InboxEntry, InboxTarget, InboxView } from './agent-inbox.js'
export { type RebuiltRequest, type RequestCoordinates, rebuildRequest } from './rebuild-request.js'
export type { CallConfigSeed } from './resolve-call-config.js'
export { normalizeUserMessage, type UserMessageInput } from './user-message-input.js'
export type {
  Agent,
  AgentPhase,
  AgentRun,
  AgentStatus,
  CancelOptions,
  OutputRunOptions,
  RunOptions,
  SendOptions,
  StreamOptions,
  StructuredTurnResult,
  TurnResult,
} from './agent.js'
export type { OutputOf, OutputSchema } from './structured-output.js'
export {
  type AgentErrorPayload,
  type AgentLifecyclePayload,
  type AgentLoopEvents,
  type AgentRequestPayload,
  type AgentSessionStartPayload,
  type AgentStatusPayload,
  agentLoopEvents,
  type PreStepDecision,
  type PreStepPayload,
  type TurnStoppingPayload,
} from './agent-loop-events.js'
export { type AgentLoopEntryConfig, agentLoopPlugin } from './agent-loop-plugin.js'
export { type AgentOptions, agentOptionsSchema, validateAgentOptions } from './agent-options.js'
export type { AgentRegistry, CreateAgentOptions } from './agent-registry.js'
export { createAgentRegistry, HarnessAgentRegistry } from './harness-agent-registry.js'
export type { QueuedPolicy, ResumeAgentOptions } from './resume-agent.js'
