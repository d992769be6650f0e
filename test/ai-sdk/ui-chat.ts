/**
 * A real `useChat` back end and front end for the UI message stream tests: a node:http loopback
 * server with the route a Next.js or Hono app would have (POST /api/chat, GET /api/chat/:id/stream,
 * GET /api/chat/:id/messages), and the AI SDK's own client, `AbstractChat` (what `useChat` wraps)
 * over `DefaultChatTransport`, with a plain in-memory state.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, DefaultChatTransport, type UIMessage } from 'ai'
import { type Harness, InvalidArgumentError, writeResponse } from 'yoke'
import {
  parseChatRequest,
  toUIMessages,
  type UIMessageStreamOptions,
  uiMessageStreamResponse,
} from '../../src/ai-sdk/index.js'
import { listenOnLoopback } from '../helpers/loopback.js'

/** A running chat server. */
export interface ChatServer {
  /** `http://127.0.0.1:<port>/api/chat`. */
  readonly api: string
  /** The requests served, `METHOD path`, in order. */
  readonly requests: string[]
  /** Stops listening and drops every connection. */
  close(): Promise<void>
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of request) text += String(chunk)
  return text
}

/**
 * Serves a harness's agents to `useChat`.
 *
 * @param harness - the harness whose agents the chats are (chat id = agent id)
 * @param options - the stream options every route uses
 * @returns the server
 */
export async function startChatServer(harness: Harness, options: UIMessageStreamOptions = {}): Promise<ChatServer> {
  const requests: string[] = []
  const server: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://localhost')
      requests.push(`${request.method} ${url.pathname}`)
      if (request.method === 'POST' && url.pathname === '/api/chat') {
        let parsed: ReturnType<typeof parseChatRequest>
        try {
          parsed = parseChatRequest(JSON.parse(await bodyOf(request)))
        } catch (error) {
          if (!InvalidArgumentError.is(error) && !(error instanceof SyntaxError)) throw error
          const answer = InvalidArgumentError.is(error)
            ? { code: error.code, argument: error.argument, message: error.message }
            : { code: 'INVALID_JSON', message: error.message }
          await writeResponse(Response.json({ error: answer }, { status: 400 }), response)
          return
        }
        const agent = await harness.openAgent(parsed.id)
        await writeResponse(
          uiMessageStreamResponse(agent.stream(parsed.input), { heartbeatMs: 0, ...options }),
          response,
        )
        return
      }
      const match = /^\/api\/chat\/([^/]+)\/(stream|messages)$/.exec(url.pathname)
      if (request.method === 'GET' && match !== null) {
        const agent = await harness.openAgent(decodeURIComponent(match[1] ?? ''))
        if (match[2] === 'messages') {
          await writeResponse(Response.json(toUIMessages(agent, options)), response)
          return
        }
        const lastEventId = request.headers['last-event-id']
        await writeResponse(
          uiMessageStreamResponse(agent, {
            heartbeatMs: 0,
            ...options,
            lastEventId: typeof lastEventId === 'string' ? lastEventId : null,
          }),
          response,
        )
        return
      }
      response.writeHead(404).end()
    })().catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)))
    })
  })
  const loopback = await listenOnLoopback(server)
  return { api: `${loopback.origin}/api/chat`, requests, close: loopback.close }
}

class MemoryChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready'
  error: Error | undefined = undefined
  messages: UIMessage[]

  constructor(messages: UIMessage[] = []) {
    this.messages = messages
  }

  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message]
  }

  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1)
  }

  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)]
  }

  snapshot = <T>(thing: T): T => structuredClone(thing)
}

/** The AI SDK's chat (what `useChat` wraps) with an in-memory state, as a test client. */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, 'state'> & { readonly initialMessages?: UIMessage[] }) {
    const { initialMessages, ...rest } = init
    super({ ...rest, state: new MemoryChatState(initialMessages) })
  }
}

/**
 * A chat against `api` whose fetch can drop the connection of the next response after `dropAfter`
 * bytes, as a network failure (the client sees a `TypeError`, the server a closed socket).
 *
 * @param id - the chat id
 * @param api - the server's `/api/chat` URL
 * @param initialMessages - the messages to start with
 * @returns the chat and a function that arms the drop
 */
export function droppingChat(
  id: string,
  api: string,
  initialMessages: UIMessage[] = [],
): { readonly chat: TestChat; readonly dropWhen: (condition: (text: string) => boolean) => void } {
  let dropCondition: ((text: string) => boolean) | undefined
  const fetchWithDrop: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    const condition = dropCondition
    dropCondition = undefined
    if (condition === undefined || response.body === null) return response
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let seen = ''
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await reader.read()
        if (next.done) {
          controller.close()
          return
        }
        seen += decoder.decode(next.value, { stream: true })
        controller.enqueue(next.value)
        if (condition(seen)) {
          await reader.cancel()
          controller.error(new TypeError('fetch failed: network connection lost'))
        }
      },
      cancel: (reason) => reader.cancel(reason),
    })
    return new Response(body, { status: response.status, headers: response.headers })
  }
  const chat = new TestChat({ id, transport: new DefaultChatTransport({ api, fetch: fetchWithDrop }), initialMessages })
  return {
    chat,
    dropWhen: (condition) => {
      dropCondition = condition
    },
  }
}
