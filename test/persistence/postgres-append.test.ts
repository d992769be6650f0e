/**
 * The PostgreSQL append and reads under concurrency, against a real server: an append is one
 * statement in the common case, and these cases check that it still decides on the newest rows
 * when another transaction changed them while it waited (a takeover, a racing append), and that a
 * load reads one snapshot without waiting for a writer's row locks.
 */
import pg from 'pg'
import { afterEach, describe, expect, test } from 'vitest'
import { LeaseLostError, SeqConflictError } from '../../src/index.js'
import type { PersistenceAdapter } from '../../src/persistence/persistence-adapter.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { eventsFrom, headerOf, note } from '../../src/testing/conformance/conformance-events.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A fresh schema, an adapter over it and a raw client of the same database. */
async function setup(label: string): Promise<{ adapter: PersistenceAdapter; raw: pg.Client; schema: TestSchema }> {
  const schema = await createTestSchema(label)
  cleanups.push(() => schema.drop())
  const adapter = postgresPersistence({ connectionString: schema.connectionString, schema: schema.schema })
  cleanups.push(() => adapter.close())
  const raw = new pg.Client({ connectionString: schema.connectionString })
  await raw.connect()
  cleanups.push(() => raw.end())
  return { adapter, raw, schema }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe.skipIf(skipPostgres)('the PostgreSQL append under concurrency', () => {
  test('a takeover committed while an append waits on the lease row: the append writes nothing and names the new holder', async () => {
    const { adapter, raw, schema } = await setup('append_takeover')
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', eventsFrom(0, [note('one')]), { expectedSeq: 0, lease })
    const leases = `${schema.schema}.yoke_leases`
    await raw.query('BEGIN')
    await raw.query(`SELECT 1 FROM ${leases} WHERE session = $1 FOR UPDATE`, ['s1'])
    const pending = rejectionOf(adapter.append('s1', eventsFrom(1, [note('two')]), { expectedSeq: 1, lease }))
    // The append is waiting on the lease row now; another instance takes the lease over and commits.
    await sleep(200)
    await raw.query(
      `UPDATE ${leases} SET owner = 'thief', token = 'stolen', epoch = epoch + 1, heartbeat_at = ${'(extract(epoch from clock_timestamp()) * 1000)::bigint'} WHERE session = $1`,
      ['s1'],
    )
    await raw.query('COMMIT')
    const error = await pending
    expect(error).toBeInstanceOf(LeaseLostError)
    expect(error).toMatchObject({ code: 'LEASE_LOST', holder: { owner: 'thief', epoch: 2 } })
    const reader = postgresPersistence({ connectionString: schema.connectionString, schema: schema.schema })
    cleanups.push(() => reader.close())
    expect((await reader.load('s1')).events.map((event) => event.seq)).toEqual([0])
  })

  test('appends racing at one expectedSeq under one lease: exactly one is stored, the others are SeqConflictError', async () => {
    const { adapter } = await setup('append_race')
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', eventsFrom(0, [note('start')]), { expectedSeq: 0, lease })
    let seq = 1
    for (let round = 0; round < 20; round++) {
      const outcomes = await Promise.allSettled(
        ['a', 'b', 'c'].map((who) =>
          adapter.append('s1', eventsFrom(seq, [note(`${who}${round}`), note(`${who}${round}+`)]), {
            expectedSeq: seq,
            lease,
          }),
        ),
      )
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled')
      expect(won).toHaveLength(1)
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') {
          expect(outcome.reason).toBeInstanceOf(SeqConflictError)
          expect(outcome.reason).toMatchObject({ code: 'SEQ_CONFLICT', expectedSeq: seq, storedSeq: seq + 2 })
        }
      }
      seq += 2
    }
    const log = await adapter.load('s1')
    expect(log.events.map((event) => event.seq)).toEqual(Array.from({ length: seq }, (_, index) => index))
  })

  test('a load does not wait for a transaction holding the session row locked, and reads the last commit', async () => {
    const { adapter, raw, schema } = await setup('append_read')
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', eventsFrom(0, [note('one'), note('two')]), { expectedSeq: 0, lease })
    await raw.query('BEGIN')
    await raw.query(`SELECT 1 FROM ${schema.schema}.yoke_sessions WHERE id = $1 FOR UPDATE`, ['s1'])
    try {
      const loaded = await Promise.race([adapter.load('s1'), sleep(2_000).then(() => 'waited' as const)])
      expect(loaded).not.toBe('waited')
      expect(loaded === 'waited' ? [] : loaded.events.map((event) => event.seq)).toEqual([0, 1])
      const suffix = await adapter.readFrom?.('s1', 1)
      expect(suffix?.events.map((event) => event.seq)).toEqual([1])
    } finally {
      await raw.query('ROLLBACK')
    }
  })
})
