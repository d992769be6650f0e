/**
 * The conformance target of the PostgreSQL adapter, shared by the conformance suite and the other
 * PostgreSQL tests: a fresh schema per target on the test server, adapters over it, and the storage
 * hooks as plain SQL on a connection of the test's own.
 *
 * @module
 */
import pg from 'pg'
import type { PersistenceAdapter } from '../../src/index.js'
import type { LeaseOptions } from '../../src/persistence/lease-options.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import type { ConformanceTarget } from '../../src/testing/run-persistence-conformance.js'
import { createTestSchema, type TestSchema } from '../helpers/postgres.js'
import { plantedRow, plantStatement } from './plant-lease-row.js'
import { spawnSqlWriter } from './sql-writer.js'

/** The database clock in ms, as the adapter reads it. */
const nowMs = '(extract(epoch from clock_timestamp()) * 1000)::bigint'

/** A conformance target with the schema it lives in and a pool for raw SQL on it. */
export interface PostgresTarget extends ConformanceTarget {
  /** The schema of this target. */
  readonly schema: TestSchema
  /** A pool of the test's own (not the adapters'), for the hooks and for assertions. */
  readonly sql: pg.Pool
  /** `"schema"."table"`. */
  table(name: string): string
  /** Another adapter over the same schema, with other options. */
  open(options?: { readonly lease?: LeaseOptions }): PersistenceAdapter
}

/**
 * A target over a new schema; `cleanup` drops it.
 *
 * @param label - a word for the schema's name
 * @param lease - the lease timing of the adapters
 * @returns the target
 */
export async function postgresTarget(label: string, lease?: LeaseOptions): Promise<PostgresTarget> {
  const schema = await createTestSchema(label)
  const sql = new pg.Pool({ connectionString: schema.connectionString, max: 2 })
  const table = (name: string): string => `"${schema.schema}"."${name}"`
  const open = (options: { readonly lease?: LeaseOptions } = {}): PersistenceAdapter => {
    const timing = options.lease ?? lease
    return postgresPersistence({
      connectionString: schema.connectionString,
      schema: schema.schema,
      ...(timing === undefined ? {} : { lease: timing }),
    })
  }
  const touch = async (statement: string, params: readonly unknown[], what: string): Promise<void> => {
    const result = await sql.query(statement, [...params])
    if (result.rowCount === 0) throw new Error(what)
  }
  return {
    schema,
    sql,
    table,
    open,
    adapter: open(),
    reopen: () => open(),
    damageRecord: (id, seq) =>
      touch(
        `UPDATE ${table('yoke_events')} SET body = repeat('x', length(body)) WHERE session = $1 AND seq <= $2 AND last_seq >= $2`,
        [id, seq],
        `no stored row of ${id} holds seq ${seq}`,
      ),
    // Ended behind the holder's back: released as far as the table says, so anyone may acquire.
    expireLease: (id) =>
      touch(
        `UPDATE ${table('yoke_leases')} SET token = '', heartbeat_at = 0 WHERE session = $1 AND token <> ''`,
        [id],
        `no lease of ${id} to expire`,
      ),
    // As if its holder had been frozen past its TTL: the last heartbeat a TTL (and a bit) ago.
    ageLease: (id) =>
      touch(
        `UPDATE ${table('yoke_leases')} SET heartbeat_at = heartbeat_at - ttl_ms - 1 WHERE session = $1 AND token <> ''`,
        [id],
        `no lease of ${id} to age`,
      ),
    plantLease: async (id, holder) => {
      const placeholders = Array.from({ length: 9 }, (_, index) => `$${index + 1}`)
      // Ages are bigints: an untyped `now - $n` would be taken as a timestamp difference.
      placeholders[6] = '$7::bigint'
      placeholders[7] = '$8::bigint'
      await sql.query(plantStatement(table('yoke_leases'), placeholders, nowMs), [...plantedRow(id, holder)])
    },
    spawnWriter: () =>
      spawnSqlWriter({ kind: 'postgres', connectionString: schema.connectionString, schema: schema.schema }),
    cleanup: async () => {
      await sql.end()
      await schema.drop()
    },
  }
}
