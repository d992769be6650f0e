/**
 * One streamed Chat Completions call: pre-request checks, credential, the POST, HTTP error
 * classification, SSE translation, watchdog and abort.
 *
 * @module
 */
import type { LlmFailure, LlmFailurePhase } from '../../session/llm-failure.js'
import type { StreamChunk } from '../../session/stream-chunk.js'
import { YOKE_VERSION } from '../../version.js'
import { raceSignal } from '../../kernel/race-signal.js'
import { modelFailure } from '../failure-defaults.js'
import type { ModelInfo } from '../model-adapter.js'
import type { ModelRequest } from '../model-request.js'
import { checkRequest } from './check-request.js'
import { classifyErrorBody, requestIdOf, retryAfterMsOf } from './classify-http-error.js'
import { type IdleWatchdog, startIdleWatchdog } from './idle-watchdog.js'
import type { ResolvedOpenAIOptions } from './openai-options.js'
import { redactText, resolveCredential } from './resolve-credential.js'
import { serializeRequest } from './serialize-request.js'
import { createStreamTranslator } from './translate-stream.js'
import { CompletionChunks } from './completion-chunks.js'

/** The most of a non-stream body read for classification. */
const MAX_ERROR_BODY_BYTES = 1024 * 1024
const headerSafeValue = /^[\t\x20-\x7e]*$/

type Interruption = 'caller' | 'watchdog'

function finishFailure(failure: LlmFailure): StreamChunk {
  return { type: 'finish', reason: failure.code === 'ABORTED' ? 'aborted' : 'error', failure }
}

function aborted(phase: LlmFailurePhase): LlmFailure {
  return modelFailure('ABORTED', 'request aborted', phase)
}

/** The most specific code in an error's cause chain (`ECONNREFUSED`, `UND_ERR_SOCKET`, …), else its name. */
function causeCode(error: unknown): { readonly code: string; readonly message: string } {
  let current: unknown = error
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && code !== '') {
      const message = (current as { message?: unknown }).message
      return { code, message: typeof message === 'string' ? message : code }
    }
    current = (current as { cause?: unknown }).cause
  }
  if (error instanceof Error) return { code: error.name, message: error.message }
  return { code: 'Error', message: String(error) }
}

function buildHeaders(
  options: ResolvedOpenAIOptions,
  key: string | undefined,
  sessionId: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' }
  if (key !== undefined) headers['authorization'] = `Bearer ${key}`
  headers['user-agent'] = `yoke/${YOKE_VERSION}`
  if (options.sessionIdHeader !== false && sessionId !== undefined) {
    headers[options.sessionIdHeader.toLowerCase()] = headerSafeValue.test(sessionId)
      ? sessionId
      : encodeURIComponent(sessionId)
  }
  for (const [name, value] of Object.entries(options.headers)) headers[name.toLowerCase()] = value
  return headers
}

/** `promise`'s value, or `undefined` as soon as the signal aborts (a key function may hang). */
function untilAborted<T>(signal: AbortSignal, promise: Promise<T>): Promise<T | undefined> {
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(undefined)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      () => {
        signal.removeEventListener('abort', onAbort)
        resolve(undefined)
      },
    )
  })
}

function isEventStream(contentType: string | null): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'text/event-stream'
}

async function readText(
  body: ReadableStream<Uint8Array>,
  watchdog: IdleWatchdog,
  signal: AbortSignal,
): Promise<string> {
  const reader = body.getReader()
  const parts: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await raceSignal(reader.read(), signal)
      if (done) break
      watchdog.kick()
      parts.push(value)
      size += value.byteLength
      if (size >= MAX_ERROR_BODY_BYTES) break
    }
  } finally {
    reader.cancel().catch(() => {})
  }
  return new TextDecoder().decode(Buffer.concat(parts))
}

/**
 * Streams one call. Never throws: every outcome, including a bug, ends in a `finish` chunk.
 *
 * @internal
 */
export function streamCompletion(
  options: ResolvedOpenAIOptions,
  info: ModelInfo | undefined,
  request: ModelRequest,
): AsyncIterableIterator<StreamChunk, undefined> {
  // The inner generator hands over one batch per body read: one async hop per read, not per chunk.
  return new CompletionChunks(streamOnce(options, info, request), (error, started) => {
    const phase = started ? 'streaming' : 'connect'
    if (request.signal.aborted) return finishFailure(aborted(phase))
    const message = error instanceof Error ? error.message : String(error)
    return finishFailure(modelFailure('UNKNOWN', `the OpenAI-compatible adapter failed: ${message}`, phase))
  })
}

async function* streamOnce(
  options: ResolvedOpenAIOptions,
  info: ModelInfo | undefined,
  request: ModelRequest,
): AsyncGenerator<readonly StreamChunk[], void, undefined> {
  const signal = request.signal
  if (signal.aborted) return yield [finishFailure(aborted('pre-request'))]
  const unsupported = checkRequest(request, info)
  if (unsupported !== undefined) return yield [finishFailure(unsupported)]
  const credential = await untilAborted(signal, resolveCredential(options.credential))
  if (credential === undefined || signal.aborted) return yield [finishFailure(aborted('pre-request'))]
  if (!credential.ok) return yield [finishFailure(credential.failure)]
  const key = credential.key
  const body = JSON.stringify(serializeRequest(request, options))
  const headers = buildHeaders(options, key, request.metadata.sessionId)

  const controller = new AbortController()
  let interruption: Interruption | undefined
  const onAbort = (): void => {
    interruption ??= 'caller'
    controller.abort(signal.reason)
  }
  signal.addEventListener('abort', onAbort, { once: true })
  const watchdog = startIdleWatchdog({
    timeoutMs: options.idleTimeoutMs,
    clock: options.clock,
    onExpire: () => {
      interruption ??= 'watchdog'
      controller.abort(new Error(`no data for ${options.idleTimeoutMs} ms`))
    },
  })
  // Every await of the call is cut off by the fused signal (raceSignal until the headers, a reader
  // cancel while streaming), so a fetch or body that ignores the signal cannot hang the call.
  let headersReceived = false
  const interrupted = (phase: LlmFailurePhase): LlmFailure | undefined => {
    if (interruption === 'caller' || signal.aborted) return aborted(phase)
    if (interruption === 'watchdog') {
      return modelFailure(
        'TIMEOUT',
        `no data from the provider for ${options.idleTimeoutMs} ms`,
        headersReceived ? 'streaming' : 'connect',
      )
    }
    return undefined
  }
  const transport = (error: unknown, phase: 'connect' | 'streaming'): LlmFailure => {
    const cause = causeCode(error)
    const what = phase === 'connect' ? `could not reach ${options.endpoint}` : 'the connection failed while streaming'
    return modelFailure('TRANSPORT', redactText(`${what}: ${cause.code} (${cause.message})`, key), phase, {
      detail: { cause: cause.code },
    })
  }

  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  let stopReading: (() => void) | undefined
  try {
    let response: Response
    let pending: Promise<Response> | undefined
    try {
      pending = options.fetch(options.endpoint, { method: 'POST', headers, body, signal: controller.signal })
      response = await raceSignal(pending, controller.signal)
    } catch (error) {
      // A fetch that ignored the abort may still answer: release that response.
      pending?.then(
        (late) => late.body?.cancel().catch(() => {}),
        () => {},
      )
      return yield [finishFailure(interrupted('connect') ?? transport(error, 'connect'))]
    }
    headersReceived = true
    watchdog.kick()
    const requestId = requestIdOf(response.headers)
    const eventStream = isEventStream(response.headers.get('content-type'))
    if (!response.ok || !eventStream) {
      let text = ''
      if (response.body !== null) {
        try {
          text = await readText(response.body, watchdog, controller.signal)
        } catch {
          const failure = interrupted('response')
          if (failure !== undefined) return yield [finishFailure(failure)]
        }
      }
      return yield [finishFailure(classifyNonStream(response, text, requestId, key, options.clock.now()))]
    }
    if (response.body === null)
      return yield [finishFailure(modelFailure('EMPTY_RESPONSE', 'the provider sent no body', 'response'))]

    const bodyReader = response.body.getReader()
    reader = bodyReader
    // One listener for the whole body instead of a race per read: cancelling the reader settles a
    // pending read at once (`done`), whatever the body's source does, so an abort or the watchdog
    // cannot be held up by a body that ignores the signal.
    stopReading = (): void => {
      bodyReader.cancel().catch(() => {})
    }
    controller.signal.addEventListener('abort', stopReading, { once: true })
    if (controller.signal.aborted) stopReading()
    const translator = createStreamTranslator({ key, requestId })
    while (!translator.finished) {
      let result: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>
      try {
        result = await bodyReader.read()
      } catch (error) {
        yield translator.fail(
          signal.aborted || interruption === 'caller' ? 'aborted' : 'error',
          interrupted('streaming') ?? transport(error, 'streaming'),
        )
        return
      }
      // `interruption` is set as soon as either signal aborts (their listeners run synchronously),
      // so it stands for `signal.aborted` / `controller.signal.aborted` without their getters.
      if (interruption !== undefined) {
        // The read ended because the call was interrupted (or the body ended just then).
        yield translator.fail(
          signal.aborted || interruption === 'caller' ? 'aborted' : 'error',
          interrupted('streaming') ?? aborted('streaming'),
        )
        return
      }
      const chunks = result.done ? translator.end() : translator.feedBytes(result.value)
      // The window restarts when the consumer pulls again (resume), so holding a chunk is not silence.
      watchdog.pause()
      if (chunks.length > 0) yield chunks
      watchdog.resume()
      if (!translator.finished && interruption === 'caller') {
        yield translator.fail('aborted', aborted('streaming'))
      }
    }
  } finally {
    watchdog.stop()
    signal.removeEventListener('abort', onAbort)
    if (stopReading !== undefined) controller.signal.removeEventListener('abort', stopReading)
    reader?.cancel().catch(() => {})
    controller.abort()
  }
}

function classifyNonStream(
  response: Response,
  text: string,
  requestId: string | undefined,
  key: string | undefined,
  now: number,
): LlmFailure {
  const fields = {
    status: response.status,
    bodyText: text,
    key,
    phase: 'response' as const,
    ...(requestId !== undefined && { requestId }),
  }
  const retryAfterMs = retryAfterMsOf(response.headers, now)
  if (!response.ok) return classifyErrorBody({ ...fields, ...(retryAfterMs !== undefined && { retryAfterMs }) })
  if (text.trim() === '')
    return modelFailure('EMPTY_RESPONSE', `the provider sent HTTP ${response.status} with no body`, 'response', {
      status: response.status,
      ...(requestId !== undefined && { requestId }),
    })
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  const error = typeof parsed === 'object' && parsed !== null ? (parsed as { error?: unknown }).error : undefined
  if (error !== undefined && error !== null) return classifyErrorBody({ ...fields, parsed })
  const contentType = response.headers.get('content-type') ?? '(none)'
  return modelFailure(
    'MALFORMED_RESPONSE',
    `expected a text/event-stream response, got HTTP ${response.status} ${contentType}`,
    'response',
    {
      status: response.status,
      ...(requestId !== undefined && { requestId }),
    },
  )
}
