/**
 * `openaiCompatible()`: a {@link ModelAdapter} for any Chat Completions API that streams SSE.
 *
 * @module
 */
import type { StreamChunk } from '../../session/stream-chunk.js'
import type { ModelAdapter, ModelInfo, ModelStreamOptions } from '../model-adapter.js'
import type { ModelRequest } from '../model-request.js'
import { type OpenAICompatibleOptions, type ResolvedOpenAIOptions, resolveOpenAIOptions } from './openai-options.js'
import { streamCompletion } from './stream-completion.js'

/** What `JSON.stringify(adapter)` shows: never the key itself. */
export interface OpenAICompatibleDescription {
  /** The provider route id. */
  readonly provider: string
  /** The API root, trailing `/` trimmed. */
  readonly baseURL: string
  /** The default model, when configured. */
  readonly model?: string
  /** `'[redacted]'` when a key (or key function) is configured. */
  readonly apiKey?: '[redacted]'
  /** The environment variable the key is read from, when configured. */
  readonly apiKeyEnv?: string
}

/** The adapter {@link openaiCompatible} and `deepseek` return. */
export interface OpenAICompatibleAdapter extends ModelAdapter {
  /**
   * What the `models` option says about a model.
   *
   * @param model - a model id
   * @returns the model's info, or `undefined`
   */
  describeModel(model: string): ModelInfo | undefined
  /**
   * The adapter as JSON, with the key redacted.
   *
   * @returns provider, baseURL, model and `apiKey: '[redacted]'` or `apiKeyEnv`
   */
  toJSON(): OpenAICompatibleDescription
}

/**
 * Builds the adapter from resolved options; `fallbackInfo` answers `describeModel` for ids the
 * `models` table lacks.
 *
 * @internal
 */
export function createOpenAIAdapter(options: ResolvedOpenAIOptions, fallbackInfo?: ModelInfo): OpenAICompatibleAdapter {
  const describeModel = (model: string): ModelInfo | undefined =>
    Object.hasOwn(options.models, model) ? options.models[model] : fallbackInfo
  const description: OpenAICompatibleDescription = Object.freeze({
    provider: options.provider,
    baseURL: options.baseURL,
    ...(options.model !== undefined && { model: options.model }),
    ...(options.credential.kind === 'value' && { apiKey: '[redacted]' as const }),
    ...(options.credential.kind === 'env' && { apiKeyEnv: options.credential.name }),
  })
  return Object.freeze({
    provider: options.provider,
    ...(options.model !== undefined && { defaultModel: options.model }),
    // Every style sends the format itself (a wire field, its instruction, or both).
    supportsResponseFormat: true,
    stream(request: ModelRequest, streamOptions: ModelStreamOptions): AsyncIterable<StreamChunk> {
      // Timeouts and retry-after dates run on the harness clock of the call.
      const clock = options.ownClock ? undefined : streamOptions?.clock
      return streamCompletion(
        clock === undefined ? options : { ...options, clock },
        describeModel(request.model),
        request,
      )
    },
    describeModel,
    toJSON: () => description,
  })
}

/**
 * Creates a model adapter for an OpenAI-compatible Chat Completions endpoint. Each `stream()` is
 * exactly one streaming `POST <baseURL>/chat/completions`; the key is resolved per request; every
 * outcome (HTTP error, transport failure, idle timeout, abort) is a `finish` chunk, never a throw.
 * `toolChoice` is sent as `tool_choice` and `responseFormat` as `response_format` (see
 * `responseFormatStyle`).
 *
 * @param options - the endpoint, credential and wire settings
 * @returns the adapter
 * @throws {@link InvalidOptionsError} for a bad option (`field` names it; `apiKey` with `apiKeyEnv`
 *   is reported at `apiKey`)
 * @example
 * ```ts
 * const adapter = openaiCompatible({ baseURL: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', model: 'gpt-4.1' })
 * ctx.get(services.models).register(adapter)
 * ```
 */
export function openaiCompatible(options: OpenAICompatibleOptions): OpenAICompatibleAdapter {
  return createOpenAIAdapter(resolveOpenAIOptions(options))
}
