/**
 * The write timeout of live sessions: the option and its checks, a hung append, create or acquire
 * failing with `WRITE_TIMEOUT` (events kept), a late completion never written twice (the retry
 * starts where it left the log), a late failure retried whole, and storage that fails, then
 * recovers, losing nothing. On the memory and JSONL adapters, wrapped by `faultyPersistence`.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  describeHarness,
  type Harness,
  type HarnessOptions,
  jsonlPersistence,
  memoryPersistence,
  type PersistenceAdapter,
  PersistenceError,
  PluginConfigError,
  PluginStartError,
  type SessionEvent,
  type SessionWriteFailedPayload,
} from 'yoke'
import { type FaultyPersistence, type FaultyPersistenceOptions, fakeIds, faultyPersistence } from 'yoke/testing'
import { gate, openAllGates, until } from '../helpers/gates.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { L1, SE, SS, TE, TS, UM } from '../session/builders.js'
import { appendAll } from '../session/session-helpers.js'

let dir: string
let harnesses: Harness[]

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-write-timeout-'))
  harnesses = []
})

afterEach(async () => {
  openAllGates()
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function start(options: HarnessOptions): Promise<Harness> {
  const harness = await createHarness({ ids: fakeIds(), logger: recordingLogger(), ...options })
  harnesses.push(harness)
  return harness
}

const kinds = {
  memory: () => memoryPersistence(),
  jsonl: () => jsonlPersistence({ dir }),
} satisfies Record<string, () => PersistenceAdapter>

const appendsOf = (adapter: FaultyPersistence): (readonly number[])[] =>
  adapter.calls.filter((entry) => entry.method === 'append').map((entry) => entry.seqs)

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, index) => from + index)

/** A second turn, after the first completed one: seqs 6 to 10. */
const secondTurn = [TS(2), SS(2, 1), UM('again'), SE(2, 1), TE(2, 'completed')]

/** What the inner adapter stores for `id` (a fresh adapter over the same files for JSONL). */
async function storedOf(kind: keyof typeof kinds, adapter: FaultyPersistence, id: string): Promise<SessionEvent[]> {
  const reader = kind === 'jsonl' ? jsonlPersistence({ dir }) : adapter.inner
  try {
    return [...(await (reader.readFrom as NonNullable<PersistenceAdapter['readFrom']>)(id, 0)).events]
  } catch (error) {
    if (PersistenceError.is(error) && error.code === 'SESSION_NOT_FOUND') return []
    throw error
  } finally {
    if (kind === 'jsonl') await reader.close()
  }
}

describe('the writeTimeoutMs option', () => {
  test.each([[-1], [1.5], [2 ** 31], ['100'], [Number.NaN]])(
    'writeTimeoutMs %j → PluginStartError (persistence) with a PluginConfigError at writeTimeoutMs',
    async (value) => {
      const error = await rejectionOf(createHarness({ writeTimeoutMs: value as number, logger: recordingLogger() }))
      expect(error).toBeInstanceOf(PluginStartError)
      const cause = (error as PluginStartError).cause
      expect(cause).toBeInstanceOf(PluginConfigError)
      expect((cause as PluginConfigError).issues).toEqual([
        { path: ['writeTimeoutMs'], message: 'must be an integer from 0 (no timeout) to 2147483647' },
      ])
    },
  )

  test('is passed to the persistence entry only when set', () => {
    const set = describeHarness({ writeTimeoutMs: 250 }).entries.find((entry) => entry.id === 'persistence')
    expect(set?.config).toEqual({ writeTimeoutMs: 250 })
    const unset = describeHarness({}).entries.find((entry) => entry.id === 'persistence')
    expect(unset?.config).toEqual({})
  })

  test('0 waits for ever: a 150 ms append is not timed out', async () => {
    const held = gate()
    const adapter = faultyPersistence(memoryPersistence(), {
      hold: (entry) => (entry.method === 'append' ? held.promise : undefined),
    })
    const harness = await start({ persistence: adapter, writeTimeoutMs: 0 })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    const flushed = harness.sessions.flush(session)
    setTimeout(held.open, 150)
    await expect(flushed).resolves.toBe(true)
    expect(appendsOf(adapter)).toEqual([range(0, 6)])
  })
})

describe.each(Object.keys(kinds) as (keyof typeof kinds)[])('the write timeout (%s)', (kind) => {
  async function rig(options: FaultyPersistenceOptions, writeTimeoutMs = 250) {
    const adapter = faultyPersistence(kinds[kind](), options)
    const harness = await start({ persistence: adapter, writeTimeoutMs })
    const failures: SessionWriteFailedPayload[] = []
    harness.on('session/write-failed', (payload) => {
      failures.push(payload)
    })
    return { adapter, harness, failures }
  }

  test('a hung append fails the flush with WRITE_TIMEOUT naming the session and the call; a late success is not written again', async () => {
    const held = gate()
    const { adapter, harness } = await rig({
      hold: (entry) => (entry.method === 'append' && entry.count === 1 ? held.promise : undefined),
    })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    const error = await rejectionOf(harness.sessions.flush(session))
    expect(error).toMatchObject({ code: 'FLUSH_FAILED' })
    const timeout = (error as { cause?: unknown }).cause
    expect(timeout).toBeInstanceOf(PersistenceError)
    expect(timeout).toMatchObject({ code: 'WRITE_TIMEOUT', sessionId: 's1', operation: 'append', timeoutMs: 250 })
    expect((timeout as Error).message).toBe(
      `session "s1": the storage adapter's append did not settle within 250 ms; it counts as failed`,
    )
    // More events while the append is in doubt; then it completes late.
    appendAll(session, secondTurn)
    held.open()
    await harness.sessions.flush(session)
    expect(appendsOf(adapter)).toEqual([range(0, 6), range(6, 11)])
    const stored = await storedOf(kind, adapter, 's1')
    expect(stored.map((event) => event.seq)).toEqual(range(0, 11))
    expect(stored.map((event) => JSON.stringify(event))).toEqual(session.events.map((event) => JSON.stringify(event)))
  })

  test('a retry waits for the append still in flight, then writes only what it did not store', async () => {
    const held = gate()
    const { adapter, harness } = await rig(
      { hold: (entry) => (entry.method === 'append' && entry.count === 1 ? held.promise : undefined) },
      1000,
    )
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    await rejectionOf(harness.sessions.flush(session))
    appendAll(session, secondTurn)
    const retry = harness.sessions.flush(session)
    await sleep(50)
    // The retry has not called the adapter: one append is in flight at a time.
    expect(appendsOf(adapter)).toEqual([range(0, 6)])
    held.open()
    await retry
    expect(appendsOf(adapter)).toEqual([range(0, 6), range(6, 11)])
    expect((await storedOf(kind, adapter, 's1')).map((event) => event.seq)).toEqual(range(0, 11))
  })

  test('a late success resumes the paused queue: the events are written without another flush', async () => {
    const held = gate()
    const { adapter, harness, failures } = await rig({
      hold: (entry) => (entry.method === 'append' && entry.count === 1 ? held.promise : undefined),
    })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    // The first write is the window's (automatic): its timeout is reported, not thrown.
    await until(() => failures.length === 1, 'the timeout report')
    expect(failures[0]).toMatchObject({ sessionId: 's1', pendingEvents: 6, error: { code: 'WRITE_TIMEOUT' } })
    held.open()
    await until(async () => (await storedOf(kind, adapter, 's1')).length === 6, 'the late append')
    expect(appendsOf(adapter)).toEqual([range(0, 6)])
    await harness.sessions.flush(session)
    expect(appendsOf(adapter)).toEqual([range(0, 6)])
  })

  test('a late failure: the retry writes the whole batch once', async () => {
    const held = gate()
    const { adapter, harness } = await rig({
      hold: (entry) => (entry.method === 'append' && entry.count === 1 ? held.promise : undefined),
      fail: (entry) => (entry.method === 'append' && entry.count === 1 ? new Error('disk gone') : undefined),
    })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    expect(await rejectionOf(harness.sessions.flush(session))).toMatchObject({ cause: { code: 'WRITE_TIMEOUT' } })
    held.open()
    // The late failure resumes the queue, which retries at once.
    await until(() => appendsOf(adapter).length === 2, 'the retry')
    await harness.sessions.flush(session)
    expect(appendsOf(adapter)).toEqual([range(0, 6), range(0, 6)])
    expect((await storedOf(kind, adapter, 's1')).map((event) => event.seq)).toEqual(range(0, 6))
  })

  test('storage that fails, then recovers, loses nothing and duplicates nothing', async () => {
    let down = true
    const { adapter, harness } = await rig(
      { fail: (entry) => (down && entry.method === 'append' ? new Error('connection refused') : undefined) },
      10_000,
    )
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    expect(await rejectionOf(harness.sessions.flush(session))).toMatchObject({ cause: { code: 'WRITE_FAILED' } })
    appendAll(session, secondTurn)
    expect(await rejectionOf(harness.sessions.flush(session))).toMatchObject({ cause: { code: 'WRITE_FAILED' } })
    down = false
    await harness.sessions.flush(session)
    const stored = await storedOf(kind, adapter, 's1')
    expect(stored.map((event) => JSON.stringify(event))).toEqual(session.events.map((event) => JSON.stringify(event)))
    expect(appendsOf(adapter).at(-1)).toEqual(range(0, 11))
  })

  test('a hung acquire fails the flush with WRITE_TIMEOUT naming acquire; the write goes through once it answers', async () => {
    const held = gate()
    const { adapter, harness } = await rig({
      hold: (entry) => (entry.method === 'acquire' ? held.promise : undefined),
    })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    const error = await rejectionOf(harness.sessions.flush(session))
    expect((error as { cause?: unknown }).cause).toMatchObject({
      code: 'WRITE_TIMEOUT',
      sessionId: 's1',
      operation: 'acquire',
    })
    expect(appendsOf(adapter)).toEqual([])
    held.open()
    await until(async () => (await storedOf(kind, adapter, 's1')).length === 6, 'the resumed write')
    await harness.sessions.flush(session)
    expect(appendsOf(adapter)).toEqual([range(0, 6)])
  })

  test('a hung create is named create', async () => {
    const held = gate()
    const { harness } = await rig({ hold: (entry) => (entry.method === 'create' ? held.promise : undefined) })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    const error = await rejectionOf(harness.sessions.flush(session))
    expect((error as { cause?: unknown }).cause).toMatchObject({ code: 'WRITE_TIMEOUT', operation: 'create' })
    held.open()
    await harness.sessions.flush(session)
  })

  test('close with a hung append returns within the timeouts and names the session', async () => {
    const held = gate()
    const { harness } = await rig({ hold: (entry) => (entry.method === 'append' ? held.promise : undefined) })
    appendAll(harness.sessions.create({ id: 's1' }), L1())
    appendAll(harness.sessions.create({ id: 's2' }), L1())
    const started = Date.now()
    const error = await rejectionOf(harness.close())
    expect(Date.now() - started).toBeLessThan(2000)
    expect(error).toMatchObject({ code: 'CLOSE_FAILED' })
    expect((error as { unflushedSessions?: unknown }).unflushedSessions).toEqual(['s1', 's2'])
  })

  test('close with a hung adapter close returns, reporting it', async () => {
    const held = gate()
    const { harness } = await rig({ hold: (entry) => (entry.method === 'close' ? held.promise : undefined) })
    const error = await rejectionOf(harness.close())
    expect(error).toMatchObject({ code: 'CLOSE_FAILED' })
    expect(JSON.stringify(error, ['errors', 'error', 'code', 'operation'])).toContain('"operation":"close"')
  })
})
