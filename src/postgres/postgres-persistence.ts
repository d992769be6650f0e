/**
 * `postgresPersistence`: the SQL session store on PostgreSQL through `pg` (an optional peer).
 *
 * @module
 */
import { loadPeer } from '../persistence/load-peer.js'
import type { PersistenceAdapter } from 'yoke'
import { createSqlPersistence } from '../persistence/sql/sql-persistence.js'
import type { SqlExecutor, SqlQuery } from '../persistence/sql/sql-executor.js'
import type { PgModule, PgPool } from './pg-pool.js'
import { describeTarget, passwordOf } from './connection-target.js'
import { migrationLockOf, quoteIdentifier } from './postgres-dialect.js'
import { createPostgresExecutor } from './postgres-executor.js'
import { type PostgresHandle, type PostgresStarted, postgresHandleKey } from './postgres-handle.js'
import { workerExtension, workerTables } from './worker-tables.js'
import { type PostgresPersistenceOptions, validatePostgresOptions } from './postgres-persistence-options.js'

export type { PostgresPersistenceOptions } from './postgres-persistence-options.js'

/** The peer this subpath needs. */
const pgPeer = Object.freeze({ peer: 'pg', subpath: 'yoke/postgres', install: 'npm install pg' })

/**
 * A persistence adapter storing sessions in PostgreSQL: many sessions in one schema's tables, each
 * append one transaction that checks the writer's lease and the expected seq, leases judged by the
 * database's clock, and versioned migrations run on start.
 *
 * Nothing connects until the first operation: that one connects and migrates, and a failure there
 * (an unreachable server, a refused login, a schema from a newer Yoke) rejects it with a typed
 * error, with nothing written. The failure is not remembered: the next operation starts again.
 *
 * @example
 * ```ts
 * import { createHarness } from 'yoke'
 * import { postgresPersistence } from 'yoke/postgres'
 *
 * const harness = createHarness({
 *   persistence: postgresPersistence({ connectionString: process.env.DATABASE_URL, schema: 'agents' }),
 * })
 * ```
 *
 * @param options - a pool or a connection string, the schema, the lease timing
 * @returns the adapter (`name: 'postgres'`)
 * @throws `InvalidOptionsError` for bad options; `MissingPeerError` when `pg` is not installed
 */
export function postgresPersistence(options: PostgresPersistenceOptions): PersistenceAdapter {
  const checked = validatePostgresOptions(options)
  const pg = loadPeer(pgPeer) as PgModule
  const { schema, connectionString } = checked
  const target = connectionString === undefined ? 'the given pool' : describeTarget(connectionString)
  let opened: PgPool | undefined
  const store = createSqlPersistence({
    name: 'postgres',
    location: `postgres:${quoteIdentifier(schema)}`,
    lease: checked.lease,
    extension: workerExtension(schema),
    // Opened by the first operation: the factory stays synchronous and connects nothing.
    open: async () => {
      const pool: PgPool = checked.pool ?? new pg.Pool({ connectionString: connectionString ?? '' })
      opened = pool
      const executor = createPostgresExecutor({
        pool,
        ownsPool: checked.pool === undefined,
        schema,
        notify: checked.notify,
        target,
        secrets: passwordOf(connectionString),
      })
      try {
        await ensureSchema(executor, schema)
      } catch (error) {
        await executor.close()
        throw error
      }
      return executor
    },
  })
  const tables = workerTables(schema)
  const handle: PostgresHandle = Object.freeze({
    schema,
    start: async (): Promise<PostgresStarted> => {
      const internals = await store.internals()
      return {
        executor: internals.executor,
        pool: opened as PgPool,
        tables,
        leaseTtlMs: checked.lease.ttlMs,
        heartbeatMs: checked.lease.heartbeatMs,
        leaseAgeMs: internals.leaseAgeMs,
        dropLease: internals.dropLease,
      }
    },
  })
  // The worker and the submit client reach the database through it; the public type does not show it.
  Object.defineProperty(store, postgresHandleKey, { value: handle })
  return store
}

/**
 * Creates the schema when it is absent, under the same advisory lock as the migrations: two
 * instances running `CREATE SCHEMA IF NOT EXISTS` at once can both pass the check and one then
 * fails on the catalog's unique index. An existing schema is left alone, so a database user
 * without `CREATE` on the database can use a schema made for it.
 */
async function ensureSchema(executor: SqlExecutor, schema: string): Promise<void> {
  const exists = async (query: SqlQuery) =>
    (await query.query('SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1', [schema])).length > 0
  if (await exists(executor)) return
  await executor.transaction(async (tx) => {
    await tx.query(migrationLockOf(schema))
    if (!(await exists(tx))) await tx.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`)
  })
}
