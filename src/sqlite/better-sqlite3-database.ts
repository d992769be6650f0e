/**
 * The parts of a better-sqlite3 `Database` Yoke uses, as a structural type: the declarations of
 * `yoke/sqlite` name no type of the optional peer, so an application without it still typechecks.
 *
 * @module
 */

/** A prepared statement of a {@link BetterSqlite3Database}. */
export interface BetterSqlite3Statement {
  /** Whether the statement returns rows (a `SELECT`, or a write with `RETURNING`). */
  readonly reader: boolean
  /**
   * Runs a statement that returns rows.
   *
   * @param params - the bound parameters
   * @returns every row
   */
  all(...params: unknown[]): unknown[]
  /**
   * Runs a statement that returns no rows.
   *
   * @param params - the bound parameters
   * @returns what changed
   */
  run(...params: unknown[]): unknown
}

/**
 * A better-sqlite3 `Database` (version 12), as `sqlitePersistence({ database })` takes it: only the
 * members Yoke calls.
 */
export interface BetterSqlite3Database {
  /** The file name it was opened with. */
  readonly name: string
  /** Whether it is still open. */
  readonly open: boolean
  /** Whether a transaction is open on it. */
  readonly inTransaction: boolean
  /**
   * Prepares a statement.
   *
   * @param source - one SQL statement
   */
  prepare(source: string): BetterSqlite3Statement
  /**
   * Runs SQL text without results.
   *
   * @param source - one or more statements
   */
  exec(source: string): unknown
  /**
   * Runs a `PRAGMA`.
   *
   * @param source - the pragma, without the keyword
   * @param options - `simple` returns the first column of the first row
   */
  pragma(source: string, options?: { readonly simple?: boolean }): unknown
  /** Closes the connection. */
  close(): unknown
}
