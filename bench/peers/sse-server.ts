/**
 * The loopback OpenAI-compatible server of the streaming figure, in its own process (so its CPU is
 * not the client's): every `POST …/chat/completions` gets one streamed text answer of `deltas`
 * deltas, then a finish chunk with usage and `[DONE]`. The body is built once. Listens on
 * 127.0.0.1 at a free port and sends the base URL to the parent over IPC; ends when the parent
 * disconnects.
 */
import { createServer } from 'node:http'

const deltas = Number(process.argv[2] ?? '1000')
const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'fake' }
const events: string[] = [
  JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
]
for (let index = 0; index < deltas; index++)
  events.push(JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: 'tok ' }, finish_reason: null }] }))
events.push(
  JSON.stringify({
    ...base,
    choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: deltas, total_tokens: deltas + 5 },
  }),
)
const body = `${events.map((event) => `data: ${event}\n\n`).join('')}data: [DONE]\n\n`

const server = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    if (request.method !== 'POST' || request.url?.endsWith('/chat/completions') !== true) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    response.end(body)
  })
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  process.send?.({ url: `http://127.0.0.1:${address.port}/v1` })
})
process.on('disconnect', () => server.close())
