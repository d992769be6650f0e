/**
 * A process killed while it takes over a stale lock leaves `<name>.lock.takeover` behind.
 * The killed-repair runs of `crash.test.ts` hit this with real kills; these cases pin the three
 * states such a kill can leave, deterministically: the takeover file is empty (killed between
 * its exclusive `open` and the write of its marker), half-written, or complete. In each case its
 * writer is dead, the lock it was replacing is stale, and the next `acquire` must succeed.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { jsonlPersistence } from '../../../src/index.js'

/** The pid of a process that has exited and been reaped. */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid
  if (pid === undefined) throw new Error('spawn failed')
  return pid
}

let dir: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-takeover-'))
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('jsonlPersistence: a takeover interrupted by a crash does not lock the session', () => {
  const lock = (pid: number): string => JSON.stringify({ pid, host: hostname(), token: 'a'.repeat(32), acquiredAt: 1 })

  it.each([
    ['empty (killed between open and write)', () => ''],
    ['half-written', () => lock(deadPid()).slice(0, 30)],
    ['complete, by a dead taker', () => lock(deadPid())],
  ])('takeover file %s: the first acquire takes the stale lock over', async (_name, takeover) => {
    const writer = deadPid()
    await writeFile(join(dir, 's1.lock'), lock(writer))
    await writeFile(join(dir, 's1.lock.takeover'), takeover())
    const adapter = jsonlPersistence({ dir })
    try {
      const lease = await adapter.acquire('s1')
      expect(lease.tookOver?.pid).toBe(writer)
      await lease.release()
      expect(await readdir(dir)).toEqual([])
    } finally {
      await adapter.close()
    }
  })
})
