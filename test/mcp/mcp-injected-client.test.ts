/**
 * `yoke/mcp` with injected clients: an SDK `Client` the caller connected (over stdio to
 * server-everything, or in memory to a small real SDK server that misbehaves on purpose). Checks
 * that the SDK's own `Client` fits `mcpServer({ client })`, that harness close closes it and ends
 * the child, that one agent's scope can hold the tools alone, and that bad tool lists are typed
 * errors.
 *
 * @module
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, test } from 'vitest'
import { createHarness } from 'yoke'
import { call, fakeIds, scriptedModel, text } from 'yoke/testing'
import { connectMcpServers, McpServerError, mcpPlugin, mcpServer } from '../../src/mcp/index.js'
import { everythingBin, isAlive, useHarnesses } from './fixtures.js'

const open = useHarnesses()

/** A real SDK server, in memory, that lists `tools` and answers every call with `answer`. */
async function inMemoryServer(tools: unknown[], answer: (name: string) => unknown = () => ({ content: [] })) {
  const server = new Server({ name: 'odd', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }) as never)
  server.setRequestHandler(CallToolRequestSchema, async (request) => answer(request.params.name) as never)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(clientSide)
  return client
}

describe('an SDK Client the caller connected', () => {
  test('mounts like a stdio server, and harness close closes it and ends its child', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [everythingBin, 'stdio'],
      stderr: 'ignore',
    })
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(transport)
    const pid = transport.pid
    if (pid === null) throw new Error('no child')
    const model = scriptedModel([call('c1', 'echo', '{"message":"injected"}'), text('ok')])
    const harness = await createHarness({
      model,
      ids: fakeIds(),
      plugins: [mcpPlugin({ servers: [mcpServer({ name: 'mine', client })] })],
    })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    expect(await agent.run('go')).toMatchObject({ reason: { kind: 'completed' } })
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('Echo: injected')
    expect(isAlive(pid)).toBe(true)
    await harness.close()
    for (let wait = 0; wait < 50 && isAlive(pid); wait++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(isAlive(pid)).toBe(false)
  })

  test("in one agent's scope: that agent sees the tools, another does not", async () => {
    const client = await inMemoryServer(
      [{ name: 'lookup', description: 'Look up', inputSchema: { type: 'object' } }],
      () => ({
        content: [{ type: 'text', text: 'found' }],
      }),
    )
    await using toolset = await connectMcpServers([mcpServer({ name: 'odd', client })])
    const harness = await createHarness({
      model: scriptedModel([call('c1', 'lookup', '{}'), text('ok')]),
      ids: fakeIds(),
    })
    open.push(harness)
    const owner = await harness.createAgent({ options: { verifyReconstruction: true } })
    const other = await harness.createAgent()
    owner.ctx.tools.register(toolset.tools)
    expect(harness.tools.schemas(owner).map((schema) => schema.name)).toEqual(['lookup'])
    expect(harness.tools.schemas(other)).toEqual([])
    expect(await owner.run('go')).toMatchObject({ reason: { kind: 'completed' } })
  })
})

describe('results a server sends', () => {
  test('isError, images, resources and empty content become tool results the model sees', async () => {
    const answers: Record<string, unknown> = {
      fails: { content: [{ type: 'text', text: 'disk full' }], isError: true },
      silent: { content: [], isError: true },
      picture: { content: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }] },
      document: {
        content: [
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'alpha' } },
          { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } },
          { type: 'resource_link', uri: 'file:///c.txt', name: 'c' },
          { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
        ],
      },
      structured: { content: [], structuredContent: { total: 3 } },
    }
    const tools = Object.keys(answers).map((name) => ({ name, inputSchema: { type: 'object' } }))
    const client = await inMemoryServer(tools, (name) => answers[name])
    const model = scriptedModel([
      { toolCalls: Object.keys(answers).map((name, index) => ({ id: `c${index}`, name, arguments: '{}' })) },
      text('ok'),
    ])
    const harness = await createHarness({
      model,
      ids: fakeIds(),
      plugins: [mcpPlugin({ servers: [mcpServer({ name: 'odd', client })] })],
    })
    open.push(harness)
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    expect(await agent.run('go')).toMatchObject({ reason: { kind: 'completed' } })
    const results = (model.requests[1]?.messages ?? []).flatMap((message) =>
      message.content.flatMap((block) => (block.type === 'tool-result' ? [block] : [])),
    )
    expect(results.map((block) => [block.isError, block.content])).toEqual([
      [true, [{ type: 'text', text: 'disk full' }]],
      [true, [{ type: 'text', text: 'the MCP tool "silent" failed without saying why' }]],
      [false, [{ type: 'image', mediaType: 'image/png', uri: 'data:image/png;base64,iVBORw0KGgo=' }]],
      [
        false,
        [
          { type: 'text', text: '[resource file:///a.txt]\nalpha' },
          { type: 'text', text: '[binary resource file:///b.bin, application/octet-stream left out]' },
          { type: 'text', text: '[resource link file:///c.txt (c)]' },
          { type: 'text', text: '[audio content left out]' },
        ],
      ],
      [false, [{ type: 'text', text: '{"total":3}' }]],
    ])
  })
})

describe('bad tool lists', () => {
  test('a list that repeats a name is McpServerError naming the server and the tool', async () => {
    const client = await inMemoryServer([
      { name: 'twin', inputSchema: { type: 'object' } },
      { name: 'twin', inputSchema: { type: 'object' } },
    ])
    const error = await connectMcpServers([mcpServer({ name: 'odd', client })]).catch((caught: unknown) => caught)
    expect(McpServerError.is(error)).toBe(true)
    expect(error).toMatchObject({ server: 'odd', reason: 'lists the tool "twin" twice' })
  })

  test('a tool whose schema is not an object schema is McpServerError, and the client is closed', async () => {
    const client = await inMemoryServer([
      { name: 'bad', inputSchema: { type: 'object', properties: { n: { type: 'number', default: Number.NaN } } } },
    ])
    let closed = false
    client.onclose = () => {
      closed = true
    }
    const error = await connectMcpServers([mcpServer({ name: 'odd', client })]).catch((caught: unknown) => caught)
    expect(McpServerError.is(error)).toBe(true)
    expect((error as McpServerError).reason).toMatch(/^cannot mount the tool "bad"/)
    expect(closed).toBe(true)
  })
})
