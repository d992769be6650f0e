/**
 * `tearingFileSystem` (yoke/testing): the Nth write of a JSONL adapter is cut at byte K and the
 * simulated process dies there. A fresh adapter over the same directory then sees what a restart
 * after `kill -9` sees: the acknowledged events, and a torn tail that a load repairs.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as wasmZstd from '@foxglove/wasm-zstd'
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { createHarness, InvalidOptionsError, jsonlPersistence, type SessionEvent } from 'yoke'
import { nodeFileSystem } from '../../src/persistence/index.js'
import { tearingFileSystem } from 'yoke/testing'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { L1, logOf, SE, SS, TE, TS } from '../session/builders.js'

let dir: string
const zstdEncoder = (bytes: Uint8Array, level: number): Uint8Array => new Uint8Array(wasmZstd.compress(bytes, level))

beforeAll(async () => {
  await wasmZstd.isLoaded
})

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-tearing-'))
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Three batches: a whole turn, then a second turn opened, then its step closed and the turn ended. */
function batches(): SessionEvent[][] {
  const events = logOf([...L1(), TS(2), SS(2, 1), SE(2, 1), TE(2, 'completed')])
  const first = L1().length
  return [events.slice(0, first), events.slice(first, first + 2), events.slice(first + 2)]
}

const logName: Record<'none' | 'gzip' | 'zstd', string> = {
  none: 's1.jsonl',
  gzip: 's1.jsonl.gz',
  zstd: 's1.jsonl.zst',
}

describe.each(['none', 'gzip', 'zstd'] as const)('tearingFileSystem (%s)', (compression) => {
  test("the third append's write is torn: it rejects, every later call rejects, and a restart keeps the acknowledged events and repairs the tail", async () => {
    // A compressed log's first materialization writes its header frame and its first batch apart.
    const third = compression === 'none' ? 3 : 4
    const fileSystem = tearingFileSystem({ write: third, atByte: 7 })
    const adapter = jsonlPersistence({ dir, compression, zstdEncoder, fileSystem, lock: false })
    const [one, two, three] = batches() as [SessionEvent[], SessionEvent[], SessionEvent[]]
    await adapter.create({ version: 1, id: 's1', createdAt: 1000 })
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', one, { expectedSeq: 0, lease })
    await adapter.append('s1', two, { expectedSeq: one.length, lease })
    const acknowledged = (await stat(join(dir, logName[compression]))).size
    expect(fileSystem.torn).toBe(false)

    const crash = await rejectionOf(adapter.append('s1', three, { expectedSeq: one.length + two.length, lease }))
    expect(fileSystem.torn).toBe(true)
    expect(fileSystem.writes).toBe(third)
    expect((crash as { cause?: Error }).cause?.message).toBe(`simulated crash: write ${third} was torn after 7 bytes`)
    // The seven bytes stay: no rollback could run.
    expect((await stat(join(dir, logName[compression]))).size).toBe(acknowledged + 7)
    // The process is dead: nothing else goes through.
    await expect(adapter.append('s1', three, { expectedSeq: one.length + two.length, lease })).rejects.toBeDefined()
    await expect(fileSystem.stat(dir)).rejects.toThrow('simulated crash')

    const restarted = await createHarness({
      persistence: jsonlPersistence({ dir, compression, zstdEncoder, lock: false }),
    })
    try {
      const inspected = await restarted.persistence.inspect('s1')
      expect(inspected.repairPending).toBe(true)
      expect(inspected.droppedBytes).toBe(7)
      const loaded = await restarted.persistence.load('s1')
      const seqs = loaded.events.map((event) => event.seq)
      // Every acknowledged event is there, the torn bytes are gone, and the open turn 2 is closed.
      expect(seqs.slice(0, one.length + two.length)).toEqual([...one, ...two].map((event) => event.seq))
      expect(loaded.events.at(-1)?.type).toBe('turn/end')
      expect((await restarted.persistence.inspect('s1')).repairPending).toBe(false)
      // A second load changes nothing.
      expect((await restarted.persistence.load('s1')).events).toEqual(loaded.events)
    } finally {
      await restarted.close()
    }
  })
})

describe('tearingFileSystem', () => {
  test('atByte 0 writes nothing of the torn write; past its length, the whole write lands', async () => {
    for (const [atByte, expectGrowth] of [
      [0, false],
      [1_000_000, true],
    ] as const) {
      const sub = join(dir, String(atByte))
      const fileSystem = tearingFileSystem({ write: 2, atByte })
      const adapter = jsonlPersistence({ dir: sub, fileSystem, lock: false })
      const [one, two] = batches() as [SessionEvent[], SessionEvent[]]
      await adapter.create({ version: 1, id: 's1', createdAt: 1000 })
      const lease = await adapter.acquire('s1')
      await adapter.append('s1', one, { expectedSeq: 0, lease })
      const before = (await stat(join(sub, 's1.jsonl'))).size
      await rejectionOf(adapter.append('s1', two, { expectedSeq: one.length, lease }))
      const after = (await stat(join(sub, 's1.jsonl'))).size
      expect(after > before).toBe(expectGrowth)
      const reader = jsonlPersistence({ dir: sub, lock: false })
      const stored = await reader.load('s1')
      expect(stored.events.length).toBe(expectGrowth ? one.length + two.length : one.length)
      await reader.close()
    }
  })

  test('writes before the torn one go through the base file system untouched', async () => {
    const seen: number[] = []
    const fileSystem = tearingFileSystem({
      write: 99,
      atByte: 0,
      base: {
        ...nodeFileSystem,
        write: (handle, buffer, offset, length, position) => {
          seen.push(length)
          return nodeFileSystem.write(handle, buffer, offset, length, position)
        },
      },
    })
    const adapter = jsonlPersistence({ dir, fileSystem, lock: false })
    const [one] = batches() as [SessionEvent[]]
    await adapter.create({ version: 1, id: 's1', createdAt: 1000 })
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', one, { expectedSeq: 0, lease })
    expect(seen).toHaveLength(1)
    expect(fileSystem.writes).toBe(1)
    expect(fileSystem.torn).toBe(false)
    await lease.release()
    await adapter.close()
  })

  test.each([
    ['not an object', null, []],
    ['a number', 3, []],
    ['write 0', { write: 0, atByte: 1 }, ['write']],
    ['write 1.5', { write: 1.5, atByte: 1 }, ['write']],
    ['atByte -1', { write: 1, atByte: -1 }, ['atByte']],
    ['atByte NaN', { write: 1, atByte: Number.NaN }, ['atByte']],
    ['a base that is not a file system', { write: 1, atByte: 1, base: { write: () => undefined } }, ['base']],
    ['an unknown key', { write: 1, atByte: 1, nth: 2 }, ['nth']],
  ])('refuses %s with InvalidOptionsError naming the key', (_name, options, path) => {
    const error = thrownBy(() => tearingFileSystem(options as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', issues: [{ path }] })
  })

  test('missing both keys reports both', () => {
    const error = thrownBy(() => tearingFileSystem({} as never)) as InvalidOptionsError
    expect(error.issues.map((issue) => issue.path)).toEqual([['write'], ['atByte']])
  })
})
