import type { AgentRun, SessionOwner } from 'yoke'
import { StreamOverflowError } from '../errors/agent-errors.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { LastEventIdError } from '../errors/last-event-id-error.js'
import type { UIFrameReader } from './ui-frame-reader.js'
import {
  openFrames,
  type UIMessageSessionStreamOptions,
  type UIMessageStreamOptions,
  type UIMessageStreamSource,
} from './ui-message-stream.js'

/** How the response is sent: heartbeats, the lag bound, shutdown and extra headers. */
export interface UIMessageResponseSettings {
  /**
   * How often to send a `: hb` comment line, in milliseconds, so proxies keep an idle connection
   * open; `0` sends none.
   *
   * @default 15000
   */
  readonly heartbeatMs?: number
  /**
   * How many committed events the reader may fall behind before the response is cut (the
   * connection closes; the client resumes later).
   *
   * @default 1024
   */
  readonly maxLag?: number
  /** Ends the response (after what was sent) when aborted, e.g. at server shutdown. */
  readonly signal?: AbortSignal
  /** Extra response headers (the stream's own win). */
  readonly headers?: Readonly<Record<string, string>>
}

/** Options of {@link uiMessageStreamResponse} for a run. */
export interface UIMessageStreamResponseOptions extends UIMessageStreamOptions, UIMessageResponseSettings {}

/** Options of {@link uiMessageStreamResponse} for a session. */
export interface UIMessageSessionResponseOptions extends UIMessageSessionStreamOptions, UIMessageResponseSettings {}

const encoder = new TextEncoder()
const done = encoder.encode('data: [DONE]\n\n')
const heartbeat = encoder.encode(': hb\n\n')

function checkSettings(options: UIMessageResponseSettings): { heartbeatMs: number; maxLag: number } {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be an object', value: options })
  }
  const heartbeatMs = options.heartbeatMs ?? 15_000
  if (!Number.isSafeInteger(heartbeatMs) || heartbeatMs < 0) {
    throw new InvalidArgumentError({
      argument: 'options.heartbeatMs',
      reason: 'must be a non-negative safe integer',
      value: heartbeatMs,
    })
  }
  const maxLag = options.maxLag ?? 1024
  if (!Number.isSafeInteger(maxLag) || maxLag < 1) {
    throw new InvalidArgumentError({
      argument: 'options.maxLag',
      reason: 'must be a positive safe integer',
      value: maxLag,
    })
  }
  return { heartbeatMs, maxLag }
}

function body(
  reader: UIFrameReader,
  options: UIMessageResponseSettings,
  limits: { heartbeatMs: number; maxLag: number },
) {
  let timer: ReturnType<typeof setInterval> | undefined
  let stopped = false
  let onAbort: (() => void) | undefined
  const stop = (): void => {
    if (stopped) return
    stopped = true
    if (timer !== undefined) clearInterval(timer)
    if (onAbort !== undefined) options.signal?.removeEventListener('abort', onAbort)
    reader.close()
  }
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (limits.heartbeatMs > 0) {
          timer = setInterval(() => {
            if ((controller.desiredSize ?? 0) > 0) controller.enqueue(heartbeat)
          }, limits.heartbeatMs)
          timer.unref?.()
        }
        reader.onCommit(() => {
          if (stopped || reader.lag <= limits.maxLag) return
          stop()
          controller.error(new StreamOverflowError({ limit: limits.maxLag, lastYieldedSeq: reader.lastReadSeq }))
        })
        const { signal } = options
        if (signal !== undefined) {
          onAbort = () => {
            stop()
            controller.close()
          }
          if (signal.aborted) onAbort()
          else signal.addEventListener('abort', onAbort, { once: true })
        }
      },
      async pull(controller) {
        try {
          const frame = await reader.next()
          if (stopped) return
          if (frame === undefined) {
            stop()
            controller.enqueue(done)
            controller.close()
          } else controller.enqueue(encoder.encode(`id: ${frame.id}\ndata: ${JSON.stringify(frame.chunk)}\n\n`))
        } catch {
          if (stopped) return
          stop()
          // No id: the reader's resume point stays. No detail: it may be a server internal.
          controller.enqueue(
            encoder.encode(`data: ${JSON.stringify({ type: 'error', errorText: 'An error occurred.' })}\n\n`),
          )
          controller.enqueue(done)
          controller.close()
        }
      },
      cancel() {
        stop()
      },
    },
    new CountQueuingStrategy({ highWaterMark: 16 }),
  )
}

function streamHeaders(options: UIMessageResponseSettings): Headers {
  const headers = new Headers(options.headers)
  headers.set('content-type', 'text/event-stream')
  headers.set('cache-control', 'no-cache')
  headers.set('x-vercel-ai-ui-message-stream', 'v1')
  // Asks nginx-style proxies not to hold the stream back.
  headers.set('x-accel-buffering', 'no')
  return headers
}

/**
 * A turn as the AI SDK UI message stream (protocol v1) in a web `Response`: what an unchanged
 * `useChat` front end reads, from any server that takes a `Response` (Next.js, Hono, Bun, Deno;
 * node:http through `writeResponse`). Each chunk is an SSE frame `id: <id>` / `data: <chunk JSON>`,
 * and the stream ends with `data: [DONE]`.
 *
 * For a run: its turn, from start to finish. For an agent (or `{ session, ctx }`): the frames after
 * `lastEventId` (the `Last-Event-ID` header) to the end of its turn, each exactly once; without it
 * the running turn from its start, which is what `useChat({ resume: true })` asks for with
 * `GET {api}/{chatId}/stream`, or `204 No Content` when no turn runs. A `lastEventId` that is not a
 * frame id of this session answers 400 with `{ error: { code, message, value } }`.
 *
 * The body reads the session log as the client takes frames; a disconnect never cancels the turn.
 *
 * @param source - a run from `agent.stream()`, or the agent (or `{ session, ctx: harness.ctx }`)
 * @param options - message ids, reasoning, tool parts, error text, heartbeat, lag bound, headers;
 *   for a session `lastEventId`
 * @returns the response
 * @throws `InvalidArgumentError` for a bad source or option
 * @example
 * ```ts
 * // Next.js app/api/chat/route.ts
 * export async function POST(request: Request) {
 *   const { id, input } = parseChatRequest(await request.json())
 *   const agent = await harness.openAgent(id)
 *   return uiMessageStreamResponse(agent.stream(input))
 * }
 * ```
 */
export function uiMessageStreamResponse(source: AgentRun, options?: UIMessageStreamResponseOptions): Response
export function uiMessageStreamResponse(source: SessionOwner, options?: UIMessageSessionResponseOptions): Response
export function uiMessageStreamResponse(
  source: UIMessageStreamSource,
  options: UIMessageSessionResponseOptions = {},
): Response {
  const limits = checkSettings(options)
  let reader: UIFrameReader | undefined
  try {
    reader = openFrames(source, options)
  } catch (error) {
    if (!LastEventIdError.is(error)) throw error
    return Response.json(
      { error: { code: error.code, message: error.message, value: error.value } },
      { status: 400, headers: { 'cache-control': 'no-cache' } },
    )
  }
  if (reader === undefined) return new Response(null, { status: 204, headers: { 'cache-control': 'no-cache' } })
  return new Response(body(reader, options, limits), { status: 200, headers: streamHeaders(options) })
}
