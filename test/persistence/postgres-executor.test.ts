/**
 * The PostgreSQL executor under the SQL store, on a real server: transactions commit or roll back
 * whole, a connection that dies is closed instead of reused, an idle connection that dies does not
 * end the process, an injected pool outlives the executor, and a server that cannot be reached is a
 * typed error that never shows the password.
 */
import { createServer } from 'node:net'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { PgPool } from '../../src/postgres/pg-pool.js'
import { createPostgresExecutor } from '../../src/postgres/postgres-executor.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'

/** A port on loopback that nothing listens on (the kernel's pick, closed again). */
async function refusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

describe.skipIf(skipPostgres)('the PostgreSQL executor', () => {
  let schema: TestSchema
  let pool: pg.Pool

  beforeAll(async () => {
    schema = await createTestSchema('executor')
    pool = new pg.Pool({ connectionString: schema.connectionString, max: 3 })
    await pool.query(`CREATE TABLE ${schema.schema}.t (id text PRIMARY KEY, n bigint NOT NULL)`)
  })

  afterAll(async () => {
    await pool?.end()
    await schema?.drop()
  })

  const executorOver = (given: PgPool, ownsPool = false) =>
    createPostgresExecutor({ pool: given, ownsPool, schema: schema.schema, target: 'the test pool', secrets: [] })

  test('a pg Pool fits the structural PgPool type, and the dialect quotes and qualifies tables', () => {
    const given: PgPool = pool
    const executor = executorOver(given)
    expect(executor.dialect.name).toBe('postgres')
    expect(executor.dialect.placeholder(3)).toBe('$3')
    expect(executor.dialect.table('yoke_events')).toBe(`"${schema.schema}"."yoke_events"`)
  })

  test('the clock expression is the database clock in whole milliseconds', async () => {
    const executor = executorOver(pool)
    const before = Date.now()
    const [row] = await executor.query(`SELECT ${executor.dialect.nowMs} AS now`)
    const now = Number(row?.['now'])
    expect(Number.isSafeInteger(now)).toBe(true)
    // Same machine: the server's clock is ours within a few seconds.
    expect(Math.abs(now - before)).toBeLessThan(5_000)
  })

  test('a transaction commits whole; a rejected one leaves nothing and passes its error on unchanged', async () => {
    const executor = executorOver(pool)
    const table = executor.dialect.table('t')
    await executor.transaction(async (tx) => {
      await tx.query(`INSERT INTO ${table} (id, n) VALUES ($1, $2)`, ['a', 1])
      await tx.query(`INSERT INTO ${table} (id, n) VALUES ($1, $2)`, ['b', 2])
    })
    const failure = new Error('the body failed')
    await expect(
      executor.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${table} (id, n) VALUES ($1, $2)`, ['c', 3])
        throw failure
      }),
    ).rejects.toBe(failure)
    // A statement error (a unique violation) rolls back as well, and the driver's error passes on.
    await expect(
      executor.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${table} (id, n) VALUES ($1, $2)`, ['d', 4])
        await tx.query(`INSERT INTO ${table} (id, n) VALUES ($1, $2)`, ['a', 5])
      }),
    ).rejects.toMatchObject({ code: '23505' })
    const rows = await executor.query(`SELECT id, n FROM ${table} ORDER BY id`)
    expect(rows).toEqual([
      { id: 'a', n: '1' },
      { id: 'b', n: '2' },
    ])
    expect(pool.totalCount).toBeLessThanOrEqual(3)
  })

  test('a connection killed mid-transaction fails the transaction and is closed, not handed out again', async () => {
    const own = new pg.Pool({ connectionString: schema.connectionString, max: 1 })
    try {
      const executor = executorOver(own)
      const table = executor.dialect.table('t')
      let killed = 0
      await expect(
        executor.transaction(async (tx) => {
          const [row] = await tx.query('SELECT pg_backend_pid() AS pid')
          killed = Number(row?.['pid'])
          await tx.query(`INSERT INTO ${table} (id, n) VALUES ($1, $2)`, ['killed', 1])
          await pool.query('SELECT pg_terminate_backend($1)', [killed])
          await tx.query('SELECT 1')
        }),
      ).rejects.toThrow()
      // The one slot of the pool is free and the next transaction gets a new backend.
      const [row] = await executor.transaction((tx) => tx.query('SELECT pg_backend_pid() AS pid'))
      expect(Number(row?.['pid'])).not.toBe(killed)
      expect(await executor.query(`SELECT id FROM ${table} WHERE id = 'killed'`)).toEqual([])
    } finally {
      await own.end()
    }
  })

  test('a body that fails or an SQL error rolls back and keeps the healthy connection for reuse', async () => {
    const own = new pg.Pool({ connectionString: schema.connectionString, max: 1 })
    try {
      const executor = executorOver(own)
      const table = executor.dialect.table('t')
      const pidOf = async () => Number((await executor.query('SELECT pg_backend_pid() AS pid'))[0]?.['pid'])
      const pid = await pidOf()
      const failure = Object.assign(new Error('lease lost'), { code: 'LEASE_LOST' })
      await expect(
        executor.transaction(async (tx) => {
          await tx.query('SELECT 1')
          throw failure
        }),
      ).rejects.toBe(failure)
      await expect(
        executor.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${table} (id, n) VALUES ('twice', 9)`)
          await tx.query(`INSERT INTO ${table} (id, n) VALUES ('twice', 9)`)
        }),
      ).rejects.toMatchObject({ code: '23505' })
      expect(await pidOf()).toBe(pid)
    } finally {
      await own.end()
    }
  })

  test('an idle connection that dies is dropped by the pool without ending the process', async () => {
    const own = new pg.Pool({ connectionString: schema.connectionString, max: 2 })
    try {
      const executor = executorOver(own)
      const [row] = await executor.query('SELECT pg_backend_pid() AS pid')
      expect(own.idleCount).toBe(1)
      const dropped = new Promise<void>((resolve) => own.once('remove', () => resolve()))
      await pool.query('SELECT pg_terminate_backend($1)', [Number(row?.['pid'])])
      await dropped
      expect(own.totalCount).toBe(0)
      expect(await executor.query('SELECT 1 AS one')).toEqual([{ one: 1 }])
    } finally {
      await own.end()
    }
  })

  test('closing leaves an injected pool open and ends an owned one', async () => {
    const injected = new pg.Pool({ connectionString: schema.connectionString, max: 1 })
    const owned = new pg.Pool({ connectionString: schema.connectionString, max: 1 })
    try {
      const onInjected = executorOver(injected)
      await onInjected.query('SELECT 1')
      await onInjected.close()
      await onInjected.close()
      expect(await injected.query('SELECT 2 AS two')).toMatchObject({ rows: [{ two: 2 }] })
      expect(injected.listenerCount('error')).toBe(0)
      await expect(onInjected.query('SELECT 1')).rejects.toMatchObject({ code: 'CLOSED' })

      const onOwned = executorOver(owned, true)
      await onOwned.query('SELECT 1')
      await onOwned.close()
      expect(owned.ending).toBe(true)
      await expect(owned.query('SELECT 1')).rejects.toThrow()
    } finally {
      await injected.end()
      if (!owned.ending) await owned.end()
    }
  })

  test('a refused port is an error naming the server and the reason, never the password, with the driver error as cause', async () => {
    const port = await refusedPort()
    const secret = 'pa55-Wörd-secret'
    const connectionString = `postgresql://yoke:${encodeURIComponent(secret)}@127.0.0.1:${port}/nothing`
    const own = new pg.Pool({ connectionString })
    const executor = createPostgresExecutor({
      pool: own,
      ownsPool: true,
      schema: 'public',
      target: `yoke@127.0.0.1:${port}/nothing`,
      secrets: [secret, encodeURIComponent(secret)],
    })
    const error = await executor.query('SELECT 1').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(Error)
    const message = (error as Error).message
    expect(message).toContain(`127.0.0.1:${port}`)
    expect(message).toContain('ECONNREFUSED')
    expect(message).not.toContain(secret)
    expect((error as Error).cause).toMatchObject({ code: 'ECONNREFUSED' })
    await executor.close()
  })
})
