/**
 * `yoke/mcp` with the slim 2.x client, `@modelcontextprotocol/client`, injected as
 * `mcpServer({ client })`: connected by the test over its own stdio transport to the real
 * server-everything, and over its own Streamable HTTP transport to the test's SDK server. Its
 * `callTool` takes the request options second, so these turns check that the signal and the
 * progress callback reach it (progress arrives, the abort reaches the server).
 *
 * @module
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createHarness, type SessionEvent, type ToolsProgressPayload } from 'yoke'
import { call, fakeIds, scriptedModel, text } from 'yoke/testing'
import { type McpClientLike, mcpPlugin, mcpServer } from '../../src/mcp/index.js'
import { startTestHttpMcpServer, type TestHttpMcpServer } from './http-mcp-test-server.js'
import { everythingBin, useHarnesses } from './fixtures.js'

const open = useHarnesses()

async function world(script: Parameters<typeof scriptedModel>[0], server: ReturnType<typeof mcpServer>) {
  const model = scriptedModel(script)
  const harness = await createHarness({ model, ids: fakeIds(), plugins: [mcpPlugin({ servers: [server] })] })
  open.push(harness)
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  return { model, harness, agent }
}

function lastResultText(request: { messages: readonly { content: readonly unknown[] }[] } | undefined): string {
  const blocks = (request?.messages ?? []).flatMap(
    (message) => message.content as { type: string; content?: { text?: string }[] }[],
  )
  const last = blocks.filter((block) => block.type === 'tool-result').at(-1)
  return (last?.content ?? []).map((entry) => entry.text ?? '').join('')
}

function loggedErrors(events: readonly SessionEvent[]): unknown[] {
  return events
    .filter((event) => event.type === 'tool/result')
    .map((event) => (event.data as { error?: unknown }).error)
}

describe('the 2.x client over its own stdio transport to server-everything', () => {
  test('fits McpClientLike as it is; a turn calls echo, progress arrives, close ends the child', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [everythingBin, 'stdio'],
      stderr: 'ignore',
    })
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(transport)
    const fits: McpClientLike = client
    const { agent, model, harness } = await world(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'echo', arguments: '{"message":"slim"}' },
            { id: 'c2', name: 'trigger-long-running-operation', arguments: '{"duration":0.6,"steps":3}' },
          ],
        },
        text('ok'),
      ],
      mcpServer({ name: 'slim', client: fits }),
    )
    const progress: ToolsProgressPayload[] = []
    harness.on('tools/progress', (payload) => {
      progress.push(payload)
    })
    expect(await agent.run('go')).toMatchObject({ reason: { kind: 'completed' } })
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('Echo: slim')
    expect(progress.length).toBeGreaterThan(0)
    expect(progress[0]).toMatchObject({ callId: 'c2', progress: { total: 3 } })
    const pid = transport.pid
    expect(pid).not.toBeNull()
    await harness.close()
    open.splice(0)
    for (let wait = 0; wait < 50; wait++) {
      try {
        process.kill(pid as number, 0)
      } catch {
        return
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error('the child is still alive after close')
  })
})

describe('the 2.x client over its own Streamable HTTP transport', () => {
  let server: TestHttpMcpServer
  beforeAll(async () => {
    server = await startTestHttpMcpServer()
  })
  afterAll(async () => {
    await server.close()
  })

  test("the turn's abort reaches the server as notifications/cancelled through the 2.x client", async () => {
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    const { agent } = await world(
      [call('c1', 'sleep', '{"ms":20000}'), text('later')],
      mcpServer({ name: 'slim', client }),
    )
    const running = agent.run('wait')
    const isSleep = (message: { method?: string; params?: Record<string, unknown> }) =>
      message.method === 'tools/call' && message.params?.['name'] === 'sleep'
    for (let wait = 0; wait < 100 && !server.received.some(isSleep); wait++)
      await new Promise((resolve) => setTimeout(resolve, 50))
    const sleeping = server.received.filter(isSleep).at(-1)
    agent.cancel()
    expect((await running).reason.kind).toBe('aborted')
    expect(loggedErrors(agent.session.events)[0]).toMatchObject({ code: 'TOOL_ABORTED' })
    const cancelled = () =>
      server.received.filter(
        (message) => message.method === 'notifications/cancelled' && message.params?.['requestId'] === sleeping?.id,
      )
    for (let wait = 0; wait < 40 && cancelled().length === 0; wait++)
      await new Promise((resolve) => setTimeout(resolve, 50))
    expect(cancelled()).toHaveLength(1)
  })

  test('clientApi overrides the detection: a 1.x client declared as 1 works; a value other than 1 or 2 is refused', async () => {
    const client = new ClientV1({ name: 'test', version: '1.0.0' })
    await client.connect(new TransportV1(new URL(server.url)))
    const { agent, model } = await world(
      [call('c1', 'add', '{"a":4,"b":5}'), text('9')],
      mcpServer({ name: 'classic', client, clientApi: 1 }),
    )
    expect(await agent.run('add')).toMatchObject({ reason: { kind: 'completed' } })
    expect(lastResultText(model.requests[1])).toBe('9')
    expect(() => mcpServer({ name: 'classic', client, clientApi: 3 as never })).toThrow(/mcpServer clientApi/)
  })
})
