/**
 * The persistence coordinator's operations and read gates over the
 * memory and JSONL adapters: cold and live `load` / `inspect`, `prepare` and binding, `readFrom`,
 * `list`, `delete`, leases, signals and per-session ordering. Crash repair through the
 * coordinator is `coordinator-repair.test.ts`; the plugin side (bindings, write-behind, close) is
 * `persistence-plugin.test.ts`.
 *
 * @module
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type Harness,
  type HarnessOptions,
  InvalidArgumentError,
  jsonlPersistence,
  memoryPersistence,
  type PersistenceAdapter,
  PersistenceCorruptionError,
  PersistenceError,
  SessionEventError,
  SessionFormatUnsupportedError,
  type SessionEvent,
  SessionLockedError,
  SessionVetoError,
} from 'yoke'
import type { JsonlPersistence, MemoryPersistence } from '../../src/persistence/index.js'
import { faultyPersistence } from 'yoke/testing'
import { callsOf, H1, headerLine, json, lineOf, log, seqsOf, settle, store, typesOf } from './coordinator-fixtures.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { type RecordingLogger, recordingLogger } from '../helpers/recording-logger.js'
import { AM, L1, logOf, SE, SS, TE, TS, text, UM } from '../session/builders.js'
import { appendAll, expectError, freshHarness } from '../session/session-helpers.js'

let dir: string
let harnesses: Harness[]
let adapters: PersistenceAdapter[]

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-coordinator-'))
  harnesses = []
  adapters = []
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
  for (const adapter of adapters.splice(0)) await adapter.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

/** A JSONL adapter over this test's `dir`, closed after the test. */
function J(): JsonlPersistence {
  const adapter = jsonlPersistence({ dir })
  adapters.push(adapter)
  return adapter
}

/** A started harness (fake clock at 1000, fake ids), closed after the test. */
async function start(persistence: PersistenceAdapter, options: HarnessOptions = {}): Promise<Harness> {
  const harness = await freshHarness({ persistence, ...options })
  harnesses.push(harness)
  return harness
}

/** A plain log file written directly: the header line (or `header`), then `body`. */
async function writeLog(body: string, name = 's1.jsonl', header = headerLine): Promise<string> {
  const content = `${header}\n${body}`
  await writeFile(join(dir, name), content)
  return content
}

const textOf = async (name = 's1.jsonl'): Promise<string> => readFile(join(dir, name), 'utf8')

/** A promise and its resolver, to hold an adapter call. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

describe('cold load and inspect', () => {
  test('load returns the stored log under a lease it releases; inspect takes no lease', async () => {
    const inner = J()
    await store(inner, [log()])
    const adapter = faultyPersistence(inner)
    const harness = await start(adapter)
    const loaded = await harness.persistence.load('s1')
    expect(loaded.header).toEqual(H1)
    expect(loaded.events.map(json)).toEqual(log().map(json))
    expect(typeof loaded.revision).toBe('string')
    expect(adapter.calls.map((call) => call.method)).toEqual(['acquire', 'load'])
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    const inspected = await harness.persistence.inspect('s1')
    expect(inspected).toMatchObject({ header: H1, revision: loaded.revision, repairPending: false })
    expect(inspected).not.toHaveProperty('droppedBytes')
    expect(inspected.events.map(json)).toEqual(log().map(json))
    expect(adapter.calls.map((call) => call.method)).toEqual(['acquire', 'load', 'load'])
  })

  test('an absent id is SESSION_NOT_FOUND for load, inspect, prepare, readFrom, delete and repair, and no lock stays', async () => {
    const harness = await start(J())
    const coordinator = harness.persistence
    for (const attempt of [
      () => coordinator.load('nope'),
      () => coordinator.inspect('nope'),
      () => coordinator.prepare('nope'),
      () => coordinator.readFrom('nope', 0),
      () => coordinator.delete('nope'),
      () => coordinator.repair('nope'),
    ]) {
      expectError(await rejectionOf(attempt()), PersistenceError, 'SESSION_NOT_FOUND', { sessionId: 'nope' })
    }
    expect(await readdir(dir)).toEqual([])
  })

  test('an id leased elsewhere refuses load, prepare, delete and repair; inspect, readFrom and list need no lease', async () => {
    await store(J(), [log()])
    const other = await J().acquire('s1')
    const harness = await start(J())
    const coordinator = harness.persistence
    for (const attempt of [
      () => coordinator.load('s1'),
      () => coordinator.prepare('s1'),
      () => coordinator.delete('s1'),
      () => coordinator.repair('s1'),
    ]) {
      expectError(await rejectionOf(attempt()), SessionLockedError, 'SESSION_LOCKED', { sessionId: 's1' })
    }
    expect((await coordinator.inspect('s1')).events).toHaveLength(6)
    expect((await coordinator.readFrom('s1', 0)).events).toHaveLength(6)
    expect(await coordinator.list()).toEqual([H1])
    await other.release()
    expect((await coordinator.load('s1')).events).toHaveLength(6)
  })
})

describe('read gates', () => {
  test('a version 0 log is FORMAT_TOO_OLD (no upgrader ships); a version 2 log FORMAT_TOO_NEW', async () => {
    await writeLog('', 's1.jsonl', '{"type":"session","version":0,"id":"s1","createdAt":1}')
    await writeLog('', 's2.jsonl', '{"type":"session","version":2,"id":"s2","createdAt":1,"shards":[3]}')
    const harness = await start(J())
    for (const attempt of [
      () => harness.persistence.load('s1'),
      () => harness.persistence.inspect('s1'),
      () => harness.persistence.prepare('s1'),
    ]) {
      expectError(await rejectionOf(attempt()), SessionFormatUnsupportedError, 'FORMAT_TOO_OLD', {
        direction: 'older',
        storedVersion: 0,
      })
    }
    expectError(await rejectionOf(harness.persistence.load('s2')), SessionFormatUnsupportedError, 'FORMAT_TOO_NEW', {
      storedVersion: 2,
      supportedVersion: 1,
      direction: 'newer',
    })
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's2.jsonl'])
  })

  test('a header naming another id is IDENTITY_MISMATCH; nothing repaired, unchanged, lock released', async () => {
    const content = await writeLog(
      `${log([TS(2)])
        .map(lineOf)
        .join('')}`,
      's1.jsonl',
      headerLine.replace('"id":"s1"', '"id":"s2"'),
    )
    const mtime = (await stat(join(dir, 's1.jsonl'))).mtimeMs
    const adapter = faultyPersistence(J())
    const harness = await start(adapter)
    for (const attempt of [
      () => harness.persistence.load('s1'),
      () => harness.persistence.inspect('s1'),
      () => harness.persistence.repair('s1'),
    ]) {
      expectError(await rejectionOf(attempt()), PersistenceCorruptionError, 'IDENTITY_MISMATCH', {
        sessionId: 's1',
        expected: 's1',
        actual: 's2',
        location: join(dir, 's1.jsonl'),
      })
    }
    expectError(
      await rejectionOf(harness.persistence.readFrom('s1', 0)),
      PersistenceCorruptionError,
      'IDENTITY_MISMATCH',
    )
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(0)
    expect(await textOf()).toBe(content)
    expect((await stat(join(dir, 's1.jsonl'))).mtimeMs).toBe(mtime)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('a non-ignorable unknown type is UNKNOWN_EVENT_TYPE; an ignorable one is kept byte-exact in place', async () => {
    const future = '{"type":"future/thing","seq":6,"time":1000,"data":{}}'
    const content = await writeLog(`${log().map(lineOf).join('')}${future}\n`)
    const harness = await start(J())
    for (const attempt of [
      () => harness.persistence.load('s1'),
      () => harness.persistence.inspect('s1'),
      () => harness.persistence.readFrom('s1', 3),
    ]) {
      expectError(await rejectionOf(attempt()), SessionFormatUnsupportedError, 'UNKNOWN_EVENT_TYPE', {
        eventType: 'future/thing',
        seq: 6,
      })
    }
    expect(await textOf()).toBe(content)
    const ignorable = '{"type":"future/thing","seq":6,"time":1000,"data":{},"ignorable":true}'
    const kept = await writeLog(`${log().map(lineOf).join('')}${ignorable}\n`)
    const loaded = await harness.persistence.load('s1')
    expect(loaded.events).toHaveLength(7)
    expect(json(loaded.events[6])).toBe(ignorable)
    expect(loaded.events.slice(0, 6).map(json)).toEqual(log().map(json))
    expect(json((await harness.persistence.readFrom('s1', 6)).events)).toBe(`[${ignorable}]`)
    expect(await textOf()).toBe(kept)
  })

  test('an event breaking the session rules is INVALID_EVENT with the session error as cause; unmodified', async () => {
    const bad =
      '{"type":"user/message","seq":6,"time":1000,"data":{"role":"user","content":[{"type":"text","text":"x"}],"source":{"kind":"user"}},"surfaceOp":"append"}'
    const content = await writeLog(`${log().map(lineOf).join('')}${bad}\n`)
    const adapter = faultyPersistence(J())
    const harness = await start(adapter)
    for (const attempt of [
      () => harness.persistence.load('s1'),
      () => harness.persistence.inspect('s1'),
      () => harness.persistence.prepare('s1'),
    ]) {
      const error = expectError(await rejectionOf(attempt()), PersistenceCorruptionError, 'INVALID_EVENT', {
        sessionId: 's1',
        seq: 6,
        location: join(dir, 's1.jsonl'),
      })
      expectError(error.cause, SessionEventError, 'INVALID_PAYLOAD', { path: 'data.id' })
    }
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(0)
    expect(await textOf()).toBe(content)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('full validation on readFrom: the suffix gets the per-event payload checks, but not the relational ones', async () => {
    const bad =
      '{"type":"user/message","seq":6,"time":1000,"data":{"role":"user","content":[{"type":"text","text":"x"}],"source":{"kind":"user"}},"surfaceOp":"append"}'
    await writeLog(`${log().map(lineOf).join('')}${bad}\n`)
    const harness = await start(J())
    const error = expectError(
      await rejectionOf(harness.persistence.readFrom('s1', 4)),
      PersistenceCorruptionError,
      'INVALID_EVENT',
      { seq: 6 },
    )
    expectError(error.cause, SessionEventError, 'INVALID_PAYLOAD', { path: 'data.id' })
    // A suffix starting inside turn 1 is fine: step/end and turn/end need their prefix to be checked.
    await writeLog(log().map(lineOf).join(''))
    expect(seqsOf((await harness.persistence.readFrom('s1', 4)).events)).toEqual([4, 5])
  })

  test('the gates run in order: version before identity, identity before unknown types, unknown types before validation', async () => {
    const bad =
      '{"type":"user/message","seq":6,"time":1000,"data":{"role":"user","content":[{"type":"text","text":"x"}],"source":{"kind":"user"}},"surfaceOp":"append"}'
    const future = '{"type":"future/thing","seq":7,"time":1000,"data":{}}'
    const futureAt6 = '{"type":"future/thing","seq":6,"time":1000,"data":{}}'
    const foreignHeader = headerLine.replace('"id":"s1"', '"id":"s2"')
    const adapter = faultyPersistence(J())
    const harness = await start(adapter)
    const attempts = [() => harness.persistence.load('s1'), () => harness.persistence.inspect('s1')]
    // The version check before the identity check: a too-new header naming another id is FORMAT_TOO_NEW.
    await writeLog(
      `${log().map(lineOf).join('')}`,
      's1.jsonl',
      '{"type":"session","version":2,"id":"s2","createdAt":1}',
    )
    for (const attempt of attempts) {
      expectError(await rejectionOf(attempt()), SessionFormatUnsupportedError, 'FORMAT_TOO_NEW', {
        storedVersion: 2,
        direction: 'newer',
      })
    }
    // The identity check before the type check: another id with an unknown type in the log is IDENTITY_MISMATCH.
    await writeLog(`${log().map(lineOf).join('')}${futureAt6}\n`, 's1.jsonl', foreignHeader)
    for (const attempt of attempts) {
      expectError(await rejectionOf(attempt()), PersistenceCorruptionError, 'IDENTITY_MISMATCH', {
        expected: 's1',
        actual: 's2',
      })
    }
    // The type check before full validation: an unknown type after an invalid event is UNKNOWN_EVENT_TYPE, naming the later seq.
    const content = await writeLog(`${log().map(lineOf).join('')}${bad}\n${future}\n`)
    for (const attempt of attempts) {
      expectError(await rejectionOf(attempt()), SessionFormatUnsupportedError, 'UNKNOWN_EVENT_TYPE', {
        eventType: 'future/thing',
        seq: 7,
      })
    }
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(0)
    expect(await textOf()).toBe(content)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('a log whose last turn is open passes the gates (its closers are derived, not refused)', async () => {
    await store(J(), [log([TS(2), SS(2, 1)])])
    const harness = await start(J())
    const inspected = await harness.persistence.inspect('s1')
    expect(typesOf(inspected.events).slice(8)).toEqual(['step/end', 'turn/end'])
    expect(inspected.repairPending).toBe(true)
  })
})

describe('live sessions', () => {
  test('load flushes and refuses an open turn; a closed one returns session.events', async () => {
    const adapter = faultyPersistence(memoryPersistence())
    const harness = await start(adapter)
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1), SS(1, 1)])
    expectError(await rejectionOf(harness.persistence.load('s1')), PersistenceError, 'LIVE_TURN_OPEN', {
      sessionId: 's1',
    })
    expect(callsOf(adapter, 'append').map((call) => call.seqs)).toEqual([[0, 1]])
    appendAll(session, [SE(1, 1), TE(1, 'completed')])
    const loaded = await harness.persistence.load('s1')
    expect(loaded.events).toBe(session.events)
    expect(seqsOf(loaded.events)).toEqual([0, 1, 2, 3])
    expect(loaded.header).toBe(session.header)
    expect(callsOf(adapter, 'append').map((call) => call.seqs)).toEqual([
      [0, 1],
      [2, 3],
    ])
    expect(callsOf(adapter, 'load')).toHaveLength(0)
    expectError(await rejectionOf(harness.persistence.prepare('s1')), PersistenceError, 'SESSION_LIVE', {
      sessionId: 's1',
    })
    expectError(await rejectionOf(harness.persistence.delete('s1')), PersistenceError, 'SESSION_LIVE', {
      sessionId: 's1',
    })
    expectError(await rejectionOf(harness.persistence.repair('s1')), PersistenceError, 'SESSION_LIVE', {
      sessionId: 's1',
    })
  })

  test('inspect of a live session is session.events as they are, unbalanced, with no flush', async () => {
    const adapter = faultyPersistence(memoryPersistence())
    const harness = await start(adapter)
    const session = appendAll(harness.sessions.create({ id: 's1' }), [TS(1), SS(1, 1)])
    const inspected = await harness.persistence.inspect('s1')
    expect(inspected.events).toBe(session.events)
    expect(inspected.repairPending).toBe(false)
    expect(inspected.header).toBe(session.header)
    expect(callsOf(adapter, 'append')).toHaveLength(0)
  })

  test('readFrom of a live session reads what is durable now, without flushing', async () => {
    const harness = await start(memoryPersistence())
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    expectError(await rejectionOf(harness.persistence.readFrom('s1', 0)), PersistenceError, 'SESSION_NOT_FOUND')
    await harness.sessions.flush(session)
    appendAll(session, [TS(2)])
    expect(seqsOf((await harness.persistence.readFrom('s1', 2)).events)).toEqual([2, 3, 4, 5])
    await harness.sessions.flush(session)
    expect(seqsOf((await harness.persistence.readFrom('s1', 2)).events)).toEqual([2, 3, 4, 5, 6])
  })

  test('appends carry the JSON text write-behind measured for each committed event', async () => {
    const inner = memoryPersistence()
    const texts: (readonly string[] | undefined)[] = []
    const adapter: PersistenceAdapter = {
      name: inner.name,
      create: (header) => inner.create(header),
      append: (sessionId, events, options) => {
        texts.push(options.texts)
        return inner.append(sessionId, events, options)
      },
      load: (sessionId, options) => inner.load(sessionId, options),
      commitRepair: (sessionId, torn, closers) => inner.commitRepair(sessionId, torn, closers),
      list: (options) => inner.list(options),
      acquire: (sessionId) => inner.acquire(sessionId),
      close: () => inner.close(),
    }
    const harness = await start(adapter)
    const session = appendAll(harness.sessions.create({ id: 's1' }), L1())
    await harness.sessions.flush(session)
    expect(texts).toEqual([session.events.map(json)])
    expect((await inner.load('s1')).events.map(json)).toEqual(session.events.map(json))
  })
})

describe('prepare and binding', () => {
  test('resumes a stored session: the seed binds the preparation, and the log continues after session/end-seed', async () => {
    const first = await start(J())
    appendAll(first.sessions.create({ id: 's1' }), L1())
    await first.close()
    const adapter = faultyPersistence(J())
    const second = await start(adapter)
    const prepared = await second.persistence.prepare('s1')
    expect(prepared.events.map(json)).toEqual(log().map(json))
    expect(prepared.header).toMatchObject({ version: 1, id: 's1', createdAt: 1000 })
    const session = second.sessions.create({ id: 's1', seed: prepared.events, header: prepared.header })
    appendAll(session, [TS(2), SS(2, 1), UM('x'), AM(2, 1, text('y')), SE(2, 1), TE(2, 'completed')])
    // The binding took the preparation's lease: no second acquire, no create.
    expectError(await rejectionOf(J().acquire('s1')), SessionLockedError, 'SESSION_LOCKED')
    await second.close()
    expect(callsOf(adapter, 'acquire')).toHaveLength(1)
    expect(callsOf(adapter, 'create')).toHaveLength(0)
    expect(callsOf(adapter, 'append').map((call) => call.seqs)).toEqual([[6, 7, 8, 9, 10, 11, 12]])
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    const stored = await J().load('s1')
    expect(seqsOf(stored.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    expect(stored.events[6]?.type).toBe('session/end-seed')
    expect(typesOf(stored.events.slice(7))).toEqual([
      'turn/start',
      'step/start',
      'user/message',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(stored.events.slice(7).map(json)).toEqual(session.events.slice(7).map(json))
  })

  test('a second prepare is SESSION_RESERVED, also while the first one is still loading', async () => {
    const adapter = memoryPersistence()
    await store(adapter, [log()])
    const harness = await start(adapter)
    const [first, second] = await Promise.allSettled([
      harness.persistence.prepare('s1'),
      harness.persistence.prepare('s1'),
    ])
    expect(first.status).toBe('fulfilled')
    expect(second.status).toBe('rejected')
    expectError(second.status === 'rejected' ? second.reason : undefined, PersistenceError, 'SESSION_RESERVED', {
      sessionId: 's1',
    })
    expectError(await rejectionOf(harness.persistence.prepare('s1')), PersistenceError, 'SESSION_RESERVED')
    if (first.status === 'fulfilled') await first.value.release()
    const again = await harness.persistence.prepare('s1')
    await again.release()
  })

  test('a reserved id answers load and inspect with the prepared log', async () => {
    const adapter = faultyPersistence(memoryPersistence())
    await store(adapter.inner, [log([TS(2)])])
    const harness = await start(adapter)
    const prepared = await harness.persistence.prepare('s1')
    expect(typesOf(prepared.events).slice(6)).toEqual(['turn/start', 'turn/end'])
    const loaded = await harness.persistence.load('s1')
    expect(loaded.events.map(json)).toEqual(prepared.events.map(json))
    const inspected = await harness.persistence.inspect('s1')
    expect(inspected.events.map(json)).toEqual(prepared.events.map(json))
    expect(inspected.repairPending).toBe(false)
    expect(callsOf(adapter, 'acquire')).toHaveLength(1)
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(1)
    await prepared.release()
  })

  test('a seed that does not start with the prepared events is vetoed (SESSION_EXISTS); the reservation stays', async () => {
    const adapter = memoryPersistence()
    await store(adapter, [log()])
    const harness = await start(adapter)
    const prepared = await harness.persistence.prepare('s1')
    const veto = expectError(
      thrownBy(() => harness.sessions.create({ id: 's1' })),
      SessionVetoError,
      'CREATE_VETOED',
    )
    expectError(veto.cause, PersistenceError, 'SESSION_EXISTS', { sessionId: 's1' })
    const altered = [...log().slice(0, 5), logOf([...L1().slice(0, 5), TE(1, 'interrupted')])[5]]
    expectError(
      thrownBy(() => harness.sessions.create({ id: 's1', seed: altered })),
      SessionVetoError,
      'CREATE_VETOED',
    )
    // Byte-exact inside data: the same values in another key order are another seed.
    const reordered = prepared.events.map((event, index) =>
      index === 2 ? { ...event, data: Object.fromEntries(Object.entries(event.data as object).reverse()) } : event,
    )
    expect(JSON.stringify(reordered[2]?.data)).not.toBe(JSON.stringify(prepared.events[2]?.data))
    expectError(
      thrownBy(() => harness.sessions.create({ id: 's1', seed: reordered })),
      SessionVetoError,
      'CREATE_VETOED',
    )
    expect(harness.sessions.get('s1')).toBeUndefined()
    expectError(await rejectionOf(harness.persistence.prepare('s1')), PersistenceError, 'SESSION_RESERVED')
    const session = harness.sessions.create({ id: 's1', seed: prepared.events, header: prepared.header })
    await harness.sessions.flush(session)
    expect(seqsOf((await adapter.readFrom('s1', 0)).events)).toEqual([0, 1, 2, 3, 4, 5, 6])
  })

  test('release() gives the lease back, idempotently; close releases an unbound preparation', async () => {
    await store(J(), [log()])
    const harness = await start(J())
    const prepared = await harness.persistence.prepare('s1')
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's1.lock'])
    await prepared.release()
    await prepared.release()
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    await harness.persistence.prepare('s1')
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's1.lock'])
    await harness.close()
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('a failed prepare releases its lease and reserves nothing', async () => {
    const bad =
      '{"type":"user/message","seq":6,"time":1000,"data":{"role":"user","content":[],"source":{"kind":"user"}},"surfaceOp":"append"}'
    await writeLog(`${log().map(lineOf).join('')}${bad}\n`)
    const harness = await start(J())
    expectError(await rejectionOf(harness.persistence.prepare('s1')), PersistenceCorruptionError, 'INVALID_EVENT')
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    expectError(await rejectionOf(harness.persistence.prepare('s1')), PersistenceCorruptionError, 'INVALID_EVENT')
  })
})

describe('readFrom', () => {
  test('returns the committed suffix, past the end nothing, never closers', async () => {
    const adapter = J()
    await store(adapter, [log()])
    const harness = await start(adapter)
    const coordinator = harness.persistence
    const all = await coordinator.readFrom('s1', 0)
    expect(all.header).toEqual(H1)
    expect(all.events.map(json)).toEqual(log().map(json))
    expect(seqsOf((await coordinator.readFrom('s1', 3)).events)).toEqual([3, 4, 5])
    expect((await coordinator.readFrom('s1', 6)).events).toEqual([])
    expect((await coordinator.readFrom('s1', 600)).events).toEqual([])
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', log([TS(2)]).slice(6), { expectedSeq: 6, lease })
    await lease.release()
    const before = await textOf()
    const suffix = await coordinator.readFrom('s1', 6)
    expect(typesOf(suffix.events)).toEqual(['turn/start'])
    expect(await textOf()).toBe(before)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test.each([[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY], [2 ** 53], ['3']])(
    'fromSeq %s is InvalidArgumentError fromSeq, before any adapter call',
    async (fromSeq) => {
      const adapter = faultyPersistence(memoryPersistence())
      await store(adapter.inner, [log()])
      const harness = await start(adapter)
      const error = await rejectionOf(harness.persistence.readFrom('s1', fromSeq as number))
      expectError(error, InvalidArgumentError, 'INVALID_ARGUMENT', { argument: 'fromSeq' })
      expect(adapter.calls).toEqual([])
    },
  )

  test('an adapter without readFrom is read with load, never returning salvaged records', async () => {
    const inner = memoryPersistence()
    await store(inner, [log()])
    const { readFrom: _readFrom, ...rest } = inner
    const salvaged = log([TS(2)])[6] as SessionEvent
    // A load that salvaged seq 6 from a torn tail, as fresh objects: `events` ends with a copy of `recovered`.
    const adapter = faultyPersistence({
      ...rest,
      load: async (sessionId, options) => {
        const stored = await inner.load(sessionId, options)
        const torn = {
          kind: 'torn' as const,
          defect: 'frame' as const,
          recovered: [structuredClone(salvaged)],
          revision: stored.revision,
        }
        return { ...stored, events: [...stored.events, structuredClone(salvaged)], torn }
      },
    })
    expect(adapter.readFrom).toBeUndefined()
    const harness = await start(adapter)
    expect(seqsOf((await harness.persistence.readFrom('s1', 4)).events)).toEqual([4, 5])
    expect(callsOf(adapter, 'load')).toHaveLength(1)
    expect(callsOf(adapter, 'acquire')).toHaveLength(0)
  })
})

describe('list', () => {
  test('returns stored headers sorted by id; registered but never appended sessions are not listed', async () => {
    const adapter = J()
    await store(adapter, [logOf([TS(1)])], { version: 1, id: 'b', createdAt: 2 })
    await store(adapter, [logOf([TS(1)])], { version: 1, id: 'B', createdAt: 3 })
    await store(adapter, [logOf([TS(1)])], { version: 1, id: 'a', createdAt: 1 })
    const harness = await start(adapter)
    harness.sessions.create({ id: 'lazy' })
    expect((await harness.persistence.list()).map((header) => header.id)).toEqual(['B', 'a', 'b'])
  })

  test('logs each damaged header with logger.warn and still lists the rest', async () => {
    await store(J(), [log()])
    await writeFile(join(dir, 'bad.jsonl'), '[1,2]\n')
    const logger: RecordingLogger = recordingLogger()
    const harness = await start(J(), { logger })
    expect(await harness.persistence.list()).toEqual([H1])
    const warnings = logger.at('warn')
    expect(warnings).toHaveLength(1)
    const error = expectError(warnings[0]?.fields?.['error'], PersistenceCorruptionError, 'CORRUPT_HEADER', {
      location: join(dir, 'bad.jsonl'),
    })
    expect(error.sessionId).toBe('bad')
  })
})

describe('delete', () => {
  test('removes a cold log under a lease it releases', async () => {
    const inner = J()
    await store(inner, [log()])
    const adapter = faultyPersistence(inner)
    const harness = await start(adapter)
    await harness.persistence.delete('s1')
    expect(adapter.calls.map((call) => call.method)).toEqual(['acquire', 'delete'])
    expect(await readdir(dir)).toEqual([])
    expectError(await rejectionOf(harness.persistence.load('s1')), PersistenceError, 'SESSION_NOT_FOUND')
    expect(await readdir(dir)).toEqual([])
  })

  test('a failed delete still releases the lease', async () => {
    const inner = J()
    await store(inner, [log()])
    const adapter = faultyPersistence(inner, {
      fail: (call) => (call.method === 'delete' ? new Error('EIO') : undefined),
    })
    const harness = await start(adapter)
    expect(await rejectionOf(harness.persistence.delete('s1'))).toBeInstanceOf(Error)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })
})

describe('signals', () => {
  const operations: [string, (harness: Harness, signal: AbortSignal) => Promise<unknown>][] = [
    ['load', (harness, signal) => harness.persistence.load('s1', { signal })],
    ['inspect', (harness, signal) => harness.persistence.inspect('s1', { signal })],
    ['prepare', (harness, signal) => harness.persistence.prepare('s1', { signal })],
    ['readFrom', (harness, signal) => harness.persistence.readFrom('s1', 0, { signal })],
    ['list', (harness, signal) => harness.persistence.list({ signal })],
    ['delete', (harness, signal) => harness.persistence.delete('s1', { signal })],
    ['repair', (harness, signal) => harness.persistence.repair('s1', { signal })],
  ]

  test.each(operations)(
    'an already aborted signal rejects %s with signal.reason itself, before any adapter call',
    async (_name, run) => {
      const adapter = faultyPersistence(memoryPersistence())
      await store(adapter.inner, [log([TS(2)])])
      const harness = await start(adapter)
      const reason = new Error('stop')
      const controller = new AbortController()
      controller.abort(reason)
      expect(await rejectionOf(run(harness, controller.signal))).toBe(reason)
      const plain = new AbortController()
      plain.abort()
      expect(await rejectionOf(run(harness, plain.signal))).toBe(plain.signal.reason)
      expect(adapter.calls).toEqual([])
    },
  )

  test('an abort during a cold read rejects with the reason and releases the lease', async () => {
    const held = gate()
    const inner: MemoryPersistence = memoryPersistence()
    await store(inner, [log()])
    const adapter = faultyPersistence(inner, { hold: (call) => (call.method === 'load' ? held.promise : undefined) })
    const harness = await start(adapter)
    const controller = new AbortController()
    const loading = harness.persistence.load('s1', { signal: controller.signal })
    await settle()
    expect(callsOf(adapter, 'load')).toHaveLength(1)
    const reason = new Error('user gave up')
    controller.abort(reason)
    held.open()
    expect(await rejectionOf(loading)).toBe(reason)
    const lease = await inner.acquire('s1')
    await lease.release()
  })
})

describe('ordering', () => {
  test('operations on one id run one at a time in call order; other ids are independent; a failure does not block', async () => {
    const held = gate()
    const inner = memoryPersistence()
    await store(inner, [log()])
    await store(inner, [log()], { ...H1, id: 's2' })
    let failNext = true
    const adapter = faultyPersistence(inner, {
      hold: (call) => (call.method === 'load' && call.count === 1 ? held.promise : undefined),
      fail: (call) => {
        if (call.method !== 'load' || call.sessionId !== 's1' || !failNext) return undefined
        failNext = false
        return new PersistenceError({ code: 'WRITE_FAILED', sessionId: 's1', detail: 'injected' })
      },
    })
    const harness = await start(adapter)
    const order: string[] = []
    const first = harness.persistence.inspect('s1').then(
      () => order.push('first ok'),
      () => order.push('first failed'),
    )
    const second = harness.persistence.load('s1').then(() => order.push('second'))
    const third = harness.persistence.readFrom('s1', 5).then(() => order.push('third'))
    const other = harness.persistence.inspect('s2').then(() => order.push('other'))
    await other
    await settle()
    expect(adapter.calls.map((call) => `${call.method} ${call.sessionId}`)).toEqual(['load s1', 'load s2'])
    expect(order).toEqual(['other'])
    held.open()
    await Promise.all([first, second, third])
    expect(order).toEqual(['other', 'first failed', 'second', 'third'])
    expect(adapter.calls.map((call) => `${call.method} ${call.sessionId}`)).toEqual([
      'load s1',
      'load s2',
      'acquire s1',
      'load s1',
      'readFrom s1',
    ])
  })
})

describe('forks', () => {
  test('a persisted fork child is stored with its lineage, listed and loaded as the parent turn + session/end-seed', async () => {
    const harness = await start(J())
    const parent = appendAll(harness.sessions.create({ id: 's1', header: { cwd: '/w' } }), L1())
    const child = harness.sessions.fork(parent, { id: 's2' })
    await harness.sessions.flush(child)
    const expectedHeader = { version: 1, id: 's2', createdAt: 1000, cwd: '/w', parentSession: 's1', seedLength: 6 }
    expect(await harness.persistence.list()).toEqual([expectedHeader])
    expect(JSON.parse((await textOf('s2.jsonl')).split('\n')[0] as string)).toEqual({
      type: 'session',
      ...expectedHeader,
    })
    const live = await harness.persistence.load('s2')
    expect(seqsOf(live.events)).toEqual([0, 1, 2, 3, 4, 5, 6])
    await harness.sessions.dispose(child)
    const cold = await harness.persistence.load('s2')
    expect(cold.header).toEqual(expectedHeader)
    expect(cold.events.slice(0, 6).map(json)).toEqual(log().map(json))
    expect(cold.events[6]).toMatchObject({ type: 'session/end-seed', seq: 6 })
    expect(cold.events).toHaveLength(7)
  })
})
