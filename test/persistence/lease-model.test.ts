/**
 * The lease model on the memory and JSONL adapters: options, heartbeats, expiry-based takeover
 * whatever pid wrote a lock (a restarted container is PID 1 again), and the lease held before
 * `createAgent` resolves, so two harnesses creating one id cannot both win. A writer process
 * frozen past its TTL (SIGSTOP) is a conformance case, run for JSONL through its `spawnWriter`.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  type Harness,
  InvalidOptionsError,
  jsonlPersistence,
  LeaseLostError,
  memoryPersistence,
  type PersistenceAdapter,
  SessionLockedError,
} from 'yoke'
import { type Bundle, bundle } from '../helpers/child-process.js'
import { expectOneWinnerPerRace } from '../helpers/race-new-id.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { baseLog } from '../../src/testing/conformance/conformance-events.js'
import { createMemoryStore } from '../../src/persistence/memory-persistence.js'

let dir: string
let adapters: PersistenceAdapter[]
let harnesses: Harness[]

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-lease-'))
  adapters = []
  harnesses = []
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
  for (const adapter of adapters.splice(0)) await adapter.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

function track<T extends PersistenceAdapter>(adapter: T): T {
  adapters.push(adapter)
  return adapter
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const lockOf = async (id: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(join(dir, `${id}.lock`), 'utf8')) as Record<string, unknown>

describe('lease options', () => {
  const factories = {
    memoryPersistence: (lease: unknown) => memoryPersistence({ lease } as never),
    jsonlPersistence: (lease: unknown) => jsonlPersistence({ dir: '/nonexistent/yoke', lease } as never),
  }

  test.each(Object.entries(factories))(
    '%s: a TTL not greater than the heartbeat is an InvalidOptionsError',
    (_, make) => {
      for (const lease of [
        { ttlMs: 1000, heartbeatMs: 1000 },
        { ttlMs: 500, heartbeatMs: 1000 },
        { ttlMs: 5000 },
        { heartbeatMs: 30_000 },
      ]) {
        const error = thrownBy(() => make(lease))
        expect(InvalidOptionsError.is(error), JSON.stringify(lease)).toBe(true)
        expect((error as InvalidOptionsError).field).toBe('lease')
        expect((error as Error).message).toMatch(/ttlMs \(\d+\) must be greater than heartbeatMs \(\d+\)/)
      }
    },
  )

  test.each(Object.entries(factories))('%s: bad lease values are InvalidOptionsError naming them', (_, make) => {
    for (const [lease, words] of [
      [null, 'must be an object'],
      [5, 'must be an object'],
      [{ ttlMs: -1 }, 'ttlMs must be a positive integer'],
      [{ ttlMs: 1.5 }, 'ttlMs must be a positive integer'],
      [{ heartbeatMs: 0 }, 'heartbeatMs must be a positive integer'],
      [{ heartbeatMs: '10' }, 'heartbeatMs must be a positive integer'],
      [{ ttl: 5 }, 'unknown key "ttl"'],
    ] as const) {
      const error = thrownBy(() => make(lease))
      expect(InvalidOptionsError.is(error), JSON.stringify(lease)).toBe(true)
      expect((error as Error).message).toContain(words)
    }
  })

  test.each(Object.entries(factories))('%s: the defaults and a valid lease are accepted', async (_, make) => {
    for (const lease of [undefined, {}, { ttlMs: 2000, heartbeatMs: 500 }])
      await (make(lease) as PersistenceAdapter).close()
  })
})

describe('jsonlPersistence: lock files', () => {
  test('a lock names the owner id, epoch, token, heartbeat and TTL, never deciding by pid', async () => {
    const lease = await track(jsonlPersistence({ dir })).acquire('s1')
    const lock = await lockOf('s1')
    expect(lock).toMatchObject({
      owner: lease.owner,
      epoch: 1,
      token: lease.token,
      pid: process.pid,
      host: hostname(),
      ttlMs: 30_000,
    })
    expect(lock['heartbeatAt']).toBe(lock['acquiredAt'])
    await lease.release()
  })

  test('pid reuse: a lock left by an earlier process with our own pid and an old heartbeat is taken over', async () => {
    const stale = {
      owner: 'a'.repeat(32),
      epoch: 4,
      token: 'b'.repeat(32),
      pid: process.pid,
      host: hostname(),
      acquiredAt: Date.now() - 120_000,
      heartbeatAt: Date.now() - 60_000,
      ttlMs: 30_000,
    }
    await writeFile(join(dir, 's1.lock'), JSON.stringify(stale))
    const lease = await track(jsonlPersistence({ dir })).acquire('s1')
    expect(lease.epoch).toBe(5)
    expect(lease.tookOver).toMatchObject({ owner: stale.owner, epoch: 4, pid: process.pid })
    expect(await lockOf('s1')).toMatchObject({ owner: lease.owner, epoch: 5, token: lease.token })
  })

  test('pid reuse: a lock with our own pid and a fresh heartbeat of another owner is live', async () => {
    const live = {
      owner: 'a'.repeat(32),
      epoch: 2,
      token: 'b'.repeat(32),
      pid: process.pid,
      host: hostname(),
      acquiredAt: Date.now() - 1000,
      heartbeatAt: Date.now(),
      ttlMs: 30_000,
    }
    await writeFile(join(dir, 's1.lock'), JSON.stringify(live))
    const error = await rejectionOf(track(jsonlPersistence({ dir })).acquire('s1'))
    expect(SessionLockedError.is(error)).toBe(true)
    expect((error as SessionLockedError).holder).toMatchObject({ owner: live.owner, epoch: 2, pid: process.pid })
    expect((error as Error).message).toContain(`owner ${live.owner}`)
    // The lock is untouched.
    expect(await lockOf('s1')).toEqual(live)
  })

  test('a lock of another host is taken over once its heartbeat is a TTL old (its own TTL)', async () => {
    const foreign = {
      owner: 'c'.repeat(32),
      epoch: 1,
      token: 'd'.repeat(32),
      pid: 1,
      host: 'container-before-restart',
      acquiredAt: Date.now() - 10_000,
      heartbeatAt: Date.now() - 6_000,
      ttlMs: 5_000,
    }
    await writeFile(join(dir, 's1.lock'), JSON.stringify(foreign))
    const lease = await track(jsonlPersistence({ dir })).acquire('s1')
    expect(lease.tookOver).toMatchObject({ owner: foreign.owner, host: 'container-before-restart', pid: 1 })
    expect(lease.epoch).toBe(2)
  })

  test('the heartbeat keeps a lease alive past its TTL; the holder keeps writing, others stay out', async () => {
    const lease = { ttlMs: 200, heartbeatMs: 40 }
    const holder = track(jsonlPersistence({ dir, lease }))
    await holder.create({ id: 's1', version: 1, createdAt: '2026-01-01T00:00:00.000Z' } as never).catch(() => {})
    const held = await holder.acquire('s1')
    const first = (await lockOf('s1'))['heartbeatAt'] as number
    await sleep(500)
    expect((await lockOf('s1'))['heartbeatAt'] as number).toBeGreaterThan(first)
    const error = await rejectionOf(track(jsonlPersistence({ dir, lease })).acquire('s1'))
    expect(SessionLockedError.is(error)).toBe(true)
    expect((error as SessionLockedError).holder?.owner).toBe(held.owner)
    expect(held.signal.aborted).toBe(false)
    await held.release()
  })

  test('after a takeover the old holder learns LeaseLostError naming the new holder, at its next heartbeat', async () => {
    const lease = { ttlMs: 200, heartbeatMs: 40 }
    const old = track(jsonlPersistence({ dir, lease }))
    const held = await old.acquire('s1')
    // Another process took it over (as after a freeze past the TTL): the lock names a new owner.
    const lock = await lockOf('s1')
    const taker = { ...lock, owner: 'e'.repeat(32), token: 'f'.repeat(32), epoch: 2, heartbeatAt: Date.now() }
    await writeFile(join(dir, 's1.lock.new'), JSON.stringify(taker))
    const { rename } = await import('node:fs/promises')
    await rename(join(dir, 's1.lock.new'), join(dir, 's1.lock'))
    await sleep(200)
    expect(held.signal.aborted).toBe(true)
    const reason = held.signal.reason as LeaseLostError
    expect(LeaseLostError.is(reason)).toBe(true)
    expect(reason.holder).toMatchObject({ owner: taker.owner, epoch: 2 })
    expect(reason.message).toContain(`owner ${taker.owner}`)
  })
})

describe('memoryPersistence: expiry on the holder clock', () => {
  test('a lease past its TTL is taken over; its holder writes nothing and learns who took it', async () => {
    const store = createMemoryStore()
    let now = 1_000
    const a = track(memoryPersistence({ store, now: () => now, lease: { ttlMs: 2_000_000, heartbeatMs: 1_000_000 } }))
    const b = track(memoryPersistence({ store }))
    await a.create({ id: 's1', version: 1, createdAt: '2026-01-01T00:00:00.000Z' } as never).catch(() => {})
    const held = await a.acquire('s1')
    expect(SessionLockedError.is(await rejectionOf(b.acquire('s1')))).toBe(true)
    now += 2_000_000
    const taken = await b.acquire('s1')
    expect(taken.epoch).toBe(held.epoch + 1)
    expect(taken.tookOver?.owner).toBe(held.owner)
    const error = await rejectionOf(a.append('s1', baseLog(), { expectedSeq: 0, lease: held }))
    expect(LeaseLostError.is(error)).toBe(true)
    expect(held.signal.aborted).toBe(true)
    expect((held.signal.reason as LeaseLostError).holder?.owner).toBe(taken.owner)
    expect(store.read('s1')).toBeUndefined()
  })
})

describe('the lease is held before createAgent resolves', () => {
  test('two harnesses over one directory creating one new id at once: exactly one wins, the loser names it', async () => {
    const one = await createHarness({ persistence: jsonlPersistence({ dir }) })
    const two = await createHarness({ persistence: jsonlPersistence({ dir }) })
    harnesses.push(one, two)
    for (let round = 0; round < 12; round++) {
      const id = `race-${round}`
      const outcomes = await Promise.allSettled([
        one.createAgent({ sessionId: id }),
        two.createAgent({ sessionId: id }),
      ])
      const winners = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []))
      expect(winners, `round ${round}`).toHaveLength(1)
      const loser = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult
      expect(SessionLockedError.is(loser.reason), String(loser.reason)).toBe(true)
      // The lock exists as the winner resolves, and the loser's error names its owner.
      const lock = await lockOf(id)
      expect((loser.reason as SessionLockedError).holder?.owner).toBe(lock['owner'])
      await winners[0]?.dispose()
    }
  })

  test('two harnesses opening one new id with openAgent at once: exactly one wins', async () => {
    const one = await createHarness({ persistence: jsonlPersistence({ dir }) })
    const two = await createHarness({ persistence: jsonlPersistence({ dir }) })
    harnesses.push(one, two)
    for (let round = 0; round < 12; round++) {
      const id = `open-${round}`
      const outcomes = await Promise.allSettled([one.openAgent(id), two.openAgent(id)])
      const winners = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []))
      expect(winners, `round ${round}`).toHaveLength(1)
      const loser = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult
      expect(SessionLockedError.is(loser.reason), String(loser.reason)).toBe(true)
      expect((loser.reason as SessionLockedError).holder?.owner).toBe((await lockOf(id))['owner'])
      await winners[0]?.dispose()
    }
  })

  test('a created agent holds its lock at once: another harness cannot create or resume the id', async () => {
    const one = await createHarness({ persistence: jsonlPersistence({ dir }) })
    const two = await createHarness({ persistence: jsonlPersistence({ dir }) })
    harnesses.push(one, two)
    const agent = await one.createAgent({ sessionId: 'mine' })
    const lock = await lockOf('mine')
    expect(lock['pid']).toBe(process.pid)
    expect(SessionLockedError.is(await rejectionOf(two.createAgent({ sessionId: 'mine' })))).toBe(true)
    await agent.dispose()
    // Released with the agent: the other harness may now create it (nothing was stored yet).
    const again = await two.createAgent({ sessionId: 'mine' })
    await again.dispose()
  })
})

describe('two real processes creating one new id at once', () => {
  let child: Bundle | undefined

  beforeAll(async () => {
    child = await bundle('test/persistence/lease-child.ts')
  }, 60_000)

  afterAll(async () => {
    await child?.remove()
  })

  test('exactly one process wins; the other gets SessionLockedError naming the winner', async () => {
    await expectOneWinnerPerRace(child!, { dir })
  }, 60_000)
})
