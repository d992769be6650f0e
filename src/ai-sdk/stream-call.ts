/**
 * One call of an AI SDK language model as Yoke stream chunks.
 *
 * @module
 */
import { modelFailure } from '../model/failure-defaults.js'
import type { ModelStreamOptions } from '../model/model-adapter.js'
import type { ModelRequest } from '../model/model-request.js'
import { normalizeThrown } from '../model/normalize-thrown.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import type { AiSdkLanguageModel, AiSdkSpecificationVersion } from './ai-sdk-language-model.js'
import { apiCallFailure, isApiCallError } from './api-call-failure.js'
import { read } from './check-language-model.js'
import type { AiSdkProviderOptionsValue } from './check-provider-options.js'
import { toCallOptions } from './to-call-options.js'
import { createPartTranslator } from './translate-parts.js'

/** Reads `stream` from what `doStream` resolved to, with the reader the adapter consumes. */
function readerOf(result: unknown): ReadableStreamDefaultReader<unknown> | undefined {
  const stream = typeof result === 'object' && result !== null ? read(result, 'stream') : undefined
  return stream instanceof ReadableStream ? (stream.getReader() as ReadableStreamDefaultReader<unknown>) : undefined
}

/**
 * Streams one call: builds the call options, calls `doStream`, translates the parts; a thrown
 * `APICallError` or an abort ends the stream with the matching `finish`.
 *
 * @param model - the checked model
 * @param version - its specification version
 * @param request - the validated request
 * @param options - the signal and clock
 * @param providerOptions - the call-level provider options, if any
 * @returns the chunks, ending with one `finish`
 * @internal
 */
export async function* streamCall(
  model: AiSdkLanguageModel,
  version: AiSdkSpecificationVersion,
  request: ModelRequest,
  options: ModelStreamOptions,
  providerOptions?: AiSdkProviderOptionsValue,
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
      toCallOptions(request, version, providerOptions),
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
