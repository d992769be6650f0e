import { hostname } from 'node:os'
import { describe, expect, test } from 'vitest'
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.js'
import { InvalidOptionsError } from '../../src/errors/invalid-options-error.js'
import { LeaseLostError } from '../../src/errors/lease-lost-error.js'
import { PersistenceCorruptionError } from '../../src/errors/persistence-corruption-error.js'
import { PersistenceError } from '../../src/errors/persistence-error.js'
import { SeqConflictError } from '../../src/errors/seq-conflict-error.js'
import { SessionHeaderError } from '../../src/errors/session-header-error.js'
import { SessionLockedError } from '../../src/errors/session-locked-error.js'
import { encodeBatch, encodeHeaderLine } from '../../src/persistence/jsonl/jsonl-codec.js'
import {
  createMemoryStore,
  type MemoryPersistence,
  memoryPersistence,
} from '../../src/persistence/memory-persistence.js'
import { assertStorableId, fileNameOf, sessionIdOfFileName } from '../../src/persistence/session-file-name.js'
import { interruptedTurnClosers } from '../../src/session/interrupted-turn-closers.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import type { SessionHeader } from '../../src/session/session-header.js'
import { thrownBy } from '../helpers/outcomes.js'
import { AM, type EventPlan, logOf, SE, SS, TC, TE, TS, text, UM } from '../session/builders.js'

const H1: SessionHeader = { version: 1, id: 's1', createdAt: 1000, cwd: '/w' }
const L1 = logOf([TS(1), SS(1, 1), UM('hi'), AM(1, 1, text('hello')), SE(1, 1), TE(1, 'completed')])
const utf8 = new TextEncoder()
const latin = new TextDecoder()

function CH(value: string, turn = 2, step = 1): EventPlan {
  return {
    type: 'assistant/chunk',
    data: { turn, step, chunk: { type: 'text-delta', index: 0, text: value } },
    options: {},
  }
}

/** The plans stamped from seq `start` on. */
function from(start: number, ...plans: EventPlan[]): SessionEvent[] {
  return logOf(plans).map((event, index) => ({ ...event, seq: start + index }))
}

function stringsOf(events: readonly SessionEvent[]): string[] {
  return events.map((event) => JSON.stringify(event))
}

/** "stored X": create, acquire, append, release. */
async function stored(
  adapter: MemoryPersistence,
  events: readonly SessionEvent[],
  header: SessionHeader = H1,
): Promise<void> {
  await adapter.create(header)
  const lease = await adapter.acquire(header.id)
  await adapter.append(header.id, events, { expectedSeq: 0, lease })
  await lease.release()
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

function textOf(adapter: MemoryPersistence, id = 's1'): string | undefined {
  const bytes = adapter.store.read(id)
  return bytes === undefined ? undefined : latin.decode(bytes)
}

describe('create', () => {
  test('create and acquire store nothing; the first append materializes header and batch', async () => {
    const adapter = memoryPersistence()
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    expect(adapter.store.ids()).toEqual([])
    expect((await adapter.list()).headers).toEqual([])
    await adapter.append('s1', from(0, TS(1)), { expectedSeq: 0, lease })
    expect(textOf(adapter)).toBe(encodeHeaderLine(H1) + encodeBatch(from(0, TS(1)), { packChunks: true }))
    expect((await adapter.list()).headers).toEqual([H1])
  })

  test('a registration never appended is forgotten when its lease is released', async () => {
    const adapter = memoryPersistence()
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', [], { expectedSeq: 0, lease })
    await lease.release()
    expect(adapter.store.ids()).toEqual([])
    await expect(adapter.create(H1)).resolves.toBeUndefined()
  })

  test('invalid headers and ids are refused and nothing is stored', async () => {
    const adapter = memoryPersistence()
    const version = await rejection(adapter.create({ ...H1, version: 2 } as unknown as SessionHeader))
    expect(SessionHeaderError.is(version)).toBe(true)
    expect(version).toMatchObject({ code: 'INVALID_HEADER', field: 'version' })
    expect(await rejection(adapter.create({ ...H1, createdAt: 1.5 }))).toMatchObject({
      code: 'INVALID_HEADER',
      field: 'createdAt',
    })
    expect(await rejection(adapter.create({ ...H1, extra: 1 } as unknown as SessionHeader))).toMatchObject({
      code: 'INVALID_HEADER',
    })
    const id = await rejection(adapter.create({ ...H1, id: '../x' }))
    expect(PersistenceError.is(id)).toBe(true)
    expect(id).toMatchObject({ code: 'INVALID_SESSION_ID', sessionId: '../x' })
    expect(adapter.store.ids()).toEqual([])
  })

  test('a stored or registered id is SESSION_EXISTS', async () => {
    const store = createMemoryStore()
    const adapter = memoryPersistence({ store })
    await stored(adapter, L1)
    expect(await rejection(adapter.create(H1))).toMatchObject({ code: 'SESSION_EXISTS', sessionId: 's1' })
    expect(await rejection(memoryPersistence({ store }).create(H1))).toMatchObject({ code: 'SESSION_EXISTS' })
    await adapter.create({ ...H1, id: 's2' })
    expect(await rejection(adapter.create({ ...H1, id: 's2' }))).toMatchObject({
      code: 'SESSION_EXISTS',
      sessionId: 's2',
    })
  })

  test('two instances registering one id: the first append publishes, the second gets SESSION_EXISTS', async () => {
    const store = createMemoryStore()
    const first = memoryPersistence({ store })
    const second = memoryPersistence({ store })
    await first.create(H1)
    await second.create({ ...H1, createdAt: 2 })
    const lease = await first.acquire('s1')
    await first.append('s1', from(0, TS(1)), { expectedSeq: 0, lease })
    await lease.release()
    const bytes = store.read('s1')
    const other = await second.acquire('s1')
    expect(await rejection(second.append('s1', from(0, TS(1)), { expectedSeq: 0, lease: other }))).toMatchObject({
      code: 'SESSION_EXISTS',
    })
    expect(store.read('s1')).toEqual(bytes)
  })
})

describe('append', () => {
  test('conflicts, gaps, empty batches and released leases leave bytes and revision unchanged', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const lease = await adapter.acquire('s1')
    const bytes = adapter.store.read('s1')
    const { revision } = await adapter.load('s1')
    // A stale expectedSeq with other events than the stored ones (the same ones are an idempotent re-append).
    const conflict = await rejection(adapter.append('s1', from(5, TS(2)), { expectedSeq: 5, lease }))
    expect(SeqConflictError.is(conflict)).toBe(true)
    expect(conflict).toMatchObject({ code: 'SEQ_CONFLICT', expectedSeq: 5, storedSeq: 6 })
    const gap = [...from(6, TS(2)), ...from(8, SS(2, 1))]
    const invalid = await rejection(adapter.append('s1', gap, { expectedSeq: 6, lease }))
    expect(InvalidArgumentError.is(invalid)).toBe(true)
    expect(invalid).toMatchObject({ argument: 'events' })
    expect((invalid as InvalidArgumentError).reason).toContain('events[1]')
    await expect(adapter.append('s1', [], { expectedSeq: 6, lease })).resolves.toBeUndefined()
    await lease.release()
    const lost = await rejection(adapter.append('s1', from(6, TS(2)), { expectedSeq: 6, lease }))
    expect(LeaseLostError.is(lost)).toBe(true)
    expect(adapter.store.read('s1')).toEqual(bytes)
    expect((await adapter.load('s1')).revision).toBe(revision)
  })

  test('checks run in order: lease, empty, contiguity, existence, expected seq', async () => {
    const adapter = memoryPersistence()
    const lease = await adapter.acquire('s9')
    const released = await adapter.acquire('s8')
    await released.release()
    expect(await rejection(adapter.append('s8', [], { expectedSeq: 0, lease: released }))).toBeInstanceOf(
      LeaseLostError,
    )
    expect(await rejection(adapter.append('s8', from(0, TS(1)), { expectedSeq: 0, lease }))).toBeInstanceOf(
      LeaseLostError,
    )
    await expect(adapter.append('s9', [], { expectedSeq: 3, lease })).resolves.toBeUndefined()
    expect(await rejection(adapter.append('s9', from(1, TS(1)), { expectedSeq: 0, lease }))).toMatchObject({
      argument: 'events',
    })
    expect(await rejection(adapter.append('s9', from(0, TS(1)), { expectedSeq: 0, lease }))).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      sessionId: 's9',
    })
    expect(await rejection(adapter.append('s9', from(-1, TS(1)), { expectedSeq: -1, lease }))).toMatchObject({
      argument: 'expectedSeq',
    })
    await adapter.create({ ...H1, id: 's9' })
    expect(await rejection(adapter.append('s9', from(2, TS(1)), { expectedSeq: 2, lease }))).toMatchObject({
      code: 'SEQ_CONFLICT',
      expectedSeq: 2,
      storedSeq: 0,
    })
    expect(adapter.store.ids()).toEqual([])
  })

  test('a malformed event is refused before anything is written', async () => {
    const adapter = memoryPersistence()
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    const bad = { type: 'x/y', seq: 0, time: 1.5, data: {} } as SessionEvent
    expect(await rejection(adapter.append('s1', [bad], { expectedSeq: 0, lease }))).toMatchObject({
      argument: 'events',
    })
    expect(adapter.store.ids()).toEqual([])
  })

  test('a torn tail must be repaired first (REPAIR_REQUIRED), a corrupt log rejects with its error', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const lease = await adapter.acquire('s1')
    const committed = textOf(adapter)!
    adapter.store.write('s1', utf8.encode(`${committed}{"type":"tu`))
    const bytes = adapter.store.read('s1')
    expect(await rejection(adapter.append('s1', from(6, TS(2)), { expectedSeq: 6, lease }))).toMatchObject({
      code: 'REPAIR_REQUIRED',
    })
    adapter.store.write('s1', utf8.encode(`${committed}xx\n${JSON.stringify(from(6, TS(2))[0])}\n`))
    expect(await rejection(adapter.append('s1', from(6, TS(2)), { expectedSeq: 6, lease }))).toMatchObject({
      code: 'CORRUPT_LOG',
      line: 8,
    })
    adapter.store.write('s1', bytes!)
    expect(adapter.store.read('s1')).toEqual(bytes)
  })

  test('appends continue the log, chunk runs packed unless packChunks is false', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const lease = await adapter.acquire('s1')
    const batch = from(6, TS(2), SS(2, 1), CH('a'), CH('b'), CH('c'))
    await adapter.append('s1', batch, { expectedSeq: 6, lease })
    expect(textOf(adapter)).toContain('"type":"chunk-run","seq0":8')
    expect(stringsOf((await adapter.load('s1')).events)).toEqual(stringsOf([...L1, ...batch]))
    const plain = memoryPersistence({ packChunks: false })
    await stored(plain, from(0, TS(1), SS(1, 1), CH('a', 1), CH('b', 1), CH('c', 1)))
    expect(textOf(plain)).not.toContain('chunk-run')
    expect(textOf(plain)?.split('\n')).toHaveLength(7)
  })

  test('one batch of 150 000 events is stored and loaded back', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const lease = await adapter.acquire('s1')
    const big: SessionEvent[] = []
    for (let seq = 6; seq < 150_006; seq++) big.push({ type: 'test/note', seq, time: 1000, data: { n: seq } })
    await adapter.append('s1', big, { expectedSeq: 6, lease })
    const { events } = await adapter.load('s1')
    expect(events).toHaveLength(150_006)
    expect(events.at(-1)).toEqual(big.at(-1))
  })
})

describe('load', () => {
  test('returns the stored log byte-exact as fresh objects, with location and a stable revision', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const first = await adapter.load('s1')
    expect(first.header).toEqual(H1)
    expect(stringsOf(first.events)).toEqual(stringsOf(L1))
    expect(first.torn).toBeUndefined()
    expect(first.location).toBe('memory:s1')
    const second = await adapter.load('s1')
    expect(second.revision).toBe(first.revision)
    expect(second.events[0]).not.toBe(first.events[0])
    ;(first.events[0] as { type: string }).type = 'mutated'
    expect((await adapter.load('s1')).events[0]?.type).toBe('turn/start')
  })

  test('data key order survives', async () => {
    const adapter = memoryPersistence()
    const note: SessionEvent = { type: 'test/note', seq: 0, time: 1000, data: { z: 1, a: { y: 2, b: 3 } } }
    await stored(adapter, [note])
    expect(JSON.stringify((await adapter.load('s1')).events[0])).toBe(JSON.stringify(note))
  })

  test('revisions change on every append and repair and never repeat for an id', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const seen = new Set<string>()
    seen.add((await adapter.load('s1')).revision)
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', from(6, TS(2)), { expectedSeq: 6, lease })
    seen.add((await adapter.load('s1')).revision)
    await adapter.commitRepair('s1', undefined, interruptedTurnClosers((await adapter.load('s1')).events))
    seen.add((await adapter.load('s1')).revision)
    await adapter.delete('s1')
    await lease.release()
    await stored(adapter, L1)
    seen.add((await adapter.load('s1')).revision)
    expect(seen.size).toBe(4)
  })

  test('an absent or only registered id is SESSION_NOT_FOUND', async () => {
    const adapter = memoryPersistence()
    expect(await rejection(adapter.load('s1'))).toMatchObject({ code: 'SESSION_NOT_FOUND', sessionId: 's1' })
    await adapter.create(H1)
    expect(await rejection(adapter.load('s1'))).toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  test('an aborted signal rejects with its reason', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const controller = new AbortController()
    const reason = new Error('stop')
    controller.abort(reason)
    expect(await rejection(adapter.load('s1', { signal: controller.signal }))).toBe(reason)
    expect(await rejection(adapter.list({ signal: controller.signal }))).toBe(reason)
  })

  test('on memory: integrity failures are typed and change nothing', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const committed = textOf(adapter)!
    const ts2 = `${JSON.stringify(from(6, TS(2))[0])}\n`
    adapter.store.write('s1', utf8.encode(`${committed}xx\n${ts2}`))
    const before = adapter.store.read('s1')
    const { revision } = await adapter.load('s1', { truncateAtCorruption: true })
    const corrupt = await rejection(adapter.load('s1'))
    expect(PersistenceCorruptionError.is(corrupt)).toBe(true)
    expect(corrupt).toMatchObject({
      code: 'CORRUPT_LOG',
      line: 8,
      offset: utf8.encode(committed).length,
      defect: 'unparsable',
      location: 'memory:s1',
    })
    expect(adapter.store.read('s1')).toEqual(before)
    expect((await adapter.load('s1', { truncateAtCorruption: true })).revision).toBe(revision)
    adapter.store.write('s1', utf8.encode(`${committed}${ts2.replace('"seq":6', '"seq":9')}`))
    expect(await rejection(adapter.load('s1'))).toMatchObject({ code: 'SEQ_MISMATCH', line: 8, expected: 6, actual: 9 })
    adapter.store.write('s1', utf8.encode('{"type":"session","version":2,"id":"s1","createdAt":1,"shards":[3]}\n'))
    expect(await rejection(adapter.load('s1'))).toMatchObject({
      code: 'FORMAT_TOO_NEW',
      direction: 'newer',
      location: 'memory:s1',
    })
    adapter.store.write('s1', utf8.encode('[1,2]\n'))
    expect(await rejection(adapter.load('s1'))).toMatchObject({ code: 'CORRUPT_HEADER', line: 1 })
  })
})

describe('commitRepair', () => {
  const withOpenTurn = [...L1, ...from(6, TS(2), SS(2, 1))]

  test('on memory: a torn tail is cut and the closers appended as one batch', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, withOpenTurn)
    const committed = textOf(adapter)!
    adapter.store.write('s1', utf8.encode(`${committed}{"type":"assistant/chunk","seq":8,"ti`))
    const torn = await adapter.load('s1')
    expect(torn.torn).toMatchObject({
      kind: 'torn',
      defect: 'unterminated',
      line: 10,
      recovered: [],
      revision: torn.revision,
    })
    expect(torn.torn?.droppedBytes).toBe(37)
    const closers = interruptedTurnClosers(torn.events)
    expect(closers.map((event) => event.seq)).toEqual([8, 9])
    const lease = await adapter.acquire('s1')
    await adapter.commitRepair('s1', torn.torn, closers)
    expect(textOf(adapter)).toBe(committed + encodeBatch(closers, { packChunks: true }))
    const repaired = await adapter.load('s1')
    expect(repaired.torn).toBeUndefined()
    expect(stringsOf(repaired.events)).toEqual(stringsOf([...withOpenTurn, ...closers]))
    expect(repaired.revision).not.toBe(torn.revision)
    await adapter.commitRepair('s1', undefined, [])
    expect((await adapter.load('s1')).revision).toBe(repaired.revision)
    await lease.release()
  })

  test('on memory: an unparsable last line is cut, no closers needed', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const committed = textOf(adapter)!
    adapter.store.write('s1', utf8.encode(`${committed}{"type":"turn/sta\n`))
    const log = await adapter.load('s1')
    expect(log.torn).toMatchObject({ kind: 'torn', defect: 'unparsable', line: 8 })
    expect(interruptedTurnClosers(log.events)).toEqual([])
    const lease = await adapter.acquire('s1')
    await adapter.commitRepair('s1', log.torn, [])
    expect(textOf(adapter)).toBe(committed)
    expect((await adapter.load('s1')).torn).toBeUndefined()
    await lease.release()
  })

  test('on memory: a corrupt tail is quarantined byte-identical, the valid prefix kept', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const committed = textOf(adapter)!
    const damaged = utf8.encode(`${committed}xx\n${JSON.stringify(from(6, TS(2))[0])}\n`)
    adapter.store.write('s1', damaged)
    const log = await adapter.load('s1', { truncateAtCorruption: true })
    expect(log.torn).toMatchObject({ kind: 'corrupt', defect: 'unparsable', line: 8 })
    expect(stringsOf(log.events)).toEqual(stringsOf(L1))
    const lease = await adapter.acquire('s1')
    expect(await adapter.commitRepair('s1', log.torn, [])).toEqual({ quarantine: 'memory:s1#quarantine-0' })
    expect(adapter.store.quarantined('s1')).toEqual([damaged])
    expect(textOf(adapter)).toBe(committed)
    expect(stringsOf((await adapter.load('s1')).events)).toEqual(stringsOf(L1))
    await lease.release()
  })

  test('needs a live lease of this instance and the current revision; nothing changes otherwise', async () => {
    const store = createMemoryStore()
    const adapter = memoryPersistence({ store })
    await stored(adapter, withOpenTurn)
    store.write('s1', utf8.encode(`${textOf(adapter)}{"ty`))
    const log = await adapter.load('s1')
    const closers = interruptedTurnClosers(log.events)
    const bytes = store.read('s1')
    expect(await rejection(adapter.commitRepair('s1', log.torn, closers))).toBeInstanceOf(LeaseLostError)
    const other = memoryPersistence({ store })
    const foreign = await other.acquire('s1')
    expect(await rejection(adapter.commitRepair('s1', log.torn, closers))).toBeInstanceOf(LeaseLostError)
    await foreign.release()
    const lease = await adapter.acquire('s1')
    const stale = { ...log.torn!, revision: 'mem:0' }
    const conflict = await rejection(adapter.commitRepair('s1', stale, closers))
    expect(SeqConflictError.is(conflict)).toBe(true)
    expect(conflict).toMatchObject({ code: 'SEQ_CONFLICT', expectedRevision: 'mem:0' })
    expect(await rejection(adapter.commitRepair('s1', log.torn, from(9, SE(2, 1))))).toMatchObject({
      argument: 'recovered ++ closers',
    })
    expect(await rejection(adapter.commitRepair('s1', undefined, closers))).toMatchObject({ code: 'REPAIR_REQUIRED' })
    expect(store.read('s1')).toEqual(bytes)
    await lease.release()
  })

  test('without a torn tail the closers are appended; both empty is a no-op', async () => {
    const adapter = memoryPersistence()
    const calls = [
      ...L1,
      ...from(
        6,
        TS(2),
        SS(2, 1),
        AM(2, 1, { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{}' }),
        TC(2, 1, 'c1'),
      ),
    ]
    await stored(adapter, calls)
    const lease = await adapter.acquire('s1')
    const log = await adapter.load('s1')
    const closers = interruptedTurnClosers(log.events)
    expect(closers.map((event) => event.type)).toEqual(['tool/result', 'step/end', 'turn/end'])
    expect(await rejection(adapter.commitRepair('s1', undefined, closers.slice(1)))).toMatchObject({
      argument: 'closers',
    })
    await adapter.commitRepair('s1', undefined, closers)
    expect(stringsOf((await adapter.load('s1')).events)).toEqual(stringsOf([...calls, ...closers]))
    await lease.release()
  })

  test('on memory: every cut loads, repairs once, and then loads clean', async () => {
    const fixture = [...L1, ...from(6, TS(2), SS(2, 1), UM('ü😀'), CH('a'), CH('b'), CH('c'), CH('d'))]
    const adapter = memoryPersistence()
    await stored(adapter, fixture)
    const full = adapter.store.read('s1')!
    expect(textOf(adapter)?.split('\n')).toHaveLength(12)
    const headerEnd = utf8.encode(encodeHeaderLine(H1)).length
    const lease = await adapter.acquire('s1')
    for (let cut = headerEnd; cut <= full.length; cut++) {
      adapter.store.write('s1', full.subarray(0, cut))
      const log = await adapter.load('s1')
      const prefix = fixture.slice(0, log.events.length)
      expect(stringsOf(log.events), `cut ${cut}`).toEqual(stringsOf(prefix))
      const closers = interruptedTurnClosers(log.events)
      await adapter.commitRepair('s1', log.torn, closers)
      const repaired = await adapter.load('s1')
      expect(repaired.torn).toBeUndefined()
      expect(stringsOf(repaired.events)).toEqual(stringsOf([...prefix, ...closers]))
      expect(interruptedTurnClosers(repaired.events)).toEqual([])
      await adapter.commitRepair('s1', repaired.torn, [])
      expect((await adapter.load('s1')).revision).toBe(repaired.revision)
    }
    await lease.release()
  })
})

describe('readFrom', () => {
  test('on memory: readFrom returns the committed suffix and the header, checks fromSeq and the id, and changes nothing', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    expect((await adapter.readFrom('s1', 0)).events).toHaveLength(6)
    expect((await adapter.readFrom('s1', 3)).events.map((event) => event.seq)).toEqual([3, 4, 5])
    expect((await adapter.readFrom('s1', 6)).events).toEqual([])
    expect((await adapter.readFrom('s1', 6)).header).toEqual(H1)
    for (const fromSeq of [-1, 1.5, Number.NaN]) {
      const error = await rejection(adapter.readFrom('s1', fromSeq))
      expect(InvalidArgumentError.is(error)).toBe(true)
      expect(error).toMatchObject({ argument: 'fromSeq' })
    }
    expect(await rejection(adapter.readFrom('nope', 0))).toMatchObject({ code: 'SESSION_NOT_FOUND' })
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', from(6, TS(2)), { expectedSeq: 6, lease })
    const bytes = adapter.store.read('s1')
    expect((await adapter.readFrom('s1', 6)).events.map((event) => event.type)).toEqual(['turn/start'])
    expect(adapter.store.read('s1')).toEqual(bytes)
  })

  test('never returns a torn tail', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    adapter.store.write('s1', utf8.encode(`${textOf(adapter)}{"type":"x`))
    expect((await adapter.readFrom('s1', 4)).events.map((event) => event.seq)).toEqual([4, 5])
  })
})

describe('list and delete', () => {
  test('lists stored headers sorted by UTF-16 id; damaged headers are reported, not thrown', async () => {
    const adapter = memoryPersistence()
    for (const id of ['b', 'B', 'a_1', 'a']) await stored(adapter, L1, { ...H1, id })
    await adapter.create({ ...H1, id: 'registered' })
    adapter.store.write('c', utf8.encode('[1,2]\n'))
    adapter.store.write('future', utf8.encode('{"type":"session","version":2,"id":"future","createdAt":1}\n'))
    adapter.store.write('d', utf8.encode(`${encodeHeaderLine({ ...H1, id: 'd' })}garbage\n{"type"`))
    const listing = await adapter.list()
    expect(listing.headers.map((header) => header.id)).toEqual(['B', 'a', 'a_1', 'b', 'd'])
    expect(listing.damaged).toHaveLength(1)
    expect(listing.damaged[0]).toMatchObject({ code: 'CORRUPT_HEADER', sessionId: 'c', location: 'memory:c', line: 1 })
  })

  test('delete removes the log; absent ids are SESSION_NOT_FOUND', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const lease = await adapter.acquire('s1')
    await adapter.delete('s1')
    await lease.release()
    expect(adapter.store.read('s1')).toBeUndefined()
    expect(await rejection(adapter.load('s1'))).toMatchObject({ code: 'SESSION_NOT_FOUND' })
    expect(await rejection(adapter.delete('s1'))).toMatchObject({ code: 'SESSION_NOT_FOUND' })
    await expect(adapter.create(H1)).resolves.toBeUndefined()
  })

  test('delete refuses while another instance holds the lease', async () => {
    const store = createMemoryStore()
    const adapter = memoryPersistence({ store })
    await stored(adapter, L1)
    const other = memoryPersistence({ store })
    const lease = await other.acquire('s1')
    expect(await rejection(adapter.delete('s1'))).toBeInstanceOf(SessionLockedError)
    expect(store.ids()).toEqual(['s1'])
    await lease.release()
  })
})

describe('leases and close', () => {
  test('on memory: two instances on one store exclude each other', async () => {
    const store = createMemoryStore()
    const a = memoryPersistence({ store, now: () => 42 })
    const b = memoryPersistence({ store })
    const lease = await a.acquire('s1')
    expect(lease).toMatchObject({ sessionId: 's1', epoch: 1 })
    expect(lease.token).toMatch(/^[0-9a-f]{32}$/)
    const locked = await rejection(b.acquire('s1'))
    expect(SessionLockedError.is(locked)).toBe(true)
    expect(locked).toMatchObject({
      code: 'SESSION_LOCKED',
      holder: { pid: process.pid, host: hostname(), acquiredAt: 42 },
      location: 'memory:s1',
    })
    expect(await rejection(a.acquire('s1'))).toMatchObject({ code: 'SESSION_LOCKED' })
    await lease.release()
    await lease.release()
    const next = await b.acquire('s1')
    expect(next.epoch).toBe(2)
    await expect(memoryPersistence().acquire('s1')).resolves.toMatchObject({ epoch: 1 })
  })

  test('release aborts the signal with LeaseLostError and kills the lease', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, L1)
    const lease = await adapter.acquire('s1')
    expect(lease.signal.aborted).toBe(false)
    await lease.release()
    expect(lease.signal.aborted).toBe(true)
    expect(LeaseLostError.is(lease.signal.reason)).toBe(true)
    expect(await rejection(adapter.commitRepair('s1', undefined, from(6, TS(2))))).toBeInstanceOf(LeaseLostError)
  })

  test('on memory: an expired lease fences its holder', async () => {
    const store = createMemoryStore()
    const a = memoryPersistence({ store })
    const b = memoryPersistence({ store })
    await stored(a, L1)
    const lease = await a.acquire('s1')
    expect(store.expireLease('s1')).toBe(true)
    expect(store.expireLease('s1')).toBe(false)
    expect(lease.signal.reason).toMatchObject({ code: 'LEASE_LOST', epoch: lease.epoch })
    const taken = await b.acquire('s1')
    const bytes = store.read('s1')
    const lost = await rejection(a.append('s1', from(6, TS(2)), { expectedSeq: 6, lease }))
    expect(lost).toMatchObject({ code: 'LEASE_LOST' })
    expect(store.read('s1')).toEqual(bytes)
    expect(await rejection(b.append('s1', from(6, TS(2)), { expectedSeq: 6, lease }))).toBeInstanceOf(LeaseLostError)
    await b.append('s1', from(6, TS(2)), { expectedSeq: 6, lease: taken })
    expect((await b.load('s1')).events).toHaveLength(7)
  })

  test('close releases the leases, is idempotent, and later calls are CLOSED', async () => {
    const store = createMemoryStore()
    const adapter = memoryPersistence({ store })
    await stored(adapter, L1)
    const lease = await adapter.acquire('s1')
    await adapter.close()
    await adapter.close()
    expect(lease.signal.aborted).toBe(true)
    await expect(lease.release()).resolves.toBeUndefined()
    await expect(memoryPersistence({ store }).acquire('s1')).resolves.toMatchObject({ sessionId: 's1' })
    const calls: Promise<unknown>[] = [
      adapter.create({ ...H1, id: 's2' }),
      adapter.append('s1', [], { expectedSeq: 6, lease }),
      adapter.load('s1'),
      adapter.commitRepair('s1', undefined, []),
      adapter.readFrom('s1', 0),
      adapter.list(),
      adapter.delete('s1'),
      adapter.acquire('s3'),
    ]
    for (const call of calls) expect(await rejection(call)).toMatchObject({ code: 'CLOSED' })
  })

  test('a store from elsewhere is refused', () => {
    const fake = { read: () => undefined } as unknown as ReturnType<typeof createMemoryStore>
    const error = thrownBy(() => memoryPersistence({ store: fake }))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field: 'store', value: fake })
  })

  test.each([
    [null, ''],
    [42, ''],
    [{ stor: createMemoryStore() }, 'stor'],
    [{ packChunks: 'no' }, 'packChunks'],
    [{ now: 5 }, 'now'],
  ])('options %o → InvalidOptionsError at %j', (options, field) => {
    const error = thrownBy(() => memoryPersistence(options as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field })
  })
})

describe('session ids and file names', () => {
  test.each([
    ['s1', 's1'],
    ['Run.2', 'Run.2'],
    ['con', '~con'],
    ['NUL.x', '~NUL.x'],
    ['LpT9', '~LpT9'],
    ['com0.a.b', '~com0.a.b'],
    ['console', 'console'],
    ['x.con', 'x.con'],
    ['com10', 'com10'],
  ])('%s → %s and back', (id, name) => {
    expect(fileNameOf(id)).toBe(name)
    expect(sessionIdOfFileName(name)).toBe(id)
  })

  test.each(['con', '~s1', '.x', '~', '~~con', 'a/b', ''])('%j maps back to no id', (name) => {
    expect(sessionIdOfFileName(name)).toBeUndefined()
  })

  test.each([
    ['', 'must not be empty'],
    ['.', 'must not start with "."'],
    ['..', 'must not start with "."'],
    ['a/b', '[A-Za-z0-9_.@:+-]'],
    ['a\0b', '[A-Za-z0-9_.@:+-]'],
    ['a~b', '[A-Za-z0-9_.@:+-]'],
    ['a'.repeat(129), 'at most 128'],
  ])('%j is INVALID_SESSION_ID', async (id, reason) => {
    const error = (() => {
      try {
        fileNameOf(id)
      } catch (caught) {
        return caught
      }
      return undefined
    })()
    expect(PersistenceError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_SESSION_ID', sessionId: id })
    expect((error as PersistenceError).reason).toContain(reason)
    const adapter = memoryPersistence()
    for (const call of [
      adapter.load(id),
      adapter.acquire(id),
      adapter.readFrom(id, 0),
      adapter.delete(id),
      adapter.commitRepair(id, undefined, []),
    ]) {
      expect(await rejection(call)).toMatchObject({ code: 'INVALID_SESSION_ID' })
    }
  })

  test('assertStorableId accepts exactly the registry ids', () => {
    expect(() => assertStorableId('a'.repeat(128))).not.toThrow()
    expect(() => assertStorableId('_-.')).not.toThrow()
    expect(() => assertStorableId(7)).toThrow(PersistenceError)
  })
})

describe('list over logs it cannot read', () => {
  test('a log from a newer Yoke is reported in unreadable (FORMAT_TOO_NEW, both versions), never dropped', async () => {
    const store = createMemoryStore()
    const bytes = (text: string) => new TextEncoder().encode(text)
    store.write('future', bytes(`${JSON.stringify({ type: 'session', version: 99, id: 'future', createdAt: 5 })}\n`))
    store.write(
      'today',
      bytes(`${JSON.stringify({ type: 'session', version: 1, id: 'today', createdAt: 5, cwd: '/' })}\n`),
    )
    const adapter = memoryPersistence({ store })
    try {
      const listing = await adapter.list()
      expect(listing.headers.map((header) => header.id)).toEqual(['today'])
      expect(listing.damaged).toEqual([])
      expect(listing.unreadable).toHaveLength(1)
      expect(listing.unreadable?.[0]).toMatchObject({
        code: 'FORMAT_TOO_NEW',
        sessionId: 'future',
        storedVersion: 99,
        supportedVersion: 1,
      })
    } finally {
      await adapter.close()
    }
  })
})
