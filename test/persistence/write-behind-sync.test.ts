/**
 * Which writes of a write-behind queue sync: flushes that ask not to, the sync that covers them
 * (an empty write when nothing new is queued), concurrent flushes, automatic writes at turn
 * durability, and the JSONL adapter's `sync: false` appends.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { fakeClock } from 'yoke/testing'
import { jsonlPersistence } from '../../src/persistence/jsonl/jsonl-persistence.js'
import { type JsonlFileSystem, nodeFileSystem } from '../../src/persistence/jsonl/jsonl-file-system.js'
import { WriteBehind, writeBehindOptionsSchema } from '../../src/persistence/write-behind.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import { logOf, UM } from '../session/builders.js'
import { H1 } from './coordinator-fixtures.js'

interface Write {
  readonly seqs: readonly number[]
  readonly sync: boolean
}

function rig(syncAutomaticWrites?: boolean) {
  const clock = fakeClock({ now: 0 })
  const writes: Write[] = []
  let hold: (() => void) | undefined
  let holding = false
  const queue = new WriteBehind({
    clock,
    options: writeBehindOptionsSchema.parse({ windowMs: 100 }),
    write: (batch, _texts, _frozen, sync) => {
      writes.push({ seqs: batch.map((event) => event.seq), sync })
      if (!holding) return Promise.resolve()
      return new Promise<void>((resolve) => {
        hold = resolve
      })
    },
    onFailure: () => {},
    ...(syncAutomaticWrites === undefined ? {} : { syncAutomaticWrites }),
  })
  return {
    clock,
    queue,
    writes,
    holdNext: () => {
      holding = true
    },
    release: () => {
      holding = false
      hold?.()
    },
  }
}

function events(count: number): SessionEvent[] {
  return logOf(Array.from({ length: count }, (_, index) => UM(`m${index}`)))
}

describe('WriteBehind and sync', () => {
  test('a flush with sync false writes without syncing; the next synced flush syncs both', async () => {
    const subject = rig()
    const [first, second] = events(2) as [SessionEvent, SessionEvent]
    subject.queue.enqueue(first)
    await subject.queue.flush({ sync: false })
    expect(subject.queue.unsynced).toBe(true)
    subject.queue.enqueue(second)
    await subject.queue.flush()
    expect(subject.writes).toEqual([
      { seqs: [0], sync: false },
      { seqs: [1], sync: true },
    ])
    expect(subject.queue.unsynced).toBe(false)
  })

  test('a synced flush with nothing queued after an unsynced write makes one empty synced write', async () => {
    const subject = rig()
    subject.queue.enqueue(events(1)[0] as SessionEvent)
    await subject.queue.flush({ sync: false })
    await subject.queue.flush()
    await subject.queue.flush()
    expect(subject.writes).toEqual([
      { seqs: [0], sync: false },
      { seqs: [], sync: true },
    ])
  })

  test('nothing written and nothing unsynced: no write at all', async () => {
    const subject = rig()
    await subject.queue.flush()
    await subject.queue.flush({ sync: false })
    expect(subject.writes).toEqual([])
  })

  test('a synced flush joining an unsynced one in flight makes the shared drain end synced', async () => {
    const subject = rig()
    subject.queue.enqueue(events(1)[0] as SessionEvent)
    subject.holdNext()
    const unsynced = subject.queue.flush({ sync: false })
    const synced = subject.queue.flush()
    expect(synced).toBe(unsynced)
    subject.release()
    await Promise.all([unsynced, synced])
    expect(subject.writes).toEqual([
      { seqs: [0], sync: false },
      { seqs: [], sync: true },
    ])
  })

  test('automatic writes sync by default, and not when syncAutomaticWrites is false', async () => {
    for (const [option, expected] of [
      [undefined, true],
      [false, false],
    ] as const) {
      const subject = rig(option)
      subject.queue.enqueue(events(1)[0] as SessionEvent)
      await subject.clock.advance(100)
      expect(subject.writes).toEqual([{ seqs: [0], sync: expected }])
    }
  })

  test('after dispose a flush with only unsynced writes starts no write', async () => {
    const subject = rig()
    subject.queue.enqueue(events(1)[0] as SessionEvent)
    await subject.queue.flush({ sync: false })
    subject.queue.dispose()
    await subject.queue.flush()
    expect(subject.writes).toEqual([{ seqs: [0], sync: false }])
  })
})

describe('jsonlPersistence append with sync false', () => {
  const dirs: string[] = []
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
  })

  test('writes the batch with no fdatasync; an empty synced append syncs it once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'yoke-sync-false-'))
    dirs.push(dir)
    let fdatasyncs = 0
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      fdatasync: (handle) => {
        fdatasyncs++
        return nodeFileSystem.fdatasync(handle)
      },
    }
    const adapter = jsonlPersistence({ dir, fileSystem })
    const lease = await adapter.acquire('s1')
    await adapter.create(H1)
    const log = events(3)
    await adapter.append('s1', log.slice(0, 1), { expectedSeq: 0, lease })
    const afterFirst = fdatasyncs
    await adapter.append('s1', log.slice(1, 2), { expectedSeq: 1, lease, sync: false })
    expect(fdatasyncs).toBe(afterFirst)
    expect((await readFile(join(dir, 's1.jsonl'), 'utf8')).trimEnd().split('\n')).toHaveLength(3)
    await adapter.append('s1', [], { expectedSeq: 2, lease })
    expect(fdatasyncs).toBe(afterFirst + 1)
    // Nothing unsynced any more: an empty append does nothing.
    await adapter.append('s1', [], { expectedSeq: 2, lease })
    expect(fdatasyncs).toBe(afterFirst + 1)
    await adapter.append('s1', log.slice(2), { expectedSeq: 2, lease, sync: false })
    await adapter.append('s1', [], { expectedSeq: 3, lease, sync: false })
    expect(fdatasyncs).toBe(afterFirst + 1)
    expect((await adapter.load('s1')).events).toHaveLength(3)
    await lease.release()
    await adapter.close()
  })
})
