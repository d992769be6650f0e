/**
 * The seam between the SQL session store (one implementation of the adapter contract for every
 * SQL database) and a database driver: a dialect that spells the few things SQLite and PostgreSQL
 * write differently, and an executor that runs statements and transactions.
 *
 * @module
 */

/** What differs between SQL databases in the statements the SQL store writes. */
export interface SqlDialect {
  /** The driver's name for messages and `StoredLog.location` (`'sqlite'`, `'postgres'`). */
  readonly name: string
  /**
   * The placeholder of the `index`-th parameter (1-based): `?` in SQLite, `$1` in PostgreSQL.
   *
   * @param index - 1-based
   */
  placeholder(index: number): string
  /**
   * A table name as the statements write it: quoted, and qualified with the schema where the
   * database has schemas.
   *
   * @param name - the unqualified name, e.g. `'yoke_events'`
   */
  table(name: string): string
  /**
   * An SQL expression for the database's clock in whole milliseconds since the epoch, as a
   * 64-bit integer. Lease expiry is decided with it, never with the writer's clock, so writers on
   * machines whose clocks disagree still agree on who holds a lease.
   */
  readonly nowMs: string
  /** The column type of 64-bit integers (`INTEGER`, `bigint`). */
  readonly bigint: string
  /** The column type of text (`TEXT`, `text`): never a JSON type, so stored bytes stay exact. */
  readonly text: string
  /**
   * Appended to a `SELECT` of the lease row inside a transaction to lock it until commit
   * (`FOR UPDATE` in PostgreSQL; empty in SQLite, where a write transaction already excludes
   * every other writer).
   */
  readonly forUpdate: string
  /**
   * A statement run first in the migration transaction, so that instances starting together
   * migrate one after the other (PostgreSQL: `SELECT pg_advisory_xact_lock(…)`). Absent where the
   * write transaction already excludes every other writer (SQLite's `BEGIN IMMEDIATE`).
   */
  readonly migrationLock?: string
  /**
   * Whether the database runs an append as ONE statement: data-modifying `WITH` clauses
   * (`WITH x AS (UPDATE … RETURNING …) INSERT …`), as PostgreSQL does. Then the common append (lease live, `expectedSeq` at the stored end) costs one round trip
   * instead of a transaction of six; anything else falls back to the full transaction, which
   * finds and reports what is wrong. Absent in SQLite, whose statements cost no round trip.
   */
  readonly singleStatementAppend?: boolean
}

/** One row of a result: column name → value (64-bit integers may come back as strings). */
export type SqlRow = Readonly<Record<string, unknown>>

/** Runs statements; inside a transaction, on that transaction's connection. */
export interface SqlQuery {
  /**
   * Runs one statement.
   *
   * @param sql - the statement, with the dialect's placeholders
   * @param params - the parameters, in placeholder order
   * @returns the rows it returned (empty for statements that return none)
   */
  query(sql: string, params?: readonly unknown[]): Promise<readonly SqlRow[]>
}

/** A database connection (or pool) as the SQL store uses it. */
export interface SqlExecutor extends SqlQuery {
  /** How this database spells things. */
  readonly dialect: SqlDialect
  /**
   * Runs `body` in one write transaction: committed when it resolves, rolled back when it
   * rejects (the rejection is passed on). Transactions of one executor never interleave their
   * statements; across processes the database serializes them (SQLite takes the write lock at
   * `BEGIN IMMEDIATE`, PostgreSQL row locks and the primary keys).
   *
   * @param body - the statements of the transaction
   * @returns what `body` resolved with, once committed and durable
   */
  transaction<T>(body: (tx: SqlQuery) => Promise<T>): Promise<T>
  /**
   * Runs `body`, which only reads, in one transaction that sees a single committed state. Absent:
   * reads use {@link SqlExecutor.transaction}. SQLite reads a WAL snapshot here without taking the
   * write lock, so a long load never holds up writers in other processes.
   *
   * @param body - the reads
   * @returns what `body` resolved with
   */
  readTransaction?<T>(body: (tx: SqlQuery) => Promise<T>): Promise<T>
  /**
   * Tells listeners in other processes that a session's log grew, once its write committed
   * (PostgreSQL: a notification). Absent: nothing is announced. It never rejects: the write is
   * committed whatever happens to its announcement, and listeners also poll.
   *
   * @param sessionId - the session written
   * @param nextSeq - its next seq after the write, when known
   */
  announce?(sessionId: string, nextSeq: number | undefined): Promise<void>
  /** Closes what the executor opened; a database or pool the application passed in stays open. */
  close(): Promise<void>
}
