/**
 * PostgreSQL benchmarks (`npm run bench -- postgres`): `postgresPersistence` against `pg` doing the
 * same work on the same server and schema in the same run (goal ≤ 1.5×). See `sql-bench.ts` for
 * the cases and how to read them.
 *
 * - Append: 10,000 events appended to a live session and flushed at the default write-behind, end
 *   to end and through `adapter.append` alone on the same batches, then one turn (10 events) per
 *   commit; vs `pg` inserting the same rows with the same `INSERT … VALUES` statements (200 rows
 *   each), `BEGIN … COMMIT` per batch on a connection taken from a `pg.Pool` (as the adapter takes one).
 * - Load: `adapter.load` (and through the harness's coordinator) of a 100,000-event session, and
 *   `readFrom` of its last 10,000 events; vs `SELECT … ORDER BY seq` and `JSON.parse` of every body.
 * - Notify: one turn per commit with the append notification on (the default) vs off, one writer
 *   and 8 at once (see `postgres-notify.ts`).
 *
 * The server: `YOKE_BENCH_POSTGRES_URL` when set (its settings are used as they are; the bench
 * works in a schema of its own, dropped afterwards), else a throwaway cluster on loopback started
 * as the tests start theirs and removed afterwards. That cluster runs with `fsync=off`, so a
 * commit costs no disk flush and the floor is as cheap as it gets: the ratios are the pessimistic
 * side. The bench prints `fsync` and `synchronous_commit` as the server reports them. Without a
 * URL or PostgreSQL programs the bench says why and is skipped.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { postgresPersistence } from 'yoke/postgres'
import { findPostgresBin, startThrowawayCluster, type ThrowawayCluster } from '../test/helpers/postgres-cluster.js'
import { runNotifyCases } from './postgres-notify.js'
import { rawPostgres } from './raw-postgres.js'
import { runSqlBench } from './sql-bench.js'

/** The server to bench on: the URL given, or a throwaway cluster (stopped afterwards); a reason when none. */
export async function benchPostgresServer(): Promise<
  { readonly connectionString: string; readonly source: string; readonly cluster?: ThrowawayCluster } | string
> {
  const url = process.env['YOKE_BENCH_POSTGRES_URL']
  if (url !== undefined && url !== '') return { connectionString: url, source: 'YOKE_BENCH_POSTGRES_URL' }
  const bin = findPostgresBin()
  if (bin === undefined)
    return 'YOKE_BENCH_POSTGRES_URL is not set and no PostgreSQL programs (initdb, pg_ctl) were found'
  try {
    const cluster = await startThrowawayCluster(bin)
    return { connectionString: cluster.connectionString, source: `a throwaway cluster of ${cluster.version}`, cluster }
  } catch (error) {
    return `starting a throwaway cluster with ${bin} failed: ${error instanceof Error ? error.message : String(error)}`
  }
}

/** Runs the PostgreSQL figures in a schema of their own; the ratios by case name (none when skipped). */
export async function runPostgresBench(): Promise<Record<string, number>> {
  const chosen = await benchPostgresServer()
  if (typeof chosen === 'string') {
    console.log(`  skipped: ${chosen}`)
    return {}
  }
  const { connectionString, cluster } = chosen
  const schema = `yoke_bench_${randomBytes(4).toString('hex')}`
  const pool = new pg.Pool({ connectionString, max: 2 })
  try {
    const settings = await pool.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'server_version')",
    )
    const described = settings.rows.map((row) => `${row.name}=${row.setting}`).join(', ')
    console.log(`  (${chosen.source}; schema ${schema}; ${described})`)
    await pool.query(`CREATE SCHEMA "${schema}"`)
    // The same columns and primary key as yoke_events.
    await pool.query(
      `CREATE TABLE "${schema}"."bench_raw_events" (session text NOT NULL, seq bigint NOT NULL, ` +
        'last_seq bigint NOT NULL, body text NOT NULL, PRIMARY KEY (session, seq))',
    )
    const ratios = await runSqlBench({
      label: 'PostgreSQL',
      adapter: () => postgresPersistence({ connectionString, schema }),
      raw: rawPostgres(pool, schema),
    })
    return { ...ratios, ...(await runNotifyCases(connectionString, schema)) }
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
    await pool.end()
    await cluster?.stop()
  }
}
