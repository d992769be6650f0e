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
