/**
 * `aiSdkModel`: an AI SDK language model as a Yoke model adapter.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { ModelAdapter, ModelStreamOptions } from '../model/model-adapter.js'
import type { ModelRequest } from '../model/model-request.js'
import { normalizeThrown } from '../model/normalize-thrown.js'
import { modelFailure } from '../model/failure-defaults.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import type { AiSdkLanguageModel, AiSdkSpecificationVersion } from './ai-sdk-language-model.js'
import { apiCallFailure, isApiCallError } from './api-call-failure.js'
import { toCallOptions } from './to-call-options.js'
import { createPartTranslator } from './translate-parts.js'

/** Options of {@link aiSdkModel}. */
export interface AiSdkModelOptions {
  /**
   * The route id the adapter registers under.
   *
   * @default the model's `provider`, e.g. `'openai.chat'`
   */
  readonly provider?: string
}

const versions: ReadonlySet<string> = new Set<AiSdkSpecificationVersion>(['v2', 'v3', 'v4'])

/** Reads a property without letting a throwing getter escape as anything but a refusal. */
function read(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/** Checks the model and returns its version; every refusal names what was wrong. */
function checkModel(model: unknown): AiSdkSpecificationVersion {
  const refuse = (reason: string): never => {
    throw new InvalidArgumentError({ argument: 'languageModel', reason, value: model })
  }
  if (typeof model !== 'object' || model === null) {
    return refuse(`expected an AI SDK language model, got ${describe(model)}`)
  }
  const version = read(model, 'specificationVersion')
  if (typeof version !== 'string' || !versions.has(version)) {
    return refuse(
      `unsupported specificationVersion ${typeof version === 'string' ? `"${version}"` : `(${describe(version)})`}: expected "v2", "v3" or "v4"`,
    )
  }
  if (typeof read(model, 'doStream') !== 'function') return refuse('it has no doStream method')
  for (const key of ['provider', 'modelId']) {
    const text = read(model, key)
    if (typeof text !== 'string' || text === '') refuse(`its ${key} is not a non-empty string`)
  }
  return version as AiSdkSpecificationVersion
}

/** Reads `stream` from what `doStream` resolved to, with the reader the adapter consumes. */
function readerOf(result: unknown): ReadableStreamDefaultReader<unknown> | undefined {
  const stream = typeof result === 'object' && result !== null ? read(result, 'stream') : undefined
  return stream instanceof ReadableStream ? (stream.getReader() as ReadableStreamDefaultReader<unknown>) : undefined
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
 * `maxTokens`, `temperature` and `stop` become call options.
 *
 * @param languageModel - the AI SDK language model
 * @param options - the route id
 * @returns the adapter
 * @throws `InvalidArgumentError` when `languageModel` is not a language model or its
 *   `specificationVersion` is not `v2`, `v3` or `v4`
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
  const version = checkModel(languageModel)
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
    stream: (request, streamOptions) => streamCall(languageModel, version, request, streamOptions),
  }
}

async function* streamCall(
  model: AiSdkLanguageModel,
  version: AiSdkSpecificationVersion,
  request: ModelRequest,
  options: ModelStreamOptions,
): AsyncGenerator<StreamChunk, void, undefined> {
  const now = (): number => options.clock?.now() ?? Date.now()
  const signal = request.signal
  const translator = createPartTranslator(now)
  let streamed = false
  let reader: ReadableStreamDefaultReader<unknown> | undefined
  // A provider stream that ignores the signal must still stop: cancelling the reader ends the read.
  const onAbort = (): void => {
    reader?.cancel(signal.reason).catch(() => undefined)
  }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    const result: unknown = await (model.doStream as (callOptions: unknown) => PromiseLike<unknown>).call(
      model,
      toCallOptions(request, version),
    )
    reader = readerOf(result)
    if (reader === undefined) {
      yield* translator.fail(
        'error',
        modelFailure('MALFORMED_RESPONSE', 'doStream did not return { stream: ReadableStream }', 'response'),
      )
      return
    }
    if (signal.aborted) onAbort()
    while (!translator.finished) {
      const next = await reader.read()
      if (signal.aborted) break
      if (next.done === true) {
        yield* translator.end()
        return
      }
      for (const chunk of translator.push(next.value)) {
        streamed = true
        yield chunk
      }
    }
    if (signal.aborted && !translator.finished) yield normalizeThrown(signal.reason, { signal, streamed })
  } catch (error) {
    if (!signal.aborted && isApiCallError(error)) {
      const failure = apiCallFailure(error, now())
      yield* translator.fail('error', streamed ? { ...failure, phase: 'streaming' } : failure)
    } else {
      yield normalizeThrown(error, { signal, streamed })
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    if (reader !== undefined && !translator.finished) reader.cancel().catch(() => undefined)
    reader?.releaseLock()
  }
}
