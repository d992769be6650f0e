/**
 * The raw-driver floor of the PostgreSQL bench: `pg` inserting and selecting the rows the adapter
 * stores, on a pool of the same server.
 */
import type pg from 'pg'
import { ROWS_PER_INSERT, type RawRow, type RawSqlDriver } from './sql-bench.js'

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
      // Kept, as a load keeps what it read: dropping each value at once would spare the floor the
      // garbage collector's work on 100,000 live objects.
      const parsed: unknown[] = []
      for (const row of result.rows) parsed.push(JSON.parse(row.body))
      return parsed.length
    },
    close: async () => {},
  }
}
