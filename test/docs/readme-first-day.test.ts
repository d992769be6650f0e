/**
 * The README's blocks on step limits, structured output, streams and SSE, queued prompts after a
 * restart and plain tool results, each repeated with the pieces around it filled in (the list of
 * the README's blocks lives in readme-examples.test.ts).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { z } from 'zod'
import {
  createHarness,
  defineTool,
  OutputValidationError,
  sseResponse,
  textStream,
  toolResult,
  writeResponse,
} from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text, tool } from 'yoke/testing'

const search = defineTool({
  name: 'search',
  description: 'Search the web',
  input: z.object({ q: z.string() }),
  execute: ({ q }) => `results for ${q}`,
})

test('the README step-limit and structured-output example: max-steps, a typed output, and OutputValidationError', async () => {
  const model = scriptedModel([
    tool('search', { q: 'a' }),
    tool('search', { q: 'b' }),
    tool('search', { q: 'c' }),
    text('What I found so far: a, b and c.'),
    text(JSON.stringify({ total: 12, lines: [{ item: 'pen', price: 12 }] })),
    text(JSON.stringify({ total: 12, lines: [{ item: 'pen', price: 'twelve' }] })),
    text(JSON.stringify({ total: 12, lines: [{ item: 'pen', price: 'still twelve' }] })),
  ])
  await using harness = await createHarness({ model, tools: [search], clock: fakeClock({ now: 0 }), ids: fakeIds() })
  const agent = await harness.createAgent()
  const printed: string[] = []

  const limited = await agent.run('Compare the three vendors', { maxSteps: 4 })
  if (limited.reason.kind === 'max-steps') printed.push(`stopped at the limit: ${limited.text}`)
  expect(printed).toEqual(['stopped at the limit: What I found so far: a, b and c.'])
  expect(model.requests.at(3)?.toolChoice).toBe('none')
  expect(model.requests.at(3)?.tools?.map((schema) => schema.name)).toEqual(['search'])

  const Invoice = z.object({ total: z.number(), lines: z.array(z.object({ item: z.string(), price: z.number() })) })
  const { output } = await agent.run('Extract the invoice', { output: Invoice })
  expect(output.total).toBe(12)
  expect(model.requests.at(4)?.responseFormat).toMatchObject({ type: 'json' })

  const failure = await agent.run('Extract the invoice again', { output: Invoice }).catch((error: unknown) => error)
  expect(OutputValidationError.is(failure)).toBe(true)
  if (!OutputValidationError.is(failure)) return
  expect(failure.path).toBe('lines[0].price')
  expect(failure.text).toContain('still twelve')
})

test('the README streams and SSE example: typed events, the text alone, and an endpoint a client resumes with Last-Event-ID', async () => {
  const model = scriptedModel([
    text('Sunny, 21 °C.', { chunkSize: 4 }),
    text('Rain.', { chunkSize: 2 }),
    text('It is sunny.', { chunkSize: 3 }),
  ])
  await using harness = await createHarness({ model, clock: fakeClock({ now: 0 }), ids: fakeIds() })
  const agent = await harness.createAgent()
  let written = ''
  const ends: string[] = []
  for await (const event of agent.stream('What is the weather in Paris?')) {
    if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') written += event.data.chunk.text
    if (event.type === 'turn/end') ends.push(event.data.reason.kind)
  }
  for await (const piece of textStream(agent.stream('And tomorrow?'))) written += piece
  expect(written).toBe('Sunny, 21 °C.Rain.')
  expect(ends).toEqual(['completed'])

  const server = createServer(async (request, response) => {
    const lastEventId = request.headers['last-event-id']
    const sse =
      typeof lastEventId === 'string'
        ? sseResponse(agent, { lastEventId, until: 'turn-end' })
        : sseResponse(agent.stream(new URL(request.url ?? '/', 'http://localhost').searchParams.get('q') ?? 'hi'))
    await writeResponse(sse, response)
  }).listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/?q=${encodeURIComponent('Is it sunny?')}`
    const first = await fetch(url)
    expect(first.headers.get('content-type')).toContain('text/event-stream')
    const ids = [...(await first.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]))
    const turn = agent.session.events.filter((event) => event.seq >= (ids[0] ?? 0))
    expect(ids).toEqual(turn.map((event) => event.seq))
    // A reconnect after the third event gets the rest of the turn from the log, exactly once.
    const again = await fetch(url, { headers: { 'last-event-id': String(ids[2]) } })
    const resumed = [...(await again.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]))
    expect(resumed).toEqual(ids.slice(3))
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

test("the README queued-prompts example: 'discard' drops what a crash left queued, readSession reads without writing, a deadline is a timeout", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-readme-queued-'))
  try {
    {
      await using harness = await createHarness({ model: scriptedModel([]), persistence: { dir } })
      const left = await harness.createAgent({ sessionId: 'demo' })
      left.send('stale question', 'next-turn', false)
      await harness.sessions.flush(left.session)
    }
    const model = scriptedModel([{ text: 'late', delayMs: 5_000 }])
    await using harness = await createHarness({ model, persistence: { dir } })
    const fresh = await harness.openAgent('demo', { queued: 'discard' })
    const listed: string[] = []
    for (const entry of fresh.inbox.list()) listed.push(`${entry.message.id} ${entry.ageMs}`)
    expect(listed).toEqual([])
    const splices = (await harness.readSession('demo')).events.filter((event) => event.type === 'agent/inbox/spliced')
    expect(splices.map((event) => (event.data as { outcome?: string }).outcome)).toEqual([undefined, 'canceled'])
    const before = (await harness.readSession('demo')).events.length
    const { messages } = await harness.readSession('demo')
    expect(messages).toEqual([])
    expect((await harness.readSession('demo')).events.length).toBe(before)
    const result = await fresh.run('hi', { signal: AbortSignal.timeout(50) })
    expect(result.reason).toEqual({ kind: 'aborted', reason: { kind: 'timeout' } })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('the README tool-results example: rows go as JSON, toolResult carries meta and errors', async () => {
  const users = [{ id: 'u1', name: 'Ada' }]
  const findUsers = defineTool({
    name: 'find_users',
    description: 'Find users by name',
    input: z.object({ name: z.string() }),
    execute: async ({ name }) => ({ rows: users.filter((user) => user.name === name) }),
  })
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look a user up by id',
    input: z.object({ id: z.string() }),
    execute: async ({ id }) =>
      users.some((user) => user.id === id)
        ? toolResult({ content: `user ${id} exists`, meta: { id } })
        : toolResult({ content: `no user ${id}`, isError: true }),
  })
  const model = scriptedModel([
    {
      toolCalls: [
        { id: 'c1', name: 'find_users', arguments: { name: 'Ada' } },
        { id: 'c2', name: 'lookup', arguments: { id: 'u1' } },
        { id: 'c3', name: 'lookup', arguments: { id: 'u9' } },
      ],
    },
    text('Ada is u1; there is no u9.'),
  ])
  await using harness = await createHarness({ model, tools: [findUsers, lookup], ids: fakeIds() })
  const agent = await harness.createAgent()
  expect((await agent.run('who is Ada?')).text).toBe('Ada is u1; there is no u9.')
  const results = agent.session.events.flatMap((event) => (event.type === 'tool/result' ? [event.data] : []))
  expect(JSON.stringify(results[0])).toContain(JSON.stringify(JSON.stringify({ rows: users })).slice(1, -1))
  expect(results[1]).toMatchObject({ meta: { id: 'u1' } })
  expect(JSON.stringify(results[2])).toContain('"isError":true')
})
