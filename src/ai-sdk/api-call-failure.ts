/**
 * Errors from AI SDK providers (a thrown `APICallError`, an in-band `error` part) → Yoke failures.
 *
 * @module
 */
import { modelFailure } from '../model/failure-defaults.js'
import { classifyErrorBody, requestIdOf, retryAfterMsOf } from '../model/openai/classify-http-error.js'
import type { LlmFailure, LlmFailurePhase } from '../session/llm-failure.js'

/** The marker `@ai-sdk/provider` puts on every `APICallError` (what its `isInstance` checks). */
const apiCallErrorMarker = Symbol.for('vercel.ai.error.AI_APICallError')

/** The fields of an `APICallError` Yoke reads. */
interface ApiCallErrorShape {
  readonly message: string
  readonly statusCode?: unknown
  readonly responseHeaders?: unknown
  readonly responseBody?: unknown
  readonly isRetryable?: unknown
}

/**
 * Whether a value is an AI SDK `APICallError`, by its marker, so the check works across copies of
 * `@ai-sdk/provider` and without importing it.
 *
 * @internal
 */
export function isApiCallError(value: unknown): value is ApiCallErrorShape {
  return (
    typeof value === 'object' &&
    value !== null &&
    apiCallErrorMarker in value &&
    (value as Record<symbol, unknown>)[apiCallErrorMarker] === true
  )
}

function headersOf(value: unknown): Headers {
  const headers = new Headers()
  if (typeof value !== 'object' || value === null) return headers
  for (const [name, header] of Object.entries(value)) {
    try {
      if (typeof header === 'string') headers.set(name, header)
    } catch {
      // A header name the Headers class refuses tells nothing Yoke uses.
    }
  }
  return headers
}

/**
 * Maps an `APICallError`: the status and body are classified like the OpenAI-compatible adapter's
 * HTTP errors (code, message, `detail`); `retryAfterMs` and `requestId` come from the response
 * headers; `retryable` is the provider's own `isRetryable`. No status means the request never got
 * an answer: `TRANSPORT` in the `connect` phase.
 *
 * @param error - the thrown error
 * @param now - the current time, for a `retry-after` HTTP date
 * @returns the failure
 * @internal
 */
export function apiCallFailure(error: ApiCallErrorShape, now: number): LlmFailure {
  const retryable = error.isRetryable === true
  const status =
    typeof error.statusCode === 'number' && Number.isInteger(error.statusCode) ? error.statusCode : undefined
  if (status === undefined || status < 100 || status > 599) {
    return modelFailure('TRANSPORT', `model request failed: ${String(error.message)}`, 'connect', { retryable })
  }
  const headers = headersOf(error.responseHeaders)
  const retryAfterMs = retryAfterMsOf(headers, now)
  const requestId = requestIdOf(headers)
  const base = classifyErrorBody({
    status,
    bodyText: typeof error.responseBody === 'string' ? error.responseBody : String(error.message),
    key: undefined,
    phase: 'response',
    ...(retryAfterMs !== undefined && { retryAfterMs }),
    ...(requestId !== undefined && { requestId }),
  })
  return { ...base, retryable }
}

/**
 * Maps the `error` of an in-band `error` part: an `APICallError` as above; a JSON object (the
 * provider's error event) classified like an in-stream error body; an `Error` or anything else by
 * its message. The phase is `streaming`.
 *
 * @param error - the part's `error`
 * @param now - the current time
 * @returns the failure
 * @internal
 */
export function streamErrorFailure(error: unknown, now: number): LlmFailure {
  if (isApiCallError(error)) return { ...apiCallFailure(error, now), phase: 'streaming' satisfies LlmFailurePhase }
  if (error instanceof Error) {
    return classifyErrorBody({
      bodyText: error.message,
      parsed: { error: { message: error.message } },
      key: undefined,
      phase: 'streaming',
    })
  }
  if (typeof error === 'object' && error !== null) {
    let bodyText: string
    try {
      bodyText = JSON.stringify(error)
    } catch {
      bodyText = '(unprintable error)'
    }
    return classifyErrorBody({ bodyText, parsed: error, key: undefined, phase: 'streaming' })
  }
  return classifyErrorBody({ bodyText: String(error), parsed: undefined, key: undefined, phase: 'streaming' })
}
