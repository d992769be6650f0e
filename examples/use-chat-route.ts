/**
 * A `useChat` back end: the routes an AI SDK front end (`useChat` from `@ai-sdk/react`, Vue,
 * Svelte, …) talks to, written once as a web-standard `fetch(request)` handler, so the same code
 * serves Next.js route handlers, Hono and Bun, and here node:http through `writeResponse`.
 *
 * - `POST /api/chat`: the body `useChat` posts; the turn streams back as the AI SDK UI message stream.
 * - `GET /api/chat/<id>/stream`: `useChat({ resume: true })` after a reload: the running turn from
 *   its start, or 204 when none runs (a `Last-Event-ID` header resumes after that frame instead).
 * - `GET /api/chat/<id>`: the history from the session log, for the page's first render.
 *
 * Then it plays the front end with the AI SDK's own chat client (`AbstractChat`, what `useChat`
 * wraps, over `DefaultChatTransport`), prints the assistant message it rendered and exits. With
 * `--serve` it keeps listening on `PORT` (default 8787) instead.
 *
 * The model is the scripted one (no network) unless `DEEPSEEK_API_KEY` is set; then it is DeepSeek.
 *
 * Run: `npm run example -- use-chat-route`
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AbstractChat, type ChatState, type ChatStatus, DefaultChatTransport, type UIMessage } from 'ai'
import { z } from 'zod'
import {
  createHarness,
  deepseek,
  defineTool,
  type Harness,
  InvalidArgumentError,
  type ModelAdapter,
  writeResponse,
} from 'yoke'
import { parseChatRequest, toUIMessages, uiMessageStreamResponse } from 'yoke/ai-sdk'
import { scriptedModel } from 'yoke/testing'

const weather = defineTool({
  name: 'weather',
  description: 'The current weather in a city.',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => `18 °C and sunny in ${city}`,
})

function chooseModel(): { model: ModelAdapter; describe: string } {
  const apiKey = process.env['DEEPSEEK_API_KEY']
  if (apiKey !== undefined && apiKey !== '') return { model: deepseek({ apiKey }), describe: 'DeepSeek' }
  const model = scriptedModel([
    {
      reasoning: 'The user asks for the weather; I will look it up.',
      text: 'Let me check.',
      toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }],
      chunkSize: 6,
    },
    { text: 'It is 18 °C and sunny in Paris.', chunkSize: 6 },
  ])
  return { model, describe: 'scripted (no network; set DEEPSEEK_API_KEY to use DeepSeek)' }
}

// ---------------------------------------------------------------------------------------------
// The back end: one web-standard handler. In Next.js, `export const POST = handler` in
// app/api/chat/route.ts (and GET in app/api/chat/[id]/stream/route.ts); in Hono,
// `app.all('/api/chat/*', (c) => handler(c.req.raw))`.

function chatHandler(harness: Harness): (request: Request) => Promise<Response> {
  return async (request) => {
    const { pathname } = new URL(request.url)
    if (request.method === 'POST' && pathname === '/api/chat') {
      let chat: ReturnType<typeof parseChatRequest>
      try {
        chat = parseChatRequest(await request.json())
      } catch (error) {
        if (!InvalidArgumentError.is(error) && !(error instanceof SyntaxError)) throw error
        return Response.json({ error: { code: 'BAD_REQUEST', message: error.message } }, { status: 400 })
      }
      // The session log holds the history: only the new message is sent to the agent.
      const agent = await harness.openAgent(chat.id)
      return uiMessageStreamResponse(agent.stream(chat.input))
    }
    const match = /^\/api\/chat\/([\w-]+)(\/stream)?$/.exec(pathname)
    if (request.method === 'GET' && match?.[1] !== undefined) {
      const agent = await harness.openAgent(match[1])
      if (match[2] === undefined) return Response.json(toUIMessages(agent))
      // No Last-Event-ID (useChat's resume): the running turn from its start, or 204.
      return uiMessageStreamResponse(agent, { lastEventId: request.headers.get('last-event-id') })
    }
    return Response.json({ error: { code: 'NOT_FOUND', message: `${request.method} ${pathname}` } }, { status: 404 })
  }
}

/** node:http glue: the request as a web `Request`, the `Response` back through `writeResponse`. */
async function toRequest(request: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value)
  const body = request.method === 'GET' || request.method === 'HEAD' ? null : Buffer.concat(chunks)
  return new Request(new URL(request.url ?? '/', origin), { method: request.method ?? 'GET', headers, body })
}

// ---------------------------------------------------------------------------------------------
// The front end: the AI SDK's chat with the state a framework binding would keep.

class ChatInMemory implements ChatState<UIMessage> {
  status: ChatStatus = 'ready'
  error: Error | undefined = undefined
  messages: UIMessage[] = []
  pushMessage = (message: UIMessage): void => void this.messages.push(message)
  popMessage = (): void => void this.messages.pop()
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages[index] = message
  }
  snapshot = <T>(thing: T): T => structuredClone(thing)
}

class Chat extends AbstractChat<UIMessage> {}

function describePart(part: UIMessage['parts'][number]): string | undefined {
  if (part.type === 'text') return `  [text] ${part.text}`
  if (part.type === 'reasoning') return `  [reasoning] ${part.text}`
  if (part.type.startsWith('tool-') && 'toolCallId' in part) {
    const result = part.state === 'output-error' ? part.errorText : JSON.stringify(part.output)
    return `  [${part.type.replace('-', ' ')}] ${JSON.stringify(part.input)} → ${result}`
  }
  return undefined
}

const { model, describe } = chooseModel()
const harness = await createHarness({ model, tools: [weather] })
const handler = chatHandler(harness)
const server = createServer((request, response) => {
  const origin = `http://${request.headers.host ?? 'localhost'}`
  void toRequest(request, origin)
    .then(handler)
    .then((answer) => writeResponse(answer, response))
    .catch((error: unknown) => {
      console.error(error)
      if (!response.headersSent) response.writeHead(500).end()
    })
})
const serve = process.argv.includes('--serve')
await new Promise<void>((resolve) =>
  server.listen(serve ? Number(process.env['PORT'] ?? 8787) : 0, '127.0.0.1', resolve),
)
const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`
console.log(`useChat route on ${api} · model: ${describe}`)

if (!serve) {
  const chat = new Chat({ id: 'chat-demo', state: new ChatInMemory(), transport: new DefaultChatTransport({ api }) })
  const question = 'What is the weather in Paris?'
  console.log(`user: ${question}`)
  await chat.sendMessage({ text: question })
  const answer = chat.messages.at(-1)
  console.log(`assistant (${answer?.id}, ${chat.status}):`)
  for (const part of answer?.parts ?? []) {
    const line = describePart(part)
    if (line !== undefined) console.log(line)
  }
  const resume = await fetch(`${api}/chat-demo/stream`)
  console.log(`GET /api/chat/chat-demo/stream: ${resume.status} (no turn running)`)
  const history = (await (await fetch(`${api}/chat-demo`)).json()) as UIMessage[]
  const same =
    JSON.stringify(history.at(-1)?.parts.map(describePart)) === JSON.stringify(answer?.parts.map(describePart))
  console.log(`GET /api/chat/chat-demo: ${history.length} messages, the last one ${same ? 'as streamed' : 'DIFFERENT'}`)
  const bad = await fetch(api, { method: 'POST', body: JSON.stringify({ id: 'chat-demo', messages: [] }) })
  console.log(
    `POST /api/chat (no messages): ${bad.status} ${((await bad.json()) as { error: { message: string } }).error.message}`,
  )
  server.closeAllConnections()
  server.close()
  await harness.close()
}
