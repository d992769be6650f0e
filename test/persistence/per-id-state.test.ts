/**
 * What the memory and JSONL adapters keep per session id lives no longer than the session (its
 * stored log, its lease, a read in flight), while the state that fences a stale writer still
 * works after a delete and re-create of the same id.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { LeaseLostError } from '../../src/errors/lease-lost-error.js'
import { type JsonlFileSystem, nodeFileSystem } from '../../src/persistence/jsonl/jsonl-file-system.js'
import { jsonlIdsHeld, jsonlPersistence } from '../../src/persistence/jsonl/jsonl-persistence.js'
import { type MemoryPersistence, memoryPersistence } from '../../src/persistence/memory-persistence.js'
import { createMemoryStore, type MemoryStoreState } from '../../src/persistence/memory-store.js'
import type { PersistenceAdapter } from '../../src/persistence/persistence-adapter.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import type { SessionHeader } from '../../src/session/session-header.js'
import { AM, type EventPlan, logOf, SE, SS, TE, TS, text, UM } from '../session/builders.js'

const dirs: string[] = []

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-per-id-adapter-'))
  dirs.push(dir)
  return dir
}

const L1 = logOf([TS(1), SS(1, 1), UM('hi'), AM(1, 1, text('hello')), SE(1, 1), TE(1, 'completed')])

function header(id: string): SessionHeader {
  return { version: 1, id, createdAt: 1000, cwd: '/w' }
}

/** The plans stamped from seq `start` on. */
function from(start: number, ...plans: EventPlan[]): SessionEvent[] {
  return logOf(plans).map((event, index) => ({ ...event, seq: start + index }))
}

/** Create, acquire, append the first turn, release. */
async function stored(adapter: PersistenceAdapter, id: string): Promise<void> {
  await adapter.create(header(id))
  const lease = await adapter.acquire(id)
  await adapter.append(id, L1, { expectedSeq: 0, lease })
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

function stateOf(adapter: MemoryPersistence): MemoryStoreState {
  return adapter.store as MemoryStoreState
}

describe('memory: epochs', () => {
  test('a deleted id keeps no epoch; created again, its next lease has a higher epoch than any before', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, 's1')
    const second = await adapter.acquire('s1')
    expect(second.epoch).toBe(2)
    await second.release()
    expect([...stateOf(adapter).epochs.keys()]).toEqual(['s1'])
    await adapter.delete('s1')
    expect(stateOf(adapter).epochs.size).toBe(0)

    await adapter.create(header('s1'))
    const recreated = await adapter.acquire('s1')
    expect(recreated.epoch).toBe(3)
    // The lease of the deleted session stays fenced: it writes nothing into the new one.
    expect(await rejection(adapter.append('s1', L1, { expectedSeq: 0, lease: second }))).toBeInstanceOf(LeaseLostError)
    await adapter.append('s1', L1, { expectedSeq: 0, lease: recreated })
    await recreated.release()
  })

  test('1,000 ids created, leased and deleted leave no entry in any map of the store', async () => {
    const adapter = memoryPersistence()
    for (let index = 0; index < 1_000; index++) {
      await stored(adapter, `id-${index}`)
      await adapter.delete(`id-${index}`)
    }
    const state = stateOf(adapter)
    expect([state.logs.size, state.leases.size, state.quarantine.size, state.epochs.size]).toEqual([0, 0, 0, 0])
    // Epochs still only grow: a brand-new id starts above every epoch handed out before.
    expect((await adapter.acquire('fresh')).epoch).toBe(1_001)
  })

  test('a lease on an id with no stored log drops its epoch when it ends', async () => {
    const adapter = memoryPersistence()
    const lease = await adapter.acquire('nothing-stored')
    expect(stateOf(adapter).epochs.get('nothing-stored')).toBe(1)
    await lease.release()
    expect(stateOf(adapter).epochs.size).toBe(0)
    expect((await adapter.acquire('nothing-stored')).epoch).toBe(2)
  })

  test('a delete under our own lease keeps the epoch until the lease ends', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, 's1')
    const lease = await adapter.acquire('s1')
    await adapter.delete('s1')
    expect(stateOf(adapter).epochs.get('s1')).toBe(2)
    await lease.release()
    expect(stateOf(adapter).epochs.size).toBe(0)
  })

  test('an expired lease on a stored log keeps the epoch; a takeover gets the next one', async () => {
    const store = createMemoryStore()
    const a = memoryPersistence({ store })
    const b = memoryPersistence({ store })
    await stored(a, 's1')
    const lease = await a.acquire('s1')
    expect(store.expireLease('s1')).toBe(true)
    expect((store as MemoryStoreState).epochs.get('s1')).toBe(2)
    const taken = await b.acquire('s1')
    expect(taken.epoch).toBe(3)
    expect(lease.epoch).toBe(2)
    await taken.release()
  })

  test('delete removes the quarantined originals of the id', async () => {
    const adapter = memoryPersistence()
    await stored(adapter, 's1')
    const bytes = adapter.store.read('s1')!
    // A damaged middle record with a valid one after it: corrupt, repaired by truncation.
    const lines = new TextDecoder().decode(bytes).split('\n')
    lines[3] = '{"damaged'
    adapter.store.write('s1', new TextEncoder().encode(lines.join('\n')))
    const loaded = await adapter.load('s1', { truncateAtCorruption: true })
    expect(loaded.torn?.kind).toBe('corrupt')
    const lease = await adapter.acquire('s1')
    await adapter.commitRepair('s1', loaded.torn, [])
    await lease.release()
    expect(adapter.store.quarantined('s1')).toHaveLength(1)
    await adapter.delete('s1')
    expect(adapter.store.quarantined('s1')).toEqual([])
    expect(stateOf(adapter).quarantine.size).toBe(0)
  })
})

describe('JSONL: per-id state', () => {
  test('200 ids created, appended, loaded and deleted leave nothing in the adapter', async () => {
    const adapter = jsonlPersistence({ dir: await tempDir() })
    for (let index = 0; index < 200; index++) {
      const id = `id-${index}`
      await stored(adapter, id)
      const lease = await adapter.acquire(id)
      expect((await adapter.load(id)).events).toHaveLength(L1.length)
      await adapter.append(id, from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
      await lease.release()
      await adapter.delete(id)
    }
    expect(jsonlIdsHeld(adapter)).toEqual([])
    await adapter.close()
  })

  test('what a lease remembered of a log goes with the lease; a load without one remembers nothing', async () => {
    const adapter = jsonlPersistence({ dir: await tempDir() })
    await stored(adapter, 's1')
    expect(jsonlIdsHeld(adapter)).toEqual([])
    await adapter.load('s1')
    expect(jsonlIdsHeld(adapter)).toEqual([])
    const lease = await adapter.acquire('s1')
    await adapter.load('s1')
    expect(jsonlIdsHeld(adapter)).toEqual(['s1'])
    await adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
    await lease.release()
    expect(jsonlIdsHeld(adapter)).toEqual([])
    // The next holder reads afresh and continues where the log ends.
    const next = await adapter.acquire('s1')
    await adapter.append('s1', from(L1.length + 1, UM('again')), { expectedSeq: L1.length + 1, lease: next })
    expect((await adapter.load('s1')).events).toHaveLength(L1.length + 2)
    await next.release()
    await adapter.close()
  })

  test('a load that overlapped an append is not remembered, and the id is forgotten once both end', async () => {
    let pauseReads: (() => Promise<void>) | undefined
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      read: async (handle, buffer, offset, length, position) => {
        const result = await nodeFileSystem.read(handle, buffer, offset, length, position)
        if (pauseReads !== undefined) await pauseReads()
        return result
      },
    }
    const adapter = jsonlPersistence({ dir: await tempDir(), fileSystem })
    await stored(adapter, 's1')
    const lease = await adapter.acquire('s1')
    await adapter.load('s1')

    // The load reads the log as it is, then waits until an append of the same id has ended.
    let appended: Promise<void> | undefined
    pauseReads = async () => {
      pauseReads = undefined
      appended = adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
      await appended
    }
    const stale = await adapter.load('s1')
    expect(stale.events).toHaveLength(L1.length)
    await appended
    expect(jsonlIdsHeld(adapter)).toEqual(['s1'])
    // Had the stale read been remembered, this append would meet a seq conflict.
    await adapter.append('s1', from(L1.length + 1, UM('next')), { expectedSeq: L1.length + 1, lease })
    expect((await adapter.load('s1')).events).toHaveLength(L1.length + 2)
    await lease.release()
    expect(jsonlIdsHeld(adapter)).toEqual([])
    await adapter.close()
  })
})
