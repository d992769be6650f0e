/**
 * A SQLite database file in a temp directory as a conformance target, and the raw access its
 * hooks use (a second better-sqlite3 connection, as another process would have).
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { SqlitePersistenceOptions } from '../../src/sqlite/sqlite-persistence.js'
import { sqlitePersistence } from '../../src/sqlite/sqlite-persistence.js'
import type { ConformanceTarget } from '../../src/testing/run-persistence-conformance.js'
import { plantedRow, plantStatement } from './plant-lease-row.js'
import { spawnSqlWriter } from './sql-writer.js'

/**
 * Runs `body` on a fresh connection to the database file, closed afterwards.
 *
 * @param path - the database file
 * @param body - what to do with the connection
 * @returns what `body` returned
 */
export function withDatabase<T>(path: string, body: (database: Database.Database) => T): T {
  const database = new Database(path, { timeout: 5000 })
  try {
    return body(database)
  } finally {
    database.close()
  }
}

/**
 * A new temp directory holding `sessions.db` (not created yet).
 *
 * @returns the directory and the file
 */
export async function sqliteFile(): Promise<{ readonly dir: string; readonly path: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-sqlite-'))
  return { dir, path: join(dir, 'sessions.db') }
}

/** The database clock in ms, as the adapter reads it. */
const nowMs = "CAST(unixepoch('subsec') * 1000 AS INTEGER)"

/**
 * A conformance target over a fresh database file.
 *
 * @param options - more adapter options (not `path`)
 * @returns the target, every hook included
 */
export async function sqliteTarget(
  options: Omit<SqlitePersistenceOptions, 'path' | 'database'> = {},
): Promise<ConformanceTarget & { readonly path: string }> {
  const { dir, path } = await sqliteFile()
  const open = () => sqlitePersistence({ ...options, path })
  return {
    path,
    adapter: open(),
    reopen: open,
    damageRecord: (id, seq) => {
      const changes = withDatabase(
        path,
        (database) =>
          database
            .prepare("UPDATE yoke_events SET body = 'x' || body WHERE session = ? AND seq <= ? AND last_seq >= ?")
            .run(id, seq, seq).changes,
      )
      if (changes !== 1) throw new Error(`no stored row of ${id} holds seq ${seq}`)
    },
    expireLease: (id) => {
      withDatabase(path, (database) =>
        database.prepare('UPDATE yoke_leases SET heartbeat_at = 0 WHERE session = ?').run(id),
      )
    },
    ageLease: (id) => {
      const changes = withDatabase(
        path,
        (database) =>
          database
            .prepare(
              "UPDATE yoke_leases SET heartbeat_at = heartbeat_at - ttl_ms - 1 WHERE session = ? AND token <> ''",
            )
            .run(id).changes,
      )
      if (changes !== 1) throw new Error(`no lease of ${id} to age`)
    },
    plantLease: (id, holder) => {
      withDatabase(path, (database) =>
        database.prepare(plantStatement('yoke_leases', Array(9).fill('?'), nowMs)).run(...plantedRow(id, holder)),
      )
    },
    spawnWriter: () => spawnSqlWriter({ kind: 'sqlite', path }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  }
}
