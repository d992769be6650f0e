/**
 * The model layer: the adapter contract, the registry, the assembler, the
 * OpenAI-compatible and DeepSeek adapters, and retry.
 *
 * @module
 */
export { type Assembler, type AssemblerOutcome, createAssembler } from './assembler.js'
export { type AdapterBoundaryOptions, adapterBoundary } from './adapter-boundary.js'
export { isRetryableByDefault, type ModelFailureFields, modelFailure } from './failure-defaults.js'
export type { ModelAdapter, ModelInfo, ModelRoute, ModelStreamOptions } from './model-adapter.js'
export { type LlmAdaptersChangePayload, type LlmStreamPayload, type ModelEvents, modelEvents } from './model-events.js'
export {
  isModelAdapter,
  type ModelEntryConfig,
  modelPlugin,
  type ResolvedModelRoute,
  resolveModelRoute,
} from './model-plugin.js'
export type { ModelPurpose, ModelRequest, ModelRequestMetadata } from './model-request.js'
export { DEEPSEEK_MODELS, type DeepSeekOptions, deepseek } from './openai/deepseek.js'
export {
  type OpenAICompatibleAdapter,
  type OpenAICompatibleDescription,
  openaiCompatible,
} from './openai/openai-compatible.js'
export type {
  ApiKeySource,
  FetchFunction,
  OpenAICompatibleOptions,
  ReasoningStyle,
  ResponseFormatStyle,
} from './openai/openai-options.js'
export { responseFormatInstruction } from './response-format-instruction.js'
export type {
  ModelRegisterOptions,
  ModelRegistration,
  ModelRegistry,
  ModelScopeOptions,
  PrepareCallOptions,
  PreparedCall,
} from './model-registry.js'
export { createModelRouter, type ModelRouteDefaults, ModelRouter, type ModelRouterOptions } from './model-router.js'
export { normalizeThrown, type ThrownContext } from './normalize-thrown.js'
export { type RetryDelayInput, retryDelay } from './retry/retry-delay.js'
export {
  type RequestErrorAgent,
  type RequestErrorEvents,
  type RequestErrorPayload,
  type RequestErrorResult,
  type RequestErrorRetry,
  type RetryEventData,
  type RetryStartedEventData,
  requestErrorEvents,
  retryEventDataSchema,
  retryStartedEventDataSchema,
} from './retry/retry-events.js'
export { retryPlugin } from './retry/retry-plugin.js'
export { defaultRetryPolicy, isRetryable, type RetryPolicy, retryPolicySchema } from './retry/retry-policy.js'
export {
  type CompleteOptions,
  type ModelCompletion,
  type RetryingModel,
  type RetryNotice,
  type WithRetryOptions,
  withRetry,
} from './retry/with-retry.js'
export {
  invalidRequestFailure,
  isProviderId,
  type RequestViolation,
  validateCallConfig,
  validateModelRequest,
} from './validate-model-request.js'
