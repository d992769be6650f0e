/**
 * `yoke/ai-sdk`: AI SDK language models (every provider package) as Yoke model adapters; the AI
 * SDK packages are optional peers, never loaded by Yoke itself.
 *
 * @module
 */
export type { AiSdkLanguageModel, AiSdkSpecificationVersion, AiSdkStreamResult } from './ai-sdk-language-model.js'
export { type AiSdkModelOptions, aiSdkModel } from './ai-sdk-model.js'
export { type AiSdkProvider, type AiSdkProviderOptions, aiSdkProvider } from './ai-sdk-provider.js'
export {
  type AiSdkBlockState,
  type AiSdkCustomPart,
  type AiSdkExtraPart,
  type AiSdkExtraPartBase,
  type AiSdkFileData,
  type AiSdkFilePart,
  type AiSdkMessageState,
  type AiSdkOpaqueReasoning,
  type AiSdkProviderToolCall,
  type AiSdkProviderToolResult,
  aiSdkMessageState,
} from './ai-sdk-message-state.js'
export type { AiSdkProviderOptionsValue } from './check-provider-options.js'
export { type ChatRequest, parseChatRequest } from './parse-chat-request.js'
export { toUIMessages, type UISessionEvents } from './to-ui-messages.js'
export type {
  UIDynamicToolPart,
  UIFilePart,
  UIMessage,
  UIMessagePart,
  UIReasoningPart,
  UIStepStartPart,
  UITextPart,
  UIToolCallState,
  UIToolPart,
} from './ui-message.js'
export type {
  UIAbortChunk,
  UIErrorChunk,
  UIFinishChunk,
  UIFinishReason,
  UIFinishStepChunk,
  UIMessageChunk,
  UIPartBoundaryChunk,
  UIPartDeltaChunk,
  UIStartChunk,
  UIStartStepChunk,
  UIToolInputAvailableChunk,
  UIToolInputDeltaChunk,
  UIToolInputErrorChunk,
  UIToolInputStartChunk,
  UIToolOutputAvailableChunk,
  UIToolOutputErrorChunk,
} from './ui-message-chunk.js'
export type { UIFailedTurnEnd, UIMessageOptions, UITurn } from './ui-message-options.js'
export {
  type UIMessageSessionStreamOptions,
  type UIMessageStreamOptions,
  type UIMessageStreamSource,
  uiMessageStream,
} from './ui-message-stream.js'
export {
  type UIMessageResponseSettings,
  type UIMessageSessionResponseOptions,
  type UIMessageStreamResponseOptions,
  uiMessageStreamResponse,
} from './ui-message-stream-response.js'
