/**
 * Every statement the SQL store runs, spelled once for a dialect: plain standard SQL (`ON
 * CONFLICT`, `RETURNING`, multi-row `VALUES`) that SQLite and PostgreSQL both accept, with the
 * dialect's placeholders, table names and clock; and, where the dialect can run it, the append as
 * one statement (PostgreSQL's data-modifying `WITH`).
 *
 * @module
 */
import type { SqlDialect } from './sql-executor.js'

/** The most rows one `INSERT` of events carries (4 parameters each, far below every driver's limit). */
export const ROWS_PER_INSERT = 200

/**
 * Rewrites `?` placeholders into the dialect's, in order. The statements below hold no `?` in
 * literals, so every `?` is a parameter.
 */
function bind(dialect: SqlDialect, text: string): string {
  let index = 0
  return text.replace(/\?/g, () => dialect.placeholder(++index))
}

/**
 * The statements of the SQL store for one dialect.
 *
 * @internal
 */
export class SqlStatements {
  readonly dialect: SqlDialect
  /** `yoke_schema`, `yoke_sessions`, `yoke_events`, `yoke_leases`, `yoke_quarantine` as written. */
  readonly tables: {
    readonly schema: string
    readonly sessions: string
    readonly events: string
    readonly leases: string
    readonly quarantine: string
  }
  readonly #inserts = new Map<number, string>()
  readonly #foldedAppends = new Map<number, string>()

  constructor(dialect: SqlDialect) {
    this.dialect = dialect
    this.tables = {
      schema: dialect.table('yoke_schema'),
      sessions: dialect.table('yoke_sessions'),
      events: dialect.table('yoke_events'),
      leases: dialect.table('yoke_leases'),
      quarantine: dialect.table('yoke_quarantine'),
    }
  }

  /** Binds `?` placeholders of `text` for this dialect. */
  bind(text: string): string {
    return bind(this.dialect, text)
  }

  /**
   * The `INSERT` of `rows` event rows `(session, seq, last_seq, body)`.
   *
   * @param rows - 1 … {@link ROWS_PER_INSERT}
   */
  insertEvents(rows: number): string {
    let text = this.#inserts.get(rows)
    if (text === undefined) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ')
      text = bind(this.dialect, `INSERT INTO ${this.tables.events} (session, seq, last_seq, body) VALUES ${values}`)
      this.#inserts.set(rows, text)
    }
    return text
  }

  /**
   * The append of `rows` event rows as a single statement, for a dialect with
   * {@link SqlDialect.singleStatementAppend} (else `undefined`). It writes only when the lease row
   * still carries the token and epoch and is live, and the session row's `next_seq` is the
   * expected seq; then it moves the session row on, inserts the rows and returns the session's id.
   * Otherwise it writes nothing and returns no row.
   *
   * Why it needs no `SELECT … FOR UPDATE`: each `UPDATE` locks its row and, when another
   * transaction changed the row while this one waited, checks its `WHERE` again on the newest
   * version (PostgreSQL's read-committed rule), so a stale snapshot passes neither the lease check
   * nor the `next_seq` check; the rows are inserted only through the session row that passed both.
   * Parameters: session, token, epoch, the new `next_seq`, the expected seq (the new `batch_seq`),
   * the revision, the expected seq again, then `seq`, `last_seq`, `body` of each row.
   *
   * @param rows - 1 … {@link ROWS_PER_INSERT}
   */
  foldedAppend(rows: number): string | undefined {
    if (this.dialect.singleStatementAppend !== true) return undefined
    let text = this.#foldedAppends.get(rows)
    if (text === undefined) {
      const { sessions, events, leases } = this.tables
      const { bigint, nowMs } = this.dialect
      const values = Array.from(
        { length: rows },
        () => `(CAST(? AS ${bigint}), CAST(? AS ${bigint}), CAST(? AS ${this.dialect.text}))`,
      ).join(', ')
      text = bind(
        this.dialect,
        `WITH fence AS (UPDATE ${leases} SET heartbeat_at = heartbeat_at WHERE session = ? AND token = ? AND epoch = ? AND heartbeat_at + ttl_ms > ${nowMs} RETURNING session), ` +
          `moved AS (UPDATE ${sessions} SET next_seq = ?, batch_seq = ?, revision = ? WHERE id = (SELECT session FROM fence) AND next_seq = ? RETURNING id), ` +
          `inserted AS (INSERT INTO ${events} (session, seq, last_seq, body) SELECT moved.id, r.seq, r.last_seq, r.body FROM moved, (VALUES ${values}) AS r (seq, last_seq, body)) ` +
          'SELECT id FROM moved',
      )
      this.#foldedAppends.set(rows, text)
    }
    return text
  }
}
