/**
 * `postgresPersistence`: the SQL session store on PostgreSQL through `pg` (an optional peer).
 *
 * @module
 */
import { loadPeer } from '../persistence/load-peer.js'
import type { PersistenceAdapter } from '../persistence/persistence-adapter.js'
import type { PgModule, PgPool } from './pg-pool.js'
import { describeTarget, passwordOf } from './connection-target.js'
import { createPostgresExecutor } from './postgres-executor.js'
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
 * (an unreachable server, a refused login, a schema from a newer Yoke) rejects it and every later
 * operation with the same typed error, with nothing written.
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
  const target = checked.connectionString === undefined ? 'the given pool' : describeTarget(checked.connectionString)
  const pool: PgPool = checked.pool ?? new pg.Pool({ connectionString: checked.connectionString ?? '' })
  const executor = createPostgresExecutor({
    pool,
    ownsPool: checked.pool === undefined,
    schema: checked.schema,
    target,
    secrets: passwordOf(checked.connectionString),
  })
  return pendingStore(executor)
}

/** Stand-in until the shared SQL store is merged. */
function pendingStore(executor: ReturnType<typeof createPostgresExecutor>): PersistenceAdapter {
  const pending = async (): Promise<never> => {
    throw new Error('the SQL store is not merged yet')
  }
  return {
    name: 'postgres',
    create: pending,
    append: pending,
    load: pending,
    commitRepair: pending,
    list: pending,
    acquire: pending,
    close: () => executor.close(),
  }
}
