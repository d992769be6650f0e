/**
 * `aiSdkModel`: an AI SDK language model as a Yoke model adapter.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { ModelAdapter } from '../model/model-adapter.js'
import type { AiSdkLanguageModel } from './ai-sdk-language-model.js'
import type { aiSdkMessageState } from './ai-sdk-message-state.js'
import { checkLanguageModel } from './check-language-model.js'
import { type AiSdkProviderOptionsValue, checkProviderOptions } from './check-provider-options.js'
import { streamCall } from './stream-call.js'

/** Options of {@link aiSdkModel}. */
export interface AiSdkModelOptions {
  /**
   * The route id the adapter registers under.
   *
   * @default the model's `provider`, e.g. `'openai.chat'`
   */
  readonly provider?: string
  /**
   * Provider options sent with every call (`providerOptions` of the call options), per provider
   * id: settings a provider reads there only, e.g. `{ openai: { store: false, include:
   * ['reasoning.encrypted_content'] } }` or `{ anthropic: { thinking: { type: 'enabled',
   * budgetTokens: 2048 } } }`. Part of the adapter's configuration, like the model itself.
   */
  readonly providerOptions?: AiSdkProviderOptionsValue
}

/**
 * Turns an AI SDK language model (what a provider package such as `@ai-sdk/openai` or
 * `@ai-sdk/anthropic` returns, specification v2, v3 or v4) into a Yoke {@link ModelAdapter}. The
 * model is checked by shape, so the AI SDK packages need not be installed for Yoke to load.
 *
 * Every call uses this one model (the request's `model` id is the route's default, `modelId`).
 * Text and reasoning parts become blocks keyed by part id (several may interleave), tool inputs
 * stream into tool-call blocks closed by the final `tool-call` part, `finish` gives the usage and
 * finish reason, an in-band `error` part or a thrown `APICallError` a failure with `retryable`,
 * `status` and `retryAfterMs`, and an abort `aborted`. `toolChoice`, `responseFormat`,
 * `maxTokens`, `temperature` and `stop` become call options. What no Yoke block holds — provider
 * metadata, provider-executed tool calls and their results, files, sources, warnings, the response
 * id — is kept in the message's replay state (read it with {@link aiSdkMessageState}) and sent back
 * to the provider where its prompt has a place for it.
 *
 * @param languageModel - the AI SDK language model
 * @param options - the route id and call-level provider options
 * @returns the adapter
 * @throws `InvalidArgumentError` when `languageModel` is not a language model, its
 *   `specificationVersion` is not `v2`, `v3` or `v4`, or `providerOptions` is not an object of
 *   JSON objects
 * @example
 * ```ts
 * import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
 * import { aiSdkModel } from 'yoke/ai-sdk'
 *
 * const provider = createOpenAICompatible({ name: 'local', baseURL: 'http://localhost:11434/v1' })
 * const harness = createHarness({ model: { adapter: aiSdkModel(provider('llama3.2')) } })
 * ```
 */
export function aiSdkModel(languageModel: AiSdkLanguageModel, options: AiSdkModelOptions = {}): ModelAdapter {
  const version = checkLanguageModel(languageModel)
  const providerOptions = checkProviderOptions(options.providerOptions, 'options.providerOptions')
  const provider = options.provider ?? languageModel.provider
  if (typeof provider !== 'string' || provider === '') {
    throw new InvalidArgumentError({
      argument: 'options.provider',
      reason: 'must be a non-empty string',
      value: provider,
    })
  }
  return {
    provider,
    defaultModel: languageModel.modelId,
    supportsResponseFormat: true,
    stream: (request, streamOptions) => streamCall(languageModel, version, request, streamOptions, providerOptions),
  }
}
