/**
 * The session event log and its projections.
 *
 * @module
 */
export {
  type AssistantContentBlock,
  assistantContentBlockSchema,
  type ContentBlock,
  contentBlockSchema,
  type ImageBlock,
  imageBlockSchema,
  type ReasoningBlock,
  reasoningBlockSchema,
  type TextBlock,
  textBlockSchema,
  type ToolCallBlock,
  toolCallBlockSchema,
  type ToolResultBlock,
  toolResultBlockSchema,
  type UserContentBlock,
  userContentBlockSchema,
} from './content-block.js'
export {
  type AgentInboxSplicedData,
  type AgentRunOptionsData,
  type AssistantChunkData,
  type AssistantMessageData,
  type CoreEventData,
  type CoreEventType,
  type CoreSessionEvent,
  isSurfaceType,
  type RequestContextData,
  type RequestHeaderData,
  type RequestHeaderReason,
  type SessionEndSeedData,
  type SessionEventTypeDefinition,
  type StepEndData,
  type StepStartData,
  type SyntheticMeta,
  type ToolCallData,
  type ToolResultData,
  type ToolResultError,
  type TurnEndData,
  type TurnStartData,
  type UserMessageData,
} from './core-event-types.js'
export { type CreateSessionOptions, createSession } from './create-session.js'
export { interruptedTurnClosers, toolNotStartedText, toolOutcomeUnknownText } from './interrupted-turn-closers.js'
export type { JsonArray, JsonObject, JsonValue } from './json-value.js'
export { type LlmFailure, type LlmFailurePhase, llmFailureSchema } from './llm-failure.js'
export {
  type AssistantMessage,
  assistantMessageSchema,
  type HumanMessageSource,
  type Message,
  type MessageSource,
  messageSchema,
  type ModelMessageSource,
  type PluginMessageSource,
  type ToolMessageSource,
  type ToolResultMessage,
  toolResultMessageSchema,
  type UserMessage,
  type UserMessageSource,
  userMessageSchema,
} from './message.js'
export {
  type AdapterDefaults,
  type CallConfig,
  canonicalHeader,
  foldRequestHeader,
  headerEquals,
  type RequestHeader,
  requestHeaderSchema,
  type ToolSchema,
} from './request-header.js'
export {
  type ResponseFormat,
  responseFormatSchema,
  type ToolChoice,
  toolChoiceSchema,
} from './response-format.js'
export {
  createSessionCatalog,
  type EventEnclosure,
  type EventTypeOptions,
  type SessionCatalog,
} from './session-catalog.js'
export type { AppendOptions, SessionEvent, SurfaceOp, SurfaceReplace } from './session-event.js'
export type { FlushCheckpoint, FlushOptions } from './flush-checkpoint.js'
export {
  type SessionDisposedPayload,
  type SessionEventPayload,
  type SessionEvents,
  type SessionFlushPayload,
  type SessionLifecyclePayload,
  sessionEvents,
} from './session-events.js'
export { isSessionId, SESSION_FORMAT_VERSION, type SessionHeader } from './session-header.js'
export type { CommitGuard } from './session-hooks.js'
export type {
  CommitGuardOptions,
  CreateOptions,
  ForkOptions,
  SessionRegistry,
  StagedSession,
} from './session-registry.js'
export { createSessionRegistry, HarnessSessionRegistry } from './harness-session-registry.js'
export { type EventDataOf, type RequestContext, Session } from './session.js'
export { canonicalJson } from './snapshot/canonical-json.js'
export { jsonEquals } from './snapshot/json-equals.js'
export { isJsonValue, snapshotJson } from './snapshot/snapshot-json.js'
export {
  type BlockEndChunk,
  type BlockStartChunk,
  type FinishChunk,
  type FinishReason,
  type StreamChunk,
  type TextDeltaChunk,
  type ToolCallDeltaChunk,
  type UsageChunk,
  streamChunkSchema,
  type TokenUsage,
  tokenUsageSchema,
} from './stream-chunk.js'
export type { TurnState } from './structure-state.js'
export { foldSurface, type SurfaceFold, type SurfaceReplacement } from './surface-state.js'
export {
  type AbortedTurnEnd,
  type BlockedTurnEnd,
  type CancelCause,
  type CompletedTurnEnd,
  type ErrorTurnEnd,
  type HookCancelCause,
  type InterruptedTurnEnd,
  type MaxStepsTurnEnd,
  type MaxTokensTurnEnd,
  type PlainCancelCause,
  type TurnEndReason,
  turnEndReasonSchema,
} from './turn-end-reason.js'
