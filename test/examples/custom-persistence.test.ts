/**
 * `examples/custom-persistence.ts`: the example's own Map-backed
 * adapter passes `runPersistenceConformance`, with every hook but `spawnWriter` (a Map dies with
 * its process), so no other conformance case is skipped (a skip fails here, naming the hook). The example's demo runs as a program too.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { runPersistenceConformance } from 'yoke/testing'
import type { ConformanceRunner } from '../../src/testing/run-persistence-conformance.js'
import { createMapStorage, mapPersistence } from '../../examples/custom-persistence.js'
import { bundleExample, type ExampleBundle } from './example-process.js'

const strictRunner: ConformanceRunner = {
  describe: (name, body) => describe(name, body),
  test: (name, body, timeoutMs) => test(name, body, timeoutMs),
  // Only the child-process cases may skip: a Map dies with its process, so no child can share it.
  skip: (name, reason) =>
    reason.includes('spawnWriter') && !reason.includes(' and no ')
      ? test.skip(`${name} (${reason})`, () => undefined)
      : test(name, () => {
          throw new Error(`the example adapter must provide every hook: ${reason}`)
        }),
}

/** Overwrites the line holding `seq` (line `seq + 1`: line 0 is the header) with `x`s of the same length. */
function damageLine(bytes: Buffer, seq: number): Buffer {
  const lines = bytes.toString('utf8').split('\n')
  const line = lines[seq + 1]
  if (line === undefined || line === '') throw new Error(`no line holds seq ${seq}`)
  lines[seq + 1] = 'x'.repeat(Buffer.byteLength(line))
  return Buffer.from(lines.join('\n'))
}

runPersistenceConformance(
  'the custom-persistence example adapter',
  () => {
    const storage = createMapStorage()
    return {
      adapter: mapPersistence(storage),
      reopen: () => mapPersistence(storage),
      bytes: {
        read: (id) => new Uint8Array(storage.logs.get(id) ?? []),
        write: (id, bytes) => void storage.logs.set(id, Buffer.from(bytes)),
      },
      damageRecord: (id, seq) => void storage.logs.set(id, damageLine(storage.logs.get(id)!, seq)),
      expireLease: (id) => {
        const holder = storage.leases.get(id)
        if (holder === undefined) throw new Error(`no lease of ${id} to expire`)
        storage.leases.delete(id)
      },
      plantLease: (id, holder) => {
        const epoch = holder.epoch ?? 1
        storage.epochs.set(id, Math.max(storage.epochs.get(id) ?? 0, epoch))
        storage.leases.set(id, {
          token: 'planted',
          owner: holder.owner ?? 'planted',
          epoch,
          acquiredAt: holder.acquiredAt,
          expiresAt: (holder.heartbeatAt ?? holder.acquiredAt) + (holder.ttlMs ?? 30_000),
          controller: new AbortController(),
        })
      },
      ageLease: (id) => {
        const holder = storage.leases.get(id)
        if (holder === undefined) throw new Error(`no lease of ${id} to age`)
        holder.expiresAt = 0
      },
    }
  },
  { runner: strictRunner, largeBatch: 20_000 },
)

describe('the custom-persistence demo', () => {
  let example: ExampleBundle | undefined

  beforeAll(async () => {
    example = await bundleExample('custom-persistence')
  }, 30_000)

  afterAll(async () => {
    await example?.remove()
  })

  test('stores turn 1 in the Map and a second harness over the same storage resumes with turn 2', async () => {
    const outcome = await example!.run()
    expect(outcome.stderr).toBe('')
    expect(outcome.code).toBe(0)
    const lines = outcome.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^turn 1: stored \d+ bytes$/)
    expect(lines[1]).toMatch(/^turn 2 completed: Still in the Map\. \(\d+ events\)$/)
  })
})
