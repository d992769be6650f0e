/**
 * The raw-driver floor of the SQLite bench: better-sqlite3 inserting and selecting the rows the
 * adapter stores, with the adapter's sync settings.
 */
import Database from 'better-sqlite3'
import type { RawRow, RawSqlDriver } from './sql-bench.js'

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
  const insert = database.prepare('INSERT INTO bench_raw_events (session, seq, last_seq, body) VALUES (?, ?, ?, ?)')
  const select = database.prepare(
    'SELECT seq, last_seq, body FROM bench_raw_events WHERE session = ? AND last_seq >= ? ORDER BY seq',
  )
  const insertBatch = database.transaction((session: string, rows: readonly RawRow[]) => {
    for (const row of rows) insert.run(session, row.seq, row.lastSeq, row.body)
  })
  return {
    driver: 'better-sqlite3',
    inserts: 'INSERT per row',
    insertBatches: async (session, batches) => {
      // BEGIN IMMEDIATE, as a writer that must not be overtaken takes the write lock.
      for (const rows of batches) insertBatch.immediate(session, rows)
    },
    selectFrom: async (session, fromSeq) => {
      let parsed = 0
      for (const row of select.all(session, fromSeq) as { body: string }[])
        if (JSON.parse(row.body) !== undefined) parsed++
      return parsed
    },
    close: async () => {
      database.close()
    },
  }
}
