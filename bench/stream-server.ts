/**
 * The loopback OpenAI-compatible server of the streaming bench, run in its own process so its CPU
 * is not counted: every POST is answered with the same Chat Completions SSE stream of `DELTAS`
 * text deltas (then a `stop` finish, usage and `[DONE]`), one `write` per event. Prints
 * its port on stdout once listening; exits when its parent closes stdin.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const DELTAS = Number(process.argv[2] ?? 1_000)
/** Events per `write`: one, as a server flushing each token as it comes does. */
const EVENTS_PER_WRITE = 1

function event(payload: object): string {
  return `data: ${JSON.stringify(payload)}\n\n`
}

function streamBody(): Buffer[] {
  const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench-model' }
  const events = [
    event({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
  ]
  for (let index = 0; index < DELTAS; index++) {
    events.push(event({ ...base, choices: [{ index: 0, delta: { content: ` token${index}` }, finish_reason: null }] }))
  }
  events.push(event({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }))
  events.push(
    event({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: DELTAS, total_tokens: DELTAS + 12 } }),
  )
  events.push('data: [DONE]\n\n')
  const pieces: Buffer[] = []
  for (let at = 0; at < events.length; at += EVENTS_PER_WRITE)
    pieces.push(Buffer.from(events.slice(at, at + EVENTS_PER_WRITE).join('')))
  return pieces
}

const pieces = streamBody()
const server = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    for (const piece of pieces) response.write(piece)
    response.end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`)
})
process.stdin.resume()
process.stdin.on('end', () => server.close(() => process.exit(0)))
