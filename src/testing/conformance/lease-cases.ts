/**
 * The lease-model cases every adapter must pass: an expired lease is taken over (with a greater
 * epoch, naming the expired holder), its old holder then writes nothing, and of two instances
 * racing for one free or expired lease exactly one wins while the loser's error names the winner.
 *
 * @module
 */
import assert from 'node:assert/strict'
import { ErrorCode } from '../../errors/codes.js'
import { LeaseLostError } from '../../errors/lease-lost-error.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import type { Lease, PersistenceAdapter } from '../../persistence/persistence-adapter.js'
import { baseLog, eventsFrom, headerOf, turnStart } from './conformance-events.js'
import {
  assertOldHolderFenced,
  assertSameEvents,
  type ConformanceCase,
  describeError,
  expectError,
  expectResolves,
  rejectionOf,
} from './conformance-support.js'

/**
 * Runs `acquire` on every instance at once: exactly one must win; every loser's error must be a
 * `SessionLockedError` naming the winner's owner id.
 */
async function expectOneWinner(instances: readonly PersistenceAdapter[], id: string, what: string): Promise<Lease> {
  const outcomes = await Promise.allSettled(instances.map((instance) => instance.acquire(id)))
  const winners = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []))
  assert.equal(winners.length, 1, `${what}: exactly one acquire wins, got ${winners.length}`)
  const winner = winners[0] as Lease
  assert.equal(typeof winner.owner, 'string', `${what}: the winning lease names its owner id`)
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') continue
    const error = expectError(outcome.reason, SessionLockedError, ErrorCode.SESSION_LOCKED, `${what}: the loser`)
    assert.equal(
      error.holder?.owner,
      winner.owner,
      `${what}: the loser's error names the winner's owner ${winner.owner}, got ${JSON.stringify(error.holder)} (${describeError(error)})`,
    )
  }
  return winner
}

const ownerCase: ConformanceCase = {
  name: 'a lease names a random owner id (not a pid) that differs between instances, and its epoch',
  needs: [],
  async run({ adapter, reopen }) {
    const other = await reopen()
    const first = await adapter.acquire('s1')
    const second = await other.acquire('s2')
    for (const lease of [first, second]) {
      assert.equal(typeof lease.owner, 'string', 'lease.owner is a string')
      assert.ok(lease.owner.length >= 16, `lease.owner is a random id, got ${lease.owner}`)
      assert.notEqual(lease.owner, String(process.pid), 'lease.owner is not the pid')
      assert.ok(
        Number.isSafeInteger(lease.epoch) && lease.epoch >= 1,
        `lease.epoch is a positive integer, got ${lease.epoch}`,
      )
    }
    assert.notEqual(first.owner, second.owner, 'two instances have different owner ids')
    const locked = expectError(
      await rejectionOf(() => other.acquire('s1'), 'acquire of a held lease'),
      SessionLockedError,
      ErrorCode.SESSION_LOCKED,
      'acquire of a held lease',
    )
    assert.equal(locked.holder?.owner, first.owner, 'the SessionLockedError names the holder by owner id')
    await first.release()
    await second.release()
  },
}

const takeoverCase: ConformanceCase = {
  name: 'an expired lease is taken over with a greater epoch; its old holder then writes nothing (LeaseLostError)',
  needs: ['ageLease'],
  async run({ target, adapter, reopen }) {
    const log = baseLog()
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', log, { expectedSeq: 0, lease })
    const other = await reopen()
    expectError(
      await rejectionOf(() => other.acquire('s1'), 'acquire of a live lease'),
      SessionLockedError,
      ErrorCode.SESSION_LOCKED,
      'acquire while the lease is live',
    )
    await target.ageLease!('s1')
    const taken = await expectResolves(() => other.acquire('s1'), 'acquire after the lease expired')
    assert.ok(taken.epoch > lease.epoch, `the takeover's epoch ${taken.epoch} is greater than ${lease.epoch}`)
    assert.equal(taken.tookOver?.owner, lease.owner, 'lease.tookOver names the expired owner')
    assert.notEqual(taken.owner, lease.owner, 'the new owner differs')
    const next = eventsFrom(6, [turnStart(2)])
    await assertOldHolderFenced(
      { target, adapter, lease, other, taken, sessionId: 's1', log, next },
      'after the takeover',
    )
    // Once the successor wrote, the old holder still learns that it lost the lease (not a seq conflict).
    const what = 'an append by the old holder after the new holder wrote'
    expectError(
      await rejectionOf(() => adapter.append('s1', eventsFrom(7, [turnStart(3)]), { expectedSeq: 7, lease }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    assertSameEvents((await other.load('s1')).events, [...log, ...next], 'the log after the takeover')
    await taken.release()
  },
}

const expiredHolderCase: ConformanceCase = {
  name: 'a holder whose lease expired writes nothing, even before anyone takes it over',
  needs: ['ageLease'],
  async run({ target, adapter }) {
    const log = baseLog()
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', log, { expectedSeq: 0, lease })
    await target.ageLease!('s1')
    const what = 'an append under an expired lease'
    expectError(
      await rejectionOf(() => adapter.append('s1', eventsFrom(6, [turnStart(2)]), { expectedSeq: 6, lease }), what),
      LeaseLostError,
      ErrorCode.LEASE_LOST,
      what,
    )
    assertSameEvents((await adapter.load('s1')).events, log, 'the log')
    const again = await expectResolves(() => adapter.acquire('s1'), 'acquire again after the expiry')
    assert.ok(again.epoch > lease.epoch, `the new epoch ${again.epoch} is greater than ${lease.epoch}`)
    await again.release()
  },
}

const firstOpenRaceCase: ConformanceCase = {
  name: 'two instances acquiring one new id at once: exactly one wins, the loser names the winner',
  needs: [],
  async run({ adapter, reopen }) {
    const others = [await reopen(), await reopen()]
    const winner = await expectOneWinner([adapter, ...others], 'fresh', 'concurrent first acquires')
    await winner.release()
  },
}

const takeoverRaceCase: ConformanceCase = {
  name: 'two instances taking over one expired lease at once: exactly one wins, the loser names the winner',
  needs: ['ageLease'],
  async run({ target, adapter, reopen }) {
    const lease = await adapter.acquire('s1')
    await target.ageLease!('s1')
    const others = [await reopen(), await reopen(), await reopen()]
    const winner = await expectOneWinner(others, 's1', 'concurrent takeovers')
    assert.equal(winner.tookOver?.owner, lease.owner, 'the winner took over the expired owner')
    await winner.release()
  },
}

/** The lease-model cases. */
export const leaseCases: readonly ConformanceCase[] = [
  ownerCase,
  takeoverCase,
  expiredHolderCase,
  firstOpenRaceCase,
  takeoverRaceCase,
]
