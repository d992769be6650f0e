import type { ServerResponse } from 'node:http'

/**
 * Sends a web `Response` (such as {@link sseResponse} returns) through a node:http
 * `ServerResponse`: status, headers, then the body, waiting for `'drain'` whenever the socket is
 * full so the body is only read as fast as the client takes it. When the client goes away the body
 * is canceled; when the body fails the connection is destroyed (an SSE reader then reconnects).
 *
 * @param response - the response to send
 * @param target - the node:http response
 * @returns resolves once the body is sent, canceled or failed; never rejects
 * @example
 * ```ts
 * createServer((request, response) => {
 *   const lastEventId = request.headers['last-event-id']
 *   const sse = typeof lastEventId === 'string'
 *     ? sseResponse(agent, { lastEventId, until: 'turn-end' })
 *     : sseResponse(agent.stream('hi'))
 *   void writeResponse(sse, response)
 * }).listen(8080)
 * ```
 */
export async function writeResponse(response: Response, target: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  target.writeHead(response.status, headers)
  if (response.body === null) {
    target.end()
    return
  }
  const reader = response.body.getReader()
  let gone = false
  let wake: (() => void) | undefined
  const onClose = (): void => {
    gone = true
    wake?.()
    void reader.cancel().catch(() => {})
  }
  target.once('close', onClose)
  // A body that fails while the socket is full (a reader that stopped reading) must still drop the
  // connection: the loop below is then waiting for a 'drain' that will not come.
  reader.closed.catch(() => {
    if (!gone) target.destroy()
  })
  try {
    for (;;) {
      const chunk = await reader.read()
      if (gone) return
      if (chunk.done) break
      if (!target.write(chunk.value)) {
        await new Promise<void>((resolve) => {
          wake = resolve
          target.once('drain', resolve)
        })
        wake = undefined
        if (gone) return
      }
    }
    target.end()
  } catch {
    if (!gone) target.destroy()
  } finally {
    target.off('close', onClose)
  }
}
