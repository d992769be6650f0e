/**
 * The JSONL adapter's file-system calls per append: the log's handle is kept open while the lease
 * is held, the lock is checked by a `stat` and read again only when its file changed, and lock
 * files are written without a sync. Each change keeps what the adapter promised before: a
 * changed lock stops the next write, a log removed or replaced behind the adapter is met as an
 * open by path would meet it, no handle outlives the adapter, and an empty lock (all a power loss
 * can leave of an unsynced one) holds nothing.
 */
import { readFileSync } from 'node:fs'
import { copyFile, mkdtemp, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { LeaseLostError } from '../../src/errors/lease-lost-error.js'
import type { JsonlFileSystem } from '../../src/persistence/jsonl/jsonl-file-system.js'
import { type JsonlPersistence, jsonlPersistence } from '../../src/persistence/jsonl/jsonl-persistence.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import type { SessionHeader } from '../../src/session/session-header.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { AM, type EventPlan, logOf, SE, SS, TE, TS, text, UM } from '../session/builders.js'
import { countingFileSystem, type FileSystemCalls } from '../helpers/counting-file-system.js'

const H1: SessionHeader = { version: 1, id: 's1', createdAt: 1000, cwd: '/w' }
const L1 = logOf([TS(1), SS(1, 1), UM('hi'), AM(1, 1, text('hello')), SE(1, 1), TE(1, 'completed')])

/** Events of `plans` numbered from `start`. */
function from(start: number, ...plans: EventPlan[]): SessionEvent[] {
  return logOf(plans).map((event, index) => ({ ...event, seq: start + index }))
}

let dir: string
let opened: JsonlPersistence[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-jsonl-handles-'))
  opened = []
})

afterEach(async () => {
  for (const adapter of opened) await adapter.close()
  await rm(dir, { recursive: true, force: true })
})

function J(fileSystem?: JsonlFileSystem): JsonlPersistence {
  const adapter = jsonlPersistence({ dir, ...(fileSystem === undefined ? {} : { fileSystem }) })
  opened.push(adapter)
  return adapter
}

const lockPath = (): string => join(dir, 's1.lock')
const logPath = (): string => join(dir, 's1.jsonl')

describe('jsonlPersistence: calls per append', () => {
  test('a continuing append is a stat of the lock, an fstat, a write and an fdatasync; the lock is read again only once its file changed', async () => {
    const calls: FileSystemCalls = {}
    const adapter = J(countingFileSystem(calls))
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', L1, { expectedSeq: 0, lease })
    // The first append after the first batch opens the log and reads the lock once.
    await adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
    for (const name of Object.keys(calls)) delete calls[name]
    await adapter.append('s1', from(L1.length + 1, UM('next')), { expectedSeq: L1.length + 1, lease })
    expect(calls).toEqual({ stat: 1, fstat: 1, write: 1, fdatasync: 1 })

    // A lock replaced whole (as a heartbeat does, here with the same content) is read again.
    const content = await readFile(lockPath())
    await writeFile(`${lockPath()}.new`, content)
    await rename(`${lockPath()}.new`, lockPath())
    for (const name of Object.keys(calls)) delete calls[name]
    await adapter.append('s1', from(L1.length + 2, UM('again')), { expectedSeq: L1.length + 2, lease })
    expect(calls).toEqual({ stat: 1, open: 1, read: 1, fstat: 2, write: 1, fdatasync: 1, close: 1 })
    await lease.release()
  })

  test('after our own heartbeat the next append does not read the lock again', async () => {
    // Only the heartbeat's interval is faked: it beats when the test says, never during the append.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    try {
      const calls: FileSystemCalls = {}
      const adapter = jsonlPersistence({
        dir,
        fileSystem: countingFileSystem(calls),
        lease: { ttlMs: 30_000, heartbeatMs: 1_000 },
      })
      opened.push(adapter)
      await adapter.create(H1)
      const lease = await adapter.acquire('s1')
      await adapter.append('s1', L1, { expectedSeq: 0, lease })
      await adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
      const heartbeatAt = (): number =>
        (JSON.parse(readFileSync(lockPath(), 'utf8')) as { heartbeatAt: number }).heartbeatAt
      const before = heartbeatAt()
      await new Promise((resolve) => setTimeout(resolve, 5))
      vi.advanceTimersByTime(1_000)
      // The heartbeat is done once its new lock is in place and its marker and temp files are gone.
      await vi.waitFor(
        async () => {
          expect(heartbeatAt()).toBeGreaterThan(before)
          expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's1.lock'])
        },
        { timeout: 5_000, interval: 5 },
      )
      for (const name of Object.keys(calls)) delete calls[name]
      await adapter.append('s1', from(L1.length + 1, UM('next')), { expectedSeq: L1.length + 1, lease })
      expect(calls).toEqual({ stat: 1, fstat: 1, write: 1, fdatasync: 1 })
      await lease.release()
    } finally {
      vi.useRealTimers()
    }
  })

  test('taking a lease makes no sync', async () => {
    const calls: FileSystemCalls = {}
    const adapter = J(countingFileSystem(calls))
    const lease = await adapter.acquire('s1')
    expect([calls['fsync'] ?? 0, calls['fdatasync'] ?? 0]).toEqual([0, 0])
    await lease.release()
  })

  test('no handle outlives the adapter: every open is closed once it is closed', async () => {
    const calls: FileSystemCalls = {}
    const adapter = J(countingFileSystem(calls))
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', L1, { expectedSeq: 0, lease })
    await adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
    expect(calls['open']).toBeGreaterThan(calls['close'] ?? 0)
    await adapter.close()
    expect(calls['close']).toBe(calls['open'])
  })
})

describe('jsonlPersistence: what a kept handle still notices', () => {
  test('a lock replaced by another holder of the same size stops the next append, naming it', async () => {
    const adapter = J()
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', L1, { expectedSeq: 0, lease })
    await adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
    const lock = JSON.parse(await readFile(lockPath(), 'utf8')) as Record<string, unknown>
    const taker = { ...lock, owner: 'e'.repeat(32), token: 'f'.repeat(32), epoch: 2 }
    await writeFile(`${lockPath()}.new`, JSON.stringify(taker))
    await rename(`${lockPath()}.new`, lockPath())
    const before = await readFile(logPath(), 'utf8')
    const error = await rejectionOf(
      adapter.append('s1', from(L1.length + 1, UM('x')), { expectedSeq: L1.length + 1, lease }),
    )
    expect(LeaseLostError.is(error)).toBe(true)
    expect((error as LeaseLostError).holder).toMatchObject({ owner: taker.owner, epoch: 2 })
    expect(await readFile(logPath(), 'utf8')).toBe(before)
  })

  test('a log removed behind the adapter fails the next append as an open of its path does', async () => {
    const adapter = J()
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', L1, { expectedSeq: 0, lease })
    await adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
    await unlink(logPath())
    const error = await rejectionOf(
      adapter.append('s1', from(L1.length + 1, UM('x')), { expectedSeq: L1.length + 1, lease }),
    )
    expect((error as NodeJS.ErrnoException).code).toBe('ENOENT')
    await lease.release()
  })

  test('a log replaced behind the adapter by a copy of itself takes the next append at its path', async () => {
    const adapter = J()
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', L1, { expectedSeq: 0, lease })
    await adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease })
    await copyFile(logPath(), `${logPath()}.copy`)
    await rename(`${logPath()}.copy`, logPath())
    await adapter.append('s1', from(L1.length + 1, UM('x')), { expectedSeq: L1.length + 1, lease })
    await lease.release()
    expect((await J().load('s1')).events).toHaveLength(L1.length + 2)
  })
})

describe('jsonlPersistence: an empty lock file', () => {
  test.each([
    ['no bytes', ''],
    ['only zero bytes', '\0'.repeat(180)],
  ])(
    'with %s (what a power loss can leave of an unsynced lock) holds nothing: inspected as none, taken at once',
    async (_name, content) => {
      await writeFile(lockPath(), content)
      const adapter = J()
      expect(await adapter.inspectLease('s1')).toBeUndefined()
      const lease = await adapter.acquire('s1')
      expect(lease.epoch).toBe(2)
      expect(lease.tookOver).toBeUndefined()
      expect(JSON.parse(await readFile(lockPath(), 'utf8'))).toMatchObject({
        token: lease.token,
        epoch: 2,
        host: hostname(),
      })
      await lease.release()
    },
  )

  test('a lock emptied under a live lease stops its next append', async () => {
    const adapter = J()
    await adapter.create(H1)
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', L1, { expectedSeq: 0, lease })
    await writeFile(`${lockPath()}.new`, '')
    await rename(`${lockPath()}.new`, lockPath())
    const error = await rejectionOf(adapter.append('s1', from(L1.length, TS(2)), { expectedSeq: L1.length, lease }))
    expect(LeaseLostError.is(error)).toBe(true)
    expect((error as Error).message).toContain('is empty')
  })
})
