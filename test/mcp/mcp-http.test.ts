/**
 * `yoke/mcp` over Streamable HTTP on loopback, through full agent turns with a scripted model:
 * the real `@modelcontextprotocol/server-everything` started in its `streamableHttp` mode as a
 * child process, and a small SDK server in this process that records what reached it, forgets its
 * sessions on demand and floods progress. Checks the URL form and its headers, the re-initialized
 * session and the one retry, the turn's abort arriving as `notifications/cancelled`, and progress
 * as coalesced live events that never enter the log or a request.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createHarness, type SessionEvent, type ToolsProgressPayload } from 'yoke'
import { call, fakeIds, scriptedModel, text } from 'yoke/testing'
import { connectMcpServers, McpServerError, mcpPlugin, mcpServer } from '../../src/mcp/index.js'
import { startTestHttpMcpServer, type TestHttpMcpServer } from './http-mcp-test-server.js'
import { everythingBin, useHarnesses } from './fixtures.js'

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const address = probe.address()
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** Starts server-everything in Streamable HTTP mode and resolves once it listens. */
async function startEverythingHttp(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort()
  const child = spawn(process.execPath, [everythingBin, 'streamableHttp'], {
    env: { PATH: process.env['PATH'] ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  await new Promise<void>((resolve, reject) => {
    let said = ''
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen: ${said}`)), 15_000)
    child.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8')
      if (said.includes(`listening on port ${port}`)) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server-everything exited with ${code}: ${said}`))
    })
  })
  child.stderr?.resume()
  return { child, url: `http://127.0.0.1:${port}/mcp` }
}

const open = useHarnesses()

async function world(script: Parameters<typeof scriptedModel>[0], servers: Parameters<typeof mcpPlugin>[0]['servers']) {
  const model = scriptedModel(script)
  const harness = await createHarness({ model, ids: fakeIds(), plugins: [mcpPlugin({ servers })] })
  open.push(harness)
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  return { model, harness, agent }
}

function sentResults(request: { messages: readonly { content: readonly unknown[] }[] } | undefined): string[] {
  if (request === undefined) throw new Error('no such request')
  return request.messages.flatMap((message) =>
    (message.content as { type: string; isError?: boolean; content?: { text?: string }[] }[]).flatMap((block) =>
      block.type === 'tool-result'
        ? [`${block.isError ? 'error: ' : ''}${(block.content ?? []).map((entry) => entry.text ?? '').join('')}`]
        : [],
    ),
  )
}

function loggedErrors(events: readonly SessionEvent[]): unknown[] {
  return events
    .filter((event) => event.type === 'tool/result')
    .map((event) => (event.data as { error?: unknown }).error)
}

describe('server-everything over Streamable HTTP', () => {
  let everything: { child: ChildProcess; url: string }
  beforeAll(async () => {
    everything = await startEverythingHttp()
  }, 30_000)
  afterAll(() => {
    everything.child.kill('SIGKILL')
  })

  test('mcpServer({ url }) mounts its tools and a full turn calls echo and get-sum', async () => {
    const { agent, model, harness } = await world(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'echo', arguments: '{"message":"over http"}' },
            { id: 'c2', name: 'get-sum', arguments: '{"a":2,"b":40}' },
          ],
        },
        text('done'),
      ],
      [mcpServer({ name: 'everything', url: everything.url })],
    )
    expect(harness.tools.schemas().map((schema) => schema.name)).toContain('trigger-long-running-operation')
    expect(await agent.run('go')).toMatchObject({ reason: { kind: 'completed' }, text: 'done' })
    const sent = sentResults(model.requests[1])
    expect(sent[0]).toBe('Echo: over http')
    expect(sent[1]).toMatch(/42/)
  })

  test('its progress notifications become live tools/progress events, never logged nor sent', async () => {
    const { agent, model, harness } = await world(
      [call('c1', 'trigger-long-running-operation', '{"duration":1.2,"steps":4}'), text('ok')],
      [mcpServer({ name: 'everything', url: everything.url })],
    )
    const progress: ToolsProgressPayload[] = []
    harness.on('tools/progress', (payload) => {
      progress.push(payload)
    })
    expect(await agent.run('go')).toMatchObject({ reason: { kind: 'completed' } })
    expect(progress.length).toBeGreaterThanOrEqual(2)
    expect(progress[0]).toMatchObject({ callId: 'c1', name: 'trigger-long-running-operation' })
    expect(progress.map((entry) => entry.progress)).toContainEqual({ progress: 2, total: 4 })
    expect(JSON.stringify(agent.session.events)).not.toContain('"total":4')
    expect(JSON.stringify(model.requests)).not.toContain('"total":4')
  })
})

describe('a Streamable HTTP server of the SDK on loopback', () => {
  let server: TestHttpMcpServer
  beforeAll(async () => {
    server = await startTestHttpMcpServer()
  })
  afterAll(async () => {
    await server.close()
  })

  test('the headers given are sent with every request', async () => {
    const { agent } = await world(
      [call('c1', 'add', '{"a":1,"b":2}'), text('3')],
      [mcpServer({ name: 'local', url: server.url, headers: { authorization: 'Bearer test-token' } })],
    )
    const before = server.headers.length
    expect(await agent.run('add')).toMatchObject({ reason: { kind: 'completed' } })
    const sent = server.headers.slice(before)
    expect(sent.length).toBeGreaterThan(0)
    for (const headers of sent) expect(headers['authorization']).toBe('Bearer test-token')
  })

  test('closing the harness ends the session with DELETE', async () => {
    const { agent, harness } = await world(
      [call('c1', 'add', '{"a":1,"b":2}'), text('3')],
      [mcpServer({ name: 'local', url: server.url })],
    )
    expect(await agent.run('add')).toMatchObject({ reason: { kind: 'completed' } })
    const session = server.headers.at(-1)?.['mcp-session-id']
    expect(typeof session).toBe('string')
    expect(server.ended).not.toContain(session)
    await harness.close()
    expect(server.ended).toContain(session)
  })

  test('an expired session (404) is initialized again and the call retried once; the turn sees the answer', async () => {
    const { agent, model } = await world(
      [call('c1', 'add', '{"a":1,"b":2}'), text('3'), call('c2', 'add', '{"a":20,"b":22}'), text('42')],
      [mcpServer({ name: 'local', url: server.url })],
    )
    expect(await agent.run('first')).toMatchObject({ reason: { kind: 'completed' } })
    const startedBefore = server.sessionsStarted()
    const expiredBefore = server.expiredAnswers()
    await server.forgetSessions()
    expect(await agent.run('second')).toMatchObject({ reason: { kind: 'completed' } })
    expect(sentResults(model.requests[3]).at(-1)).toBe('42')
    expect(server.sessionsStarted()).toBe(startedBefore + 1)
    expect(server.expiredAnswers()).toBe(expiredBefore + 1)
    const calls = server.received.filter(
      (message) => message.method === 'tools/call' && (message.params?.['arguments'] as { a?: number })?.a === 20,
    )
    expect(calls).toHaveLength(2)
    expect(loggedErrors(agent.session.events)).toEqual([undefined, undefined])
  })

  test('two calls side by side that both meet the expired session share one new session', async () => {
    const { agent, model } = await world(
      [
        call('c1', 'add', '{"a":1,"b":1}'),
        text('2'),
        {
          toolCalls: [
            { id: 'c2', name: 'add', arguments: '{"a":2,"b":2}' },
            { id: 'c3', name: 'add', arguments: '{"a":3,"b":3}' },
          ],
        },
        text('4 and 6'),
      ],
      [mcpServer({ name: 'local', url: server.url })],
    )
    expect(await agent.run('first')).toMatchObject({ reason: { kind: 'completed' } })
    const startedBefore = server.sessionsStarted()
    await server.forgetSessions()
    expect(await agent.run('second')).toMatchObject({ reason: { kind: 'completed' } })
    expect(sentResults(model.requests[3]).slice(-2)).toEqual(['4', '6'])
    expect(server.sessionsStarted()).toBe(startedBefore + 1)
  })

  test("the turn's abort reaches the server as notifications/cancelled naming the request", async () => {
    const { agent } = await world(
      [call('c1', 'sleep', '{"ms":20000}'), text('later')],
      [mcpServer({ name: 'local', url: server.url })],
    )
    const running = agent.run('wait')
    for (let wait = 0; wait < 100; wait++) {
      if (server.received.some((message) => message.method === 'tools/call' && message.params?.['name'] === 'sleep'))
        break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    agent.cancel()
    const result = await running
    expect(result.reason.kind).toBe('aborted')
    expect(loggedErrors(agent.session.events)[0]).toMatchObject({ code: 'TOOL_ABORTED' })
    const request = server.received.find(
      (message) => message.method === 'tools/call' && message.params?.['name'] === 'sleep',
    )
    for (let wait = 0; wait < 40; wait++) {
      if (server.received.some((message) => message.method === 'notifications/cancelled')) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const cancelled = server.received.filter((message) => message.method === 'notifications/cancelled')
    expect(cancelled.map((message) => message.params?.['requestId'])).toEqual([request?.id])
  })

  test('a flood of progress notifications is coalesced: a few live events, the last one kept, nothing logged', async () => {
    const { agent, harness, model } = await world(
      [call('c1', 'flood', '{"count":5000}'), text('ok'), call('c2', 'add', '{"a":1,"b":1}'), text('2')],
      [mcpServer({ name: 'local', url: server.url })],
    )
    const progress: ToolsProgressPayload[] = []
    harness.on('tools/progress', (payload) => {
      progress.push(payload)
    })
    expect(await agent.run('flood')).toMatchObject({ reason: { kind: 'completed' } })
    expect(sentResults(model.requests[1])).toEqual(['flooded 5000'])
    expect(progress.length).toBeGreaterThan(0)
    expect(progress.length).toBeLessThan(100)
    expect(progress.at(-1)?.progress).toEqual({ progress: 5000, total: 5000, message: 'step 5000' })
    expect(agent.session.events.map((event) => event.type)).not.toContain('tools/progress')
    expect(JSON.stringify(agent.session.events)).not.toContain('step 5000')
    expect(JSON.stringify(model.requests)).not.toContain('step 5000')
    expect(await agent.run('again')).toMatchObject({ reason: { kind: 'completed' } })
  })
})

describe('bad URL declarations', () => {
  test('mcpServer rejects a URL that is not http(s), bad headers, and two forms at once', () => {
    expect(() => mcpServer({ name: 'a', url: 'not a url' })).toThrow(/mcpServer url/)
    expect(() => mcpServer({ name: 'a', url: 'file:///tmp/x' })).toThrow(/mcpServer url/)
    expect(() =>
      mcpServer({ name: 'a', url: 'http://127.0.0.1:1/mcp', headers: { x: 1 as unknown as string } }),
    ).toThrow(/mcpServer headers.x/)
    expect(() => mcpServer({ name: 'a', url: 'http://127.0.0.1:1/mcp', command: 'x' } as never)).toThrow(
      /exactly one of command, url or client/,
    )
  })

  test('a URL where nothing listens is McpServerError naming the server', async () => {
    const port = await freePort()
    const error = await connectMcpServers([
      mcpServer({ name: 'nobody', url: `http://127.0.0.1:${port}/mcp`, connectTimeoutMs: 2_000 }),
    ]).catch((caught: unknown) => caught)
    expect(McpServerError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'MCP_SERVER_FAILED', server: 'nobody' })
    expect((error as McpServerError).reason).toMatch(/^initialize failed/)
  })
})
