/**
 * The PostgreSQL wiring of the test suite works: a real server (from `.ci/run`, the developer's
 * `YOKE_TEST_POSTGRES_URL`, or a throwaway cluster started for the run), reached with `pg`, with a
 * schema of this file's own, where a transaction's rows are seen once committed and never when
 * rolled back.
 */
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'

describe.skipIf(skipPostgres)('a real PostgreSQL for the tests', () => {
  let schema: TestSchema
  let client: Client

  beforeAll(async () => {
    schema = await createTestSchema('smoke')
    client = new Client({ connectionString: schema.connectionString })
    await client.connect()
    await client.query(`SET search_path TO ${schema.schema}`)
  })

  afterAll(async () => {
    await client?.end()
    await schema?.drop()
  })

  test('a committed transaction is read back; a rolled-back one leaves nothing', async () => {
    await client.query(
      'CREATE TABLE events (session text NOT NULL, seq integer NOT NULL, body jsonb NOT NULL, PRIMARY KEY (session, seq))',
    )
    await client.query('BEGIN')
    for (const seq of [1, 2, 3])
      await client.query('INSERT INTO events (session, seq, body) VALUES ($1, $2, $3)', ['s-é🙂', seq, { seq }])
    await client.query('COMMIT')

    await client.query('BEGIN')
    await client.query('INSERT INTO events (session, seq, body) VALUES ($1, $2, $3)', ['s-é🙂', 4, { seq: 4 }])
    await client.query('ROLLBACK')

    // Read on a second connection: what it sees was committed, not just held by the first one.
    const reader = new Client({ connectionString: schema.connectionString })
    await reader.connect()
    try {
      const rows = await reader.query(`SELECT session, seq, body FROM ${schema.schema}.events ORDER BY seq`)
      expect(rows.rows).toEqual([1, 2, 3].map((seq) => ({ session: 's-é🙂', seq, body: { seq } })))
    } finally {
      await reader.end()
    }
  })

  test('(session, seq) is a primary key: a duplicate fails with unique_violation and nothing changes', async () => {
    await expect(
      client.query('INSERT INTO events (session, seq, body) VALUES ($1, $2, $3)', ['s-é🙂', 1, { seq: 'again' }]),
    ).rejects.toMatchObject({ code: '23505' })
    const count = await client.query<{ count: string }>('SELECT count(*) FROM events')
    expect(count.rows[0]?.count).toBe('3')
  })

  test('the schema is this file’s own: a second one does not see its table', async () => {
    const other = await createTestSchema('smoke-other')
    try {
      expect(other.schema).not.toBe(schema.schema)
      expect(other.schema).toMatch(/^yoke_smoke_other_[0-9a-f]{12}$/)
      const tables = await client.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
        [other.schema],
      )
      expect(tables.rows).toEqual([])
    } finally {
      await other.drop()
    }
    const left = await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [other.schema])
    expect(left.rowCount).toBe(0)
  })
})
