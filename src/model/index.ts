/**
 * The model layer (08-models.md): the adapter contract, the registry, the assembler, the
 * OpenAI-compatible and DeepSeek adapters, and retry.
 *
 * @module
 */
export { isRetryableByDefault, type ModelFailureFields, modelFailure } from './failure-defaults.js'
export type { ModelAdapter, ModelInfo, ModelRoute, ModelStreamOptions } from './model-adapter.js'
export type { ModelPurpose, ModelRequest, ModelRequestMetadata } from './model-request.js'
export type { ModelRegisterOptions, ModelRegistration, ModelRegistry, ModelScopeOptions, PreparedCall } from './model-registry.js'
