/**
 * The SQL store's executor on better-sqlite3: one connection, statements prepared once, and write
 * transactions opened with `BEGIN IMMEDIATE` (the write lock at once, so two processes never both
 * read and then both try to write). better-sqlite3 runs statements synchronously; the store awaits
 * between them, so every call goes through one queue: two transactions' statements never mix on
 * the connection.
 *
 * @module
 */
import type { SqlDialect, SqlExecutor, SqlQuery, SqlRow } from '../persistence/sql/sql-executor.js'
import type { BetterSqlite3Database, BetterSqlite3Statement } from './better-sqlite3-database.js'
import { retryBusy } from './retry-busy.js'

/** How SQLite spells what the store writes. */
export const sqliteDialect: SqlDialect = Object.freeze({
  name: 'sqlite',
  placeholder: () => '?',
  table: (name: string) => `"${name}"`,
  // Milliseconds since the epoch on the database's clock ('subsec' keeps the fraction).
  nowMs: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
  bigint: 'INTEGER',
  text: 'TEXT',
  // A write transaction (BEGIN IMMEDIATE) already excludes every other writer.
  forUpdate: '',
})

/**
 * An executor over an open database.
 *
 * @param database - the connection
 * @param owned - whether closing the executor closes it (it was opened by Yoke)
 * @param busyTimeoutMs - how long a statement outside a transaction, or a `BEGIN IMMEDIATE`, waits
 *   for another connection's write lock
 * @returns the executor
 * @internal
 */
export function createSqliteExecutor(
  database: BetterSqlite3Database,
  owned: boolean,
  busyTimeoutMs: number,
): SqlExecutor {
  const statements = new Map<string, BetterSqlite3Statement>()
  let queue: Promise<unknown> = Promise.resolve()
  let closed = false

  function run(sql: string, params: readonly unknown[] | undefined): readonly SqlRow[] {
    let statement = statements.get(sql)
    if (statement === undefined) {
      statement = database.prepare(sql)
      statements.set(sql, statement)
    }
    const values = params ?? []
    if (statement.reader) return statement.all(...values) as SqlRow[]
    statement.run(...values)
    return []
  }

  /** Runs `task` after every earlier call settled. */
  function serial<T>(task: () => Promise<T> | T): Promise<T> {
    const next = queue.then(task, task)
    queue = next.then(
      () => undefined,
      () => undefined,
    )
    return next
  }

  async function inTransaction<T>(begin: string, body: (tx: SqlQuery) => Promise<T>): Promise<T> {
    await retryBusy(() => database.exec(begin), busyTimeoutMs)
    let open = true
    const tx: SqlQuery = {
      query: async (sql, params) => {
        if (!open) throw new Error('a statement ran after its transaction ended')
        return run(sql, params)
      },
    }
    try {
      const result = await body(tx)
      open = false
      database.exec('COMMIT')
      return result
    } catch (error) {
      open = false
      try {
        // SQLite may have rolled back already (a full disk); then there is nothing to undo.
        if (database.inTransaction) database.exec('ROLLBACK')
      } catch {
        // The original failure is the one to report; SQLite ends the transaction either way.
      }
      throw error
    }
  }

  return {
    dialect: sqliteDialect,
    // Outside a transaction a statement commits on its own and may meet another writer's lock.
    query: (sql, params) => serial(() => retryBusy(() => run(sql, params), busyTimeoutMs)),
    // The write lock is taken at BEGIN IMMEDIATE or not at all: inside, no statement waits for one.
    transaction: (body) => serial(() => inTransaction('BEGIN IMMEDIATE', body)),
    // A deferred transaction that only reads sees one WAL snapshot and takes no write lock.
    readTransaction: (body) => serial(() => inTransaction('BEGIN', body)),
    close: () =>
      serial(() => {
        if (closed) return
        closed = true
        statements.clear()
        if (owned && database.open) database.close()
      }),
  }
}
