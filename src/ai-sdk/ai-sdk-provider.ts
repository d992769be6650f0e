/**
 * `aiSdkProvider`: an AI SDK provider (or provider registry) as one Yoke route serving every model
 * id it knows.
 *
 * @module
 */
import { HarnessError } from '../errors/harness-error.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { failedStream } from '../model/adapter-boundary.js'
import { modelFailure } from '../model/failure-defaults.js'
import type { ModelAdapter } from '../model/model-adapter.js'
import type { AiSdkLanguageModel, AiSdkSpecificationVersion } from './ai-sdk-language-model.js'
import { checkLanguageModel, read } from './check-language-model.js'
import { type AiSdkProviderOptionsValue, checkProviderOptions } from './check-provider-options.js'
import { streamCall } from './stream-call.js'

/**
 * What Yoke reads of an AI SDK provider: `languageModel(id)`. Provider packages (`createOpenAI()`,
 * `createAnthropic()`, …) and the AI SDK's `createProviderRegistry()` (ids like `'openai:gpt-4o'`)
 * both fit.
 */
export interface AiSdkProvider {
  /** Returns the language model of an id; throws (`NoSuchModelError`) for an unknown one. */
  languageModel(modelId: string): AiSdkLanguageModel
}

/** Options of {@link aiSdkProvider}. */
export interface AiSdkProviderOptions {
  /** The route id the adapter registers under, e.g. `'anthropic'`; non-empty. */
  readonly provider: string
  /**
   * The model used when a route or call config names none.
   *
   * @default none: the route or the agent must name a model
   */
  readonly defaultModel?: string
  /** Provider options sent with every call, per provider id (see `AiSdkModelOptions.providerOptions`). */
  readonly providerOptions?: AiSdkProviderOptionsValue
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value !== ''
}

/**
 * Turns an AI SDK provider into one Yoke {@link ModelAdapter}: each request's `model` id is
 * resolved with `provider.languageModel(id)` (once per id; the model is checked like
 * `aiSdkModel`'s) and streamed the same way. An id the provider refuses ends the call with the
 * failure `UNKNOWN_MODEL` (not retryable); a value it returns that is not a language model with
 * `INVALID_ARGUMENT`.
 *
 * @param provider - the AI SDK provider or provider registry
 * @param options - the route id and the default model
 * @returns the adapter
 * @throws `InvalidArgumentError` when `provider` has no `languageModel` method, or the options are
 *   not valid
 * @example
 * ```ts
 * import { createAnthropic } from '@ai-sdk/anthropic'
 * import { aiSdkProvider } from 'yoke/ai-sdk'
 *
 * const adapter = aiSdkProvider(createAnthropic(), { provider: 'anthropic', defaultModel: 'claude-sonnet-4-5' })
 * const harness = await createHarness({ model: adapter })
 * ```
 */
export function aiSdkProvider(provider: AiSdkProvider, options: AiSdkProviderOptions): ModelAdapter {
  const isObject = (typeof provider === 'object' && provider !== null) || typeof provider === 'function'
  if (!isObject || typeof read(provider, 'languageModel') !== 'function') {
    throw new InvalidArgumentError({
      argument: 'provider',
      reason: 'expected an AI SDK provider (an object with a languageModel method)',
      value: provider,
    })
  }
  if (typeof options !== 'object' || options === null || !nonEmpty(options.provider)) {
    throw new InvalidArgumentError({
      argument: 'options.provider',
      reason: 'must be a non-empty string',
      value: (options as { provider?: unknown } | null | undefined)?.provider,
    })
  }
  if (options.defaultModel !== undefined && !nonEmpty(options.defaultModel)) {
    throw new InvalidArgumentError({
      argument: 'options.defaultModel',
      reason: 'must be a non-empty string',
      value: options.defaultModel,
    })
  }
  const providerOptions = checkProviderOptions(options.providerOptions, 'options.providerOptions')
  const models = new Map<string, { readonly model: AiSdkLanguageModel; readonly version: AiSdkSpecificationVersion }>()
  const resolve = (id: string) => {
    const cached = models.get(id)
    if (cached !== undefined) return cached
    const model = provider.languageModel(id)
    const entry = { model, version: checkLanguageModel(model, `languageModel("${id}")`) }
    models.set(id, entry)
    return entry
  }
  return {
    provider: options.provider,
    ...(options.defaultModel !== undefined && { defaultModel: options.defaultModel }),
    supportsResponseFormat: true,
    stream(request, streamOptions) {
      let entry: ReturnType<typeof resolve>
      try {
        entry = resolve(request.model)
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        const code = HarnessError.is(error) ? error.code : 'UNKNOWN_MODEL'
        return failedStream(
          modelFailure(code, `the provider has no model "${request.model}": ${message}`, 'pre-request', {
            retryable: false,
          }),
        )
      }
      return streamCall(entry.model, entry.version, request, streamOptions, providerOptions)
    },
  }
}
