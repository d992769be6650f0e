/**
 * The raw-driver floor of the PostgreSQL bench: `pg` inserting and selecting the rows the adapter
 * stores, on a pool of the same server.
 */
import type pg from 'pg'
import type { RawRow, RawSqlDriver } from './sql-bench.js'

/** Rows per `INSERT … VALUES` statement: 4,000 parameters, far below the protocol's 65,535. */
const ROWS_PER_INSERT = 1_000

/** `pg` on `pool`, writing into a table of its own in `schema`. */
export function rawPostgres(pool: pg.Pool, schema: string): RawSqlDriver {
  const table = `"${schema}"."bench_raw_events"`
  return {
    driver: 'pg',
    inserts: `INSERT … VALUES ×${ROWS_PER_INSERT}`,
    insertBatches: async (session, batches) => {
      for (const rows of batches) {
        const client = await pool.connect()
        try {
          await client.query('BEGIN')
          for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
            const slice = rows.slice(at, at + ROWS_PER_INSERT)
            const params: unknown[] = []
            const values = slice.map((row: RawRow, index) => {
              params.push(session, row.seq, row.lastSeq, row.body)
              const base = index * 4
              return `($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4})`
            })
            await client.query(
              `INSERT INTO ${table} (session, seq, last_seq, body) VALUES ${values.join(', ')}`,
              params,
            )
          }
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {})
          throw error
        } finally {
          client.release()
        }
      }
    },
    selectFrom: async (session, fromSeq) => {
      const result = await pool.query<{ body: string }>(
        `SELECT seq, last_seq, body FROM ${table} WHERE session = $1 AND last_seq >= $2 ORDER BY seq`,
        [session, fromSeq],
      )
      let parsed = 0
      for (const row of result.rows) if (JSON.parse(row.body) !== undefined) parsed++
      return parsed
    },
    close: async () => {},
  }
}
