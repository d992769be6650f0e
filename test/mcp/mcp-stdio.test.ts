/**
 * `yoke/mcp` against the real `@modelcontextprotocol/server-everything` over stdio, through full
 * agent turns with a scripted model (`verifyReconstruction: true`): tools mounted with their
 * schemas, calls answered, structured content and errors as tool results, annotations deciding the
 * scheduling, the turn's abort cancelling a call, collisions between servers renamed and reported,
 * no parent secret reaching the child, and the servers closed with the harness.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { createHarness, type SessionEvent } from 'yoke'
import { call, fakeIds, scriptedModel, text } from 'yoke/testing'
import { connectMcpServers, type McpMountedTool, McpServerError, mcpPlugin, mcpServer } from '../../src/mcp/index.js'
import { modelToolName } from '../../src/mcp/mcp-tool-name.js'
import { everythingBin, useHarnesses } from './fixtures.js'

function everything(name = 'everything', env?: Record<string, string>) {
  return mcpServer({
    name,
    command: process.execPath,
    args: [everythingBin, 'stdio'],
    ...(env === undefined ? {} : { env }),
  })
}

const open = useHarnesses()

async function world(script: Parameters<typeof scriptedModel>[0], servers = [everything()]) {
  const mounted: McpMountedTool[] = []
  const model = scriptedModel(script)
  const harness = await createHarness({
    model,
    ids: fakeIds(),
    plugins: [mcpPlugin({ servers, onMounted: (list) => mounted.push(...list) })],
  })
  open.push(harness)
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  return { model, harness, agent, mounted }
}

function toolResults(events: readonly SessionEvent[]): Record<string, unknown>[] {
  return events.filter((event) => event.type === 'tool/result').map((event) => event.data as Record<string, unknown>)
}

function sentResults(request: { messages: readonly { content: readonly unknown[] }[] } | undefined): string[] {
  if (request === undefined) throw new Error('no such request')
  return request.messages.flatMap((message) =>
    (message.content as { type: string; isError?: boolean; content?: { type: string; text?: string }[] }[]).flatMap(
      (block) =>
        block.type === 'tool-result'
          ? [
              `${block.isError ? 'error: ' : ''}${(block.content ?? []).map((entry) => entry.text ?? `[${entry.type}]`).join('')}`,
            ]
          : [],
    ),
  )
}

describe('mounting server-everything over stdio', () => {
  test('registers its tools with their input schemas and schedules them by their hints', async () => {
    const { harness, mounted } = await world([])
    const echo = harness.tools.schemas().find((schema) => schema.name === 'echo')
    expect(echo?.parameters).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    })
    expect(mounted.find((entry) => entry.tool === 'echo')).toEqual({
      server: 'everything',
      tool: 'echo',
      name: 'echo',
      mode: 'parallel',
    })
    // Not read-only and not idempotent: exclusive.
    expect(mounted.find((entry) => entry.tool === 'toggle-simulated-logging')?.mode).toBe('exclusive')
    expect(harness.tools.executionMode({ name: 'echo', arguments: '{"message":"x"}' })).toBe('parallel')
    expect(harness.tools.executionMode({ name: 'toggle-simulated-logging', arguments: '{}' })).toBe('exclusive')
  })

  test('a full turn: the model calls echo and get-structured-content and sees their results', async () => {
    const { agent, model } = await world([
      {
        toolCalls: [
          { id: 'c1', name: 'echo', arguments: '{"message":"hi"}' },
          { id: 'c2', name: 'get-structured-content', arguments: '{"location":"Chicago"}' },
        ],
      },
      text('done'),
    ])
    const result = await agent.run('go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'done' })
    const sent = sentResults(model.requests[1])
    expect(sent[0]).toBe('Echo: hi')
    expect(JSON.parse(sent[1] ?? '')).toMatchObject({ temperature: expect.any(Number) })
    const logged = toolResults(agent.session.events)
    expect(logged[1]?.['meta']).toMatchObject({
      mcp: {
        server: 'everything',
        tool: 'get-structured-content',
        structuredContent: { temperature: expect.any(Number) },
      },
    })
  })

  test('a protocol error (bad arguments) is a tool error the model sees, and the next turn works', async () => {
    const { agent, model } = await world([
      call('c1', 'get-sum', '{"a":"one"}'),
      text('sorry'),
      call('c2', 'get-sum', '{"a":1,"b":2}'),
      text('3'),
    ])
    expect(await agent.run('add')).toMatchObject({ reason: { kind: 'completed' } })
    expect(sentResults(model.requests[1])[0]).toMatch(/^error: /)
    expect(await agent.run('again')).toMatchObject({ reason: { kind: 'completed' } })
    expect(sentResults(model.requests[3]).at(-1)).toMatch(/3/)
  })

  test('the stdio child gets only the env passed to it, never the parent secrets', async () => {
    process.env['YOKE_MCP_TEST_SECRET'] = 'parent-secret-value'
    try {
      const { agent, model } = await world(
        [call('c1', 'get-env', '{}'), text('ok')],
        [everything('everything', { PASSED_ON: 'given-value' })],
      )
      await agent.run('env')
      const sent = sentResults(model.requests[1]).join('\n')
      expect(sent).toContain('given-value')
      expect(sent).not.toContain('parent-secret-value')
      expect(sent).not.toContain('YOKE_MCP_TEST_SECRET')
    } finally {
      delete process.env['YOKE_MCP_TEST_SECRET']
    }
  })

  test('cancelling the turn cancels a long call, and the loop goes on', async () => {
    const { agent } = await world([
      call('c1', 'trigger-long-running-operation', '{"duration":30,"steps":30}'),
      text('later'),
    ])
    const started = Date.now()
    const running = agent.run('wait')
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    agent.cancel()
    const result = await running
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(result.reason.kind).toBe('aborted')
    const [logged] = toolResults(agent.session.events)
    expect(logged?.['error']).toMatchObject({ code: 'TOOL_ABORTED' })
  })

  test('two servers with the same tool names: each qualified by its server and reported', async () => {
    const { harness, mounted } = await world([], [everything('one'), everything('two')])
    const names = harness.tools.schemas().map((schema) => schema.name)
    expect(names).toContain('one_echo')
    expect(names).toContain('two_echo')
    expect(names).not.toContain('echo')
    expect(mounted.find((entry) => entry.name === 'two_echo')).toMatchObject({
      server: 'two',
      tool: 'echo',
      renamed: 'collision',
    })
  })
})

describe('closing', () => {
  test('a toolset closes its servers; a call after close fails as a tool error, not a crash', async () => {
    const toolset = await connectMcpServers([everything()])
    const echo = toolset.tools.find((tool) => tool.name === 'echo')
    expect(echo).toBeDefined()
    await toolset.close()
    await toolset.close()
    const model = scriptedModel([call('c1', 'echo', '{"message":"x"}'), text('ok')])
    const harness = await createHarness({ model, ids: fakeIds(), tools: [...toolset.tools] })
    open.push(harness)
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    expect(await agent.run('go')).toMatchObject({ reason: { kind: 'completed' } })
    expect(toolResults(agent.session.events)[0]?.['error']).toMatchObject({ code: 'TOOL_FAILED' })
  })
})

describe('bad input', () => {
  test('a server that never answers initialize is McpServerError after the connect timeout', async () => {
    const silent = mcpServer({
      name: 'silent',
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      connectTimeoutMs: 500,
    })
    const error = await connectMcpServers([silent]).catch((caught: unknown) => caught)
    expect(McpServerError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'MCP_SERVER_FAILED',
      server: 'silent',
      reason: 'initialize timed out after 500 ms',
    })
  })

  test('a plugin whose server fails fails the harness start', async () => {
    const broken = mcpServer({
      name: 'broken',
      command: process.execPath,
      args: ['-e', 'process.exit(3)'],
      connectTimeoutMs: 2_000,
    })
    await expect(
      createHarness({ model: scriptedModel([]), plugins: [mcpPlugin({ servers: [broken] })] }),
    ).rejects.toThrow(/MCP server "broken"/)
  })

  test('mcpServer rejects malformed declarations, naming the field', () => {
    expect(() => mcpServer({ name: 'a b', command: 'x' })).toThrow(/mcpServer name/)
    expect(() => mcpServer({ name: 'a', command: '' })).toThrow(/mcpServer command/)
    expect(() => mcpServer({ name: 'a', command: 'x', args: [1 as unknown as string] })).toThrow(/mcpServer args/)
    expect(() => mcpServer({ name: 'a', command: 'x', env: { A: 1 as unknown as string } })).toThrow(/mcpServer env.A/)
    expect(() => mcpServer({ name: 'a', command: 'x', connectTimeoutMs: 0 })).toThrow(/connectTimeoutMs/)
    expect(() => mcpServer({ name: 'a', client: {} as never })).toThrow(/mcpServer client/)
    expect(() => mcpServer({ name: 'a' } as never)).toThrow(/exactly one of command, url or client/)
  })

  test('two declarations with one name are refused before anything starts', async () => {
    await expect(connectMcpServers([everything('same'), everything('same')])).rejects.toThrow(
      /"same": is declared twice/,
    )
  })
})

describe('model tool names', () => {
  test('valid names stay; refused characters and long names get a stable short hash', () => {
    expect(modelToolName('echo')).toBe('echo')
    const dotted = modelToolName('files.read')
    expect(dotted).toMatch(/^files_read_[0-9a-f]{8}$/)
    expect(modelToolName('files.read')).toBe(dotted)
    expect(modelToolName('files/read')).not.toBe(dotted)
    const long = modelToolName('x'.repeat(80))
    expect(long).toHaveLength(64)
    expect(long).toMatch(/^x{55}_[0-9a-f]{8}$/)
  })
})
