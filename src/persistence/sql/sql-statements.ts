/**
 * Every statement the SQL store runs, spelled once for a dialect: plain standard SQL (`ON
 * CONFLICT`, `RETURNING`, multi-row `VALUES`) that SQLite and PostgreSQL both accept, with the
 * dialect's placeholders, table names and clock.
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
}
