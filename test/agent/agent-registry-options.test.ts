/**
 * `agents.create` options: `seed` and `meta`, and the typed errors for
 * a bad options object (an options object → `InvalidOptionsError`).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, InvalidOptionsError } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

const harnesses: Harness[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function harnessOf(dir?: string): Promise<Harness> {
  const script = Array.from({ length: 4 }, (_, index) => text(`reply ${index + 1}`))
  const harness = await createHarness({
    model: scriptedModel(script),
    clock: fakeClock({ now: 0 }),
    ids: fakeIds(),
    logger: recordingLogger(),
    ...(dir === undefined ? {} : { persistence: { dir } }),
  })
  harnesses.push(harness)
  return harness
}

describe('agents.create seed and meta', () => {
  test('a seed starts the session from those events, then the end-seed marker; the next turn is numbered on', async () => {
    const harness = await harnessOf()
    const source = await harness.agents.create({ id: 'src' })
    await source.run('hello')
    const seeded = await harness.agents.create({ id: 'seeded', seed: source.session.events })
    const events = seeded.session.events
    expect(events).toHaveLength(source.session.events.length + 1)
    expect(events.at(-1)?.type).toBe('session/end-seed')
    expect(events.slice(0, -1).map((event) => event.type)).toEqual(source.session.events.map((event) => event.type))
    const result = await seeded.run('again')
    expect(result.turn).toBe(2)
    expect(seeded.session.deriveMessages().map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ])
  })

  test('an empty seed still gets its marker; a bad seed rejects with the seed error and publishes nothing', async () => {
    const harness = await harnessOf()
    const empty = await harness.agents.create({ id: 'e', seed: [] })
    expect(empty.session.events.map((event) => event.type)).toEqual(['session/end-seed'])
    const error = await rejectionOf(harness.agents.create({ id: 'bad', seed: [{ nonsense: true }] }))
    expect(error).toMatchObject({ name: 'SessionEventError', index: 0 })
    expect(harness.agents.get('bad')).toBeUndefined()
    expect(harness.sessions.get('bad')).toBeUndefined()
  })

  test('meta is stored as the header metadata and survives a resume (JSONL)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'yoke-agent-meta-'))
    dirs.push(dir)
    const harness = await harnessOf(dir)
    const agent = await harness.agents.create({ id: 'm', meta: { tenant: 'acme', tags: ['a'] } })
    expect(agent.session.header.metadata).toEqual({ tenant: 'acme', tags: ['a'] })
    await agent.run('hi')
    await harness.close()
    harnesses.splice(0)
    const again = await harnessOf(dir)
    const resumed = await again.resumeAgent('m')
    expect(resumed.session.header.metadata).toEqual({ tenant: 'acme', tags: ['a'] })
  })

  test('a seeded agent over JSONL is written from seq 0 and resumes to the same log', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'yoke-agent-seed-'))
    dirs.push(dir)
    const harness = await harnessOf(dir)
    const source = await harness.agents.create({ id: 'src' })
    await source.run('hello')
    const seeded = await harness.agents.create({ id: 'seeded', seed: source.session.events })
    await seeded.run('again')
    const written = seeded.session.events.map((event) => event.type)
    await harness.close()
    harnesses.splice(0)
    const again = await harnessOf(dir)
    const resumed = await again.resumeAgent('seeded')
    // A resume seeds the loaded log, so its own marker follows.
    expect(resumed.session.events.map((event) => event.type)).toEqual([...written, 'session/end-seed'])
    expect(written.filter((type) => type === 'session/end-seed')).toHaveLength(1)
  })
})

describe('bad create and resume options get InvalidOptionsError', () => {
  test.each([
    [null, []],
    [5, []],
    [{ bogus: 1 }, ['bogus']],
    [{ setup: 'x' }, ['setup']],
    [{ signal: 5 }, ['signal']],
    [{ seed: 'x' }, ['seed']],
    [{ meta: [1] }, ['meta']],
    [{ id: 7 }, ['id']],
  ])('create(%j) → path %j; nothing published', async (options, path) => {
    const harness = await harnessOf()
    const error = await rejectionOf(harness.agents.create(options as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect((error as InvalidOptionsError).issues[0]?.path).toEqual(path)
    expect(harness.agents.list()).toEqual([])
    expect(harness.sessions.list()).toEqual([])
  })

  test('resume refuses seed, meta, id and a bad setup before reading anything', async () => {
    const harness = await harnessOf()
    for (const [options, key] of [
      [{ seed: [] }, 'seed'],
      [{ meta: {} }, 'meta'],
      [{ id: 'x' }, 'id'],
      [{ setup: 1 }, 'setup'],
    ] as const) {
      const error = await rejectionOf(harness.agents.resume('nowhere', options as never))
      expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field: key })
    }
  })
})

describe('harness and run options get typed errors', () => {
  test('createAgent(null), createAgent({ bogus }) and fork(id, null) reject InvalidOptionsError', async () => {
    const harness = await harnessOf()
    const source = await harness.createAgent({ sessionId: 'src' })
    await source.run('hello')
    for (const call of [
      () => harness.createAgent(null as never),
      () => harness.createAgent({ bogus: 1 } as never),
      () => harness.fork('src', null as never),
      () => harness.fork('src', { depth: 1 } as never),
    ]) {
      const error = await rejectionOf(call())
      expect(InvalidOptionsError.is(error)).toBe(true)
    }
    expect(harness.agents.list().map((agent) => agent.id)).toEqual(['src'])
  })

  test('run and stream with a non-object options or a non-signal are refused InvalidArgumentError, nothing queued', async () => {
    const harness = await harnessOf()
    const agent = await harness.createAgent()
    for (const options of [null, 5, { signal: 5 }, { signal: {} }]) {
      const error = await rejectionOf(agent.run('q', options as never))
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' })
      expect(() => agent.stream('q', options as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    }
    expect(agent.inbox.nextTurn).toEqual([])
    expect(agent.session.events).toEqual([])
  })
})

describe('a disposed agent’s inbox and cancel', () => {
  test('cancel() after dispose is a no-op that keeps the queued work; inbox edits throw AgentDisposedError', async () => {
    const harness = await harnessOf()
    const agent = await harness.createAgent({ sessionId: 'q' })
    const hold = agent.ctx.on('agent/pre-step', () => new Promise<never>(() => {}))
    const first = agent.run('first').catch((error: unknown) => error)
    const queued = agent.followup('queued')
    const disposing = agent.dispose()
    expect(() => agent.cancel()).not.toThrow()
    for (const edit of [
      () => agent.inbox.remove(queued.id),
      () => agent.inbox.replace(queued.id, 'x'),
      () => agent.inbox.clear(),
    ]) {
      expect(() => edit()).toThrow(expect.objectContaining({ code: 'AGENT_DISPOSED' }))
    }
    await disposing
    hold()
    await first
    expect(agent.inbox.nextTurn.map((message) => message.id)).toEqual([queued.id])
    const spliced = agent.session.events.filter((event) => event.type === 'agent/inbox/spliced')
    expect(spliced.some((event) => (event.data as { outcome?: string }).outcome === 'canceled')).toBe(false)
  })
})

describe('more bad arguments get typed errors', () => {
  test('createAgent sessionId, resume/open overrides arrays, cancel/compact options, send wakeup, session.at', async () => {
    const harness = await harnessOf()
    expect(await rejectionOf(harness.createAgent({ sessionId: 42 } as never))).toMatchObject({
      code: 'INVALID_OPTIONS',
      field: 'sessionId',
    })
    expect(await rejectionOf(harness.resumeAgent('x', [] as never))).toMatchObject({ code: 'INVALID_OPTIONS' })
    expect(await rejectionOf(harness.openAgent('x', [] as never))).toMatchObject({ code: 'INVALID_OPTIONS' })
    const agent = await harness.createAgent()
    for (const options of [null, 42, { keepInbox: 'yes' }]) {
      expect(() => agent.cancel({ kind: 'user' }, options as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', argument: 'options' }),
      )
    }
    expect(await rejectionOf(agent.compact(null as never))).toMatchObject({ code: 'INVALID_ARGUMENT' })
    expect(await rejectionOf(agent.compact({ signal: 42 } as never))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      argument: 'options.signal',
    })
    expect(() => agent.send('x', 'next-turn', 'no' as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', argument: 'wakeup' }),
    )
    expect(agent.session.events).toEqual([])
    await agent.run('hi')
    expect([
      agent.session.at('length' as never),
      agent.session.at(0.5),
      agent.session.at(-1),
      agent.session.at(0)?.seq,
    ]).toEqual([undefined, undefined, undefined, 0])
  })
})

describe('listener results the loop cannot use end the turn with a typed error', () => {
  test('agent/pre-step returning null → INVALID_MESSAGE; agent/request returning null → INVALID_REQUEST', async () => {
    const harness = await harnessOf()
    const agent = await harness.createAgent()
    const preStep = agent.ctx.on('agent/pre-step', () => null as never)
    const first = await agent.run('a')
    expect(first.reason).toMatchObject({ kind: 'error', error: { code: 'INVALID_MESSAGE' } })
    preStep()
    agent.ctx.on('agent/request', () => null as never)
    const second = await agent.run('b')
    expect(second.reason).toMatchObject({ kind: 'error', error: { code: 'INVALID_REQUEST' } })
  })
})
