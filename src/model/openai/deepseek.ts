/**
 * `deepseek()`: the OpenAI-compatible adapter with DeepSeek's defaults and model catalog.
 *
 * @module
 */
import type { ModelInfo } from '../model-adapter.js'
import { createOpenAIAdapter, type OpenAICompatibleAdapter } from './openai-compatible.js'
import { type OpenAICompatibleOptions, resolveOpenAIOptions } from './openai-options.js'

const deepseekEfforts = Object.freeze(['off', 'low', 'high', 'max'])

/** What `deepseek()` reports for a model id outside {@link DEEPSEEK_MODELS}: the same efforts, no context window. */
const deepseekFallbackInfo: ModelInfo = Object.freeze({
  reasoningEfforts: deepseekEfforts,
  defaultReasoningEffort: 'high',
})

/**
 * The DeepSeek model catalog: `deepseek-v4-flash` and `deepseek-v4-pro`, each with a 1,000,000-token
 * context window and the efforts `off`, `low`, `high`, `max` (default `high`).
 */
export const DEEPSEEK_MODELS: Readonly<Record<string, ModelInfo>> = Object.freeze({
  'deepseek-v4-flash': Object.freeze({
    contextWindow: 1_000_000,
    reasoningEfforts: deepseekEfforts,
    defaultReasoningEffort: 'high',
  }),
  'deepseek-v4-pro': Object.freeze({
    contextWindow: 1_000_000,
    reasoningEfforts: deepseekEfforts,
    defaultReasoningEffort: 'high',
  }),
})

/** Options of {@link deepseek}: those of `openaiCompatible`, with DeepSeek's defaults. */
export interface DeepSeekOptions extends Omit<OpenAICompatibleOptions, 'baseURL'> {
  /**
   * The API root.
   *
   * @default 'https://api.deepseek.com'
   */
  readonly baseURL?: string
}

/**
 * Creates the DeepSeek adapter: `openaiCompatible` with `baseURL 'https://api.deepseek.com'`,
 * `apiKeyEnv 'DEEPSEEK_API_KEY'` (unless `apiKey` is given), `provider 'deepseek'`,
 * `reasoningStyle 'deepseek'`, `sendReasoning true`, `responseFormatStyle 'json_object'` (DeepSeek's
 * JSON mode has no schema field, so the schema is given as an instruction) and its catalog of DeepSeek models (a `models` option
 * is merged over it). Model ids outside the catalog are accepted with the same efforts and no
 * context window.
 *
 * @param options - overrides of the defaults
 * @returns the adapter
 * @throws {@link InvalidOptionsError} for a bad option
 * @example
 * ```ts
 * const adapter = deepseek({ model: 'deepseek-v4-flash' }) // key from DEEPSEEK_API_KEY, per request
 * ctx.get(services.models).register(adapter)
 * ```
 */
export function deepseek(options: DeepSeekOptions = {}): OpenAICompatibleAdapter {
  if (typeof options !== 'object' || options === null) return createOpenAIAdapter(resolveOpenAIOptions(options))
  const merged: OpenAICompatibleOptions = {
    baseURL: 'https://api.deepseek.com',
    provider: 'deepseek',
    reasoningStyle: 'deepseek',
    sendReasoning: true,
    // DeepSeek has JSON mode but no json_schema: the schema goes in the system prompt.
    responseFormatStyle: 'json_object',
    ...options,
    ...(options.apiKey === undefined && options.apiKeyEnv === undefined && { apiKeyEnv: 'DEEPSEEK_API_KEY' }),
    models: { ...DEEPSEEK_MODELS, ...(isObject(options.models) ? options.models : {}) },
  }
  if (options.models !== undefined && !isObject(options.models))
    return createOpenAIAdapter(resolveOpenAIOptions({ ...merged, models: options.models }))
  return createOpenAIAdapter(resolveOpenAIOptions(merged), deepseekFallbackInfo)
}

function isObject(value: unknown): value is Readonly<Record<string, ModelInfo>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
