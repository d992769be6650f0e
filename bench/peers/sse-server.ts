/**
 * The loopback OpenAI-compatible server of the streaming figure, in its own process (so its CPU is
 * not the client's): every `POST …/chat/completions` gets one streamed text answer of `deltas`
 * deltas, then a finish chunk with usage and `[DONE]`. The body is built once. Listens on
 * 127.0.0.1 at a free port and sends the base URL to the parent over IPC; ends when the parent
 * disconnects.
 */
import { createServer } from 'node:http'
import { sseBody } from './sse-server-body.js'

const body = sseBody(Number(process.argv[2] ?? '1000'))

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
