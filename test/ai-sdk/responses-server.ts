/**
 * A small loopback server speaking the OpenAI Responses API's streaming wire format: each
 * `POST /v1/responses` is answered with the next scripted list of events as server-sent events
 * (`event: <type>` and `data: <json>`, numbered with `sequence_number`), and its JSON body is
 * recorded. Enough for `@ai-sdk/openai`'s Responses model to run real turns against.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One Responses API stream event, without its `sequence_number`. */
export type ResponsesEvent = Readonly<Record<string, unknown>> & { readonly type: string }

/** A running server. */
export interface ResponsesServer {
  /** The base URL to give the provider, ending in `/v1`. */
  readonly baseURL: string
  /** The JSON bodies of the requests so far, in order. */
  readonly bodies: readonly Record<string, unknown>[]
  /** Stops the server. */
  close(): Promise<void>
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function fail(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: null, param: null } }))
}

/**
 * Starts the server on 127.0.0.1 with a script of answers, one per request.
 *
 * @param script - the event lists, in request order
 * @returns the running server
 */
export async function startResponsesServer(script: readonly (readonly ResponsesEvent[])[]): Promise<ResponsesServer> {
  const queue = [...script]
  const bodies: Record<string, unknown>[] = []
  const server = createServer((request, response) => {
    void (async () => {
      if (request.method !== 'POST' || request.url !== '/v1/responses') {
        fail(response, 404, `no route ${request.method} ${request.url}`)
        return
      }
      bodies.push(JSON.parse(await readBody(request)) as Record<string, unknown>)
      const events = queue.shift()
      if (events === undefined) {
        fail(response, 500, 'the script is exhausted')
        return
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      events.forEach((event, sequence) => {
        response.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`)
      })
      response.end()
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    bodies,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error === undefined ? resolve() : reject(error)))
      }),
  }
}

/** `response.created` for a response id and model. */
export function created(id: string, model: string): ResponsesEvent {
  return {
    type: 'response.created',
    response: { id, object: 'response', created_at: 1_767_323_045, model, status: 'in_progress' },
  }
}

/** `response.completed` with usage. */
export function completed(usage: { input: number; cached: number; output: number; reasoning: number }): ResponsesEvent {
  return {
    type: 'response.completed',
    response: {
      status: 'completed',
      incomplete_details: null,
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: usage.reasoning },
        total_tokens: usage.input + usage.output,
      },
    },
  }
}
