import type { AgentRun } from '../agent/agent.js'
import type { StreamOverflowError } from '../errors/agent-errors.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { LastEventIdError } from '../errors/last-event-id-error.js'
import type { AgentStreamEvent } from './agent-stream-event.js'
import { eventStreamHeaders } from './event-stream-headers.js'
import { checkFrameLimits, type FrameLimits, type FrameReader, frameBody } from './frame-body.js'
import { iterableFrames } from './iterable-frames.js'
import { lastEventIdResponse } from './last-event-id-response.js'
import { errorFrame, eventFrame, retryFrame } from './sse-frames.js'
import {
  checkSource,
  openSessionCursor,
  type SessionCursor,
  type SessionStreamOptions,
  type SessionStreamSource,
} from './stream-session.js'

/** Options of {@link sseResponse}. */
export interface SseOptions {
  /**
   * How often to send a `: hb` comment line, in milliseconds, so proxies keep an idle connection
   * open; `0` sends none.
   *
   * @default 15000
   */
  readonly heartbeatMs?: number
  /**
   * How many committed events the reader may fall behind. One more and the response is cut
   * (its body errors with {@link StreamOverflowError}, so the connection closes): a reader that
   * stops reading costs a bounded amount of memory, and it resumes later with `Last-Event-ID`.
   *
   * @default 1024
   */
  readonly maxLag?: number
  /** A `retry:` line at the start: the reconnection delay a reader should use, in milliseconds. */
  readonly retryMs?: number
  /** Ends the response (gracefully, after what was sent) when aborted, e.g. at server shutdown. */
  readonly signal?: AbortSignal
  /** Extra response headers (the SSE ones win). */
  readonly headers?: Readonly<Record<string, string>>
}

/** Options of {@link sseResponse} for a session: where to start and when to end, as {@link streamSession} takes them. */
export interface SessionSseOptions extends SseOptions, SessionStreamOptions {}

function checkOptions(options: SseOptions): FrameLimits {
  const limits = checkFrameLimits(options)
  const { retryMs } = options
  if (retryMs !== undefined && (!Number.isSafeInteger(retryMs) || retryMs < 0)) {
    throw new InvalidArgumentError({
      argument: 'options.retryMs',
      reason: 'must be a non-negative safe integer',
      value: retryMs,
    })
  }
  return limits
}

function isRun(source: AgentRun | SessionStreamSource | AsyncIterable<AgentStreamEvent>): source is AgentRun {
  return (
    typeof source === 'object' &&
    source !== null &&
    typeof (source as Partial<AgentRun>)[Symbol.asyncIterator] === 'function' &&
    'result' in source
  )
}

/** Where the body's events come from: a cursor now, or one once the run's turn starts. */
type CursorSource = () => Promise<SessionCursor>

function runCursor(run: AgentRun): CursorSource {
  return async () => {
    const iterator = run[Symbol.asyncIterator]()
    try {
      const first = await iterator.next()
      const from = first.done === true ? run.agent.session.length : first.value.seq
      return openSessionCursor(run.agent, { from, until: 'turn-end' })
    } finally {
      // The cursor reads the log from the turn's start; the run's own buffer is not needed.
      await iterator.return?.()
    }
  }
}

/** A session cursor read as frames: its events, until it is done. */
function cursorFrames(cursor: SessionCursor): FrameReader<AgentStreamEvent> {
  return {
    async next() {
      const next = await cursor.next()
      return next.done === true ? undefined : next.value
    },
    get lag() {
      return cursor.lag
    },
    get lastReadSeq() {
      return cursor.nextSeq - 1
    },
    onCommit(listener) {
      cursor.onCommit(listener)
    },
    close() {
      void cursor.return()
    },
  }
}

/** Whether `source` is a plain stream of events (a tail, a session stream), not an agent or a session. */
function isEventStream(
  source: AsyncIterable<AgentStreamEvent> | SessionStreamSource,
): source is AsyncIterable<AgentStreamEvent> {
  return (
    typeof source === 'object' &&
    source !== null &&
    typeof (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function' &&
    !('session' in source)
  )
}

function eventBody(
  open: () => Promise<FrameReader<AgentStreamEvent>>,
  options: SseOptions,
  limits: FrameLimits,
): ReadableStream<Uint8Array> {
  return frameBody(
    {
      reader: open,
      encode: eventFrame,
      encodeError: errorFrame,
      prelude: options.retryMs === undefined ? undefined : retryFrame(options.retryMs),
      signal: options.signal,
    },
    limits,
  )
}

/**
 * Serves events as Server-Sent Events in a web `Response` (`text/event-stream`), for any server
 * that takes one (Hono, Next, Bun, Deno; node:http through {@link writeResponse}). Each event is a
 * frame `id: <seq>`, `event: <type>`, `data: <the event as JSON>`; a failure is a final
 * `event: error` frame with `{ code, message }` and no id.
 *
 * For an {@link AgentRun}: the run's turn, from `turn/start` to `turn/end`. For an agent (or a
 * live session): the session from `lastEventId` (the `Last-Event-ID` header) or `from` on,
 * the stored events and then the live ones, each seq exactly once, ending as `until` says. A
 * refused `lastEventId` answers 400 with `{ error: { code, message, value } }` as JSON. For any
 * other stream of committed events (a tail from `yoke/postgres`, which takes the `Last-Event-ID`
 * itself, on any node): its events as they come, until it ends; its failure, a refused
 * `Last-Event-ID` included, is the final `event: error` frame.
 *
 * The body pulls: it reads the next event only when the connection took the previous ones, and
 * it buffers none (it keeps a cursor into the session's log). A reader more than `maxLag` events
 * behind is cut off and resumes later. A disconnect never cancels the turn.
 *
 * @param source - a run from `agent.stream()`, or the agent whose session to serve (or
 *   `{ session, ctx: harness.ctx }` for a live session without an agent), or a stream of
 *   committed events such as a tail
 * @param options - heartbeat, lag bound, retry, signal, headers; for a session also where to
 *   start and end
 * @returns the response
 * @throws {@link InvalidArgumentError} for a bad source or option
 * @example
 * ```ts
 * // Hono: a first request starts the turn, a reconnect resumes it.
 * app.post('/chat/:id', async (c) => {
 *   const agent = await harness.openAgent(c.req.param('id'))
 *   const lastEventId = c.req.header('last-event-id')
 *   if (lastEventId !== undefined) return sseResponse(agent, { lastEventId, until: 'turn-end' })
 *   return sseResponse(agent.stream(await c.req.text()))
 * })
 * ```
 */
export function sseResponse(source: AgentRun, options?: SseOptions): Response
export function sseResponse(source: SessionStreamSource, options?: SessionSseOptions): Response
export function sseResponse(source: AsyncIterable<AgentStreamEvent>, options?: SseOptions): Response
export function sseResponse(
  source: AgentRun | SessionStreamSource | AsyncIterable<AgentStreamEvent>,
  options: SessionSseOptions = {},
): Response {
  const limits = checkOptions(options)
  let open: () => Promise<FrameReader<AgentStreamEvent>>
  if (isRun(source)) {
    // Checked now, so a wrong source fails the call rather than the body.
    checkSource(source.agent)
    const cursor = runCursor(source)
    open = async () => cursorFrames(await cursor())
  } else if (isEventStream(source)) {
    // Where it starts is the stream's own business (a tail takes the Last-Event-ID itself).
    open = () => Promise.resolve(iterableFrames(source))
  } else {
    let cursor: SessionCursor
    try {
      cursor = openSessionCursor(source, options)
    } catch (error) {
      if (!LastEventIdError.is(error)) throw error
      return lastEventIdResponse(error)
    }
    open = () => Promise.resolve(cursorFrames(cursor))
  }
  return new Response(eventBody(open, options, limits), {
    status: 200,
    headers: eventStreamHeaders(options.headers, { 'content-type': 'text/event-stream; charset=utf-8' }),
  })
}
