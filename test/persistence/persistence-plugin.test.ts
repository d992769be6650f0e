/**
 * The `persistence` entry: its config and description, binding live
 * sessions, write-behind batches reaching the adapter (the write-behind rules through a harness),
 * flush as the durability checkpoint, error wrapping, dispose and close.
 *
 * @module
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  describeHarness,
  type Harness,
  HarnessCloseError,
  type HarnessOptions,
  jsonlPersistence,
  LeaseLostError,
  memoryPersistence,
  type PersistenceAdapter,
  PersistenceBackpressureError,
  PersistenceError,
  PluginConfigError,
  PluginStartError,
  type SessionEvent,
  SessionRegistryError,
  SessionVetoError,
  type SessionWriteFailedPayload,
  services,
} from 'yoke'
import type { JsonlFileSystem } from '../../src/persistence/index.js'
import {
  type FakeClock,
  type FaultyPersistence,
  fakeClock,
  fakeIds,
  faultyPersistence,
  scriptedModel,
  text as textReply,
} from 'yoke/testing'
import type { PersistenceCall } from '../../src/testing/faulty-persistence.js'
import type { HarnessPersistence } from '../../src/persistence/create-persistence-coordinator.js'
import { nodeFileSystem } from '../../src/persistence/jsonl/jsonl-file-system.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { type RecordingLogger, recordingLogger } from '../helpers/recording-logger.js'
import { L1, logOf, SS, TE, TS, UM } from '../session/builders.js'
import { append, appendAll, expectError } from '../session/session-helpers.js'

const seqsOf = (events: readonly SessionEvent[]): number[] => events.map((event) => event.seq)
const typesOf = (events: readonly SessionEvent[]): string[] => events.map((event) => event.type)

let dir: string
let harnesses: Harness[]
let adapters: PersistenceAdapter[]
let clock: FakeClock
let logger: RecordingLogger

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-persistence-plugin-'))
  harnesses = []
  adapters = []
  clock = fakeClock({ now: 0 })
  logger = recordingLogger()
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
  for (const adapter of adapters.splice(0)) await adapter.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

function J(options: { fileSystem?: JsonlFileSystem } = {}): PersistenceAdapter {
  const adapter = jsonlPersistence({ dir, ...options })
  adapters.push(adapter)
  return adapter
}

/** A started harness over this test's fake clock (at 0), fake ids and recording logger; closed after the test. */
async function start(options: HarnessOptions = {}): Promise<Harness> {
  const harness = await createHarness({ clock, ids: fakeIds(), logger, ...options })
  harnesses.push(harness)
  return harness
}

const appendsOf = (adapter: FaultyPersistence): (readonly number[])[] =>
  adapter.calls.filter((call) => call.method === 'append').map((call) => call.seqs)

const methodsOf = (adapter: FaultyPersistence): PersistenceCall['method'][] => adapter.calls.map((call) => call.method)

/** Lets pending promise continuations and I/O callbacks run. */
async function settle(rounds = 20): Promise<void> {
  for (let round = 0; round < rounds; round++) await new Promise((resolve) => setImmediate(resolve))
}

/** Waits (real time, for file I/O) until `condition` holds; fails after two seconds. */
async function until(condition: () => boolean | Promise<boolean>, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + 2000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/** Records every `session/write-failed` of `harness`. */
function writeFailures(harness: Harness): SessionWriteFailedPayload[] {
  const reports: SessionWriteFailedPayload[] = []
  harness.on('session/write-failed', (payload) => {
    reports.push(payload)
  })
  return reports
}

describe('the persistence entry', () => {
  test('provides the coordinator as services.persistence and harness.persistence, over a fresh memory adapter by default', async () => {
    const harness = await start()
    for (const operation of ['load', 'inspect', 'prepare', 'readFrom', 'list', 'delete', 'repair'] as const)
      expect(typeof harness.persistence[operation]).toBe('function')
    expect(harness.ctx.get(services.persistence)).toBe(harness.persistence)
    expect(harness.persistence.adapter.name).toBe('memory')
    const entry = harness.describe().entries.find((candidate) => candidate.id === 'persistence')
    expect(entry).toMatchObject({
      name: 'persistence',
      source: 'default',
      inject: ['sessions'],
      provides: ['persistence'],
      startIndex: 1,
    })
    const other = await start()
    expect(other.persistence.adapter).not.toBe(harness.persistence.adapter)
  })

  test('describeHarness shows the { dir } shorthand and an adapter instance JSON-safe', () => {
    const shorthand = describeHarness({ persistence: { dir, compression: 'gzip' }, writeBehind: { windowMs: 50 } })
    const entry = shorthand.entries.find((candidate) => candidate.id === 'persistence')
    expect(entry?.config).toEqual({ adapter: { dir, compression: 'gzip' }, writeBehind: { windowMs: 50 } })
    expect(JSON.parse(JSON.stringify(entry?.config))).toEqual(entry?.config)
    const instance = describeHarness({ persistence: memoryPersistence() }).entries.find(
      (candidate) => candidate.id === 'persistence',
    )
    const config = instance?.config as { adapter: Record<string, unknown> }
    expect(config.adapter['name']).toBe('memory')
    expect(typeof config.adapter['append']).toBe('string')
    expect(JSON.parse(JSON.stringify(config))).toEqual(config)
    expect(describeHarness().entries.find((candidate) => candidate.id === 'persistence')).not.toHaveProperty(
      'config.adapter',
    )
  })

  test('the { dir } shorthand is jsonlPersistence({ dir }): a flushed session is <dir>/s1.jsonl', async () => {
    const harness = await start({ persistence: { dir } })
    expect(harness.persistence.adapter.name).toBe('jsonl')
    const session = appendAll(harness.sessions.create(), L1())
    expect(session.id).toBe('s1')
    expect(await harness.sessions.flush(session)).toBe(true)
    const lines = (await readFile(join(dir, 's1.jsonl'), 'utf8')).split('\n')
    expect(lines[0]).toBe('{"type":"session","version":1,"id":"s1","createdAt":0}')
    expect(lines.slice(1, -1).map((line) => JSON.parse(line) as SessionEvent)).toEqual(
      JSON.parse(JSON.stringify(session.events)),
    )
    await harness.close()
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('the shorthand honours compression', async () => {
    const harness = await start({ persistence: { dir, compression: 'gzip' } })
    await harness.sessions.flush(appendAll(harness.sessions.create(), [TS(1)]))
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl.gz', 's1.lock'])
  })

  test.each([
    [{ windowMs: 0 }, ['writeBehind', 'windowMs']],
    [{ windowMs: 2 ** 31 }, ['writeBehind', 'windowMs']],
    [{ maxPendingEvents: 1.5 }, ['writeBehind', 'maxPendingEvents']],
    [{ maxPendingBytes: 0 }, ['writeBehind', 'maxPendingBytes']],
  ])('writeBehind %j rejects PluginStartError with a PluginConfigError at %j', async (writeBehind, path) => {
    const error = expectError(
      await rejectionOf(createHarness({ writeBehind })),
      PluginStartError,
      'PLUGIN_START_FAILED',
      { plugin: 'persistence' },
    )
    const cause = expectError(error.cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID', { plugin: 'persistence' })
    expect(cause.issues[0]?.path).toEqual(path)
  })

  test('an unknown writeBehind key is refused at its path', async () => {
    const error = expectError(
      await rejectionOf(createHarness({ writeBehind: { window: 5 } as HarnessOptions['writeBehind'] })),
      PluginStartError,
      'PLUGIN_START_FAILED',
    )
    const cause = expectError(error.cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID')
    // Like the harness options, the kernel names the unknown key itself.
    expect(cause.issues).toEqual([{ path: ['writeBehind', 'window'], message: 'unknown option' }])
  })
})

describe('binding and write-behind', () => {
  test('events reach the adapter only as window batches with contiguous expectedSeq', async () => {
    const adapter = faultyPersistence(memoryPersistence())
    const harness = await start({ persistence: adapter })
    const session = harness.sessions.create({ id: 's1' })
    await settle()
    expect(methodsOf(adapter)).toEqual(['acquire', 'create'])
    append(session, TS(1))
    await clock.advance(150)
    append(session, SS(1, 1))
    await clock.advance(49)
    await settle()
    expect(appendsOf(adapter)).toEqual([])
    await clock.advance(1)
    await settle()
    expect(appendsOf(adapter)).toEqual([[0, 1]])
    await clock.advance(100)
    appendAll(session, [UM('a'), UM('b'), UM('c')])
    await clock.advance(199)
    await settle()
    expect(appendsOf(adapter)).toHaveLength(1)
    await clock.advance(1)
    await settle()
    expect(appendsOf(adapter)).toEqual([
      [0, 1],
      [2, 3, 4],
    ])
    expect(clock.pending()).toEqual([])
    expect(seqsOf((await adapter.inner.load('s1')).events)).toEqual([0, 1, 2, 3, 4])
  })

  test('maxPendingEvents writes at once, ignoring the window', async () => {
    const adapter = faultyPersistence(memoryPersistence())
    const harness = await start({ persistence: adapter, writeBehind: { maxPendingEvents: 3 } })
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1), SS(1, 1)])
    await clock.advance(10)
    append(session, UM('x'))
    await settle()
    expect(appendsOf(adapter)).toEqual([[0, 1, 2]])
  })

  test('a seeded session writes its seed and session/end-seed in its first batch', async () => {
    const adapter = faultyPersistence(memoryPersistence())
    const harness = await start({ persistence: adapter })
    const session = harness.sessions.create({ id: 's1', seed: logOf(L1()) })
    expect(await harness.sessions.flush(session)).toBe(true)
    expect(appendsOf(adapter)).toEqual([[0, 1, 2, 3, 4, 5, 6]])
    expect(typesOf((await adapter.inner.load('s1')).events).at(-1)).toBe('session/end-seed')
  })

  test('the first write awaits the binding (acquire, then create)', async () => {
    const held = gate()
    const adapter = faultyPersistence(memoryPersistence(), {
      hold: (call) => (call.method === 'acquire' ? held.promise : undefined),
    })
    const harness = await start({ persistence: adapter })
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
    let flushed = false
    const flushing = harness.sessions.flush(session).then(() => {
      flushed = true
    })
    await settle()
    expect(methodsOf(adapter)).toEqual(['acquire'])
    expect(flushed).toBe(false)
    held.open()
    await flushing
    expect(methodsOf(adapter)).toEqual(['acquire', 'create', 'append'])
  })

  test('flushing a session with nothing pending resolves true with no write', async () => {
    const adapter = faultyPersistence(memoryPersistence())
    const harness = await start({ persistence: adapter })
    const session = harness.sessions.create({ id: 's1' })
    expect(await harness.sessions.flush(session)).toBe(true)
    appendAll(session, [TS(1)])
    await harness.sessions.flush(session)
    expect(await harness.sessions.flush(session)).toBe(true)
    expect(appendsOf(adapter)).toEqual([[0]])
    expect(clock.pending()).toEqual([])
  })

  test('a completed turn is durable, and visible to another harness, once its flush resolves', async () => {
    const held = gate()
    const adapter = faultyPersistence(J(), { hold: (call) => (call.method === 'append' ? held.promise : undefined) })
    const harness = await start({ persistence: adapter })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    let settled = false
    const checkpoint = harness.sessions.flush(session).then(() => {
      settled = true
    })
    await until(() => appendsOf(adapter).length === 1, 'the held append')
    expect(appendsOf(adapter)).toEqual([[0, 1, 2, 3, 4, 5]])
    await settle()
    expect(settled).toBe(false)
    const reader = await createHarness({ persistence: J(), clock: fakeClock({ now: 0 }), logger: recordingLogger() })
    harnesses.push(reader)
    expectError(await rejectionOf(reader.persistence.inspect('s1')), PersistenceError, 'SESSION_NOT_FOUND')
    held.open()
    await checkpoint
    const seen = await reader.persistence.inspect('s1')
    expect(seen.events.at(-1)?.type).toBe('turn/end')
    expect(seen.repairPending).toBe(false)
  })
})

describe('the turn-end checkpoint through an agent turn', () => {
  test("a completed turn's promise resolves only after the append holding turn/end resolved; another harness then sees turn/end", async () => {
    const held = gate()
    let agentEvents: () => readonly SessionEvent[] = () => []
    let holding = false
    const adapter = faultyPersistence(J(), {
      hold: (call) => {
        if (call.method !== 'append' || !call.seqs.some((seq) => agentEvents()[seq]?.type === 'turn/end'))
          return undefined
        holding = true
        return held.promise
      },
    })
    const harness = await start({ persistence: adapter, model: scriptedModel([textReply('hello')]) })
    const agent = await harness.createAgent()
    agentEvents = () => agent.session.events
    const file = join(dir, `${agent.session.id}.jsonl`)
    let linesAtResolve: string[] | undefined
    const running = agent.run('hi').then(() => {
      linesAtResolve = readFileSync(file, 'utf8').split('\n').slice(0, -1)
    })
    await until(() => holding, 'the append holding turn/end')
    await settle()
    expect(linesAtResolve).toBeUndefined()
    expect(agent.session.events.at(-1)?.type).toBe('turn/end')
    const reader = await createHarness({ persistence: J(), clock: fakeClock({ now: 0 }), logger: recordingLogger() })
    harnesses.push(reader)
    const before = await reader.persistence
      .readFrom(agent.session.id, 0)
      .catch(() => ({ events: [] as SessionEvent[] }))
    expect(before.events.at(-1)?.type).not.toBe('turn/end')
    held.open()
    await running
    expect(JSON.parse(linesAtResolve?.at(-1) ?? '{}')).toMatchObject({
      type: 'turn/end',
      seq: agent.session.length - 1,
    })
    const seen = await reader.persistence.inspect(agent.session.id)
    expect(seen.events.at(-1)?.type).toBe('turn/end')
    expect(seen.events.map((event) => JSON.stringify(event))).toEqual(
      agent.session.events.map((event) => JSON.stringify(event)),
    )
    expect(seen.repairPending).toBe(false)
  })
})

describe('failed writes', () => {
  test('a failed background write is reported once, pauses, and is retried with the next event', async () => {
    const writes: number[] = []
    const failure = new Error('disk full')
    const adapter = faultyPersistence(memoryPersistence(), {
      hold: (call) => {
        if (call.method === 'append') writes.push(clock.now())
        return undefined
      },
      fail: (call) => (call.method === 'append' && call.count === 1 ? failure : undefined),
    })
    const harness = await start({ persistence: adapter })
    const reports = writeFailures(harness)
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
    await clock.advance(200)
    await settle()
    expect(writes).toEqual([200])
    expect(reports).toHaveLength(1)
    expect(reports[0]).toMatchObject({ sessionId: 's1', pendingEvents: 1 })
    const error = expectError(reports[0]?.error, PersistenceError, 'WRITE_FAILED', { sessionId: 's1' })
    expect(error.cause).toBe(failure)
    const warnings = logger.at('warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.fields).toMatchObject({ pendingEvents: 1 })
    expect(clock.pending()).toEqual([])
    await clock.advance(800)
    await settle()
    expect(writes).toEqual([200])
    append(session, SS(1, 1))
    await clock.advance(199)
    await settle()
    expect(writes).toEqual([200])
    await clock.advance(1)
    await settle()
    expect(writes).toEqual([200, 1200])
    expect(appendsOf(adapter)).toEqual([[0], [0, 1]])
    expect(reports).toHaveLength(1)
  })

  test('a flush whose write fails rejects FLUSH_FAILED with the wrapped error, keeps the batch and reports nothing', async () => {
    const failure = new Error('EIO')
    let broken = true
    const adapter = faultyPersistence(memoryPersistence(), {
      fail: (call) => (call.method === 'append' && broken ? failure : undefined),
    })
    const harness = await start({ persistence: adapter })
    const reports = writeFailures(harness)
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
    const rejected = expectError(
      await rejectionOf(harness.sessions.flush(session)),
      SessionRegistryError,
      'FLUSH_FAILED',
      { sessionId: 's1' },
    )
    const wrapped = expectError(rejected.cause, PersistenceError, 'WRITE_FAILED', { sessionId: 's1' })
    expect(wrapped.cause).toBe(failure)
    expect(reports).toEqual([])
    expect(logger.at('warn')).toEqual([])
    broken = false
    append(session, SS(1, 1))
    await harness.sessions.flush(session)
    expect(appendsOf(adapter)).toEqual([[0], [0, 1]])
  })

  test('a HarnessError from the adapter is passed on unwrapped', async () => {
    const lost = new LeaseLostError({ code: 'LEASE_LOST', sessionId: 's1', detail: 'injected', epoch: 1 })
    const adapter = faultyPersistence(memoryPersistence(), {
      fail: (call) => (call.method === 'append' ? lost : undefined),
    })
    const harness = await start({ persistence: adapter })
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
    const rejected = expectError(
      await rejectionOf(harness.sessions.flush(session)),
      SessionRegistryError,
      'FLUSH_FAILED',
    )
    expect(rejected.cause).toBe(lost)
  })

  test('back-pressure vetoes appends at the high-water mark after a failed write, until a write succeeds', async () => {
    let broken = true
    const adapter = faultyPersistence(memoryPersistence(), {
      fail: (call) => (call.method === 'append' && broken ? new Error('disk full') : undefined),
    })
    const harness = await start({ persistence: adapter, writeBehind: { maxPendingEvents: 3 } })
    const reports = writeFailures(harness)
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1), SS(1, 1), UM('a')])
    await settle()
    expect(appendsOf(adapter)).toEqual([[0, 1, 2]])
    expect(reports).toHaveLength(1)
    const veto = expectError(
      thrownBy(() => append(session, UM('b'))),
      SessionVetoError,
      'APPEND_VETOED',
      { guard: 'persistence' },
    )
    const pressure = expectError(veto.cause, PersistenceBackpressureError, 'PERSISTENCE_BACKPRESSURE', {
      sessionId: 's1',
      pendingEvents: 3,
    })
    expect(pressure.pendingBytes).toBeGreaterThan(0)
    expectError(pressure.cause, PersistenceError, 'WRITE_FAILED')
    expect(session.length).toBe(3)
    broken = false
    expect(await harness.sessions.flush(session)).toBe(true)
    expect(append(session, UM('b')).seq).toBe(3)
    await harness.sessions.flush(session)
    expect(seqsOf((await adapter.inner.load('s1')).events)).toEqual([0, 1, 2, 3])
  })

  test('fdatasync failing on the second append: the flush rejects, the file is cut back, the retry writes it', async () => {
    let failNext = false
    const injected = new Error('fdatasync failed')
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      fdatasync: async (handle) => {
        if (failNext) {
          failNext = false
          throw injected
        }
        await nodeFileSystem.fdatasync(handle)
      },
    }
    const harness = await start({ persistence: J({ fileSystem }) })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    await harness.sessions.flush(session)
    const size = (await stat(join(dir, 's1.jsonl'))).size
    failNext = true
    appendAll(session, [TS(2), SS(2, 1)])
    const rejected = expectError(
      await rejectionOf(harness.sessions.flush(session)),
      SessionRegistryError,
      'FLUSH_FAILED',
    )
    expect(expectError(rejected.cause, PersistenceError, 'WRITE_FAILED').cause).toBe(injected)
    expect((await stat(join(dir, 's1.jsonl'))).size).toBe(size)
    await harness.sessions.flush(session)
    const stored = await jsonlPersistence({ dir }).load('s1')
    expect(seqsOf(stored.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  })
})

describe('lazy sessions and failed bindings', () => {
  test.each([
    ['memory', () => memoryPersistence()],
    ['jsonl', () => J()],
  ])(
    'a session never appended writes nothing, is not listed, and frees its id on dispose (%s)',
    async (_name, make) => {
      const adapter = faultyPersistence(make())
      const harness = await start({ persistence: adapter })
      await harness.sessions.dispose(harness.sessions.create({ id: 's1' }))
      expect(appendsOf(adapter)).toEqual([])
      expect(await readdir(dir)).toEqual([])
      expect(await harness.persistence.list()).toEqual([])
      const again = harness.sessions.create({ id: 's1' })
      await harness.sessions.dispose(again)
      expect(await readdir(dir)).toEqual([])
      expect(methodsOf(adapter).filter((method) => method !== 'list')).toEqual([
        'acquire',
        'create',
        'acquire',
        'create',
      ])
      const stored = appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
      await harness.sessions.flush(stored)
      expect((await harness.persistence.list()).map((header) => header.id)).toEqual(['s1'])
    },
  )

  test('creating a stored id without prepare fails every flush with SESSION_EXISTS and leaves storage alone', async () => {
    const first = await start({ persistence: J() })
    await first.sessions.flush(appendAll(first.sessions.create({ id: 's1' }), L1()))
    await first.close()
    const before = await readFile(join(dir, 's1.jsonl'), 'utf8')
    const adapter = faultyPersistence(J())
    const harness = await start({ persistence: adapter })
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
    for (let attempt = 0; attempt < 2; attempt++) {
      const rejected = expectError(
        await rejectionOf(harness.sessions.flush(session)),
        SessionRegistryError,
        'FLUSH_FAILED',
      )
      expectError(rejected.cause, PersistenceError, 'SESSION_EXISTS', { sessionId: 's1' })
    }
    expect(appendsOf(adapter)).toEqual([])
    expect(clock.pending()).toEqual([])
    expect(await readFile(join(dir, 's1.jsonl'), 'utf8')).toBe(before)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('a lease held elsewhere fails the binding with SessionLockedError', async () => {
    const other = await J().acquire('s1')
    const harness = await start({ persistence: J() })
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
    const rejected = expectError(
      await rejectionOf(harness.sessions.flush(session)),
      SessionRegistryError,
      'FLUSH_FAILED',
    )
    expect((rejected.cause as { code?: unknown }).code).toBe('SESSION_LOCKED')
    await other.release()
  })

  test('a stale lock of an exited process is taken over with one logger.warn naming its pid', async () => {
    const child = spawn(process.execPath, ['-e', ''])
    const pid = child.pid as number
    await new Promise((resolve) => child.once('exit', resolve))
    const stale = (id: string): Promise<void> =>
      writeFile(
        join(dir, `${id}.lock`),
        JSON.stringify({ pid, host: hostname(), token: 'f'.repeat(32), acquiredAt: 7 }),
      )
    const seeding = await start({ persistence: J() })
    await seeding.sessions.flush(appendAll(seeding.sessions.create({ id: 's2' }), L1()))
    await seeding.close()
    logger.records.splice(0)
    await stale('s1')
    await stale('s2')
    const harness = await start({ persistence: J() })
    await harness.sessions.flush(appendAll(harness.sessions.create({ id: 's1' }), [TS(1)]))
    let warnings = logger.at('warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.message).toContain(String(pid))
    expect(warnings[0]?.fields).toMatchObject({ sessionId: 's1', holder: { pid, host: hostname(), acquiredAt: 7 } })
    expect((await harness.persistence.load('s2')).events).toHaveLength(6)
    warnings = logger.at('warn')
    expect(warnings).toHaveLength(2)
    expect(warnings[1]?.message).toContain(String(pid))
    expect(await readdir(dir)).toContain('s1.lock')
    expect(await readdir(dir)).not.toContain('s2.lock')
  })
})

describe('dispose', () => {
  test('flushes and releases: the events are stored and the lock file is gone', async () => {
    const adapter = faultyPersistence(J())
    const harness = await start({ persistence: adapter })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    await until(() => adapter.calls.some((call) => call.method === 'create'), 'the binding')
    expect(await readdir(dir)).toEqual(['s1.lock'])
    await harness.sessions.dispose(session)
    expect(appendsOf(adapter)).toEqual([[0, 1, 2, 3, 4, 5]])
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    expect(clock.pending()).toEqual([])
    expect(seqsOf((await harness.persistence.load('s1')).events)).toEqual([0, 1, 2, 3, 4, 5])
  })

  test('a failed flush rejects DISPOSE_FAILED and keeps queue and lease; close retries and releases', async () => {
    let broken = true
    const failure = new Error('EIO')
    const adapter = faultyPersistence(J(), {
      fail: (call) => (call.method === 'append' && broken ? failure : undefined),
    })
    const harness = await start({ persistence: adapter })
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    const rejected = expectError(
      await rejectionOf(harness.sessions.dispose(session)),
      SessionRegistryError,
      'DISPOSE_FAILED',
      { sessionId: 's1' },
    )
    expect(expectError(rejected.cause, PersistenceError, 'WRITE_FAILED').cause).toBe(failure)
    expect(session.disposed).toBe(true)
    expect(await readdir(dir)).toEqual(['s1.lock'])
    broken = false
    await harness.close()
    expect(appendsOf(adapter)).toEqual([
      [0, 1, 2, 3, 4, 5],
      [0, 1, 2, 3, 4, 5],
    ])
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    expect(seqsOf((await jsonlPersistence({ dir }).load('s1')).events)).toEqual([0, 1, 2, 3, 4, 5])
  })
  test('a new session reusing the id of a failed dispose cannot take its lease, and close still retries the old events', async () => {
    let broken = true
    const adapter = faultyPersistence(J(), {
      fail: (call) => (call.method === 'append' && broken ? new Error('EIO') : undefined),
    })
    const harness = await start({ persistence: adapter })
    const old = appendAll(harness.sessions.create({ id: 's1' }), L1())
    expectError(await rejectionOf(harness.sessions.dispose(old)), SessionRegistryError, 'DISPOSE_FAILED')
    broken = false
    const reused = appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
    const rejected = expectError(
      await rejectionOf(harness.sessions.flush(reused)),
      SessionRegistryError,
      'FLUSH_FAILED',
    )
    expect((rejected.cause as { code?: unknown }).code).toBe('SESSION_LOCKED')
    await rejectionOf(harness.close())
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    expect((await jsonlPersistence({ dir }).load('s1')).events.map((event) => JSON.stringify(event))).toEqual(
      old.events.map((event) => JSON.stringify(event)),
    )
  })
})

describe('close', () => {
  test('flushes every live session in parallel, releases, then closes the adapter; CLOSE_FAILED names the failed session', async () => {
    const heldA = gate()
    let atClose: string[] | undefined
    const adapter = faultyPersistence(J(), {
      hold: (call) => {
        if (call.method === 'append' && call.sessionId === 'sA') return heldA.promise
        if (call.method === 'close') return readdir(dir).then((files) => void (atClose = files.sort()))
        return undefined
      },
      fail: (call) => (call.method === 'append' && call.sessionId === 'sB' ? new Error('sB is broken') : undefined),
    })
    const harness = await start({ persistence: adapter })
    appendAll(harness.sessions.create({ id: 'sA' }), L1())
    appendAll(harness.sessions.create({ id: 'sB' }), L1())
    const persistence = harness.persistence as HarnessPersistence
    const closing = persistence.close()
    expect(persistence.close()).toBe(closing)
    try {
      // In parallel: sB's write runs while sA's is still held.
      await until(() => appendsOf(adapter).length === 2, 'both flushes')
      await settle()
      expect(
        adapter.calls
          .filter((call) => call.method === 'append')
          .map((call) => call.sessionId)
          .sort(),
      ).toEqual(['sA', 'sB'])
      expect(methodsOf(adapter)).not.toContain('close')
    } finally {
      heldA.open()
    }
    const error = expectError(await rejectionOf(closing), PersistenceError, 'CLOSE_FAILED')
    expect(error.errors).toHaveLength(1)
    expectError(error.errors?.[0], PersistenceError, 'WRITE_FAILED', { sessionId: 'sB' })
    expect(methodsOf(adapter).at(-1)).toBe('close')
    expect(atClose).toEqual(['sA.jsonl'])
    expect(seqsOf((await jsonlPersistence({ dir }).load('sA')).events)).toEqual([0, 1, 2, 3, 4, 5])
    const harnessError = expectError(await rejectionOf(harness.close()), HarnessCloseError, 'CLOSE_FAILED')
    expect(harnessError.errors.map((failure) => failure.error)).toContain(error)
  })

  test('closes the adapter even when nothing is live, and the adapter is then closed', async () => {
    const adapter = faultyPersistence(memoryPersistence())
    const harness = await start({ persistence: adapter })
    await harness.close()
    expect(methodsOf(adapter)).toEqual(['close'])
    expectError(await rejectionOf(adapter.inner.list()), PersistenceError, 'CLOSED')
  })

  test('refuses new bindings while closing: a late session is vetoed with CLOSED', async () => {
    const held = gate()
    const adapter = faultyPersistence(memoryPersistence(), {
      hold: (call) => (call.method === 'append' ? held.promise : undefined),
    })
    const harness = await start({ persistence: adapter })
    appendAll(harness.sessions.create({ id: 's1' }), [TS(1)])
    const closing = (harness.persistence as HarnessPersistence).close()
    await settle()
    const veto = expectError(
      thrownBy(() => harness.sessions.create({ id: 'late' })),
      SessionVetoError,
      'CREATE_VETOED',
      { sessionId: 'late' },
    )
    expectError(veto.cause, PersistenceError, 'CLOSED', { sessionId: 'late' })
    held.open()
    await closing
    expect(adapter.calls.filter((call) => call.sessionId === 'late')).toEqual([])
  })

  test('releases preparations and close-time leases, so another instance can take the ids', async () => {
    const seeding = await start({ persistence: J() })
    await seeding.sessions.flush(appendAll(seeding.sessions.create({ id: 's1' }), [...L1(), TS(2), TE(2, 'completed')]))
    await seeding.close()
    const harness = await start({ persistence: J() })
    await harness.persistence.prepare('s1')
    appendAll(harness.sessions.create({ id: 's2' }), [TS(1)])
    const locked = async (): Promise<boolean> => (await readdir(dir)).sort().join() === 's1.jsonl,s1.lock,s2.lock'
    await until(locked, 'both locks')
    await harness.close()
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's2.jsonl'])
  })
})
