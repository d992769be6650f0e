/**
 * The parts of a `pg` pool and its clients that Yoke uses, as structural types, so the declarations
 * of `yoke/postgres` typecheck for an application that has not installed `pg` (or `@types/pg`),
 * and any `pg.Pool` fits them.
 *
 * @module
 */

/** What a query resolves with: the rows, column name → value (`bigint` columns as strings). */
export interface PgQueryResult {
  /** The rows the statement returned. */
  readonly rows: readonly unknown[]
}

/** A client checked out of a {@link PgPool}: one connection. */
export interface PgPoolClient {
  /**
   * Runs one statement on this connection.
   *
   * @param text - the statement, with `$1`, `$2`… placeholders
   * @param values - the parameters
   */
  query(text: string, values?: unknown[]): Promise<PgQueryResult>
  /**
   * Gives the client back to its pool; with an error, the pool closes it instead of reusing it.
   *
   * @param error - why the connection must not be reused
   */
  release(error?: Error | boolean): void
  /**
   * Listens for the connection failing while it is checked out.
   *
   * @param event - `'error'`
   * @param listener - called with the failure
   */
  on(event: 'error', listener: (error: Error) => void): unknown
  /**
   * Stops listening.
   *
   * @param event - `'error'`
   * @param listener - the listener given to `on`
   */
  removeListener(event: 'error', listener: (error: Error) => void): unknown
}

/** A `pg` connection pool (`new pg.Pool(…)`), as `postgresPersistence({ pool })` takes it. */
export interface PgPool {
  /** Checks out a client (opening a connection when none is idle). */
  connect(): Promise<PgPoolClient>
  /**
   * Runs one statement on any idle connection.
   *
   * @param text - the statement, with `$1`, `$2`… placeholders
   * @param values - the parameters
   */
  query(text: string, values?: unknown[]): Promise<PgQueryResult>
  /** Closes every connection; the pool is unusable afterwards. */
  end(): Promise<void>
  /**
   * Listens for an idle connection failing (the server restarted, a network cut): without a
   * listener Node throws the error and the process ends.
   *
   * @param event - `'error'`
   * @param listener - called with the failure
   */
  on(event: 'error', listener: (error: Error) => void): unknown
  /**
   * Stops listening.
   *
   * @param event - `'error'`
   * @param listener - the listener given to `on`
   */
  removeListener(event: 'error', listener: (error: Error) => void): unknown
}

/** The part of the `pg` module Yoke uses: the pool constructor. */
export interface PgModule {
  /** `pg.Pool`. */
  readonly Pool: new (config: {
    readonly connectionString: string
  }) => PgPool
}
