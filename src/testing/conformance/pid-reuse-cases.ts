/**
 * Pid-reuse cases: a lease record left by an earlier process with this process's own pid and host
 * (a container restarted as PID 1 finds the lock its previous run wrote). Its heartbeat alone
 * decides: a stale one is taken over, a fresh one is live. A pid never decides liveness.
 *
 * @module
 */
import assert from 'node:assert/strict'
import { hostname } from 'node:os'
import { ErrorCode } from '../../errors/codes.js'
import type { LockHolder } from '../../errors/lock-holder.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import { randomHex } from '../../persistence/random-hex.js'
import { baseLog, eventsFrom, headerOf, turnStart } from './conformance-events.js'
import {
  assertSameEvents,
  assertUnchanged,
  type ConformanceCase,
  expectError,
  expectResolves,
  rejectionOf,
  snapshotOf,
  storeLog,
} from './conformance-support.js'

/** The epoch of the planted record: taking it over must go above it. */
const plantedEpoch = 7

/** A holder with this process's pid and host, whose last heartbeat was `ageMs` ago. */
function earlierRun(ageMs: number): LockHolder {
  const now = Date.now()
  return {
    owner: randomHex(16),
    epoch: plantedEpoch,
    pid: process.pid,
    host: hostname(),
    acquiredAt: now - ageMs - 1_000,
    heartbeatAt: now - ageMs,
    ttlMs: 30_000,
  }
}

const staleCase: ConformanceCase = {
  name: 'pid reuse: a lease left by an earlier process with our pid and host and a stale heartbeat is taken over',
  needs: ['plantLease'],
  async run({ target, adapter, reopen }) {
    const log = baseLog()
    await storeLog(adapter, headerOf('s1'), [log])
    // An hour old: the previous run of this container, long dead, had the same pid and host.
    const planted = earlierRun(3_600_000)
    await target.plantLease!('s1', planted)
    const lease = await expectResolves(() => adapter.acquire('s1'), 'acquire over the stale planted lease')
    assert.ok(lease.epoch > plantedEpoch, `the takeover's epoch ${lease.epoch} is greater than ${plantedEpoch}`)
    assert.equal(lease.tookOver?.owner, planted.owner, 'lease.tookOver names the planted owner')
    assert.equal(lease.tookOver?.pid, process.pid, 'lease.tookOver carries the planted pid (ours)')
    assert.notEqual(lease.owner, planted.owner, 'the new owner is not the planted one')
    const next = eventsFrom(log.length, [turnStart(2)])
    await expectResolves(
      () => adapter.append('s1', next, { expectedSeq: log.length, lease }),
      'an append under the taken-over lease',
    )
    assertSameEvents((await (await reopen()).load('s1')).events, [...log, ...next], 'the log after the takeover')
    await lease.release()
  },
}

const liveCase: ConformanceCase = {
  name: 'pid reuse: a lease with our pid and host and a fresh heartbeat is live (SessionLockedError names its owner)',
  needs: ['plantLease'],
  async run({ target, adapter, reopen }) {
    await storeLog(adapter, headerOf('s1'), [baseLog()])
    const before = await snapshotOf(target, adapter, 's1')
    const planted = earlierRun(0)
    await target.plantLease!('s1', planted)
    for (const [instance, what] of [
      [adapter, 'acquire by this instance'],
      [await reopen(), 'acquire by a second instance'],
    ] as const) {
      const locked = expectError(
        await rejectionOf(() => instance.acquire('s1'), what),
        SessionLockedError,
        ErrorCode.SESSION_LOCKED,
        what,
      )
      assert.equal(locked.holder?.owner, planted.owner, `${what}: the error names the planted owner`)
      assert.equal(locked.holder?.pid, process.pid, `${what}: the error names the planted pid (ours)`)
    }
    await assertUnchanged(target, adapter, 's1', before, 'after the refused acquires')
  },
}

/** The pid-reuse cases. */
export const pidReuseCases: readonly ConformanceCase[] = [staleCase, liveCase]
