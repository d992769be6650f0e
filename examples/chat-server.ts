/**
 * A backend developer's first day: a per-user chat service on `node:http`, one JSONL session per
 * user, with two tools, a step limit, an SSE endpoint a client can resume after a disconnect,
 * structured extraction, and a restart that drops what a dead process left queued.
 *
 * Routes (the user id is the session id, so `alice@example.com` or `tenant:bob` work as they are):
 *
 * - `POST /chat/<user>`, the prompt as the body: the turn as Server-Sent Events;
 * - `GET /chat/<user>` with a `Last-Event-ID` header: a reconnect, read on from the log to the end
 *   of that turn (every event exactly once, even if the turn ended meanwhile);
 * - `POST /extract/<user>`, the text as the body: `{ item, quantity }` as JSON, or 422 naming the
 *   path the model got wrong;
 * - anything malformed is a 400 JSON `{ error: { code, message } }`.
 *
 * Options: `--dir <directory>` (default `./sessions`); `--demo`: listen on 127.0.0.1, port 0, act
 * as its own client (a chat turn, a disconnect mid-answer, a reconnect with `Last-Event-ID`, two
 * extractions, bad input), print what it saw and exit. Without `--demo` it listens on `PORT`
 * (default 8787) until SIGINT or SIGTERM.
 *
 * The model is the scripted one (no network) unless `DEEPSEEK_API_KEY` is set; then it is the
 * DeepSeek adapter, honouring `DEEPSEEK_BASE_URL` and `DEEPSEEK_MODEL`, as in `examples/main.ts`.
 *
 * Run: `npm run example -- chat-server --demo`, or without `--demo` and then
 * `curl -N -d 'Which orders are open?' http://127.0.0.1:8787/chat/alice@example.com`
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { EventSourceParserStream } from 'eventsource-parser/stream'
import { z } from 'zod'
import {
  type Agent,
  type AgentStreamEvent,
  createHarness,
  deepseek,
  defineTool,
  HarnessError,
  isSessionId,
  type ModelAdapter,
  type ModelRequest,
  type ModelRoute,
  OutputValidationError,
  sseResponse,
  toolResult,
  writeResponse,
} from 'yoke'
import { type ScriptedReply, scriptedModel } from 'yoke/testing'

// ---------------------------------------------------------------------------------------------
// The tools: plain JSON out, and a `toolResult` where the model should see an error as one.

interface Order {
  readonly id: string
  readonly item: string
  readonly quantity: number
  readonly status: 'open' | 'shipped'
}

/** Each user's orders; the tools find the user through the session they run in. */
const ordersByUser: Readonly<Record<string, readonly Order[]>> = {
  'alice@example.com': [
    { id: 'A-1001', item: 'umbrella', quantity: 3, status: 'open' },
    { id: 'A-1002', item: 'boots', quantity: 1, status: 'shipped' },
    { id: 'A-1003', item: 'raincoat', quantity: 1, status: 'open' },
  ],
}

const listOrders = defineTool({
  name: 'list_orders',
  description: "Lists the user's orders, optionally only those with a status.",
  input: z.object({ status: z.enum(['open', 'shipped', 'any']).default('any') }),
  isConcurrencySafe: () => true,
  // Any JSON value is a result: the model sees `{"rows":[…]}` as text.
  execute: ({ status }, { session }) => ({
    rows: (ordersByUser[session.id] ?? []).filter((order) => status === 'any' || order.status === status),
  }),
})

const trackOrder = defineTool({
  name: 'track_order',
  description: 'Where one order of the user is.',
  input: z.object({ orderId: z.string().min(1) }),
  isConcurrencySafe: () => true,
  execute: ({ orderId }, { session }) => {
    const order = (ordersByUser[session.id] ?? []).find((candidate) => candidate.id === orderId)
    // An unknown id is the model's mistake to fix, not a crash: `isError` tells it so.
    if (order === undefined) return toolResult({ content: `no order ${orderId} for this user`, isError: true })
    return order.status === 'shipped'
      ? { orderId, status: 'shipped', carrier: 'DHL', eta: 'tomorrow' }
      : { orderId, status: 'open', carrier: null, eta: null }
  },
})

/** What `/extract` asks for; `result.output` is typed from it. */
const OrderRequest = z.object({ item: z.string().min(1), quantity: z.number().int().positive() })

// ---------------------------------------------------------------------------------------------
// The model.

const answer =
  'You have 2 open orders: A-1001 (3 umbrellas) and A-1003 (1 raincoat). ' +
  'I found no order A-1042 on your account; could you check the number?'

/** The text of the last message the user wrote (not a tool result, not a repair note). */
function lastPrompt(request: ModelRequest): string {
  // Newest first: in a repair step the last user-role message is the loop's note, not the user.
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index]
    if (message?.role !== 'user' || message.source.kind !== 'user') continue
    return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  }
  return ''
}

/**
 * A stand-in model that answers by the shape of the request, so one script serves any number of
 * users and turns: JSON when the request asks for it, a text answer after tool results, and the
 * two tool calls otherwise. Call ids are unique per request, so a session's turns stay valid.
 */
function respond(request: ModelRequest): ScriptedReply {
  if (request.responseFormat !== undefined) {
    // "3 umbrellas" → { item, quantity }; without a number the answer misses `quantity` and fails.
    const match = /(\d+)\s+([a-z]+)/i.exec(lastPrompt(request))
    const output = match === null ? { item: 'something' } : { item: match[2], quantity: Number(match[1]) }
    return { text: JSON.stringify(output) }
  }
  const last = request.messages.at(-1)
  if (last?.role === 'user' && last.source.kind === 'tool') {
    // Small chunks with a pause between them: the answer takes long enough to disconnect in.
    return { text: answer, chunkSize: 6, chunkDelayMs: 15, usage: { inputTokens: 120, outputTokens: 32 } }
  }
  const position = request.messages.length
  return {
    toolCalls: [
      { id: `orders_${position}`, name: 'list_orders', arguments: { status: 'open' } },
      { id: `track_${position}`, name: 'track_order', arguments: { orderId: 'A-1042' } },
    ],
    usage: { inputTokens: 80, outputTokens: 24 },
  }
}

/** The scripted model, or DeepSeek when `DEEPSEEK_API_KEY` is set; and its name. */
function modelFromEnvironment(): { readonly model: ModelAdapter | ModelRoute; readonly describe: string } {
  const apiKey = process.env['DEEPSEEK_API_KEY']
  if (apiKey === undefined || apiKey === '') {
    // A script is a list with one entry per request; a server needs as many as it will get.
    const script = Array.from({ length: 100_000 }, () => respond)
    return { model: scriptedModel(script), describe: 'scripted (no network; set DEEPSEEK_API_KEY to use DeepSeek)' }
  }
  const baseURL = process.env['DEEPSEEK_BASE_URL']
  const adapter = deepseek({ apiKey, ...(baseURL === undefined || baseURL === '' ? {} : { baseURL }) })
  const name = process.env['DEEPSEEK_MODEL']
  const model = name === undefined || name === '' ? 'deepseek-v4-flash' : name
  return { model: { adapter, model }, describe: `DeepSeek ${model}` }
}

// ---------------------------------------------------------------------------------------------
// The server.

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name)
  return index === -1 ? undefined : process.argv[index + 1]
}

const dir = argument('--dir') ?? 'sessions'
const demo = process.argv.includes('--demo')
const { model, describe } = modelFromEnvironment()
const harness = await createHarness({
  model,
  persistence: { dir },
  tools: [listOrders, trackOrder],
  instructions: 'You are the support assistant of a small shop. Use the tools; never guess an order.',
  // A model that keeps calling tools stops here; the last step must answer in text.
  maxSteps: 6,
})
// Ends every open SSE response at shutdown, so closing the server does not wait for them.
const shutdown = new AbortController()

/** A 4xx/5xx JSON answer: `{ error: { code, message, … } }`. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message)
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' })
  response.end(JSON.stringify(body))
}

const maxBodyBytes = 64 * 1024

/** The body as text, refused past `maxBodyBytes` so a client cannot make us buffer without bound. */
async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))
    size += buffer.length
    if (size > maxBodyBytes) throw new HttpError(413, 'BODY_TOO_LARGE', `the body exceeds ${maxBodyBytes} bytes`)
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

async function readPrompt(request: IncomingMessage): Promise<string> {
  const text = (await readBody(request)).trim()
  if (text === '') throw new HttpError(400, 'EMPTY_PROMPT', 'the body must be the prompt text')
  return text
}

function userOf(segment: string): string {
  let user: string
  try {
    user = decodeURIComponent(segment)
  } catch {
    throw new HttpError(400, 'INVALID_USER', `"${segment}" is not URL-encoded text`)
  }
  if (!isSessionId(user)) {
    throw new HttpError(400, 'INVALID_USER', `"${user}" is not a user id (1–128 of A-Z a-z 0-9 _ . @ : + -)`, { user })
  }
  return user
}

/**
 * The user's agent: live, else resumed from its log, else new. `'discard'` drops the prompts a
 * crashed process left queued: their clients are long gone, and the next request must not wait
 * behind them. The same options on every call, so a live agent is always returned as it is.
 */
function agentOf(user: string): Promise<Agent> {
  return harness.openAgent(user, { queued: 'discard' })
}

async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { pathname } = new URL(request.url ?? '/', 'http://localhost')
  const match = /^\/(chat|extract)\/([^/]+)$/.exec(pathname)
  const [, kind, segment] = match ?? []
  if (kind === undefined || segment === undefined) throw new HttpError(404, 'NOT_FOUND', `no route ${pathname}`)
  const user = userOf(segment)
  const signal = shutdown.signal
  if (kind === 'chat' && request.method === 'POST') {
    const prompt = await readPrompt(request)
    const agent = await agentOf(user)
    // The client may go away mid-turn: the turn goes on, and the client reconnects with GET.
    await writeResponse(sseResponse(agent.stream(prompt), { signal }), response)
  } else if (kind === 'chat' && request.method === 'GET') {
    const lastEventId = request.headers['last-event-id']
    if (typeof lastEventId !== 'string') {
      throw new HttpError(400, 'MISSING_LAST_EVENT_ID', 'a reconnect needs the Last-Event-ID header')
    }
    const agent = await agentOf(user)
    // Stored events first, then live ones, up to the turn's end; a bad id is answered 400 by sseResponse.
    await writeResponse(sseResponse(agent, { lastEventId, until: 'turn-end', signal }), response)
  } else if (kind === 'extract' && request.method === 'POST') {
    const text = await readPrompt(request)
    const agent = await agentOf(user)
    try {
      const result = await agent.run(text, { output: OrderRequest })
      sendJson(response, 200, result.output)
    } catch (error) {
      if (!OutputValidationError.is(error)) throw error
      throw new HttpError(422, error.code, error.message, { path: error.path, text: error.text })
    }
  } else {
    throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on /${kind}/…`)
  }
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  try {
    await route(request, response)
  } catch (error) {
    // Once the SSE headers are out, the only way left to report is to close the connection.
    if (response.headersSent) return void response.destroy()
    if (error instanceof HttpError) {
      sendJson(response, error.status, { error: { code: error.code, message: error.message, ...error.extra } })
    } else if (HarnessError.is(error)) {
      sendJson(response, 500, { error: { code: error.code, message: error.message } })
    } else {
      console.error(error)
      sendJson(response, 500, { error: { code: 'INTERNAL', message: 'internal error' } })
    }
  }
}

const server: Server = createServer((request, response) => void handle(request, response))

/**
 * A graceful shutdown: stop taking connections, let the turns in flight finish for up to
 * `drainMs` (their streams still reach the clients), then end the rest, flush every session to
 * disk and release its lease, so another replica can take the sessions over at once.
 */
async function close(drainMs = 0): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  await harness.close({ drainMs })
  shutdown.abort()
  server.closeAllConnections()
  await closed
}

// ---------------------------------------------------------------------------------------------
// The demo: this process as its own client.

/** The SSE events of a response, parsed back into the events the server sent. */
async function* sseEvents(response: Response): AsyncGenerator<AgentStreamEvent> {
  if (response.body === null) return
  const messages = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())
  for await (const message of messages) {
    if (message.event === 'error') throw new Error(`the stream failed: ${message.data}`)
    // `data` is the whole event as JSON, exactly as it is in the log.
    const event: AgentStreamEvent = JSON.parse(message.data)
    yield event
  }
}

/** The shape of this server's error answers, checked rather than assumed. */
const ErrorBody = z.object({ error: z.object({ code: z.string(), path: z.string().optional() }) })

async function errorOf(response: Response): Promise<string> {
  const body = ErrorBody.parse(await response.json())
  return `${response.status} ${body.error.code}${body.error.path === undefined ? '' : ` at ${body.error.path}`}`
}

async function runDemo(base: string): Promise<boolean> {
  const user = 'alice@example.com'
  const chat = `${base}/chat/${encodeURIComponent(user)}`

  // 1. A chat turn, dropped by the client at the first piece of the answer.
  const hangUp = new AbortController()
  const first = await fetch(chat, {
    method: 'POST',
    body: 'Which of my orders are open, and where is A-1042?',
    signal: hangUp.signal,
  })
  const seqs: number[] = []
  let turn = 0
  let text = ''
  let ended = false
  for await (const event of sseEvents(first)) {
    seqs.push(event.seq)
    if (event.type === 'turn/start') turn = event.data.turn
    else if (event.type === 'tool/call') console.log(`  → ${event.data.name} ${event.data.arguments}`)
    else if (event.type === 'turn/end') ended = true
    else if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') {
      text += event.data.chunk.text
      break
    }
  }
  hangUp.abort()
  const lastEventId = seqs.at(-1) ?? 0
  console.log(
    ended
      ? `POST /chat/${user}: turn ${turn} ended before the client hung up (${seqs.length} events)`
      : `POST /chat/${user}: turn ${turn}, ${seqs.length} events, disconnected mid-answer after seq ${lastEventId}`,
  )

  // 2. The reconnect: what was committed while away comes from the log, then the live rest.
  const second = await fetch(chat, { headers: { 'last-event-id': String(lastEventId) } })
  let more = 0
  let reason = ''
  for await (const event of sseEvents(second)) {
    seqs.push(event.seq)
    more++
    if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') text += event.data.chunk.text
    else if (event.type === 'turn/end') reason = event.data.reason.kind
  }
  console.log(`GET /chat/${user} (Last-Event-ID: ${lastEventId}): ${more} more events, turn ${turn} ${reason}`)
  console.log(`answer: ${text}`)

  // 3. The joined seqs against the log (read without appending anything): from the turn's
  //    `turn/start`, the first seq served, to the `turn/end` after it.
  const { events } = await harness.readSession(user)
  const startSeq = seqs[0] ?? -1
  const end = events.find((event) => event.type === 'turn/end' && event.seq > startSeq)
  const logged = events.filter((event) => end !== undefined && event.seq >= startSeq && event.seq <= end.seq)
  const same =
    logged[0]?.type === 'turn/start' &&
    logged.length === seqs.length &&
    logged.every((event, index) => event.seq === seqs[index])
  console.log(
    same
      ? `joined seqs ${startSeq}–${seqs.at(-1)} equal the log's turn ${turn}: ${seqs.length} events, no gap, no duplicate`
      : `joined seqs [${seqs.join(',')}] differ from the log's turn ${turn} [${logged.map((event) => event.seq).join(',')}]`,
  )

  // 4. Structured output: typed JSON, then an answer the schema refuses.
  const extract = `${base}/extract/${encodeURIComponent(user)}`
  const good = await fetch(extract, { method: 'POST', body: 'Please send me 3 umbrellas.' })
  const output = OrderRequest.parse(await good.json())
  console.log(`POST /extract/${user}: ${good.status} item=${output.item} quantity=${output.quantity}`)
  const bad = await fetch(extract, { method: 'POST', body: 'Send me something nice.' })
  console.log(`POST /extract/${user} (no quantity in it): ${await errorOf(bad)}`)

  // 5. Bad input: each a 400 with a code, and the log untouched.
  const empty = await fetch(chat, { method: 'POST', body: '' })
  console.log(`POST /chat/${user} (empty body): ${await errorOf(empty)}`)
  const badId = await fetch(chat, { headers: { 'last-event-id': 'abc' } })
  console.log(`GET /chat/${user} (Last-Event-ID: abc): ${await errorOf(badId)}`)
  const badUser = await fetch(`${base}/chat/${encodeURIComponent('no spaces please')}`, { method: 'POST', body: 'hi' })
  console.log(`POST /chat/no spaces please: ${await errorOf(badUser)}`)
  return same && reason === 'completed' && good.status === 200 && bad.status === 422
}

/** Starts listening on 127.0.0.1; resolves with the port (the one the system chose for port 0). */
async function listen(port: number): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const address = server.address()
  return typeof address === 'object' && address !== null ? address.port : port
}

if (demo) {
  const port = await listen(0)
  console.log(`chat server on http://127.0.0.1:${port} · model: ${describe}`)
  let passed = false
  try {
    passed = await runDemo(`http://127.0.0.1:${port}`)
  } finally {
    await close()
  }
  // The id has no ':', so its file name is the id itself.
  console.log(`closed · log ${join(dir, 'alice@example.com.jsonl')}`)
  if (!passed) process.exitCode = 1
} else {
  const port = Number(process.env['PORT'] ?? 8787)
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535) {
    console.error(`PORT must be a port number, not ${JSON.stringify(process.env['PORT'])}`)
    await harness.close()
    process.exit(2)
  }
  console.log(`chat server on http://127.0.0.1:${await listen(port)} · sessions in ${dir} · model: ${describe}`)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.log(`${signal}: closing (turns in flight get 10 s to finish)`)
      close(10_000).then(
        () => console.log('closed'),
        (error: unknown) => {
          console.error(error)
          process.exitCode = 1
        },
      )
    })
  }
}
