import type { JsonValue } from '../../session/json-value.js'
import type { ScriptedReply } from '../scripted-reply.js'

/**
 * The {@link ScriptedReply} fields a streaming fault step may carry to shape the events it sends
 * before the fault. With none of `text`, `reasoning` and `toolCalls`, the events are those of the
 * reply `{ text: 'partial response' }`.
 */
export type MockStreamPrefix = Pick<
  ScriptedReply,
  'text' | 'reasoning' | 'toolCalls' | 'chunkSize' | 'chunkDelayMs' | 'delayMs'
>

/**
 * The connection is destroyed (a TCP reset): before the response headers, or, with `afterEvents`,
 * after the headers and that many events (flushed to the client first).
 */
export interface MockConnectionResetStep extends MockStreamPrefix {
  /** Always `'connection-reset'`. */
  readonly fault: 'connection-reset'
  /**
   * How many SSE data events of the prefix reply to send before the reset (at most the reply's
   * events before its `finish_reason` event); absent: reset before the headers.
   */
  readonly afterEvents?: number
}

/** The headers and n events are sent, then nothing until the client goes away. */
export interface MockStallStep extends MockStreamPrefix {
  /** Always `'stall'`. */
  readonly fault: 'stall'
  /**
   * How many SSE data events of the prefix reply to send before stalling.
   *
   * @default 0
   */
  readonly afterEvents?: number
}

/** n events, then a clean end of the body without a `finish_reason` or `[DONE]`. */
export interface MockPartialEofStep extends MockStreamPrefix {
  /** Always `'partial-eof'`. */
  readonly fault: 'partial-eof'
  /**
   * How many SSE data events of the prefix reply to send before the end.
   *
   * @default 0
   */
  readonly afterEvents?: number
}

/** n events, then the event `data: {"choices": [` (blank line included) and the end of the body. */
export interface MockMalformedJsonStep extends MockStreamPrefix {
  /** Always `'malformed-json'`. */
  readonly fault: 'malformed-json'
  /**
   * How many SSE data events of the prefix reply to send before the malformed one.
   *
   * @default 0
   */
  readonly afterEvents?: number
}

/**
 * 429 with a `Retry-After` header and the body `{ error: { message: 'Rate limit reached', type:
 * 'rate_limit_error', code: 'rate_limit_exceeded' } }`.
 */
export interface MockRateLimitStep {
  /** Always `'rate-limit'`. */
  readonly fault: 'rate-limit'
  /**
   * The `Retry-After` header value, verbatim.
   *
   * @default '1'
   */
  readonly retryAfter?: string
}

/** That status with the body `{ error: { message: 'The server had an error', type: 'server_error' } }`. */
export interface MockServerErrorStep {
  /** Always `'server-error'`. */
  readonly fault: 'server-error'
  /**
   * The HTTP status (an integer 100–599).
   *
   * @default 500
   */
  readonly status?: number
}

/**
 * 400 with the body `{ error: { message: "This model's maximum context length is 1000 tokens.",
 * type: 'invalid_request_error', code: 'context_length_exceeded' } }`.
 */
export interface MockContextOverflowStep {
  /** Always `'context-overflow'`. */
  readonly fault: 'context-overflow'
}

/**
 * 402 with the body `{ error: { message: 'You exceeded your current quota', type:
 * 'insufficient_quota', code: 'insufficient_quota' } }`.
 */
export interface MockQuotaStep {
  /** Always `'quota'`. */
  readonly fault: 'quota'
}

/** 401 with the same `invalid_api_key` body as a failed `apiKey` check. */
export interface MockAuthStep {
  /** Always `'auth'`. */
  readonly fault: 'auth'
}

/** A stream holding only the final `finish_reason: 'stop'` event and `[DONE]`. */
export interface MockEmptyStep {
  /** Always `'empty'`. */
  readonly fault: 'empty'
}

/** 200 with `content-type: text/html` and a small HTML page. */
export interface MockWrongContentTypeStep {
  /** Always `'wrong-content-type'`. */
  readonly fault: 'wrong-content-type'
}

/**
 * A verbatim response: `status`, `body` (a string is sent as is with `content-type: text/plain`,
 * any other value as JSON with `content-type: application/json`; absent: no body) and `headers`
 * (set last, so they override the defaults, `x-request-id` included).
 */
export interface MockHttpStep {
  /** Always `'http'`. */
  readonly fault: 'http'
  /** The HTTP status (an integer 100–599). */
  readonly status: number
  /** The body. */
  readonly body?: JsonValue
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * A 200 `text/event-stream` response made of exactly these SSE data events, each sent as
 * `data: <event>\n\n`: a string as is, any other value `JSON.stringify`d. Nothing is added (put
 * `'[DONE]'` in the list to end with it).
 */
export interface MockEventsStep {
  /** The data of each event, in order. */
  readonly events: readonly JsonValue[]
}

/** A script step that is not a plain {@link ScriptedReply}: a fault, raw events or a verbatim response. */
export type MockFaultStep =
  | MockConnectionResetStep
  | MockStallStep
  | MockPartialEofStep
  | MockMalformedJsonStep
  | MockRateLimitStep
  | MockServerErrorStep
  | MockContextOverflowStep
  | MockQuotaStep
  | MockAuthStep
  | MockEmptyStep
  | MockWrongContentTypeStep
  | MockHttpStep
  | MockEventsStep

/**
 * One scripted answer of the mock OpenAI server: a reply rendered as SSE, or a fault step. Of a
 * {@link ScriptedReply}, `text`, `reasoning`, `toolCalls`, `usage`, `finish`, `chunkSize`,
 * `chunkDelayMs` and `delayMs` (a wait before the headers) are used; `failure`, `hang` and
 * `chunks` are not (fault steps cover them).
 */
export type MockStep = ScriptedReply | MockFaultStep

/** Every `fault` name a {@link MockFaultStep} may carry. */
export const mockFaultNames: readonly MockFaultName[] = [
  'connection-reset',
  'stall',
  'partial-eof',
  'malformed-json',
  'rate-limit',
  'server-error',
  'context-overflow',
  'quota',
  'auth',
  'empty',
  'wrong-content-type',
  'http',
]

/** The `fault` names of {@link MockFaultStep}. */
export type MockFaultName = Extract<MockFaultStep, { readonly fault: string }>['fault']
