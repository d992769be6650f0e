import type { AgentRun, SessionOwner } from 'yoke'
import { LastEventIdError } from '../errors/last-event-id-error.js'
import { eventStreamHeaders } from '../stream/event-stream-headers.js'
import { checkFrameLimits, type FrameLimits, frameBody } from '../stream/frame-body.js'
import { lastEventIdResponse } from '../stream/last-event-id-response.js'
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
// No id: the reader's resume point stays. No detail: it may be a server internal.
const failed = encoder.encode(`data: ${JSON.stringify({ type: 'error', errorText: 'An error occurred.' })}\n\n`)

function body(
  reader: UIFrameReader,
  options: UIMessageResponseSettings,
  limits: FrameLimits,
): ReadableStream<Uint8Array> {
  return frameBody(
    {
      reader,
      encode: (frame) => encoder.encode(`id: ${frame.id}\ndata: ${JSON.stringify(frame.chunk)}\n\n`),
      encodeError: () => failed,
      end: done,
      signal: options.signal,
    },
    limits,
  )
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
  const limits = checkFrameLimits(options)
  let reader: UIFrameReader | undefined
  try {
    reader = openFrames(source, options)
  } catch (error) {
    if (!LastEventIdError.is(error)) throw error
    return lastEventIdResponse(error)
  }
  if (reader === undefined) return new Response(null, { status: 204, headers: { 'cache-control': 'no-cache' } })
  return new Response(body(reader, options, limits), {
    status: 200,
    headers: eventStreamHeaders(options.headers, {
      'content-type': 'text/event-stream',
      'x-vercel-ai-ui-message-stream': 'v1',
    }),
  })
}
