/**
 * `yoke unlock` over the database adapters: `--sqlite <file>` and `--postgres <url> --schema`
 * name the holder of a live lease and refuse it, break it with `--force` (the holder then writes
 * nothing more), remove an expired one, say when there is none, and exit 3 for an unknown
 * session. One storage flag at a time.
 */
import { afterEach, describe, expect, test } from 'vitest'
import { LeaseLostError, type PersistenceAdapter } from 'yoke'
import { baseLog, eventsFrom, headerOf, turnStart } from '../../src/testing/conformance/conformance-events.js'
import type { ConformanceTarget } from '../../src/testing/run-persistence-conformance.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { skipPostgres } from '../helpers/postgres.js'
import { postgresTarget } from '../persistence/postgres-target.js'
import { sqliteTarget } from '../persistence/sqlite-target.js'
import { failed, jsonOf, useCli } from './cli-process.js'

const { yoke, freshDir } = useCli()
const adapters: PersistenceAdapter[] = []
const targets: ConformanceTarget[] = []

afterEach(async () => {
  for (const adapter of adapters.splice(0)) await adapter.close().catch(() => undefined)
  for (const target of targets.splice(0)) await target.cleanup?.()
})

/** A stored session `id` whose lease this adapter holds (a live writer, as far as anyone can tell). */
async function holdSession(adapter: PersistenceAdapter, id: string) {
  await adapter.create(headerOf(id))
  const lease = await adapter.acquire(id)
  const log = baseLog()
  await adapter.append(id, log, { expectedSeq: 0, lease })
  return { lease, next: log.length }
}

/** A database the CLI reaches through `flags`, with the conformance target's hooks over it. */
interface Storage {
  readonly flags: readonly string[]
  /** Another adapter over the same database. */
  adapter(): Promise<PersistenceAdapter>
  /** Makes the lease of `id` expire behind its holder's back, as if the holder had been frozen past its TTL. */
  age(id: string): Promise<void>
}

function storageOver(target: ConformanceTarget, flags: readonly string[]): Storage {
  targets.push(target)
  adapters.push(target.adapter)
  return {
    flags,
    adapter: async () => {
      const adapter = await target.reopen()
      adapters.push(adapter)
      return adapter
    },
    age: async (id) => {
      await target.ageLease?.(id)
    },
  }
}

async function sqliteStorage(): Promise<Storage> {
  const target = await sqliteTarget()
  return storageOver(target, ['--sqlite', target.path])
}

async function postgresStorage(): Promise<Storage> {
  const target = await postgresTarget('unlock')
  return storageOver(target, ['--postgres', target.schema.connectionString, '--schema', target.schema.schema])
}

const kinds = [
  ['sqlite', sqliteStorage, false],
  ['postgres', postgresStorage, skipPostgres],
] as const

describe.each(kinds)('yoke unlock --%s', (_, makeStorage, skip) => {
  test.skipIf(skip)(
    'a live lease is refused naming its holder; --force breaks it and its holder writes nothing more',
    async () => {
      const cwd = await freshDir()
      const storage = await makeStorage()
      const holder = await storage.adapter()
      const { lease, next } = await holdSession(holder, 'live')

      const refused = await yoke(cwd, 'unlock', 'live', ...storage.flags)
      failed(refused, 6, 'SESSION_LOCKED')
      expect(refused.stderr).toContain(lease.owner)
      expect(refused.stderr).toContain('--force')

      const broken = await yoke(cwd, 'unlock', 'live', ...storage.flags, '--force', '--json')
      expect(broken.code, broken.stderr).toBe(0)
      expect(jsonOf(broken)).toMatchObject({ id: 'live', action: 'broken', lease: { owner: lease.owner, live: true } })

      const late = await rejectionOf(
        holder.append('live', eventsFrom(next, [turnStart(2)]), { expectedSeq: next, lease }),
      )
      expect(LeaseLostError.is(late)).toBe(true)
      const reader = await storage.adapter()
      expect((await reader.load('live')).events).toHaveLength(next)
    },
  )

  test.skipIf(skip)(
    'an expired lease is removed without --force; then there is none; an unknown id exits 3',
    async () => {
      const cwd = await freshDir()
      const storage = await makeStorage()
      const { lease } = await holdSession(await storage.adapter(), 'stale')
      await storage.age('stale')

      const removed = await yoke(cwd, 'unlock', 'stale', ...storage.flags)
      expect(removed.code, removed.stderr).toBe(0)
      expect(removed.stdout).toContain('removed an expired lease')
      expect(removed.stdout).toContain(lease.owner)

      const none = await yoke(cwd, 'unlock', 'stale', ...storage.flags)
      expect(none).toEqual({ code: 0, stdout: 'unlock stale: no lease held, nothing to do\n', stderr: '' })

      failed(await yoke(cwd, 'unlock', 'nobody', ...storage.flags), 3, 'SESSION_NOT_FOUND')
    },
  )
})

test('one storage flag at a time, and --schema only with --postgres', async () => {
  const cwd = await freshDir()
  const [both, schema] = await Promise.all([
    yoke(cwd, 'unlock', 'x', '--dir', 'd', '--sqlite', 'x.db'),
    yoke(cwd, 'unlock', 'x', '--schema', 'app'),
  ])
  failed(both, 2, 'INVALID_ARGUMENT')
  expect(both.stderr).toContain('--dir and --sqlite')
  failed(schema, 2, 'INVALID_ARGUMENT')
  expect(schema.stderr).toContain('--schema goes with --postgres')
})
