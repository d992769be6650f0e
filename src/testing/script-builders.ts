import type { JsonObject, JsonValue } from '../session/json-value.js'
import type { LlmFailurePhase } from '../session/llm-failure.js'
import type { ScriptedFailure, ScriptedReply } from './scripted-reply.js'

/**
 * A reply with one text block (finish `stop`).
 *
 * @param text - the text
 * @param extra - more reply fields, merged in last
 * @returns the reply
 * @example
 * ```ts
 * scriptedModel([text('hello', { usage: { inputTokens: 3, outputTokens: 1 } })])
 * ```
 */
export function text(text: string, extra: ScriptedReply = {}): ScriptedReply {
  return { text, ...extra }
}

/**
 * A reply with one tool call whose id and raw argument text are given (finish `tool-calls`).
 *
 * @param id - the call id
 * @param name - the tool name
 * @param argumentsJson - the arguments as raw text, sent verbatim (need not be valid JSON)
 * @param extra - more reply fields, merged in last
 * @returns the reply
 */
export function call(id: string, name: string, argumentsJson: string, extra: ScriptedReply = {}): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: argumentsJson }], ...extra }
}

/**
 * A reply with one tool call, its id defaulting to `call_<k>` (finish `tool-calls`).
 *
 * @param name - the tool name
 * @param args - the arguments: an object to `JSON.stringify`, or raw text
 * @param extra - more reply fields, merged in last
 * @returns the reply
 */
export function tool(name: string, args: JsonObject | string, extra: ScriptedReply = {}): ScriptedReply {
  return { toolCalls: [{ name, arguments: args }], ...extra }
}

/**
 * A reply cut short by the output ceiling: one text block, finish `max-tokens`.
 *
 * @param text - the partial text
 * @param extra - more reply fields, merged in last
 * @returns the reply
 */
export function cut(text: string, extra: ScriptedReply = {}): ScriptedReply {
  return { text, finish: 'max-tokens', ...extra }
}

/**
 * The failure fields {@link fail} takes beside the reply fields: they go into the scripted
 * failure, so `fail('RATE_LIMIT', 'slow down', { retryAfterMs: 2000, status: 429 })` finishes with
 * a failure carrying `retryAfterMs` and `status`.
 */
export interface FailFields extends ScriptedReply {
  /** Whether retrying may help; default by code (`RATE_LIMIT`, `SERVER`, … are retryable). */
  readonly retryable?: boolean
  /** The HTTP status, an integer from 100 to 599. */
  readonly status?: number
  /** How long the provider asked to wait before retrying, in milliseconds. */
  readonly retryAfterMs?: number
  /** The provider's request id. */
  readonly requestId?: string
  /** How far the call got; default `'response'` (`'streaming'` after a streamed chunk). */
  readonly phase?: LlmFailurePhase
  /** Provider facts; any JSON. */
  readonly detail?: JsonValue
}

const failureFields = ['retryable', 'status', 'retryAfterMs', 'requestId', 'phase', 'detail'] as const

/**
 * A reply that finishes with a failure (`retryable` and `phase` get the scripted model's defaults
 * unless given). The failure fields of `extra` (`retryable`, `status`, `retryAfterMs`,
 * `requestId`, `phase`, `detail`) go into the failure; the other reply fields are merged in last
 * (a `failure` among them replaces the built one).
 *
 * @param code - the failure code, e.g. `'RATE_LIMIT'`
 * @param message - the message; default `'scripted failure <code>'`
 * @param extra - failure fields and more reply fields
 * @returns the reply
 * @example
 * ```ts
 * scriptedModel([fail('RATE_LIMIT', 'slow down', { retryAfterMs: 2000, status: 429 }), text('ok')])
 * ```
 */
export function fail(code: string, message?: string, extra: FailFields = {}): ScriptedReply {
  const failure: Record<string, unknown> = message === undefined ? { code } : { code, message }
  const reply: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(extra)) {
    if ((failureFields as readonly string[]).includes(key)) {
      if (value !== undefined) failure[key] = value
    } else reply[key] = value
  }
  return { failure: failure as unknown as ScriptedFailure, ...reply }
}

/**
 * A reply that emits the start and delta of a text block, then waits for the abort.
 *
 * @param text - the partial text
 * @returns the reply
 */
export function hang(text = 'partial'): ScriptedReply {
  return { text, hang: true }
}
