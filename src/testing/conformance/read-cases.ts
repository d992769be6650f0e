/**
 * Conformance cases of reading and lifecycle: load, list, readFrom,
 * delete, close, byte-exact records, unicode and fork header lineage.
 *
 * @module
 */
import assert from 'node:assert/strict'
import { ErrorCode } from '../../errors/codes.js'
import { PersistenceCorruptionError } from '../../errors/persistence-corruption-error.js'
import { PersistenceError } from '../../errors/persistence-error.js'
import type { SessionEvent } from '../../session/session-event.js'
import {
  baseLog,
  endSeed,
  eventsFrom,
  headerOf,
  note,
  stepEnd,
  stepStart,
  textChunk,
  turnEnd,
  turnStart,
  turnTwo,
  userMessage,
} from './conformance-events.js'
import {
  assertSameEvents,
  type ConformanceCase,
  expectError,
  expectResolves,
  jsonOf,
  rejectionOf,
  storeLog,
} from './conformance-support.js'

const encoder = new TextEncoder()

const loadCase: ConformanceCase = {
  name: 'load returns fresh objects, never the appended ones, SESSION_NOT_FOUND for an absent id, and honours an aborted signal',
  needs: [],
  async run({ adapter }) {
    expectError(
      await rejectionOf(() => adapter.load('nope'), "load('nope')"),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      "load('nope')",
    )
    const log = baseLog()
    await storeLog(adapter, headerOf('s1'), [log])
    const first = await adapter.load('s1')
    const second = await adapter.load('s1', { truncateAtCorruption: true })
    assertSameEvents(first.events, log, 'load')
    assert.equal(first.torn, undefined, 'a complete log has no torn tail')
    assert.equal(second.torn, undefined, 'a complete log has no torn tail with truncateAtCorruption either')
    first.events.forEach((event, index) => {
      assert.notEqual(event, log[index], `events[${index}] is not the appended object`)
      assert.notEqual(event, second.events[index], `events[${index}] is a fresh object on every load`)
      assert.notEqual(event.data, second.events[index]?.data, `events[${index}].data is a fresh object on every load`)
    })
    const controller = new AbortController()
    const reason = new Error('stop reading')
    controller.abort(reason)
    const what = 'load with an aborted signal'
    assert.equal(
      await rejectionOf(() => adapter.load('s1', { signal: controller.signal }), what),
      reason,
      `${what} rejects with signal.reason`,
    )
  },
}

const listCase: ConformanceCase = {
  name: 'list returns the stored headers sorted by id in UTF-16 order, never an unmaterialized one',
  needs: [],
  async run({ adapter, reopen }) {
    const ids = ['zeta', 'alpha_3', '0x', 'Alpha', 'alpha.1', 'alpha-2', 'Zeta9']
    for (const id of ids) await storeLog(adapter, headerOf(id), [eventsFrom(0, [turnStart(1), turnEnd(1)])])
    await adapter.create(headerOf('pending'))
    const expected = [...ids].sort().map((id) => headerOf(id))
    const listing = await adapter.list()
    assert.deepEqual(listing.headers, expected, 'list().headers')
    assert.deepEqual(listing.damaged, [], 'list().damaged')
    assert.deepEqual((await (await reopen()).list()).headers, expected, "a second instance's list().headers")
  },
}

const damagedHeaderCase: ConformanceCase = {
  name: 'list reports a damaged header in damaged and still lists the others',
  needs: ['bytes'],
  async run({ target, adapter }) {
    await storeLog(adapter, headerOf('s1'), [baseLog()])
    await storeLog(adapter, headerOf('s3'), [baseLog()])
    await target.bytes!.write('s2', encoder.encode('this is not a header\n'))
    const listing = await expectResolves(() => adapter.list(), 'list() with a damaged header')
    assert.deepEqual(listing.headers, [headerOf('s1'), headerOf('s3')], 'list().headers')
    assert.equal(listing.damaged.length, 1, 'one damaged entry')
    assert.ok(PersistenceCorruptionError.is(listing.damaged[0]), 'the damaged entry is a PersistenceCorruptionError')
    expectError(
      await rejectionOf(() => adapter.load('s2'), "load('s2')"),
      PersistenceCorruptionError,
      ErrorCode.CORRUPT_HEADER,
      "load('s2') of a damaged header",
    )
  },
}

const readFromCase: ConformanceCase = {
  name: 'readFrom returns the committed events from a seq on, no closers, and changes nothing',
  needs: ['adapter.readFrom'],
  async run({ adapter }) {
    const readFrom = adapter.readFrom!.bind(adapter)
    const header = headerOf('s1')
    const log = [...baseLog(), ...eventsFrom(6, [turnStart(2)])]
    await storeLog(adapter, header, [log.slice(0, 6), log.slice(6)])
    const before = (await adapter.load('s1')).revision
    const all = await readFrom('s1', 0)
    assert.deepEqual(all.header, header, 'readFrom(0).header')
    assertSameEvents(all.events, log, 'readFrom(0) (an open turn gets no closers)')
    assertSameEvents((await readFrom('s1', 3)).events, log.slice(3), 'readFrom(3)')
    assertSameEvents((await readFrom('s1', 6)).events, log.slice(6), 'readFrom(6)')
    assertSameEvents((await readFrom('s1', 7)).events, [], 'readFrom(7), the end')
    assertSameEvents((await readFrom('s1', 1000)).events, [], 'readFrom(1000), past the end')
    expectError(
      await rejectionOf(() => readFrom('nope', 0), "readFrom('nope')"),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      "readFrom('nope', 0)",
    )
    assert.equal((await adapter.load('s1')).revision, before, 'readFrom changes no revision')
  },
}

const deleteCase: ConformanceCase = {
  name: 'delete removes the whole log; an absent id is SESSION_NOT_FOUND; the id can be created again',
  needs: ['adapter.delete'],
  async run({ adapter, reopen }) {
    const remove = adapter.delete!.bind(adapter)
    await storeLog(adapter, headerOf('s1'), [baseLog()])
    await storeLog(adapter, headerOf('s2'), [baseLog()])
    const lease = await adapter.acquire('s1')
    await expectResolves(() => remove('s1'), "delete('s1')")
    await lease.release()
    expectError(
      await rejectionOf(() => adapter.load('s1'), "load('s1')"),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      "load('s1') after delete",
    )
    const second = await reopen()
    expectError(
      await rejectionOf(() => second.load('s1'), "load('s1')"),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      "a second instance's load('s1') after delete",
    )
    assert.deepEqual((await adapter.list()).headers, [headerOf('s2')], 'list after delete')
    const again = await adapter.acquire('s1')
    expectError(
      await rejectionOf(() => remove('s1'), "delete('s1') again"),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      "delete('s1') again",
    )
    await again.release()
    const ghost = await adapter.acquire('nope')
    expectError(
      await rejectionOf(() => remove('nope'), "delete('nope')"),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      "delete('nope')",
    )
    await ghost.release()
    const log = eventsFrom(0, [turnStart(1), turnEnd(1)])
    await expectResolves(() => storeLog(adapter, headerOf('s1'), [log]), "storing 's1' again after delete")
    assertSameEvents((await second.load('s1')).events, log, "load of the new 's1'")
  },
}

const closeCase: ConformanceCase = {
  name: 'close is idempotent, releases the leases, and every later call rejects CLOSED',
  needs: [],
  async run({ adapter, reopen }) {
    const log = baseLog()
    await storeLog(adapter, headerOf('s1'), [log])
    const lease = await adapter.acquire('s1')
    await adapter.close()
    await expectResolves(() => adapter.close(), 'a second close()')
    const calls: [string, () => Promise<unknown>][] = [
      ['create', () => adapter.create(headerOf('s2'))],
      ['append', () => adapter.append('s1', turnTwo(), { expectedSeq: 6, lease })],
      ['load', () => adapter.load('s1')],
      ['commitRepair', () => adapter.commitRepair('s1', undefined, [])],
      ['list', () => adapter.list()],
      ['acquire', () => adapter.acquire('s2')],
    ]
    const readFrom = adapter.readFrom?.bind(adapter)
    if (readFrom !== undefined) calls.push(['readFrom', () => readFrom('s1', 0)])
    const remove = adapter.delete?.bind(adapter)
    if (remove !== undefined) calls.push(['delete', () => remove('s1')])
    for (const [method, call] of calls) {
      const what = `${method} after close`
      expectError(await rejectionOf(call, what), PersistenceError, ErrorCode.CLOSED, what)
    }
    const second = await reopen()
    const taken = await expectResolves(
      () => second.acquire('s1'),
      "a second instance's acquire('s1') after the holder closed",
    )
    assertSameEvents((await second.load('s1')).events, log, 'load after close')
    await taken.release()
  },
}

const byteExactCase: ConformanceCase = {
  name: 'records round-trip byte-exact, key order and every envelope field included',
  needs: [],
  async run({ adapter, reopen }) {
    const events = [
      ...baseLog(),
      ...eventsFrom(6, [
        note({ z: 1, a: { y: 2, b: 3 } }),
        note({ b: 1, 10: 2, 2: 3, nested: [{ z: null, a: [true, false] }, [], {}] }),
        note({
          numbers: [0, -1, 0.1, 1e-7, 1.5e300, -2.5e-300, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER],
          empty: '',
        }),
        {
          type: 'test/other',
          data: { kept: 'verbatim' },
          ignorable: true,
          surfaceOp: { op: 'replace', start: 1, end: 3 },
          sourceEventSeqs: [2, 3],
        },
        note('a string payload'),
        note(null),
        note([1, 'two', { three: 3 }]),
      ]),
    ]
    await storeLog(adapter, headerOf('s1'), [events.slice(0, 6), events.slice(6)])
    assertSameEvents((await adapter.load('s1')).events, events, 'load')
    assertSameEvents((await (await reopen()).load('s1')).events, events, "a second instance's load")
    const readFrom = adapter.readFrom?.bind(adapter)
    if (readFrom !== undefined) assertSameEvents((await readFrom('s1', 6)).events, events.slice(6), 'readFrom(6)')
  },
}

const unicodeCase: ConformanceCase = {
  name: "unicode round-trips, lone surrogates '\\uD83D' and '\\uDE00' in consecutive chunks included",
  needs: [],
  async run({ adapter, reopen }) {
    const texts = [
      '\uD83D',
      '\uDE00',
      'ü',
      '😀',
      '\uDE00',
      '\uD83D',
      '\u2028\u2029',
      '\u0000\u001f\u007f',
      '\uFFFF\u{10FFFF}',
    ]
    const events = [
      ...baseLog(),
      ...eventsFrom(6, [
        turnStart(2),
        stepStart(2, 1),
        textChunk(2, 1, '\uD83D'),
        textChunk(2, 1, '\uDE00'),
        stepEnd(2, 1),
        stepStart(2, 2),
        ...texts.map((text) => textChunk(2, 2, text)),
        userMessage('ü😀 \uD800 \u2028 "quoted" \\ back\nslash'),
        stepEnd(2, 2),
        turnEnd(2),
      ]),
    ]
    await storeLog(adapter, headerOf('s1'), [events.slice(0, 6), events.slice(6)])
    for (const [label, reader] of [
      ['load', adapter],
      ["a second instance's load", await reopen()],
    ] as const) {
      const loaded = (await reader.load('s1')).events
      assertSameEvents(loaded, events, label)
      const chunkText = (event: SessionEvent | undefined): unknown =>
        (event?.data as { readonly chunk?: { readonly text?: unknown } } | undefined)?.chunk?.text
      assert.equal(chunkText(loaded[8]), '\uD83D', `${label}: seq 8 is the lone high surrogate`)
      assert.equal(chunkText(loaded[9]), '\uDE00', `${label}: seq 9 is the lone low surrogate`)
      assert.deepEqual(
        loaded.slice(12, 12 + texts.length).map(chunkText),
        texts,
        `${label}: the chunk run keeps every text as code units`,
      )
    }
  },
}

const forkHeaderCase: ConformanceCase = {
  name: 'a fork header (parentSession, seedLength) and every optional header field round-trip',
  needs: [],
  async run({ adapter, reopen }) {
    const parent = headerOf('s1')
    const child = headerOf('s2', { parentSession: 's1', seedLength: 6 })
    const full = headerOf('s3', {
      parentSession: 's2',
      seedLength: 7,
      origin: 'subagent',
      delegationDepth: 2,
      agentPreset: 'reviewer',
      metadata: { z: 'last', a: { y: [1, 2], b: null } },
    })
    const seeded = [...baseLog(), ...eventsFrom(6, [endSeed()])]
    await storeLog(adapter, parent, [baseLog()])
    await storeLog(adapter, child, [seeded])
    await storeLog(adapter, full, [[...seeded, ...eventsFrom(7, [endSeed()])]])
    for (const [label, reader] of [
      ['this instance', adapter],
      ['a second instance', await reopen()],
    ] as const) {
      const listing = await reader.list()
      assert.deepEqual(listing.headers, [parent, child, full], `${label}: list().headers`)
      assert.deepEqual(
        jsonOf(listing.headers),
        jsonOf([parent, child, full]),
        `${label}: list() keeps header key order`,
      )
      const loaded = await reader.load('s2')
      assert.equal(JSON.stringify(loaded.header), JSON.stringify(child), `${label}: load('s2').header`)
      assertSameEvents(loaded.events, seeded, `${label}: load('s2').events`)
      assert.equal(
        JSON.stringify((await reader.load('s3')).header),
        JSON.stringify(full),
        `${label}: load('s3').header`,
      )
    }
  },
}

/** The read and lifecycle cases, in registration order. */
export const readCases: readonly ConformanceCase[] = [
  loadCase,
  listCase,
  damagedHeaderCase,
  readFromCase,
  deleteCase,
  closeCase,
  byteExactCase,
  unicodeCase,
  forkHeaderCase,
]
