/**
 * `fork` and `listSessions`: stored and forked sessions, a live source, the child-id
 * checks and a stored source with a repair pending.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, HarnessClosedError, type SessionEvent, SessionForkError } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'

let dir: string
let ids: ReturnType<typeof fakeIds>
const harnesses: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-fork-'))
  ids = fakeIds()
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  await rm(dir, { recursive: true, force: true })
})

async function open(options: Parameters<typeof createHarness>[0] = {}): Promise<Harness> {
  const harness = await createHarness({ persistence: { dir }, clock: fakeClock(), ids, ...options })
  harnesses.push(harness)
  return harness
}

function seqOf(events: readonly SessionEvent[], type: string, turn: number): number {
  const event = events.find(
    (candidate) => candidate.type === type && (candidate.data as { readonly turn?: number }).turn === turn,
  )
  if (event === undefined) throw new Error(`no ${type} of turn ${turn}`)
  return event.seq
}

/** Session `s` with two completed turns, stored; the harness that wrote it is closed. */
async function twoTurns(): Promise<readonly SessionEvent[]> {
  const first = await open({ model: scriptedModel([text('one'), text('two')]) })
  const agent = await first.createAgent({ sessionId: 's' })
  await agent.run('a')
  await agent.run('b')
  const events = agent.session.events
  await first.close()
  return events
}

describe('fork a stored session', () => {
  test('the child copies the prefix with a lineage header; the source file is byte-identical; the child resumes at turn 2', async () => {
    const events = await twoTurns()
    const file = join(dir, 's.jsonl')
    const before = await readFile(file)
    const harness = await open({ model: scriptedModel([text('branch')]) })
    const k = seqOf(events, 'turn/end', 1)
    const child = await harness.fork('s', { at: k, id: 'c' })
    expect(child.id).toBe('c')
    expect(child.events.slice(0, k + 1)).toEqual(events.slice(0, k + 1))
    expect(child.at(k + 1)?.type).toBe('session/end-seed')
    expect(child.header).toMatchObject({ parentSession: 's', seedLength: k + 1 })
    expect(await readFile(file)).toEqual(before)
    const append = thrownBy(() => child.append('turn/start', { turn: 2 }))
    expect(append).toMatchObject({ code: 'SESSION_DISPOSED' })
    expect(harness.sessions.get('c')).toBeUndefined()

    const resumed = await harness.resumeAgent('c')
    expect(resumed.session.header).toMatchObject({ parentSession: 's', seedLength: k + 1 })
    expect(await resumed.run('x')).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'branch' })
    expect(await readFile(file)).toEqual(before)
  })

  test('without at the whole stored log is copied', async () => {
    const events = await twoTurns()
    const harness = await open()
    const child = await harness.fork('s', { id: 'all' })
    expect(child.events.slice(0, events.length)).toEqual(events)
    expect(child.header.seedLength).toBe(events.length)
  })
})

describe('fork errors', () => {
  test('at inside turn 2 rejects OPEN_TURN with nearestBalancedSeq; no child exists', async () => {
    const events = await twoTurns()
    const harness = await open()
    const stepStart = events.find(
      (event) => event.type === 'step/start' && event.seq > seqOf(events, 'turn/start', 2),
    ) as SessionEvent
    const error = await rejectionOf(harness.fork('s', { at: stepStart.seq, id: 'c' }))
    expect(SessionForkError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'OPEN_TURN', turn: 2, nearestBalancedSeq: seqOf(events, 'turn/start', 2) - 1 })
    expect(harness.sessions.get('c')).toBeUndefined()
    expect((await harness.listSessions()).map((summary) => summary.id)).toEqual(['s'])
  })

  test('unknown source, bad boundary, live or stored child id', async () => {
    const events = await twoTurns()
    const harness = await open()
    expect(await rejectionOf(harness.fork('nope', { id: 'c' }))).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      name: 'SessionForkError',
    })
    const boundary = await rejectionOf(harness.fork('s', { at: events.length, id: 'c' }))
    expect(boundary).toMatchObject({ code: 'INVALID_BOUNDARY', at: events.length, lastSeq: events.length - 1 })
    harness.sessions.create({ id: 'taken' })
    expect(await rejectionOf(harness.fork('s', { at: 2, id: 'taken' }))).toMatchObject({ code: 'SESSION_EXISTS' })
    const stored = await rejectionOf(harness.fork('s', { id: 's' }))
    expect(SessionForkError.is(stored)).toBe(true)
    expect(stored).toMatchObject({ code: 'SESSION_EXISTS', sessionId: 's' })
    // Both headers have createdAt 0: ties are ordered by id.
    expect((await harness.listSessions()).map((summary) => summary.id)).toEqual(['s', 'taken'])
  })

  test('a generated child id that is stored or live is skipped', async () => {
    const first = await open({ model: scriptedModel([text('one')]), ids: fakeIds() })
    const agent = await first.createAgent()
    expect(agent.id).toBe('s1')
    await agent.run('hi')
    await first.close()
    const harness = await open({ ids: fakeIds() })
    harness.sessions.create({ id: 's2' })
    // s1 is the stored source and s2 is live: the fork takes s3.
    expect((await harness.fork('s1')).id).toBe('s3')
    expect((await harness.listSessions()).map((summary) => summary.id)).toEqual(['s1', 's2', 's3'])
    // A generator that only repeats a taken id: the fork gives up with SESSION_EXISTS for it.
    const stuck = await open({ ids: () => 's1' })
    const error = await rejectionOf(stuck.fork('s3'))
    expect(SessionForkError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SESSION_EXISTS', sessionId: 's1' })
  })

  test('a stored log with an open last turn: the in-memory closers are never copied', async () => {
    const events = await twoTurns()
    const file = join(dir, 's.jsonl')
    // Cut the log right after turn 2's step/start: a crash inside turn 2.
    const lines = (await readFile(file, 'utf8')).split('\n')
    const cut = seqOf(events, 'turn/start', 2) + 2
    const header = lines.length - 1 - events.length
    await writeFile(file, `${lines.slice(0, header + cut).join('\n')}\n`)
    const before = await readFile(file)
    const harness = await open()
    const inspected = await harness.persistence.inspect('s')
    expect(inspected.repairPending).toBe(true)
    const closingEnd = inspected.events.length - 1
    expect(inspected.events[closingEnd]?.type).toBe('turn/end')
    const past = await rejectionOf(harness.fork('s', { at: closingEnd, id: 'c' }))
    expect(past).toMatchObject({ code: 'INVALID_BOUNDARY', at: closingEnd, lastSeq: cut - 1 })
    const whole = await rejectionOf(harness.fork('s', { id: 'c' }))
    expect(whole).toMatchObject({ code: 'OPEN_TURN', turn: 2 })
    const balanced = await harness.fork('s', { at: seqOf(events, 'turn/end', 1), id: 'c' })
    expect(balanced.header.seedLength).toBe(seqOf(events, 'turn/end', 1) + 1)
    expect(await readFile(file)).toEqual(before)
  })
})

describe('fork a live session', () => {
  test('the child is flushed and disposed; the source gains no event', async () => {
    const harness = await open({ model: scriptedModel([text('one'), text('two')]) })
    const agent = await harness.createAgent({ sessionId: 'p' })
    await agent.run('a')
    const length = agent.session.length
    const child = await harness.fork('p', { id: 'kid' })
    expect(agent.session.length).toBe(length)
    expect(child.header).toMatchObject({ parentSession: 'p', seedLength: length })
    expect(harness.sessions.get('kid')).toBeUndefined()
    const stored = await harness.persistence.load('kid')
    expect(stored.events).toEqual(child.events)
    const resumed = await harness.resumeAgent('kid')
    expect(await resumed.run('b')).toMatchObject({ turn: 2, text: 'two' })
  })

  test('fork and listSessions reject HarnessClosedError after close', async () => {
    const harness = await open()
    await harness.close()
    expect(HarnessClosedError.is(await rejectionOf(harness.fork('s')))).toBe(true)
    expect(await rejectionOf(harness.listSessions())).toMatchObject({
      code: 'HARNESS_CLOSED',
      operation: 'listSessions',
    })
  })
})

describe('listSessions', () => {
  test('live b (created last) and stored-only a → ids [b, a], live [true, false], each once', async () => {
    const clock = fakeClock({ now: 100 })
    const first = await open({ clock, model: scriptedModel([text('x'), text('y')]) })
    const stored = await first.createAgent({ sessionId: 'a' })
    await stored.run('hi')
    clock.advance(10)
    const both = await first.createAgent({ sessionId: 'b' })
    await both.run('hi')
    await stored.dispose()
    const listed = await first.listSessions()
    expect(listed.map((summary) => summary.id)).toEqual(['b', 'a'])
    expect(listed.map((summary) => summary.live)).toEqual([true, false])
    expect(listed).toEqual([
      { id: 'b', createdAt: 110, live: true },
      { id: 'a', createdAt: 100, live: false },
    ])
  })

  test('ties on createdAt are ordered by id; a fork lists its parent', async () => {
    const harness = await open({ model: scriptedModel([text('x')]) })
    const agent = await harness.createAgent({ sessionId: 'm' })
    await agent.run('hi')
    await harness.fork('m', { id: 'f' })
    harness.sessions.create({ id: 'z' })
    expect(await harness.listSessions()).toEqual([
      { id: 'f', createdAt: 0, parentSession: 'm', live: false },
      { id: 'm', createdAt: 0, live: true },
      { id: 'z', createdAt: 0, live: true },
    ])
  })
})
