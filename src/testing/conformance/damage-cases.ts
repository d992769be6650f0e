/**
 * Conformance cases of crashes, damage and leases:
 * a torn tail at every byte offset, corruption detection, repair idempotence, lock exclusion and
 * fencing after lease loss.
 *
 * @module
 */
import assert from 'node:assert/strict'
import { ErrorCode } from '../../errors/codes.js'
import { LeaseLostError } from '../../errors/lease-lost-error.js'
import { PersistenceCorruptionError } from '../../errors/persistence-corruption-error.js'
import { SeqConflictError } from '../../errors/seq-conflict-error.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import type { PersistenceAdapter, StoredLog } from '../../persistence/persistence-adapter.js'
import { interruptedTurnClosers } from '../../session/interrupted-turn-closers.js'
import type { SessionEvent } from '../../session/session-event.js'
import {
  assistantMessage,
  baseLog,
  eventsFrom,
  headerOf,
  stepStart,
  tornTailFixture,
  toolCall,
  toolCallBlock,
  turnStart,
  twoTurnLog,
} from './conformance-events.js'
import {
  assertOldHolderFenced,
  assertSameEvents,
  assertUnchanged,
  type ConformanceCase,
  type ConformanceContext,
  copyBytes,
  describeError,
  expectError,
  expectResolves,
  jsonOf,
  rejectionOf,
  sameBytes,
  snapshotOf,
  storeLog,
} from './conformance-support.js'
import type { ConformanceBytes } from './conformance-target.js'

/** Above this many candidate offsets, the every-offset test samples them. */
const maxOffsets = 4096

/** The torn-tail fixture, written through the adapter in two batches (two frames when compressed). */
async function writeFixture(
  adapter: PersistenceAdapter,
  bytes: ConformanceBytes,
): Promise<{ fixture: SessionEvent[]; full: Uint8Array }> {
  const fixture = tornTailFixture()
  await storeLog(adapter, headerOf('s1'), [fixture.slice(0, 6), fixture.slice(6)])
  return { fixture, full: copyBytes(await bytes.read('s1')) }
}

/** The shortest prefix of `full` that loads: the end of the header line or frame. Shorter cuts must be damage. */
async function headerEndOf(adapter: PersistenceAdapter, bytes: ConformanceBytes, full: Uint8Array): Promise<number> {
  for (let cut = 1; cut <= full.length; cut++) {
    await bytes.write('s1', full.subarray(0, cut))
    try {
      await adapter.load('s1')
      return cut
    } catch (error) {
      assert.ok(
        PersistenceCorruptionError.is(error),
        `cut ${cut} of ${full.length} (inside the header): expected PersistenceCorruptionError, got ${describeError(error)}`,
      )
    }
  }
  assert.fail('no prefix of the fixture loads, not even the whole of it')
}

/** The offsets to cut at: all of `from…to`, or an even sample of them that keeps both ends. */
function offsetsBetween(from: number, to: number): number[] {
  const count = to - from + 1
  const step = count > maxOffsets ? Math.ceil(count / maxOffsets) : 1
  const offsets: number[] = []
  for (let cut = from; cut <= to; cut += step) offsets.push(cut)
  if (offsets.at(-1) !== to) offsets.push(to)
  return offsets
}

/** Asserts a loaded log is a prefix of `fixture`, `torn.recovered` its tail and `torn.revision` its revision. */
function assertPrefix(log: StoredLog, fixture: readonly SessionEvent[], what: string): void {
  assert.ok(
    log.events.length <= fixture.length,
    `${what}: ${log.events.length} events, the fixture has ${fixture.length}`,
  )
  assertSameEvents(log.events, fixture.slice(0, log.events.length), `${what}: the events are a prefix of the fixture`)
  if (log.torn === undefined) return
  assert.equal(log.torn.revision, log.revision, `${what}: torn.revision is the revision it was read at`)
  const recovered = log.torn.recovered
  assertSameEvents(
    recovered,
    log.events.slice(log.events.length - recovered.length),
    `${what}: torn.recovered ends the events`,
  )
}

const tornTailCase: ConformanceCase = {
  name: 'a log cut at every byte offset loads a prefix, repairs once with its closers, and a further repair is a no-op',
  needs: ['bytes'],
  timeoutMs: 120_000,
  async run({ target, adapter }) {
    const bytes = target.bytes!
    const { fixture, full } = await writeFixture(adapter, bytes)
    const headerEnd = await headerEndOf(adapter, bytes, full)
    const lease = await adapter.acquire('s1')
    let previous = 0
    for (const cut of offsetsBetween(headerEnd, full.length)) {
      const what = `cut ${cut} of ${full.length}`
      await bytes.write('s1', full.subarray(0, cut))
      const first = await expectResolves(() => adapter.load('s1'), `${what}: load`)
      assertPrefix(first, fixture, `${what}: load`)
      assert.ok(
        first.events.length >= previous,
        `${what}: ${first.events.length} events, fewer than the ${previous} of a shorter cut`,
      )
      previous = first.events.length
      if (cut === full.length) {
        assert.equal(first.torn, undefined, `${what}: the whole log has no torn tail`)
        assert.equal(first.events.length, fixture.length, `${what}: the whole log loads every event`)
      }
      const closers = interruptedTurnClosers(first.events)
      await expectResolves(() => adapter.commitRepair('s1', first.torn, closers), `${what}: commitRepair`)
      const second = await expectResolves(() => adapter.load('s1'), `${what}: load after the repair`)
      assert.equal(second.torn, undefined, `${what}: no torn tail after the repair`)
      if (first.torn !== undefined || closers.length > 0) {
        assert.notEqual(second.revision, first.revision, `${what}: the repair changed the revision`)
      }
      assertSameEvents(
        second.events,
        [...first.events, ...closers],
        `${what}: load after the repair returns the events and the closers`,
      )
      const repaired = copyBytes(await bytes.read('s1'))
      await expectResolves(
        () => adapter.commitRepair('s1', second.torn, interruptedTurnClosers(second.events)),
        `${what}: a further commitRepair`,
      )
      const third = await adapter.load('s1')
      assert.equal(third.revision, second.revision, `${what}: a further repair keeps the revision`)
      assert.ok(sameBytes(copyBytes(await bytes.read('s1')), repaired), `${what}: a further repair keeps the bytes`)
    }
    await lease.release()
  },
}

const readFromTornCase: ConformanceCase = {
  name: 'readFrom of a torn log returns committed events only, never salvaged ones, and changes nothing',
  needs: ['bytes', 'adapter.readFrom'],
  async run({ target, adapter }) {
    const bytes = target.bytes!
    const readFrom = adapter.readFrom!.bind(adapter)
    const { full } = await writeFixture(adapter, bytes)
    for (const cut of [full.length - 1, full.length - 7, Math.floor(full.length * 0.75)]) {
      const what = `cut ${cut} of ${full.length}`
      const torn = full.subarray(0, cut)
      await bytes.write('s1', torn)
      const loaded = await adapter.load('s1')
      const committed = loaded.events.slice(0, loaded.events.length - (loaded.torn?.recovered.length ?? 0))
      assertSameEvents((await readFrom('s1', 0)).events, committed, `${what}: readFrom(0)`)
      assertSameEvents((await readFrom('s1', 7)).events, committed.slice(7), `${what}: readFrom(7)`)
      assert.ok(sameBytes(copyBytes(await bytes.read('s1')), torn), `${what}: readFrom changes no byte`)
      assert.equal((await adapter.load('s1')).revision, loaded.revision, `${what}: readFrom changes no revision`)
    }
  },
}

const staleRepairCase: ConformanceCase = {
  name: 'commitRepair of a tail read at an older revision rejects SeqConflictError expectedRevision and changes nothing',
  needs: ['bytes'],
  async run({ target, adapter }) {
    const bytes = target.bytes!
    const { full } = await writeFixture(adapter, bytes)
    const lease = await adapter.acquire('s1')
    await bytes.write('s1', full.subarray(0, full.length - 1))
    const stale = await adapter.load('s1')
    assert.ok(stale.torn !== undefined, 'a log cut one byte short has a torn tail')
    await bytes.write('s1', full.subarray(0, full.length - 2))
    const before = await snapshotOf(target, adapter, 's1')
    const what = 'commitRepair with a tail of an older revision'
    const error = await rejectionOf(
      () => adapter.commitRepair('s1', stale.torn, interruptedTurnClosers(stale.events)),
      what,
    )
    expectError(error, SeqConflictError, ErrorCode.SEQ_CONFLICT, what, { expectedRevision: stale.revision })
    await assertUnchanged(target, adapter, 's1', before, `after the rejected ${what}`)
    const current = await adapter.load('s1')
    await expectResolves(
      () => adapter.commitRepair('s1', current.torn, interruptedTurnClosers(current.events)),
      'commitRepair at the current revision',
    )
    assert.equal((await adapter.load('s1')).torn, undefined, 'no torn tail after the repair')
    await lease.release()
  },
}

const appendAfterTornCase: ConformanceCase = {
  name: 'an append to a log with a torn tail rejects and changes nothing until the tail is repaired',
  needs: ['bytes'],
  async run({ target, adapter, reopen }) {
    const bytes = target.bytes!
    const { fixture, full } = await writeFixture(adapter, bytes)
    const torn = full.subarray(0, full.length - 1)
    await bytes.write('s1', torn)
    const other = await reopen()
    const loaded = await other.load('s1')
    assert.ok(loaded.torn !== undefined, 'a log cut one byte short has a torn tail')
    const committed = loaded.events.length - loaded.torn.recovered.length
    for (const [label, writer] of [
      ['the instance that wrote the log', adapter],
      ['a second instance', other],
    ] as const) {
      const lease = await writer.acquire('s1')
      for (const expectedSeq of new Set([committed, fixture.length])) {
        const what = `an append at seq ${expectedSeq} by ${label} after the torn tail`
        await rejectionOf(
          () => writer.append('s1', eventsFrom(expectedSeq, [turnStart(3)]), { expectedSeq, lease }),
          what,
        )
        assert.ok(sameBytes(copyBytes(await bytes.read('s1')), torn), `${what}: the bytes changed`)
      }
      await lease.release()
    }
    const lease = await other.acquire('s1')
    const current = await other.load('s1')
    const closers = interruptedTurnClosers(current.events)
    await other.commitRepair('s1', current.torn, closers)
    const repaired = await other.load('s1')
    const after = eventsFrom(repaired.events.length, [turnStart(3)])
    await expectResolves(
      () => other.append('s1', after, { expectedSeq: repaired.events.length, lease }),
      'an append after the repair',
    )
    assertSameEvents(
      (await adapter.load('s1')).events,
      [...repaired.events, ...after],
      'load after the repair and the append',
    )
    await lease.release()
  },
}

/** Stores {@link twoTurnLog} in two batches, damages seq 3 and returns the log and the bytes after the damage. */
async function damagedLog(
  context: ConformanceContext,
): Promise<{ log: SessionEvent[]; damaged: Uint8Array | undefined }> {
  const log = twoTurnLog()
  await storeLog(context.adapter, headerOf('s1'), [log.slice(0, 6), log.slice(6)])
  await context.target.damageRecord!('s1', 3)
  const damaged = context.target.bytes === undefined ? undefined : copyBytes(await context.target.bytes.read('s1'))
  return { log, damaged }
}

const corruptionCase: ConformanceCase = {
  name: 'a damaged record fails load with PersistenceCorruptionError naming where, and storage and revision stay unchanged',
  needs: ['damageRecord'],
  async run(context) {
    const { target, adapter } = context
    const { log, damaged } = await damagedLog(context)
    const tolerant = await expectResolves(
      () => adapter.load('s1', { truncateAtCorruption: true }),
      'load({ truncateAtCorruption: true })',
    )
    assert.equal(
      tolerant.torn?.kind,
      'corrupt',
      'with truncateAtCorruption the damage is returned as torn.kind corrupt',
    )
    assert.ok(
      tolerant.events.length <= 3,
      `the valid prefix ends before the damaged seq 3 (got ${tolerant.events.length} events)`,
    )
    assertSameEvents(tolerant.events, log.slice(0, tolerant.events.length), 'the valid prefix')
    for (const [label, reader] of [
      ['load', adapter],
      ["a second instance's load", await context.reopen()],
    ] as const) {
      const error = await rejectionOf(() => reader.load('s1'), label)
      assert.ok(
        PersistenceCorruptionError.is(error),
        `${label}: expected PersistenceCorruptionError, got ${describeError(error)}`,
      )
      assert.equal(typeof error.location, 'string', `${label}: the error names the location`)
      assert.ok(
        error.offset !== undefined || error.line !== undefined || error.seq !== undefined,
        `${label}: the error names an offset, a line or a seq`,
      )
    }
    const again = await adapter.load('s1', { truncateAtCorruption: true })
    assert.equal(again.revision, tolerant.revision, 'the failed loads changed no revision')
    assertSameEvents(again.events, tolerant.events, 'the failed loads changed no event')
    if (damaged !== undefined && target.bytes !== undefined) {
      assert.ok(sameBytes(copyBytes(await target.bytes.read('s1')), damaged), 'the failed loads changed no byte')
    }
  },
}

const repairCase: ConformanceCase = {
  name: 'commitRepair needs a live lease, appends the closers once, and repairing again is a no-op',
  needs: [],
  async run({ target, adapter, reopen }) {
    const log = [
      ...baseLog(),
      ...eventsFrom(6, [
        turnStart(2),
        stepStart(2, 1),
        assistantMessage(2, 1, toolCallBlock('c1')),
        toolCall(2, 1, 'c1'),
      ]),
    ]
    await storeLog(adapter, headerOf('s1'), [log])
    const first = await adapter.load('s1')
    assert.equal(first.torn, undefined, 'a complete log with an open turn has no torn tail')
    const closers = interruptedTurnClosers(first.events)
    assert.deepEqual(
      closers.map((event) => event.type),
      ['tool/result', 'step/end', 'turn/end'],
      'the closers of the open turn',
    )
    const before = await snapshotOf(target, adapter, 's1')
    const what = 'commitRepair without a lease'
    expectError(
      await rejectionOf(() => adapter.commitRepair('s1', first.torn, closers), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    await assertUnchanged(target, adapter, 's1', before, `after the rejected ${what}`)
    const lease = await adapter.acquire('s1')
    await adapter.commitRepair('s1', first.torn, closers)
    const second = await adapter.load('s1')
    assertSameEvents(second.events, [...log, ...closers], 'load after the repair')
    assert.notEqual(second.revision, first.revision, 'the repair changed the revision')
    assert.deepEqual(interruptedTurnClosers(second.events), [], 'a repaired log needs no closers')
    const repaired = await snapshotOf(target, adapter, 's1')
    await adapter.commitRepair('s1', second.torn, [])
    await assertUnchanged(target, adapter, 's1', repaired, 'a further repair')
    await lease.release()
    assertSameEvents(
      (await (await reopen()).load('s1')).events,
      [...log, ...closers],
      "a second instance's load after the repair",
    )
  },
}

const corruptRepairCase: ConformanceCase = {
  name: 'a corrupt tail returned with truncateAtCorruption is repaired once, and repairing again is a no-op',
  needs: ['damageRecord'],
  async run(context) {
    const { target, adapter } = context
    await damagedLog(context)
    const lease = await adapter.acquire('s1')
    const tolerant = await adapter.load('s1', { truncateAtCorruption: true })
    const closers = interruptedTurnClosers(tolerant.events)
    await expectResolves(() => adapter.commitRepair('s1', tolerant.torn, closers), 'commitRepair of the corrupt tail')
    const second = await expectResolves(() => adapter.load('s1'), 'load after the repair')
    assert.equal(second.torn, undefined, 'no tail after the repair')
    assertSameEvents(
      second.events,
      [...tolerant.events, ...closers],
      'load after the repair returns the valid prefix and the closers',
    )
    assert.notEqual(second.revision, tolerant.revision, 'the repair changed the revision')
    const repaired = await snapshotOf(target, adapter, 's1')
    await adapter.commitRepair('s1', second.torn, interruptedTurnClosers(second.events))
    await assertUnchanged(target, adapter, 's1', repaired, 'a further repair')
    const next = eventsFrom(second.events.length, [turnStart(3)])
    await expectResolves(
      () => adapter.append('s1', next, { expectedSeq: second.events.length, lease }),
      'an append after the repair',
    )
    assertSameEvents(
      (await (await context.reopen()).load('s1')).events,
      [...second.events, ...next],
      "a second instance's load",
    )
    await lease.release()
  },
}

const lockCase: ConformanceCase = {
  name: 'a held lease excludes every other acquire, in this and another instance, until released',
  needs: [],
  async run({ adapter, reopen }) {
    const other = await reopen()
    const lease = await adapter.acquire('s1')
    assert.equal(lease.sessionId, 's1', 'lease.sessionId')
    assert.equal(lease.signal.aborted, false, 'a fresh lease is live')
    expectError(
      await rejectionOf(() => other.acquire('s1'), 'acquire in a second instance'),
      SessionLockedError,
      ErrorCode.SESSION_LOCKED,
      'acquire in a second instance',
    )
    expectError(
      await rejectionOf(() => adapter.acquire('s1'), 'acquire again'),
      SessionLockedError,
      ErrorCode.SESSION_LOCKED,
      'acquire again in the same instance',
    )
    const independent = await expectResolves(() => other.acquire('s2'), "acquire('s2') while 's1' is held")
    await lease.release()
    await expectResolves(() => lease.release(), 'a second release()')
    const taken = await expectResolves(() => other.acquire('s1'), 'acquire in the second instance after release')
    expectError(
      await rejectionOf(() => adapter.acquire('s1'), 'acquire back'),
      SessionLockedError,
      ErrorCode.SESSION_LOCKED,
      'acquire while the second instance holds it',
    )
    await other.create(headerOf('s1'))
    await expectResolves(
      () => other.append('s1', baseLog(), { expectedSeq: 0, lease: taken }),
      'an append under the new lease',
    )
    const what = 'an append under the released lease'
    expectError(
      await rejectionOf(() => adapter.append('s1', eventsFrom(6, [turnStart(2)]), { expectedSeq: 6, lease }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    await taken.release()
    await independent.release()
    assertSameEvents((await adapter.load('s1')).events, baseLog(), 'load')
  },
}

const fencingCase: ConformanceCase = {
  name: 'after its lease expired and another instance took it, the old holder cannot write (fencing)',
  needs: ['expireLease'],
  async run({ target, adapter, reopen }) {
    const log = baseLog()
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', log, { expectedSeq: 0, lease })
    await target.expireLease!('s1')
    const other = await reopen()
    const taken = await expectResolves(
      () => other.acquire('s1'),
      'acquire by a second instance after the lease expired',
    )
    const next = eventsFrom(6, [turnStart(2)])
    await assertOldHolderFenced(
      { target, adapter, lease, other, taken, sessionId: 's1', log, next },
      'after it expired',
    )
    assert.ok(
      LeaseLostError.is(lease.signal.reason),
      `the old lease.signal aborted with LeaseLostError, got ${describeError(lease.signal.reason)}`,
    )
    assert.deepEqual(
      jsonOf((await adapter.load('s1')).events),
      jsonOf([...log, ...next]),
      'the log holds the new holder’s append only',
    )
    await taken.release()
  },
}

/** The damage and lease cases, in registration order. */
export const damageCases: readonly ConformanceCase[] = [
  tornTailCase,
  readFromTornCase,
  staleRepairCase,
  appendAfterTornCase,
  corruptionCase,
  repairCase,
  corruptRepairCase,
  lockCase,
  fencingCase,
]
