/**
 * The raw-driver floor of the SQLite bench: better-sqlite3 inserting and selecting the rows the
 * adapter stores, with the adapter's sync settings.
 */
import Database from 'better-sqlite3'
import { ROWS_PER_INSERT, type RawRow, type RawSqlDriver } from './sql-bench.js'

/** better-sqlite3 on `path` with the adapter's sync settings, writing into a table of its own. */
export function rawSqlite(path: string): RawSqlDriver {
  const database = new Database(path)
  database.pragma('journal_mode = WAL')
  database.pragma('synchronous = FULL')
  // The same columns and primary key as yoke_events.
  database.exec(
    'CREATE TABLE IF NOT EXISTS bench_raw_events (session TEXT NOT NULL, seq INTEGER NOT NULL, ' +
      'last_seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session, seq))',
  )
  const inserts = new Map<number, Database.Statement>()
  const insertOf = (rows: number): Database.Statement => {
    let statement = inserts.get(rows)
    if (statement === undefined) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ')
      statement = database.prepare(`INSERT INTO bench_raw_events (session, seq, last_seq, body) VALUES ${values}`)
      inserts.set(rows, statement)
    }
    return statement
  }
  const select = database.prepare(
    'SELECT seq, last_seq, body FROM bench_raw_events WHERE session = ? AND last_seq >= ? ORDER BY seq',
  )
  const insertBatch = database.transaction((session: string, rows: readonly RawRow[]) => {
    for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
      const slice = rows.slice(at, at + ROWS_PER_INSERT)
      insertOf(slice.length).run(slice.flatMap((row) => [session, row.seq, row.lastSeq, row.body]))
    }
  })
  return {
    driver: 'better-sqlite3',
    inserts: `INSERT … VALUES ×${ROWS_PER_INSERT}`,
    insertBatches: async (session, batches) => {
      // BEGIN IMMEDIATE, as a writer that must not be overtaken takes the write lock.
      for (const rows of batches) insertBatch.immediate(session, rows)
    },
    selectFrom: async (session, fromSeq) => {
      // Kept, as a load keeps what it read: dropping each value at once would spare the floor the
      // garbage collector's work on 100,000 live objects.
      const parsed: unknown[] = []
      for (const row of select.all(session, fromSeq) as { body: string }[]) parsed.push(JSON.parse(row.body))
      return parsed.length
    },
    close: async () => {
      database.close()
    },
  }
}
