/**
 * Conformance cases of writing: create, the append checks and their
 * order, empty batches, durability across instances, revisions and a large batch.
 *
 * @module
 */
import assert from 'node:assert/strict'
import { ErrorCode } from '../../errors/codes.js'
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js'
import { LeaseLostError } from '../../errors/lease-lost-error.js'
import { PersistenceError } from '../../errors/persistence-error.js'
import { SeqConflictError } from '../../errors/seq-conflict-error.js'
import { SessionHeaderError } from '../../errors/session-header-error.js'
import { interruptedTurnClosers } from '../../session/interrupted-turn-closers.js'
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import {
  baseLog,
  conformanceTime,
  eventsFrom,
  headerOf,
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
  assertUnchanged,
  type ConformanceCase,
  expectError,
  expectResolves,
  jsonOf,
  rejectionOf,
  snapshotOf,
  storeLog,
} from './conformance-support.js'

/** A copy of `event` with another seq. */
function withSeq(event: SessionEvent, seq: number): SessionEvent {
  return { ...event, seq }
}

const createCase: ConformanceCase = {
  name: 'create refuses an id already registered or stored, and bad headers and ids',
  needs: [],
  async run({ adapter, reopen }) {
    await adapter.create(headerOf('s1'))
    expectError(
      await rejectionOf(() => adapter.create(headerOf('s1')), 'create(s1) twice'),
      PersistenceError,
      ErrorCode.SESSION_EXISTS,
      'create(s1) twice',
    )
    await storeLog(adapter, headerOf('s2'), [baseLog()])
    const second = await reopen()
    expectError(
      await rejectionOf(() => second.create(headerOf('s2')), 'create(s2) over a stored log'),
      PersistenceError,
      ErrorCode.SESSION_EXISTS,
      'create(s2) in a second instance over a stored log',
    )
    const tooNew = { ...headerOf('s3'), version: 2 } as unknown as SessionHeader
    expectError(
      await rejectionOf(() => adapter.create(tooNew), 'create version 2'),
      SessionHeaderError,
      ErrorCode.INVALID_HEADER,
      'create version 2',
      {
        field: 'version',
      },
    )
    const { version: _version, ...versionless } = headerOf('s3')
    expectError(
      await rejectionOf(() => adapter.create(versionless as unknown as SessionHeader), 'create without version'),
      SessionHeaderError,
      ErrorCode.INVALID_HEADER,
      'create without version',
      {
        field: 'version',
      },
    )
    for (const id of ['../x', 'a/b', '', '.hidden', 'a'.repeat(129)]) {
      const header = { ...headerOf('s4'), id } as SessionHeader
      const what = `create(${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…` : id)})`
      expectError(
        await rejectionOf(() => adapter.create(header), what),
        PersistenceError,
        ErrorCode.INVALID_SESSION_ID,
        what,
      )
    }
    expectError(
      await rejectionOf(() => adapter.load('../x'), "load('../x')"),
      PersistenceError,
      ErrorCode.INVALID_SESSION_ID,
      "load('../x')",
    )
    expectError(
      await rejectionOf(() => adapter.acquire('a/b'), "acquire('a/b')"),
      PersistenceError,
      ErrorCode.INVALID_SESSION_ID,
      "acquire('a/b')",
    )
    const listing = await adapter.list()
    assert.deepEqual(
      listing.headers.map((header) => header.id),
      ['s2'],
      'only the appended session is listed (create writes nothing durable)',
    )
  },
}

const seqChecksCase: ConformanceCase = {
  name: 'append rejects a stale expectedSeq with other events, an ahead one and non-contiguous seqs, leaving the log unchanged',
  needs: [],
  async run({ target, adapter, reopen }) {
    const log = baseLog()
    await storeLog(adapter, headerOf('s1'), [log])
    const lease = await adapter.acquire('s1')
    const before = await snapshotOf(target, adapter, 's1')
    const next = turnTwo()
    const attempts: {
      what: string
      events: readonly SessionEvent[]
      expectedSeq: number
      check(error: unknown, what: string): void
    }[] = [
      {
        what: 'append([TS(2)@5], { expectedSeq: 5 }) over a different stored seq 5',
        events: [withSeq(next[0]!, 5)],
        expectedSeq: 5,
        check: (error, what) =>
          expectError(error, SeqConflictError, ErrorCode.SEQ_CONFLICT, what, { expectedSeq: 5, storedSeq: 6 }),
      },
      {
        what: 'append([TS(2)@7], { expectedSeq: 7 })',
        events: [withSeq(next[0]!, 7)],
        expectedSeq: 7,
        check: (error, what) =>
          expectError(error, SeqConflictError, ErrorCode.SEQ_CONFLICT, what, { expectedSeq: 7, storedSeq: 6 }),
      },
      {
        what: 'append([TS(2)@6, SS(2,1)@8], { expectedSeq: 6 })',
        events: [next[0]!, withSeq(next[1]!, 8)],
        expectedSeq: 6,
        check: (error, what) => {
          const invalid = expectError(error, InvalidArgumentError, ErrorCode.INVALID_ARGUMENT, what, {
            argument: 'events',
          })
          assert.match(invalid.reason, /\b1\b/, `${what}: the reason names index 1 (${invalid.reason})`)
        },
      },
      {
        what: 'append([TS(2)@7], { expectedSeq: 6 })',
        events: [withSeq(next[0]!, 7)],
        expectedSeq: 6,
        check: (error, what) => {
          const invalid = expectError(error, InvalidArgumentError, ErrorCode.INVALID_ARGUMENT, what, {
            argument: 'events',
          })
          assert.match(invalid.reason, /\b0\b/, `${what}: the reason names index 0 (${invalid.reason})`)
        },
      },
      {
        what: 'append([TS(2)@6, TS(2)@6], { expectedSeq: 6 })',
        events: [next[0]!, next[0]!],
        expectedSeq: 6,
        check: (error, what) =>
          expectError(error, InvalidArgumentError, ErrorCode.INVALID_ARGUMENT, what, { argument: 'events' }),
      },
    ]
    for (const attempt of attempts) {
      const error = await rejectionOf(
        () => adapter.append('s1', attempt.events, { expectedSeq: attempt.expectedSeq, lease }),
        attempt.what,
      )
      attempt.check(error, attempt.what)
      await assertUnchanged(target, adapter, 's1', before, `after the rejected ${attempt.what}`)
    }
    await assertUnchanged(target, await reopen(), 's1', before, 'a second instance after the rejected appends')
    await expectResolves(
      () => adapter.append('s1', next, { expectedSeq: 6, lease }),
      'append(TS(2)@6, SS(2,1)@7) after the rejections',
    )
    assertSameEvents(
      (await adapter.load('s1')).events,
      [...log, ...next],
      'load after the rejections and one good append',
    )
    await lease.release()
  },
}

/** A copy of `event` with its keys in reverse order: the same value, other JSON text. */
function reordered(event: SessionEvent): SessionEvent {
  return Object.fromEntries(Object.entries(event).reverse()) as unknown as SessionEvent
}

const reappendCase: ConformanceCase = {
  name: 'a batch sent again at its expectedSeq resolves without duplicating; another or a partly matching batch there is a SeqConflictError',
  needs: [],
  async run({ target, adapter, reopen }) {
    const log = baseLog()
    const next = turnTwo()
    const chunks = eventsFrom(8, [textChunk(2, 1, 'a'), textChunk(2, 1, 'b'), textChunk(2, 1, 'c'), stepEnd(2, 1)])
    const all = [...log, ...next, ...chunks]
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', log.slice(0, 3), { expectedSeq: 0, lease })
    await adapter.append('s1', log.slice(3), { expectedSeq: 3, lease })
    await adapter.append('s1', next, { expectedSeq: 6, lease })
    await adapter.append('s1', chunks, { expectedSeq: 8, lease })
    const before = await snapshotOf(target, adapter, 's1')
    const again: { readonly what: string; readonly events: readonly SessionEvent[]; readonly texts?: boolean }[] = [
      { what: 'the last batch (a chunk run) again at { expectedSeq: 8 }', events: chunks },
      { what: 'the last batch again with its texts', events: chunks, texts: true },
      { what: 'the first batch again at { expectedSeq: 0 }', events: log.slice(0, 3) },
      { what: 'a middle batch again at { expectedSeq: 6 }', events: next, texts: true },
      { what: 'one stored event again at { expectedSeq: 5 }', events: [log[5]!] },
    ]
    for (const attempt of again) {
      const expectedSeq = attempt.events[0]!.seq
      await expectResolves(
        () =>
          adapter.append('s1', attempt.events, {
            expectedSeq,
            lease,
            ...(attempt.texts === true ? { texts: jsonOf(attempt.events) } : {}),
          }),
        attempt.what,
      )
      await assertUnchanged(target, adapter, 's1', before, `after ${attempt.what}`)
    }
    const conflicts: { readonly what: string; readonly events: readonly SessionEvent[] }[] = [
      { what: 'another batch at a stale { expectedSeq: 6 }', events: eventsFrom(6, [turnStart(3)]) },
      { what: 'a batch whose first event matches and second differs', events: [next[0]!, withSeq(chunks[0]!, 7)] },
      { what: 'a batch whose last event differs in one field', events: [next[0]!, { ...next[1]!, time: 1 }] },
      { what: 'a stored batch reaching past the stored log', events: [...chunks, ...eventsFrom(12, [turnEnd(2)])] },
      { what: 'a stored event with its keys in another order', events: [reordered(log[5]!)] },
    ]
    for (const attempt of conflicts) {
      const expectedSeq = attempt.events[0]!.seq
      expectError(
        await rejectionOf(() => adapter.append('s1', attempt.events, { expectedSeq, lease }), attempt.what),
        SeqConflictError,
        ErrorCode.SEQ_CONFLICT,
        attempt.what,
        { expectedSeq, storedSeq: all.length },
      )
      await assertUnchanged(target, adapter, 's1', before, `after the rejected ${attempt.what}`)
    }
    await lease.release()
    expectError(
      await rejectionOf(
        () => adapter.append('s1', chunks, { expectedSeq: 8, lease }),
        'a re-append under a released lease',
      ),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      'a re-append under a released lease',
    )
    // Another instance (a restarted process retrying what the old one sent) gets the same answer.
    const other = await reopen()
    const taken = await other.acquire('s1')
    await expectResolves(
      () => other.append('s1', chunks, { expectedSeq: 8, lease: taken }),
      'the last batch again from a second instance',
    )
    await assertUnchanged(target, other, 's1', before, 'after the second instance sent the last batch again')
    const closing = eventsFrom(all.length, [turnEnd(2)])
    await expectResolves(
      () => other.append('s1', closing, { expectedSeq: all.length, lease: taken }),
      'the next batch after the re-appends',
    )
    assertSameEvents((await adapter.load('s1')).events, [...all, ...closing], 'the log: every event once')
    await taken.release()
  },
}

const checkOrderCase: ConformanceCase = {
  name: 'append checks the lease first, then an empty batch, then seqs, then the session, then expectedSeq',
  needs: [],
  async run({ target, adapter }) {
    const log = baseLog()
    await storeLog(adapter, headerOf('s1'), [log])
    const lease = await adapter.acquire('s1')
    const other = await adapter.acquire('s2')
    const before = await snapshotOf(target, adapter, 's1')
    const next = turnTwo()
    const gap = [next[0]!, withSeq(next[1]!, 8)]

    let what = "append('s1', …) under the lease of 's2'"
    expectError(
      await rejectionOf(() => adapter.append('s1', next, { expectedSeq: 6, lease: other }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    what = "append('s1', []) under the lease of 's2'"
    expectError(
      await rejectionOf(() => adapter.append('s1', [], { expectedSeq: 6, lease: other }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    what = "append('s1', …) under a copy of its lease"
    expectError(
      await rejectionOf(() => adapter.append('s1', next, { expectedSeq: 6, lease: { ...lease } }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    what = 'append([], { expectedSeq: 42 })'
    await expectResolves(
      () => adapter.append('s1', [], { expectedSeq: 42, lease }),
      `${what} (an empty batch checks no seq)`,
    )
    what = 'append(non-contiguous, { expectedSeq: 5 })'
    expectError(
      await rejectionOf(() => adapter.append('s1', gap, { expectedSeq: 5, lease }), what),
      InvalidArgumentError,
      ErrorCode.INVALID_ARGUMENT,
      what,
      {
        argument: 'events',
      },
    )

    const ghost = await adapter.acquire('ghost')
    what = "append('ghost', [TS@1], { expectedSeq: 0 }) of an unknown session"
    expectError(
      await rejectionOf(
        () => adapter.append('ghost', eventsFrom(1, [turnStart(1)]), { expectedSeq: 0, lease: ghost }),
        what,
      ),
      InvalidArgumentError,
      ErrorCode.INVALID_ARGUMENT,
      what,
      { argument: 'events' },
    )
    what = "append('ghost', [TS@3], { expectedSeq: 3 }) of an unknown session"
    expectError(
      await rejectionOf(
        () => adapter.append('ghost', eventsFrom(3, [turnStart(1)]), { expectedSeq: 3, lease: ghost }),
        what,
      ),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      what,
    )
    what = "append('ghost', [TS@0], { expectedSeq: 0 }) of an unknown session"
    expectError(
      await rejectionOf(
        () => adapter.append('ghost', eventsFrom(0, [turnStart(1)]), { expectedSeq: 0, lease: ghost }),
        what,
      ),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      what,
    )
    await ghost.release()

    await adapter.create(headerOf('s3'))
    const fresh = await adapter.acquire('s3')
    what = "the first append of 's3' at { expectedSeq: 3 }"
    expectError(
      await rejectionOf(
        () => adapter.append('s3', eventsFrom(3, [turnStart(1)]), { expectedSeq: 3, lease: fresh }),
        what,
      ),
      SeqConflictError,
      ErrorCode.SEQ_CONFLICT,
      what,
      { expectedSeq: 3, storedSeq: 0 },
    )
    await fresh.release()

    await lease.release()
    what = 'append(non-contiguous) under a released lease'
    expectError(
      await rejectionOf(() => adapter.append('s1', gap, { expectedSeq: 5, lease }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    what = 'append([]) under a released lease'
    expectError(
      await rejectionOf(() => adapter.append('s1', [], { expectedSeq: 6, lease }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    what = 'append(TS(2)@6) under a released lease'
    expectError(
      await rejectionOf(() => adapter.append('s1', next, { expectedSeq: 6, lease }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    await assertUnchanged(target, adapter, 's1', before, 'after every rejected append')
    await other.release()
  },
}

const emptyBatchCase: ConformanceCase = {
  name: 'an empty batch resolves, writes nothing and materializes nothing',
  needs: [],
  async run({ adapter, reopen }) {
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', [], { expectedSeq: 0, lease })
    assert.deepEqual((await adapter.list()).headers, [], 'list after an empty first batch')
    expectError(
      await rejectionOf(() => adapter.load('s1'), "load('s1')"),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      "load('s1') after an empty first batch",
    )
    const second = await reopen()
    expectError(
      await rejectionOf(() => second.load('s1'), "second load('s1')"),
      PersistenceError,
      ErrorCode.SESSION_NOT_FOUND,
      "a second instance's load('s1') after an empty first batch",
    )
    await adapter.append('s1', baseLog(), { expectedSeq: 0, lease })
    await adapter.append('s1', [], { expectedSeq: 6, lease })
    assertSameEvents((await second.load('s1')).events, baseLog(), 'load after the base log and an empty batch')
    await lease.release()
  },
}

const durabilityCase: ConformanceCase = {
  name: 'what an append resolved is loaded by a second instance over the same storage (durability)',
  needs: [],
  async run({ adapter, reopen }) {
    const header = headerOf('s1')
    await adapter.create(header)
    const lease = await adapter.acquire('s1')
    const log = baseLog()
    await adapter.append('s1', log, { expectedSeq: 0, lease })
    const second = await reopen()
    const first = await expectResolves(() => second.load('s1'), "the second instance's load('s1')")
    assert.deepEqual(first.header, header, 'the header a second instance loads')
    assertSameEvents(first.events, log, 'the events a second instance loads')
    assert.equal(first.torn, undefined, 'no torn tail after a resolved append')
    assert.deepEqual((await second.list()).headers, [header], "the second instance's list()")
    const next = turnTwo()
    await adapter.append('s1', next, { expectedSeq: 6, lease })
    assertSameEvents(
      (await second.load('s1')).events,
      [...log, ...next],
      'the same second instance loads the later append',
    )
    const third = await reopen()
    assertSameEvents((await third.load('s1')).events, [...log, ...next], 'a third instance loads both batches')
    await lease.release()
    const writer = await third.acquire('s1')
    const closers = interruptedTurnClosers([...log, ...next])
    await third.append('s1', closers, { expectedSeq: 8, lease: writer })
    await writer.release()
    assertSameEvents(
      (await adapter.load('s1')).events,
      [...log, ...next, ...closers],
      'the first instance loads what the third appended',
    )
  },
}

const revisionCase: ConformanceCase = {
  name: 'the revision is equal for equal storage, changes after every append and repair, and never repeats',
  needs: [],
  async run({ adapter, reopen }) {
    const log = baseLog()
    await storeLog(adapter, headerOf('s1'), [log])
    const seen = new Set<string>()
    const r0 = (await adapter.load('s1')).revision
    assert.equal(typeof r0, 'string', 'a revision is a string')
    assert.equal((await adapter.load('s1')).revision, r0, 'two loads of the same storage')
    assert.equal((await (await reopen()).load('s1')).revision, r0, "a second instance's load of the same storage")
    seen.add(r0)
    const lease = await adapter.acquire('s1')
    const later = eventsFrom(6, [turnStart(2), stepStart(2, 1), userMessage('x'), stepEnd(2, 1)])
    for (const event of later) {
      await adapter.append('s1', [event], { expectedSeq: event.seq, lease })
      const revision = (await adapter.load('s1')).revision
      assert.ok(!seen.has(revision), `the revision after appending seq ${event.seq} is new (${revision})`)
      seen.add(revision)
    }
    const loaded = await adapter.load('s1')
    const closers = interruptedTurnClosers(loaded.events)
    await adapter.commitRepair('s1', loaded.torn, closers)
    const repaired = (await adapter.load('s1')).revision
    assert.ok(!seen.has(repaired), `the revision after a repair is new (${repaired})`)
    assert.equal(
      (await (await reopen()).load('s1')).revision,
      repaired,
      "a second instance's revision of the repaired log",
    )
    await lease.release()
  },
}

const largeBatchCase: ConformanceCase = {
  name: 'one append of a large batch resolves and loads whole',
  needs: [],
  timeoutMs: 120_000,
  async run({ adapter, reopen, largeBatch }) {
    const log = baseLog()
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', log, { expectedSeq: 0, lease })
    const batch: SessionEvent[] = []
    for (let index = 0; index < largeBatch; index++) {
      const seq = 6 + index
      batch.push(
        index % 4 === 3
          ? { type: 'test/note', seq, time: conformanceTime, data: { index, text: `note ${index}` } }
          : {
              type: 'assistant/chunk',
              seq,
              time: conformanceTime + index,
              data: { turn: 2, step: 1, chunk: { type: 'text-delta', index: 0, text: `t${index} ` } },
            },
      )
    }
    await expectResolves(() => adapter.append('s1', batch, { expectedSeq: 6, lease }), `append of ${largeBatch} events`)
    const expected = [...log, ...batch]
    assertSameEvents((await adapter.load('s1')).events, expected, 'load')
    const second = (await (await reopen()).load('s1')).events
    assert.equal(second.length, expected.length, "a second instance's load has every event")
    assert.equal(JSON.stringify(second.at(-1)), JSON.stringify(expected.at(-1)), "a second instance's last event")
    await lease.release()
  },
}

/** The write-path cases, in registration order. */
export const appendCases: readonly ConformanceCase[] = [
  createCase,
  seqChecksCase,
  reappendCase,
  checkOrderCase,
  emptyBatchCase,
  durabilityCase,
  revisionCase,
  largeBatchCase,
]
