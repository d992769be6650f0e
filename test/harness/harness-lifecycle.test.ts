/**
 * The harness lifecycle: the dir shorthand across harnesses, the global observer, close
 * (during a turn, flushing, failures, order, pending creates), two harnesses in one process and
 * determinism.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  type AgentStatus,
  createHarness,
  definePlugin,
  definePreset,
  defineTool,
  type Harness,
  HarnessCloseError,
  HarnessClosedError,
  jsonlPersistence,
  memoryPersistence,
} from 'yoke'
import { faultyPersistence, fakeClock, fakeIds, hang, scriptedModel, text } from 'yoke/testing'
import { fixtureId, logLines, writeCrashedLog } from '../cli/cli-fixtures.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

let dir: string
const harnesses: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-lifecycle-'))
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

async function open(options: Parameters<typeof createHarness>[0]): Promise<Harness> {
  const harness = await createHarness(options)
  harnesses.push(harness)
  return harness
}

async function storedLines(directory: string, id: string): Promise<string[]> {
  const text = await readFile(join(directory, `${id}.jsonl`), 'utf8')
  return text.split('\n').filter((line) => line !== '')
}

describe('dir shorthand', () => {
  test('A writes with { dir }; B over jsonlPersistence({ dir }) lists the session and resumes it with turn 2', async () => {
    const ids = fakeIds()
    const a = await open({ persistence: { dir }, model: scriptedModel([text('one')]), clock: fakeClock(), ids })
    const agent = await a.createAgent()
    expect((await agent.run('hi')).turn).toBe(1)
    await a.close()
    const b = await open({
      persistence: jsonlPersistence({ dir }),
      model: scriptedModel([text('two')]),
      clock: fakeClock(),
      ids,
    })
    expect((await b.listSessions()).map(({ id, live }) => ({ id, live }))).toEqual([{ id: agent.id, live: false }])
    const resumed = await b.resumeAgent(agent.id)
    expect(await resumed.run('again')).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'two' })
  })
})

describe('resume after a crash', () => {
  test("a log cut right after turn 2's tool/call c1: resumeAgent commits tool/result, step/end, turn/end interrupted; the next run is turn 3", async () => {
    const { file, lines } = await writeCrashedLog(dir)
    const cut = await logLines(file)
    expect(JSON.parse(cut.at(-1) as string) as { type: string; data: { turn: number; callId: string } }).toMatchObject({
      type: 'tool/call',
      data: { turn: 2, callId: 'c1' },
    })
    const harness = await open({
      persistence: { dir },
      model: scriptedModel([text('after')]),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    const agent = await harness.resumeAgent(fixtureId)
    const stored = (await logLines(file))
      .slice(lines)
      .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> })
    expect(stored.map((record) => record.type)).toEqual(['tool/result', 'step/end', 'turn/end'])
    expect(stored[0]?.data).toMatchObject({
      turn: 2,
      error: { code: 'TOOL_OUTCOME_UNKNOWN' },
      message: { content: [{ toolCallId: 'c1' }] },
    })
    expect(stored[2]?.data).toMatchObject({ turn: 2, reason: { kind: 'interrupted' } })
    expect(await agent.run('next')).toMatchObject({ turn: 3, reason: { kind: 'completed' }, text: 'after' })
  })
})

describe('global observer', () => {
  test('harness.on(agent/status) hears running and idle of two agents', async () => {
    const harness = await open({ model: scriptedModel([text('1'), text('2')]), clock: fakeClock(), ids: fakeIds() })
    const heard: string[] = []
    harness.on(
      'agent/status',
      ({ agent, status }: { readonly agent: { readonly id: string }; readonly status: AgentStatus }) =>
        heard.push(`${agent.id}:${status}`),
    )
    const a = await harness.createAgent()
    const b = await harness.createAgent()
    await a.run('x')
    await b.run('y')
    expect(heard).toEqual(['s1:running', 's1:idle', 's2:running', 's2:idle'])
  })
})

describe('close', () => {
  test('a running turn ends aborted disposed, is stored, and nothing calls back afterwards', async () => {
    const clock = fakeClock()
    const ids = fakeIds()
    const harness = await open({ persistence: { dir }, model: scriptedModel([hang()]), clock, ids })
    const agent = await harness.createAgent()
    const running = agent.run('x')
    await new Promise((resolve) => setImmediate(resolve))
    expect(agent.status).toBe('running')
    await harness.close()
    expect(await running).toMatchObject({ turn: 1, reason: { kind: 'aborted', reason: { kind: 'disposed' } } })
    expect(clock.pending()).toEqual([])
    clock.runAll()
    const closed = await rejectionOf(harness.createAgent())
    expect(HarnessClosedError.is(closed)).toBe(true)
    expect(closed).toMatchObject({ code: 'HARNESS_CLOSED', operation: 'createAgent' })
    for (const operation of ['resumeAgent', 'openAgent', 'fork'] as const) {
      expect(await rejectionOf(harness[operation](agent.id))).toMatchObject({ code: 'HARNESS_CLOSED', operation })
    }

    const next = await open({ persistence: { dir }, clock: fakeClock(), ids })
    const loaded = await next.persistence.load(agent.id)
    expect(loaded.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { turn: 1, reason: { kind: 'aborted', reason: { kind: 'disposed' } } },
    })
  })

  test('with a 60 s write-behind window close writes every event; close() returns one promise', async () => {
    const harness = await open({
      persistence: { dir },
      writeBehind: { windowMs: 60_000 },
      model: scriptedModel([text('done')]),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    const agent = await harness.createAgent()
    await agent.run('hi')
    const events = agent.session.events
    const first = harness.close()
    expect(harness.close()).toBe(first)
    await first
    const lines = await storedLines(dir, agent.id)
    expect(lines.slice(-events.length).map((line) => JSON.parse(line))).toEqual(JSON.parse(JSON.stringify(events)))
  })

  test('every append failing → HarnessCloseError CLOSE_FAILED naming the session; the root is disposed', async () => {
    const adapter = faultyPersistence(memoryPersistence(), {
      fail: (call) => (call.method === 'append' ? new Error('disk full') : undefined),
    })
    const harness = await open({
      persistence: adapter,
      model: scriptedModel([text('x')]),
      clock: fakeClock(),
      ids: fakeIds(),
      logger: recordingLogger(),
    })
    const agent = await harness.createAgent()
    const run = await rejectionOf(agent.run('hi'))
    expect(run).toMatchObject({ code: 'FLUSH_FAILED' })
    const error = await rejectionOf(harness.close())
    expect(HarnessCloseError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'CLOSE_FAILED', unflushedSessions: [agent.id] })
    expect(harness.ctx.state).toBe('disposed')
    expect(adapter.calls.at(-1)?.method).toBe('close')
  })

  test('order: pending creates settle, agents are disposed, then presets, then plugins', async () => {
    const order: string[] = []
    const plugin = definePlugin({
      name: 'probe',
      apply: (ctx) => void ctx.effect(() => () => void order.push('plugin'), 'probe'),
    })
    const preset = definePreset({
      name: 'p',
      setup: (ctx) => void ctx.effect(() => () => void order.push('preset'), 'preset-probe'),
    })
    const harness = await open({ plugins: [plugin], presets: [preset], clock: fakeClock(), ids: fakeIds() })
    harness.on(
      'agent/disposed',
      ({ agent }: { readonly agent: { readonly id: string } }) => void order.push(`agent:${agent.id}`),
    )
    await harness.createAgent({ sessionId: 'one', preset: 'p' })
    const stuck = harness.createAgent({ sessionId: 'stuck', tools: [], instructions: 'x' })
    const hanging = harness.agents.create({ id: 'hanging', setup: () => new Promise<void>(() => {}) })
    await new Promise((resolve) => setImmediate(resolve))
    await harness.close()
    expect((await stuck).id).toBe('stuck')
    const refused = await rejectionOf(hanging)
    expect(HarnessClosedError.is(refused)).toBe(true)
    expect(refused).toMatchObject({ operation: 'createAgent' })
    expect(order).toEqual(['agent:one', 'agent:stuck', 'preset', 'plugin'])
  })
})

describe('two harnesses in one process', () => {
  test('ids, tools and lifetimes are separate', async () => {
    const other = await mkdtemp(join(tmpdir(), 'yoke-lifecycle-2-'))
    try {
      const m1 = scriptedModel([text('one')])
      const m2 = scriptedModel([text('two'), text('three')])
      const h1 = await open({ persistence: { dir }, model: m1, clock: fakeClock(), ids: fakeIds() })
      const h2 = await open({ persistence: { dir: other }, model: m2, clock: fakeClock(), ids: fakeIds() })
      h1.tools.register(
        defineTool({ name: 'only_h1', description: 'h1 only', input: z.object({}), execute: () => 'x' }),
      )
      const a1 = await h1.createAgent()
      const a2 = await h2.createAgent()
      expect([a1.id, a2.id]).toEqual(['s1', 's1'])
      await a1.run('x')
      await a2.run('y')
      expect(m1.requests[0]?.tools?.map((tool) => tool.name)).toEqual(['only_h1'])
      expect(m2.requests[0]?.tools).toBeUndefined()
      await h1.close()
      const b2 = await h2.createAgent()
      expect(await b2.run('z')).toMatchObject({ reason: { kind: 'completed' }, text: 'three' })
    } finally {
      await rm(other, { recursive: true, force: true })
    }
  })
})

describe('determinism', () => {
  test('two fresh harnesses with the same clock, ids and script write byte-identical files and send equal requests', async () => {
    const dirs = [dir, await mkdtemp(join(tmpdir(), 'yoke-lifecycle-3-'))]
    try {
      const runs = []
      for (const directory of dirs) {
        const model = scriptedModel([text('first'), text('second')])
        const harness = await createHarness({
          persistence: { dir: directory },
          model,
          clock: fakeClock({ now: 0 }),
          ids: fakeIds(),
        })
        const agent = await harness.createAgent()
        await agent.run('one')
        await agent.run('two')
        await harness.close()
        const files = await readdir(directory)
        runs.push({
          files,
          bytes: await Promise.all(files.map((file) => readFile(join(directory, file)))),
          requests: model.requests.map(({ signal: _signal, ...rest }) => rest),
        })
      }
      const [left, right] = runs
      expect(left?.files).toEqual(right?.files)
      expect(left?.bytes).toEqual(right?.bytes)
      expect(left?.requests).toEqual(right?.requests)
      expect(left?.requests).toHaveLength(2)
    } finally {
      await rm(dirs[1] as string, { recursive: true, force: true })
    }
  })
})
