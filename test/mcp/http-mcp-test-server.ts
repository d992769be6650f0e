/**
 * A small real MCP server for the tests: the SDK's `McpServer` behind its
 * `StreamableHTTPServerTransport`, on a loopback `node:http` server. It records every JSON-RPC
 * message that reached it over the wire (so a test sees `notifications/cancelled` arrive), can
 * forget its sessions (a request carrying a forgotten session id gets 404, as the protocol says
 * for an expired session), records the sessions clients end with `DELETE`, and has tools that sleep until cancelled or flood progress.
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { z } from 'zod'

/** A JSON-RPC message as the server received it. */
export interface ReceivedMessage {
  readonly method?: string
  readonly id?: string | number
  readonly params?: Record<string, unknown>
}

/** The running server. */
export interface TestHttpMcpServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  /** Every JSON-RPC message POSTed to the endpoint, in order. */
  readonly received: ReceivedMessage[]
  /** The headers of every POST, in order. */
  readonly headers: IncomingMessage['headers'][]
  /** How many sessions were initialized so far. */
  sessionsStarted(): number
  /** How many 404 answers were sent for forgotten sessions. */
  expiredAnswers(): number
  /** The session ids that clients ended with `DELETE`, in order. */
  readonly ended: string[]
  /** Forgets every session: their next request gets 404. */
  forgetSessions(): Promise<void>
  /** Stops the server. */
  close(): Promise<void>
}

function mcpServerInstance(): McpServer {
  const server = new McpServer({ name: 'test-http', version: '1.0.0' })
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers',
      inputSchema: { a: z.number(), b: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  )
  server.registerTool(
    'sleep',
    { description: 'Waits until cancelled or `ms` passed', inputSchema: { ms: z.number() } },
    async ({ ms }, extra) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer)
          resolve()
        })
      })
      return { content: [{ type: 'text', text: extra.signal.aborted ? 'cancelled' : 'slept' }] }
    },
  )
  server.registerTool(
    'flood',
    { description: 'Sends `count` progress notifications, then answers', inputSchema: { count: z.number() } },
    async ({ count }, extra) => {
      const token = extra._meta?.progressToken
      if (token !== undefined)
        for (let step = 1; step <= count; step++)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: count, message: `step ${step}` },
          })
      return { content: [{ type: 'text', text: `flooded ${count}` }] }
    },
  )
  return server
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text.length === 0 ? undefined : (JSON.parse(text) as unknown)
}

/**
 * Starts the server on a free loopback port.
 *
 * @returns the running server
 */
export async function startTestHttpMcpServer(): Promise<TestHttpMcpServer> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>()
  const forgotten = new Set<string>()
  const received: ReceivedMessage[] = []
  const headers: IncomingMessage['headers'][] = []
  const ended: string[] = []
  let started = 0
  let expired = 0
  const http = createServer((request, response) => {
    void (async () => {
      const body = request.method === 'POST' ? await readBody(request) : undefined
      if (request.method === 'POST') {
        headers.push(request.headers)
        for (const message of Array.isArray(body) ? body : [body]) received.push(message as ReceivedMessage)
      }
      const sessionId = request.headers['mcp-session-id']
      if (typeof sessionId === 'string') {
        const session = sessions.get(sessionId)
        if (session === undefined) {
          if (forgotten.has(sessionId)) expired++
          response.writeHead(404, { 'content-type': 'application/json' })
          response.end(
            JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
          )
          return
        }
        if (request.method === 'DELETE') {
          ended.push(sessionId)
          sessions.delete(sessionId)
        }
        await session.transport.handleRequest(request, response, body)
        return
      }
      const server = mcpServerInstance()
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          started++
          sessions.set(id, { transport, server })
        },
      })
      await server.connect(transport)
      await transport.handleRequest(request, response, body)
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500)
      response.end(String(error))
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  const closeSessions = async () => {
    const open = [...sessions.entries()]
    sessions.clear()
    for (const [id, session] of open) {
      forgotten.add(id)
      await session.server.close().catch(() => undefined)
    }
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    headers,
    sessionsStarted: () => started,
    expiredAnswers: () => expired,
    ended,
    forgetSessions: closeSessions,
    async close() {
      await closeSessions()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
