import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import type { JsonObject, JsonValue } from '../../session/json-value.js'
import type { ScriptedReply } from '../scripted-reply.js'
import { mockErrorBodies } from './mock-error-bodies.js'
import type { MockFaultStep, MockStep, MockStreamPrefix } from './mock-step.js'
import { chunkEvent, type RenderContext, renderReplyEvents } from './render-reply-events.js'

/** One accepted request, as {@link playStep} answers it. */
export interface StepExchange {
  /** The request (its socket is destroyed by `connection-reset`). */
  readonly request: IncomingMessage
  /** The response to write. */
  readonly response: ServerResponse
  /** The accepted request number (1-based): `x-request-id: req_<n>`, chunk ids `chatcmpl-<n>`. */
  readonly requestNumber: number
  /** The parsed request body. */
  readonly body: JsonValue
  /** Aborted when the server closes: pending delays stop. */
  readonly signal: AbortSignal
  /** Counts one more tool call across the server and returns its number. */
  readonly nextToolCallNumber: () => number
  /** Called just before the server itself destroys the connection. */
  readonly onServerDestroy: () => void
}

/** How long a `connection-reset` after events waits, once they are flushed, before the reset. */
const resetGraceMs = 20

const defaultPrefix: ScriptedReply = { text: 'partial response' }

const wrongContentTypePage =
  '<!doctype html>\n<html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>\n'

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function renderContext(exchange: StepExchange): RenderContext {
  const body = isObject(exchange.body) ? exchange.body : {}
  const model = body['model']
  const streamOptions = body['stream_options']
  return {
    requestNumber: exchange.requestNumber,
    model: typeof model === 'string' ? model : 'mock',
    includeUsage: isObject(streamOptions) && streamOptions['include_usage'] === true,
    nextToolCallNumber: exchange.nextToolCallNumber,
  }
}

const isGone = (response: ServerResponse): boolean => response.destroyed || response.closed

async function wait(exchange: StepExchange, ms: number | undefined): Promise<void> {
  if (ms !== undefined && ms > 0) await delay(ms, undefined, { signal: exchange.signal })
}

function writeData(response: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    response.write(`data: ${data}\n\n`, () => resolve())
  })
}

/** Sends the events with `chunkDelayMs` between them; `false` when the client went away first. */
async function sendEvents(
  exchange: StepExchange,
  events: readonly string[],
  chunkDelayMs: number | undefined,
): Promise<boolean> {
  for (const [position, data] of events.entries()) {
    if (position > 0) await wait(exchange, chunkDelayMs)
    if (isGone(exchange.response)) return false
    await writeData(exchange.response, data)
  }
  return !isGone(exchange.response)
}

function startStream(exchange: StepExchange): void {
  exchange.response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-request-id': `req_${exchange.requestNumber}`,
  })
  exchange.response.flushHeaders()
}

function sendBody(
  exchange: StepExchange,
  status: number,
  body: JsonValue | undefined,
  headers: OutgoingHttpHeaders = {},
): void {
  const type =
    body === undefined
      ? {}
      : { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' }
  exchange.response.writeHead(status, { ...type, 'x-request-id': `req_${exchange.requestNumber}`, ...headers })
  exchange.response.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body))
}

function destroyConnection(exchange: StepExchange): void {
  exchange.onServerDestroy()
  exchange.request.socket.resetAndDestroy()
}

async function playReply(reply: ScriptedReply, exchange: StepExchange): Promise<void> {
  const rendered = renderReplyEvents(reply, renderContext(exchange))
  await wait(exchange, reply.delayMs)
  startStream(exchange)
  const events = [
    ...rendered.body,
    rendered.finish,
    ...(rendered.usage === undefined ? [] : [rendered.usage]),
    '[DONE]',
  ]
  if (await sendEvents(exchange, events, reply.chunkDelayMs)) exchange.response.end()
}

type StreamFault = Extract<
  MockFaultStep,
  { readonly fault: 'connection-reset' | 'stall' | 'partial-eof' | 'malformed-json' }
>

async function playStreamFault(step: StreamFault, exchange: StepExchange): Promise<void> {
  const given: MockStreamPrefix = step
  const prefix =
    given.text === undefined && given.reasoning === undefined && given.toolCalls === undefined
      ? { ...defaultPrefix, ...given }
      : given
  const events = renderReplyEvents(prefix, renderContext(exchange)).body.slice(0, step.afterEvents ?? 0)
  await wait(exchange, prefix.delayMs)
  if (step.fault === 'connection-reset' && step.afterEvents === undefined) return destroyConnection(exchange)
  startStream(exchange)
  if (!(await sendEvents(exchange, events, prefix.chunkDelayMs))) return
  const { response } = exchange
  switch (step.fault) {
    case 'connection-reset':
      await wait(exchange, resetGraceMs)
      return isGone(response) ? undefined : destroyConnection(exchange)
    case 'stall':
      if (isGone(response)) return
      return new Promise((resolve) => response.once('close', () => resolve()))
    case 'partial-eof':
      response.end()
      return
    case 'malformed-json':
      response.end('data: {"choices": [\n\n')
      return
  }
}

/**
 * Answers one accepted request with its script step: a reply as SSE, a stream
 * fault, an error response, raw events or a verbatim response. Resolves when the response is
 * done (a `stall` when the client goes away); rejects with an `AbortError` when the server closes
 * during a delay.
 *
 * @param step - the step
 * @param exchange - the request, the response and the server's counters
 * @returns resolves when the step is played
 */
export async function playStep(step: MockStep, exchange: StepExchange): Promise<void> {
  if ('events' in step) {
    startStream(exchange)
    const events = step.events.map((event) => (typeof event === 'string' ? event : JSON.stringify(event)))
    if (await sendEvents(exchange, events, undefined)) exchange.response.end()
    return
  }
  if (!('fault' in step)) return playReply(step, exchange)
  switch (step.fault) {
    case 'connection-reset':
    case 'stall':
    case 'partial-eof':
    case 'malformed-json':
      return playStreamFault(step, exchange)
    case 'rate-limit':
      return sendBody(exchange, 429, mockErrorBodies.rateLimit, { 'retry-after': step.retryAfter ?? '1' })
    case 'server-error':
      return sendBody(exchange, step.status ?? 500, mockErrorBodies.server)
    case 'context-overflow':
      return sendBody(exchange, 400, mockErrorBodies.contextOverflow)
    case 'quota':
      return sendBody(exchange, 402, mockErrorBodies.quota)
    case 'auth':
      return sendBody(exchange, 401, mockErrorBodies.auth)
    case 'empty':
      startStream(exchange)
      if (await sendEvents(exchange, [chunkEvent(renderContext(exchange), {}, 'stop'), '[DONE]'], undefined)) {
        exchange.response.end()
      }
      return
    case 'wrong-content-type':
      exchange.response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'x-request-id': `req_${exchange.requestNumber}`,
      })
      exchange.response.end(wrongContentTypePage)
      return
    case 'http':
      return sendBody(exchange, step.status, step.body, step.headers)
  }
}
