/**
 * Reading a session's lease without taking it (`inspectLease`) and ending it whoever holds it
 * (`breakLease`, what `yoke unlock --force` does), on the memory and JSONL adapters: the holder
 * writes nothing more and learns `LeaseLostError`, and epochs keep growing across a break. A real
 * second process holds the JSONL lease in the last test.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { jsonlPersistence, LeaseLostError, memoryPersistence, PersistenceError, SessionLockedError } from 'yoke'
import { createMemoryStore, type MemoryStore } from '../../src/persistence/memory-persistence.js'
import { baseLog, eventsFrom, headerOf, turnStart } from '../../src/testing/conformance/conformance-events.js'
import { type Bundle, bundle } from '../helpers/child-process.js'
import { startLineChild } from '../helpers/line-child.js'
import { rejectionOf } from '../helpers/outcomes.js'

/** The adapter surface these tests use: both adapters have the two lease methods. */
type LeaseAdapter = ReturnType<typeof memoryPersistence> | ReturnType<typeof jsonlPersistence>

let dir: string
let store: MemoryStore
let adapters: LeaseAdapter[]

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-lease-break-'))
  store = createMemoryStore()
  adapters = []
})

afterEach(async () => {
  for (const adapter of adapters.splice(0)) await adapter.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

const kinds = {
  memory: (options: { now?: () => number } = {}): LeaseAdapter => memoryPersistence({ store, ...options }),
  jsonl: (options: { now?: () => number } = {}): LeaseAdapter => jsonlPersistence({ dir, ...options }),
}

function open(kind: keyof typeof kinds, options: { now?: () => number } = {}): LeaseAdapter {
  const adapter = kinds[kind](options)
  adapters.push(adapter)
  return adapter
}

/** Creates `id` under a new lease of `adapter` and stores the base log. */
async function holdWithLog(adapter: LeaseAdapter, id: string) {
  await adapter.create(headerOf(id))
  const lease = await adapter.acquire(id)
  const log = baseLog()
  await adapter.append(id, log, { expectedSeq: 0, lease })
  return { lease, next: log.length }
}

describe.each(Object.keys(kinds) as (keyof typeof kinds)[])('%s adapter', (kind) => {
  test('inspectLease names the holder and its age without taking the lease', async () => {
    const holder = open(kind)
    const reader = open(kind)
    const { lease, next } = await holdWithLog(holder, 's1')
    const stored = await reader.inspectLease('s1')
    expect(stored).toMatchObject({
      sessionId: 's1',
      live: true,
      holder: { owner: lease.owner, epoch: lease.epoch, pid: process.pid, host: hostname(), ttlMs: 30_000 },
    })
    expect(stored!.ageMs).toBeGreaterThanOrEqual(0)
    expect(stored!.ageMs).toBeLessThan(5_000)
    // Reading took nothing: the holder still writes, another acquire is still refused.
    await holder.append('s1', eventsFrom(next, [turnStart(2)]), { expectedSeq: next, lease })
    expect(SessionLockedError.is(await rejectionOf(reader.acquire('s1')))).toBe(true)
    expect((await holder.inspectLease('s1'))?.holder.owner).toBe(lease.owner)
  })

  test('no lease: inspectLease and breakLease return undefined (never held, released)', async () => {
    const adapter = open(kind)
    expect(await adapter.inspectLease('never')).toBeUndefined()
    expect(await adapter.breakLease('never')).toBeUndefined()
    const lease = await adapter.acquire('s1')
    await lease.release()
    expect(await adapter.inspectLease('s1')).toBeUndefined()
    expect(await adapter.breakLease('s1')).toBeUndefined()
  })

  test('a lease past its TTL is reported not live, with the age of its last heartbeat', async () => {
    let shift = 0
    const holder = open(kind, { now: () => Date.now() + shift })
    await holder.acquire('s1')
    shift = -45_000
    // The JSONL lock carries the heartbeat on disk: age it there; the memory lease on its holder's clock.
    if (kind === 'jsonl') {
      const path = join(dir, 's1.lock')
      const lock = JSON.parse(await readFile(path, 'utf8')) as Record<string, number>
      await writeFile(path, JSON.stringify({ ...lock, heartbeatAt: lock['heartbeatAt']! - 45_000 }))
    } else shift = 45_000
    const stored = await open(kind).inspectLease('s1')
    expect(stored?.live).toBe(false)
    expect(stored!.ageMs).toBeGreaterThanOrEqual(45_000)
    expect(stored!.ageMs).toBeLessThan(50_000)
  })

  test('breakLease ends a live lease: the holder writes nothing more, its signal aborts, the next acquire gets a greater epoch', async () => {
    const holder = open(kind)
    const breaker = open(kind)
    const { lease, next } = await holdWithLog(holder, 's1')
    const ended = await breaker.breakLease('s1')
    expect(ended).toMatchObject({ sessionId: 's1', live: true, holder: { owner: lease.owner, epoch: lease.epoch } })
    expect(await breaker.inspectLease('s1')).toBeUndefined()

    const error = await rejectionOf(holder.append('s1', eventsFrom(next, [turnStart(2)]), { expectedSeq: next, lease }))
    expect(LeaseLostError.is(error)).toBe(true)
    expect((error as Error).message).toContain('broken')
    expect(lease.signal.aborted).toBe(true)
    expect(LeaseLostError.is(lease.signal.reason)).toBe(true)
    expect((await breaker.load('s1')).events).toHaveLength(next)

    const taken = await breaker.acquire('s1')
    expect(taken.epoch).toBeGreaterThan(lease.epoch)
    // A broken lease is nobody's to name as taken over.
    expect(taken.tookOver).toBeUndefined()
    await breaker.append('s1', eventsFrom(next, [turnStart(2)]), { expectedSeq: next, lease: taken })
    expect((await breaker.load('s1')).events).toHaveLength(next + 1)
    // The old holder's release leaves the new lease alone.
    await lease.release()
    expect((await breaker.inspectLease('s1'))?.holder.owner).toBe(taken.owner)
  })

  test('breakLease ends an expired lease too, and the holder breaking its own lease loses it at once', async () => {
    const adapter = open(kind)
    const { lease } = await holdWithLog(adapter, 's1')
    expect((await adapter.breakLease('s1'))?.holder.owner).toBe(lease.owner)
    expect(lease.signal.aborted).toBe(true)
    expect(await adapter.breakLease('s1')).toBeUndefined()
    const again = await adapter.acquire('s1')
    expect(again.epoch).toBe(lease.epoch + 1)
  })

  test('bad input: an id that cannot be stored, a closed adapter', async () => {
    const adapter = open(kind)
    for (const id of ['', '../up', 'a\u0000b']) {
      for (const call of [() => adapter.inspectLease(id), () => adapter.breakLease(id)]) {
        const error = await rejectionOf(call())
        expect(PersistenceError.is(error), JSON.stringify(id)).toBe(true)
        expect((error as PersistenceError).code).toBe('INVALID_SESSION_ID')
      }
    }
    const aborted = AbortSignal.abort(new Error('stop'))
    expect(((await rejectionOf(adapter.inspectLease('s1', { signal: aborted }))) as Error).message).toBe('stop')
    await adapter.close()
    for (const call of [() => adapter.inspectLease('s1'), () => adapter.breakLease('s1')]) {
      const error = await rejectionOf(call())
      expect((error as PersistenceError).code).toBe('CLOSED')
    }
  })
})

describe('jsonlPersistence: lock files', () => {
  const lockPath = (id: string): string => join(dir, `${id}.lock`)

  test('a break keeps a broken lock with the epoch, so epochs keep growing; nothing else is left', async () => {
    const holder = open('jsonl')
    const { lease } = await holdWithLog(holder, 's1')
    const breaker = open('jsonl')
    await breaker.breakLease('s1')
    const broken = JSON.parse(await readFile(lockPath('s1'), 'utf8')) as Record<string, unknown>
    expect(broken).toMatchObject({ owner: expect.not.stringMatching(lease.owner), epoch: lease.epoch })
    expect(typeof broken['brokenAt']).toBe('number')
    expect(broken['token']).not.toBe(lease.token)
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's1.lock'])
    // A Yoke that does not know `brokenAt` sees an expired heartbeat: it takes the lock over too.
    expect((broken['heartbeatAt'] as number) + (broken['ttlMs'] as number)).toBeLessThanOrEqual(Date.now())
    expect((await breaker.acquire('s1')).epoch).toBe(lease.epoch + 1)
  })

  test('breaking nothing writes nothing, not even the directory', async () => {
    const missing = join(dir, 'not-yet')
    const adapter = jsonlPersistence({ dir: missing })
    adapters.push(adapter)
    expect(await adapter.inspectLease('s1')).toBeUndefined()
    expect(await adapter.breakLease('s1')).toBeUndefined()
    expect((await rejectionOf(stat(missing))) as { code?: string }).toMatchObject({ code: 'ENOENT' })
  })

  test("a lock of this host's process that is gone is not live, whatever its heartbeat", async () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid
    const lock = {
      owner: 'a'.repeat(32),
      epoch: 3,
      token: 'b'.repeat(32),
      pid: gone,
      host: hostname(),
      acquiredAt: Date.now(),
      heartbeatAt: Date.now(),
      ttlMs: 30_000,
    }
    await writeFile(lockPath('s1'), JSON.stringify(lock))
    const stored = await open('jsonl').inspectLease('s1')
    expect(stored).toMatchObject({ live: false, holder: { pid: gone, epoch: 3, owner: lock.owner } })
    expect(stored!.ageMs).toBeLessThan(5_000)
  })

  test('a lock of an older version (no owner, epoch, heartbeat, TTL) is judged by its acquiredAt and our TTL', async () => {
    const old = { pid: 999_999, host: 'elsewhere', token: 't'.repeat(32), acquiredAt: Date.now() - 40_000 }
    await writeFile(lockPath('s1'), JSON.stringify(old))
    const stored = await open('jsonl').inspectLease('s1')
    expect(stored).toMatchObject({ live: false, holder: { pid: 999_999, host: 'elsewhere', ttlMs: 30_000 } })
    expect(stored!.ageMs).toBeGreaterThanOrEqual(40_000)
  })

  test('an unreadable lock: inspectLease rejects SessionLockedError naming the file; breakLease replaces it', async () => {
    await writeFile(lockPath('s1'), 'not a lock')
    const adapter = open('jsonl')
    const error = await rejectionOf(adapter.inspectLease('s1'))
    expect(SessionLockedError.is(error)).toBe(true)
    expect((error as Error).message).toContain(lockPath('s1'))
    expect((error as Error).message).toContain('unreadable')
    expect(await adapter.breakLease('s1')).toBeUndefined()
    expect(await adapter.inspectLease('s1')).toBeUndefined()
    const lease = await adapter.acquire('s1')
    expect(lease.epoch).toBe(2)
  })

  test("the holder's heartbeat learns of the break without any write", async () => {
    const holder = jsonlPersistence({ dir, lease: { ttlMs: 2_000, heartbeatMs: 20 } })
    adapters.push(holder)
    const lease = await holder.acquire('s1')
    await open('jsonl').breakLease('s1')
    const deadline = Date.now() + 5_000
    while (!lease.signal.aborted && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(lease.signal.aborted).toBe(true)
    expect((lease.signal.reason as Error).message).toContain('broken')
  })
})

describe('jsonlPersistence: a real second process holds the lease', () => {
  let child: Bundle | undefined

  beforeAll(async () => {
    child = await bundle('test/persistence/lease-holder-child.ts')
  }, 60_000)

  afterAll(async () => {
    await child?.remove()
  })

  test('a forced break from this process: the holder learns LeaseLostError and writes nothing more', async () => {
    const holder = startLineChild(child!.file, JSON.stringify({ dir, id: 'held' }))
    try {
      await holder.waitFor(() => holder.lines.length >= 3, 'three appends')
      // Stopped right after an append, so no append of its is between its lock check and its write.
      holder.process.kill('SIGSTOP')
      const acked = holder.lines.length
      const breaker = open('jsonl')
      const inspected = await breaker.inspectLease('held')
      expect(inspected).toMatchObject({ live: true, holder: { pid: holder.process.pid, epoch: 1 } })
      expect(inspected?.holder.owner).toBe(holder.lines[0]?.['owner'])
      const ended = await breaker.breakLease('held')
      expect(ended?.holder.owner).toBe(holder.lines[0]?.['owner'])
      holder.process.kill('SIGCONT')
      await holder.waitFor(() => holder.lines.some((line) => 'error' in line), "the holder's error")
      expect(await holder.exited).toBe(0)
      expect(holder.lines.slice(acked).filter((line) => 'appended' in line)).toEqual([])
      expect(holder.lines.at(-1)).toMatchObject({ error: 'LEASE_LOST', lost: true, signalAborted: true })
      expect(holder.lines.at(-1)?.['message']).toContain('broken')
      const stored = (await breaker.load('held')).events
      expect(stored).toHaveLength(holder.lines[acked - 1]?.['appended'] as number)
      const taken = await breaker.acquire('held')
      expect(taken.epoch).toBe(2)
      await taken.release()
    } finally {
      holder.process.kill('SIGCONT')
      holder.process.kill('SIGKILL')
    }
  }, 60_000)
})
