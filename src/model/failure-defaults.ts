import type { LlmFailure, LlmFailurePhase } from '../session/llm-failure.js'
import type { JsonValue } from '../session/json-value.js'

const retryableCodes: ReadonlySet<string> = new Set(['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE'])

/**
 * Whether a failure code is retryable by default: `RATE_LIMIT`,
 * `SERVER`, `TIMEOUT`, `TRANSPORT` and `EMPTY_RESPONSE` are; every other code is not.
 *
 * @param code - a failure code
 * @returns the table default
 */
export function isRetryableByDefault(code: string): boolean {
  return retryableCodes.has(code)
}

/** The optional fields of {@link modelFailure}. */
export interface ModelFailureFields {
  /** Overrides the table default. */
  readonly retryable?: boolean
  /** The HTTP status. */
  readonly status?: number
  /** The provider's requested wait, in milliseconds. */
  readonly retryAfterMs?: number
  /** The provider's request id. */
  readonly requestId?: string
  /** Provider facts. */
  readonly detail?: JsonValue
}

/**
 * Builds a frozen {@link LlmFailure} with `retryable` from the table default unless given, and
 * without `undefined`-valued keys (a failure is logged, so it must be lossless JSON).
 *
 * @param code - the failure code
 * @param message - the message; must never contain a credential
 * @param phase - how far the call got
 * @param fields - status, retry-after, request id, detail, a `retryable` override
 * @returns the failure
 */
export function modelFailure(
  code: string,
  message: string,
  phase: LlmFailurePhase,
  fields: ModelFailureFields = {},
): LlmFailure {
  const failure: { -readonly [K in keyof LlmFailure]: LlmFailure[K] } = {
    code,
    message,
    retryable: fields.retryable ?? isRetryableByDefault(code),
    phase,
  }
  if (fields.status !== undefined) failure.status = fields.status
  if (fields.retryAfterMs !== undefined) failure.retryAfterMs = fields.retryAfterMs
  if (fields.requestId !== undefined) failure.requestId = fields.requestId
  if (fields.detail !== undefined) failure.detail = fields.detail
  return Object.freeze(failure)
}
