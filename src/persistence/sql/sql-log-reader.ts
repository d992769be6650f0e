/**
 * Reading a stored session out of the SQL tables: its header row (validated as a JSONL header
 * line is) and its event rows, with the damage checks of every read.
 *
 * @module
 */
import { ErrorCode } from '../../errors/codes.js'
import { PersistenceCorruptionError } from '../../errors/persistence-corruption-error.js'
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import { scanHeader } from '../jsonl/scan-log.js'
import type { SqlQuery, SqlRow } from './sql-executor.js'
import { decodeEventRows } from './sql-event-rows.js'
import { sqlInteger } from './sql-integer.js'
import type { SqlStatements } from './sql-statements.js'

/**
 * A session row.
 *
 * @internal
 */
export interface SessionRow {
  /** The header's JSON text (a JSONL header line without its newline). */
  readonly header: string
  readonly nextSeq: number
  /** Where the last append or repair started. */
  readonly batchSeq: number
  readonly revision: string
}

/**
 * A session's rows as one transaction read them.
 *
 * @internal
 */
export interface SqlLogRows {
  readonly session: SessionRow
  readonly events: readonly SqlRow[]
}

/**
 * What a read of the events found.
 *
 * @internal
 */
export interface CheckedEvents {
  readonly events: SessionEvent[]
  /** The seq of the first damaged row (or missing seq), when there is damage. */
  readonly damagedSeq?: number
}

/**
 * The reads of the SQL store for one dialect.
 *
 * @internal
 */
export class SqlLogReader {
  readonly #statements: SqlStatements
  readonly #selectSession: string
  readonly #readSession: string
  readonly #exists: string
  readonly #selectEvents: string
  readonly #selectEventsFrom: string

  constructor(statements: SqlStatements) {
    this.#statements = statements
    const { sessions, events } = statements.tables
    // Locked like a writer locks it, so a read sees the session row and its events of one commit.
    this.#selectSession = statements.bind(
      `SELECT header, next_seq, batch_seq, revision FROM ${sessions} WHERE id = ? ${statements.dialect.forUpdate}`,
    )
    // In a read transaction that sees one snapshot, no lock is needed (nor allowed in a read-only one).
    this.#readSession = statements.bind(`SELECT header, next_seq, batch_seq, revision FROM ${sessions} WHERE id = ?`)
    this.#exists = statements.bind(`SELECT id FROM ${sessions} WHERE id = ?`)
    this.#selectEvents = statements.bind(`SELECT seq, last_seq, body FROM ${events} WHERE session = ? ORDER BY seq`)
    this.#selectEventsFrom = statements.bind(
      `SELECT seq, last_seq, body FROM ${events} WHERE session = ? AND last_seq >= ? ORDER BY seq`,
    )
  }

  /** Where a session's events are, as errors name it: `<dialect>:<table>:<id>`. */
  locationOf(sessionId: string): string {
    return `${this.#statements.dialect.name}:${this.#statements.tables.events}:${sessionId}`
  }

  /**
   * The session row, or `undefined`.
   *
   * @param lock - lock it until commit (in a write transaction); `false` in a read transaction,
   *   whose snapshot already shows the row and its events of one commit
   */
  async session(tx: SqlQuery, sessionId: string, lock = true): Promise<SessionRow | undefined> {
    const rows = await tx.query(lock ? this.#selectSession : this.#readSession, [sessionId])
    const row = rows[0]
    if (row === undefined) return undefined
    return {
      header: String(row['header']),
      nextSeq: sqlInteger(row['next_seq'], 'yoke_sessions.next_seq'),
      batchSeq: sqlInteger(row['batch_seq'], 'yoke_sessions.batch_seq'),
      revision: String(row['revision']),
    }
  }

  /** Whether a session is stored (no lock taken). */
  async exists(query: SqlQuery, sessionId: string): Promise<boolean> {
    return (await query.query(this.#exists, [sessionId])).length > 0
  }

  /**
   * The session row and its event rows from `fromSeq` on (runs reaching it included), in one transaction.
   *
   * @param lock - as for {@link SqlLogReader.session}
   */
  async rows(tx: SqlQuery, sessionId: string, fromSeq = 0, lock = true): Promise<SqlLogRows | undefined> {
    const session = await this.session(tx, sessionId, lock)
    if (session === undefined) return undefined
    const events =
      fromSeq === 0
        ? await tx.query(this.#selectEvents, [sessionId])
        : await tx.query(this.#selectEventsFrom, [sessionId, fromSeq])
    return { session, events }
  }

  /**
   * Validates a stored header as the JSONL adapter validates its first line.
   *
   * @throws `PersistenceCorruptionError` `CORRUPT_HEADER` / `IDENTITY_MISMATCH`; `SessionFormatUnsupportedError` for a newer format
   */
  header(sessionId: string, text: string): SessionHeader {
    const location = this.locationOf(sessionId)
    const header = scanHeader(`${text}\n`, { sessionId, location })
    if (header.id !== sessionId) {
      throw new PersistenceCorruptionError({
        code: ErrorCode.IDENTITY_MISMATCH,
        sessionId,
        detail: `the header stored for it (${location}) names session "${header.id}"`,
        location,
        expected: sessionId,
        actual: header.id,
      })
    }
    return header
  }

  /**
   * Decodes a session's event rows from `fromSeq` on and checks they run up to its `next_seq`
   * without a gap.
   */
  events(rows: SqlLogRows, fromSeq = 0): CheckedEvents {
    const { nextSeq } = rows.session
    const decoded = decodeEventRows(rows.events, fromSeq === 0 ? 0 : undefined, fromSeq)
    if (decoded.damagedSeq !== undefined) return { events: decoded.events, damagedSeq: decoded.damagedSeq }
    const complete =
      fromSeq >= nextSeq
        ? decoded.events.length === 0
        : decoded.nextSeq === nextSeq && decoded.events.length === nextSeq - fromSeq
    if (complete) return { events: decoded.events }
    // Rows missing (a gap, or the end short of next_seq): damage at the first seq not found.
    let expected = Math.min(fromSeq, nextSeq)
    for (const event of decoded.events) {
      if (event.seq !== expected) break
      expected++
    }
    return { events: decoded.events, damagedSeq: expected }
  }

  /** The damage of a session's rows as `load` rejects it. */
  corruption(sessionId: string, seq: number): PersistenceCorruptionError {
    const location = this.locationOf(sessionId)
    return new PersistenceCorruptionError({
      code: ErrorCode.CORRUPT_LOG,
      sessionId,
      detail:
        `the stored events (${location}) are damaged at seq ${seq}: a row that is no valid record, or a seq that does not continue; ` +
        `nothing was changed; "yoke repair --truncate-at-corruption ${sessionId}" keeps the valid part and moves the damaged rows aside`,
      location,
      seq,
      defect: 'unparsable',
    })
  }
}
