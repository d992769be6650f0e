/**
 * `yoke unlock` over the database adapters: `--sqlite <file>` and `--postgres <url> --schema`
 * name the holder of a live lease and refuse it, break it with `--force` (the holder then writes
 * nothing more), remove an expired one, say when there is none, and exit 3 for an unknown
 * session. One storage flag at a time.
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterEach, describe, expect, test } from 'vitest'
import { LeaseLostError, type PersistenceAdapter } from 'yoke'
import { postgresPersistence } from '../../src/postgres/index.js'
import { sqlitePersistence } from '../../src/sqlite/index.js'
import { baseLog, eventsFrom, headerOf, turnStart } from '../../src/testing/conformance/conformance-events.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'
import { failed, jsonOf, useCli } from './cli-process.js'

const { yoke, freshDir } = useCli()
const adapters: PersistenceAdapter[] = []
const schemas: TestSchema[] = []

afterEach(async () => {
  for (const adapter of adapters.splice(0)) await adapter.close().catch(() => undefined)
  for (const schema of schemas.splice(0)) await schema.drop()
})

/** A stored session `id` whose lease this adapter holds (a live writer, as far as anyone can tell). */
async function holdSession(adapter: PersistenceAdapter, id: string) {
  adapters.push(adapter)
  await adapter.create(headerOf(id))
  const lease = await adapter.acquire(id)
  const log = baseLog()
  await adapter.append(id, log, { expectedSeq: 0, lease })
  return { lease, next: log.length }
}

interface Storage {
  readonly flags: readonly string[]
  adapter(): PersistenceAdapter
  /** Makes the lease of `id` expire behind its holder's back, as if the holder had been frozen past its TTL. */
  age(id: string): Promise<void>
}

const aging = 'UPDATE yoke_leases SET heartbeat_at = heartbeat_at - ttl_ms - 1'

async function sqliteStorage(): Promise<Storage> {
  const path = join(await freshDir(), 'sessions.db')
  return {
    flags: ['--sqlite', path],
    adapter: () => sqlitePersistence({ path }),
    age: async (id) => {
      const database = new Database(path)
      try {
        database.prepare(`${aging} WHERE session = ?`).run(id)
      } finally {
        database.close()
      }
    },
  }
}

async function postgresStorage(): Promise<Storage> {
  const schema = await createTestSchema('unlock')
  schemas.push(schema)
  return {
    flags: ['--postgres', schema.connectionString, '--schema', schema.schema],
    adapter: () => postgresPersistence({ connectionString: schema.connectionString, schema: schema.schema }),
    age: async (id) => {
      const client = new pg.Client({ connectionString: schema.connectionString })
      await client.connect()
      try {
        await client.query(`${aging.replace('yoke_leases', `"${schema.schema}".yoke_leases`)} WHERE session = $1`, [id])
      } finally {
        await client.end()
      }
    },
  }
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
      const holder = storage.adapter()
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
      const reader = storage.adapter()
      adapters.push(reader)
      expect((await reader.load('live')).events).toHaveLength(next)
    },
  )

  test.skipIf(skip)(
    'an expired lease is removed without --force; then there is none; an unknown id exits 3',
    async () => {
      const cwd = await freshDir()
      const storage = await makeStorage()
      const { lease } = await holdSession(storage.adapter(), 'stale')
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
