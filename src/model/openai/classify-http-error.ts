/**
 * HTTP and in-stream error classification of the OpenAI-compatible adapter.
 *
 * @module
 */
import type { JsonValue } from '../../session/json-value.js'
import type { LlmFailure, LlmFailurePhase } from '../../session/llm-failure.js'
import { isJsonValue } from '../../session/snapshot/snapshot-json.js'
import { modelFailure } from '../failure-defaults.js'
import { redactJson, redactText } from './resolve-credential.js'

/** The longest body kept verbatim in `detail.body`, in UTF-8 bytes. */
const MAX_DETAIL_BODY_BYTES = 4096
/** How much of an unstructured body the message quotes. */
const MAX_QUOTED_CHARACTERS = 500

const providerCodes: Readonly<Record<string, string>> = {
  context_length_exceeded: 'CONTEXT_WINDOW_EXCEEDED',
  insufficient_quota: 'QUOTA',
  insufficient_balance: 'QUOTA',
  billing_hard_limit_reached: 'QUOTA',
  invalid_api_key: 'AUTH',
  rate_limit_exceeded: 'RATE_LIMIT',
}
const overflowWording = [
  'maximum context length',
  'context length',
  'context window',
  'too many tokens',
  'prompt is too long',
  'reduce the length',
]
const quotaWording = ['insufficient balance', 'quota', 'billing', 'credit']

/**
 * What an error body says, ready to classify.
 *
 * @internal
 */
export interface ErrorBodyInput {
  /** The HTTP status; absent for an error object inside the stream. */
  readonly status?: number
  /** The raw body text (or event data). */
  readonly bodyText: string
  /** The body already parsed, when the caller parsed it (in-stream events). */
  readonly parsed?: unknown
  /** The `requestId` to report. */
  readonly requestId?: string
  /** The `retryAfterMs` to report. */
  readonly retryAfterMs?: number
  /** The key to redact from every provider text. */
  readonly key: string | undefined
  /** The phase of the failure. */
  readonly phase: LlmFailurePhase
}

function parseJson(text: string): { readonly ok: boolean; readonly value?: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

function codeForStatus(status: number | undefined): string {
  if (status === undefined || (status >= 200 && status < 300)) return 'SERVER'
  if (status === 401 || status === 403) return 'AUTH'
  if (status === 402) return 'QUOTA'
  if (status === 408) return 'TIMEOUT'
  if (status === 429) return 'RATE_LIMIT'
  if (status === 400 || status === 413 || status === 422) return 'INVALID_REQUEST'
  if (status >= 500 && status <= 599) return 'SERVER'
  return `HTTP_${status}`
}

function mentions(text: string, phrases: readonly string[]): boolean {
  const lower = text.toLowerCase()
  return phrases.some((phrase) => lower.includes(phrase))
}

/**
 * The failure code of an error body: a structured provider code first, then the status, then
 * (for 400/413/422 and 429 only) the wording of the message.
 *
 * @internal
 */
export function classifyCode(
  status: number | undefined,
  providerCode: string | undefined,
  providerMessage: string,
): string {
  const structured = providerCode === undefined ? undefined : providerCodes[providerCode]
  if (structured !== undefined) return structured
  if ((status === 400 || status === 413 || status === 422) && mentions(providerMessage, overflowWording))
    return 'CONTEXT_WINDOW_EXCEEDED'
  if (status === 429 && mentions(providerMessage, quotaWording)) return 'QUOTA'
  return codeForStatus(status)
}

/**
 * Classifies an error body: `error = body.error ?? body`, `providerCode =
 * error.code ?? error.type`, `providerMessage = error.message` (else the first 500 characters of
 * the body). The message is `model request failed with HTTP <status> (<code>): <providerMessage>`
 * (without `with HTTP <status>` for an in-stream error), with the key redacted; `detail` holds
 * `providerCode` and the parsed body when it is at most 4 KiB.
 *
 * @internal
 */
export function classifyErrorBody(input: ErrorBodyInput): LlmFailure {
  const parsed = 'parsed' in input ? { ok: true, value: input.parsed } : parseJson(input.bodyText)
  const body = parsed.ok ? asRecord(parsed.value) : undefined
  const error = asRecord(body?.['error']) ?? body
  const rawCode = error?.['code'] ?? error?.['type']
  const providerCode =
    typeof rawCode === 'string' && rawCode !== '' ? rawCode : typeof rawCode === 'number' ? String(rawCode) : undefined
  const errorMessage = error?.['message'] ?? (typeof body?.['error'] === 'string' ? body['error'] : undefined)
  const quoted = input.bodyText.slice(0, MAX_QUOTED_CHARACTERS)
  const providerMessage = redactText(
    typeof errorMessage === 'string' ? errorMessage : quoted === '' ? '(empty body)' : quoted,
    input.key,
  )
  const code = classifyCode(input.status, providerCode, providerMessage)
  const detail: Record<string, JsonValue> = {}
  if (providerCode !== undefined) detail['providerCode'] = redactText(providerCode, input.key)
  if (parsed.ok && Buffer.byteLength(input.bodyText, 'utf8') <= MAX_DETAIL_BODY_BYTES) {
    const redacted = redactJson(parsed.value, input.key)
    if (isJsonValue(redacted)) detail['body'] = redacted as JsonValue
  }
  const where = input.status === undefined ? '' : ` with HTTP ${input.status}`
  return modelFailure(code, `model request failed${where} (${code}): ${providerMessage}`, input.phase, {
    ...(input.status !== undefined && { status: input.status }),
    ...(input.retryAfterMs !== undefined && { retryAfterMs: input.retryAfterMs }),
    ...(input.requestId !== undefined && { requestId: input.requestId }),
    ...(Object.keys(detail).length > 0 && { detail }),
  })
}

/**
 * The wait a response asks for: `retry-after-ms`, else `retry-after` as seconds or as an HTTP
 * date measured against `now`. Unparsable or not positive → `undefined`; rounded up to whole ms.
 *
 * @internal
 */
export function retryAfterMsOf(headers: Headers, now: number): number | undefined {
  const positive = (milliseconds: number): number | undefined => {
    if (!Number.isFinite(milliseconds) || milliseconds <= 0) return undefined
    const rounded = Math.ceil(milliseconds)
    return Number.isSafeInteger(rounded) ? rounded : undefined
  }
  const inMilliseconds = headers.get('retry-after-ms')?.trim()
  if (inMilliseconds !== undefined && /^\d+(\.\d+)?$/.test(inMilliseconds)) {
    const value = positive(Number(inMilliseconds))
    if (value !== undefined) return value
  }
  const retryAfter = headers.get('retry-after')?.trim()
  if (retryAfter === undefined || retryAfter === '') return undefined
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return positive(Number(retryAfter) * 1000)
  const date = Date.parse(retryAfter)
  return Number.isNaN(date) ? undefined : positive(date - now)
}

/**
 * The provider's request id: `x-request-id`, else `request-id` (an empty value counts as absent).
 *
 * @internal
 */
export function requestIdOf(headers: Headers): string | undefined {
  return headers.get('x-request-id') || headers.get('request-id') || undefined
}
