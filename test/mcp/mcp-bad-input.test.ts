/**
 * `yoke/mcp` against servers that misbehave: a stdio child that reads its stdin and never answers
 * `initialize`, tool lists with a repeated name or a schema that is no object schema (caught by
 * the SDK client, or by Yoke when the client passes it on), and a server mounted next to an agent
 * that is already talking. Each is an `McpServerError` naming the server; the agent's log stays
 * whole (`verifyReconstruction: true`) and its next turn works.
 *
 * @module
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, test } from 'vitest'
import { createHarness } from 'yoke'
import { call, fakeIds, scriptedModel, text } from 'yoke/testing'
import { connectMcpServers, McpServerError, mcpServer } from '../../src/mcp/index.js'
import { useHarnesses } from './fixtures.js'

const open = useHarnesses()

/** A real SDK server, in memory, that lists `tools` as given (no checks on the server side). */
async function listing(tools: unknown[]): Promise<Client> {
  const server = new Server({ name: 'odd', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }) as never)
  server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [] }))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(clientSide)
  return client
}

/** A harness whose agent has had one turn, to try mounting next to it. */
async function talkingAgent() {
  const model = scriptedModel([text('first'), text('second')])
  const harness = await createHarness({ model, ids: fakeIds() })
  open.push(harness)
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  expect(await agent.run('one')).toMatchObject({ reason: { kind: 'completed' } })
  return { agent, model }
}

describe('a server that never answers initialize', () => {
  test('a child reading its stdin in silence is McpServerError after connectTimeoutMs; the agent goes on', async () => {
    const { agent } = await talkingAgent()
    const silent = mcpServer({
      name: 'silent',
      command: process.execPath,
      args: ['-e', 'process.stdin.resume(); process.stdin.on("data", () => {})'],
      connectTimeoutMs: 400,
    })
    const started = Date.now()
    const error = await connectMcpServers([silent]).catch((caught: unknown) => caught)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(McpServerError.is(error)).toBe(true)
    expect(error).toMatchObject({ server: 'silent', reason: 'initialize timed out after 400 ms' })
    const length = agent.session.length
    expect(await agent.run('two')).toMatchObject({ reason: { kind: 'completed' }, text: 'second' })
    expect(agent.session.length).toBeGreaterThan(length)
  })
})

describe('bad tool lists', () => {
  test.each([
    ['a root type that is not object', [{ name: 'bad', inputSchema: { type: 'string' } }]],
    ['no input schema at all', [{ name: 'bad' }]],
    ['an input schema that is not an object', [{ name: 'bad', inputSchema: 'object' }]],
    ['a tool without a name', [{ inputSchema: { type: 'object' } }]],
  ])('%s: the SDK client refuses the list, McpServerError naming the server', async (_title, tools) => {
    const client = await listing(tools)
    const error = await connectMcpServers([mcpServer({ name: 'odd', client })]).catch((caught: unknown) => caught)
    expect(McpServerError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'MCP_SERVER_FAILED', server: 'odd' })
    expect((error as McpServerError).reason).toMatch(/^tools\/list failed/)
  })

  test('a schema the SDK lets through but Yoke cannot send (NaN default) fails the mount, and nothing is registered', async () => {
    const { agent } = await talkingAgent()
    const client = await listing([
      { name: 'good', inputSchema: { type: 'object' } },
      { name: 'bad', inputSchema: { type: 'object', properties: { n: { type: 'number', default: Number.NaN } } } },
    ])
    const error = await connectMcpServers([mcpServer({ name: 'odd', client })]).catch((caught: unknown) => caught)
    expect(McpServerError.is(error)).toBe(true)
    expect((error as McpServerError).reason).toMatch(/^cannot mount the tool "bad"/)
    expect(await agent.run('two')).toMatchObject({ reason: { kind: 'completed' } })
  })

  test('a repeated name fails the mount; the agent next to it still calls its own tools', async () => {
    const client = await listing([
      { name: 'twin', inputSchema: { type: 'object' } },
      { name: 'twin', inputSchema: { type: 'object' } },
    ])
    const error = await connectMcpServers([mcpServer({ name: 'odd', client })]).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ server: 'odd', reason: 'lists the tool "twin" twice' })
    const good = await listing([{ name: 'fine', inputSchema: { type: 'object' } }])
    await using toolset = await connectMcpServers([mcpServer({ name: 'good', client: good })])
    const model = scriptedModel([call('c1', 'fine', '{}'), text('ok')])
    const harness = await createHarness({ model, ids: fakeIds(), tools: [...toolset.tools] })
    open.push(harness)
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    expect(await agent.run('go')).toMatchObject({ reason: { kind: 'completed' } })
  })
})
