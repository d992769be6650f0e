/**
 * A stateless HTTP node of a scaled-out deployment: it holds no session and runs no model. It
 * writes each message to the durable inbox in PostgreSQL (a worker, `examples/worker.ts`, runs
 * it) and streams any session's events from the database, so a load balancer may send any request
 * to any node, a reconnect included.
 *
 * Routes (the session id is the path segment):
 *
 * - `POST /sessions/<id>/messages`, the message as the body: `202 { messageId, duplicate }` once it
 *   is durable. An `Idempotency-Key` header makes a retried POST the same message; `?busy=steer`
 *   steers a running turn, `?busy=reject` answers 409 while the session is busy.
 * - `GET /sessions/<id>/events`: the session's events as Server-Sent Events, stored then live;
 *   with `Last-Event-ID` (or `?from=<seq>`) it resumes right after that event, on any node;
 *   `?until=turn-end` ends the stream after the next `turn/end`.
 * - Errors are JSON `{ error: { code, message } }`: 400 bad input, 404 unknown session (a POST
 *   creates it), 409 busy, 413 too large.
 *
 * Environment: `DATABASE_URL` (required), `YOKE_SCHEMA` (default `agents`), `PORT` (default 8788;
 * `0` picks a free one). Prints `http node on http://127.0.0.1:<port>`; SIGTERM or SIGINT closes it.
 *
 * Run: `DATABASE_URL=postgresql://localhost/app npm run example -- http-node`, then
 * `curl -d 'Hello' http://127.0.0.1:8788/sessions/demo/messages` and
 * `curl -N 'http://127.0.0.1:8788/sessions/demo/events?until=turn-end'`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { HarnessError, sseResponse, writeResponse } from 'yoke'
import { type BusyPolicy, createPostgresClient, createPostgresTail } from 'yoke/postgres'

const connectionString = process.env['DATABASE_URL']
if (connectionString === undefined || connectionString === '') {
  console.error('Set DATABASE_URL to a PostgreSQL database, e.g. postgresql://localhost/app')
  process.exit(2)
}
const schema = process.env['YOKE_SCHEMA'] ?? 'agents'
const client = createPostgresClient({ connectionString, schema })
const tails = createPostgresTail({ connectionString, schema })

/** HTTP statuses of the typed errors a request can meet; anything else is a 500. */
const statusOf: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  INVALID_MESSAGE: 400,
  INVALID_SESSION_ID: 400,
  INVALID_LAST_EVENT_ID: 400,
  SESSION_NOT_FOUND: 404,
  SESSION_BUSY: 409,
  MESSAGE_TOO_LARGE: 413,
}

function sendError(response: ServerResponse, error: unknown): void {
  const known = HarnessError.is(error)
  const status = known ? (statusOf[error.code] ?? 500) : 500
  if (status === 500) console.error(error)
  const code = known ? error.code : 'INTERNAL'
  const message = known && status !== 500 ? error.message : 'internal error'
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ error: { code, message } }))
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

async function postMessage(request: IncomingMessage, response: ServerResponse, sessionId: string, url: URL) {
  const key = request.headers['idempotency-key']
  const busy = url.searchParams.get('busy') ?? 'queue'
  const receipt = await client.submit(sessionId, await readBody(request), {
    create: true,
    busy: busy as BusyPolicy, // checked by submit: anything else is an INVALID_ARGUMENT naming it
    ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
  })
  response.writeHead(202, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ messageId: receipt.messageId, duplicate: receipt.duplicate }))
}

function streamEvents(request: IncomingMessage, response: ServerResponse, sessionId: string, url: URL) {
  const header = request.headers['last-event-id']
  const from = url.searchParams.get('from')
  const controller = new AbortController()
  // A client that goes away ends its tail and gives its connection back.
  response.once('close', () => controller.abort())
  const tail = tails.tail(sessionId, {
    lastEventId: typeof header === 'string' ? header : null,
    ...(from === null ? {} : { fromSeq: Number(from) }),
    ...(url.searchParams.get('until') === 'turn-end' ? { until: 'turn-end' as const } : {}),
    // A session a worker has not created yet (its first message still queued) is waited for.
    waitForSession: true,
    signal: controller.signal,
  })
  return writeResponse(sseResponse(tail), response)
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://node')
  const match = /^\/sessions\/([^/]+)\/(messages|events)$/.exec(url.pathname)
  const sessionId = match === null ? undefined : decodeURIComponent(match[1]!)
  const route = `${request.method} ${match?.[2] ?? ''}`
  const handle = async () => {
    if (sessionId === undefined || (route !== 'POST messages' && route !== 'GET events')) {
      response.writeHead(404, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({ error: { code: 'NOT_FOUND', message: `no route ${request.method} ${url.pathname}` } }),
      )
      return
    }
    if (route === 'POST messages') await postMessage(request, response, sessionId, url)
    else await streamEvents(request, response, sessionId, url)
  }
  handle().catch((error: unknown) => {
    if (!response.headersSent) sendError(response, error)
    else response.destroy()
  })
})

const port = Number(process.env['PORT'] ?? 8788)
server.listen(port, '127.0.0.1', () => {
  const address = server.address()
  console.log(`http node on http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : port}`)
})
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.closeAllConnections()
    server.close()
    void Promise.all([client.close(), tails.close()]).then(() => process.exit(0))
  })
}
