/**
 * The writes of the SQL store, each one fenced transaction: an append (with the idempotent
 * re-append of a batch that already committed), a repair, and a delete.
 *
 * @module
 */
import { ErrorCode } from '../../errors/codes.js'
import { PersistenceError } from '../../errors/persistence-error.js'
import { SeqConflictError } from '../../errors/seq-conflict-error.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import type { JsonValue } from '../../session/json-value.js'
import { jsonText } from '../../session/json-text.js'
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import { checkEventBatch } from '../jsonl/check-event-batch.js'
import { encodeHeaderLine } from '../jsonl/jsonl-codec.js'
import type { RepairCommit, TornTail } from '../persistence-adapter.js'
import { randomHex } from '../random-hex.js'
import { decodeEventRows, eventRowsOf } from './sql-event-rows.js'
import type { SqlExecutor, SqlQuery } from './sql-executor.js'
import type { SqlExtension } from './sql-extension.js'
import { describeHolder, isLiveLease, LEASE_COLUMNS, leaseRowOf } from './sql-lease-holder.js'
import type { SqlLeaseRecord, SqlLeases } from './sql-leases.js'
import type { SessionRow, SqlLogReader } from './sql-log-reader.js'
import { ROWS_PER_INSERT, type SqlStatements } from './sql-statements.js'

/** What {@link SqlWrites} needs. */
export interface SqlWritesOptions {
  readonly executor: SqlExecutor
  readonly statements: SqlStatements
  readonly reader: SqlLogReader
  readonly leases: SqlLeases
  /** A driver's step run inside every append that carries messages it records. */
  readonly extension?: SqlExtension | undefined
}

/** One append, checked by the caller (lease held, batch well-formed and contiguous). */
export interface SqlAppend {
  readonly sessionId: string
  readonly events: readonly SessionEvent[]
  readonly expectedSeq: number
  readonly record: SqlLeaseRecord
  /** The header `create` registered in this instance, when the log is not stored yet. */
  readonly registered: SessionHeader | undefined
  readonly texts: readonly string[] | undefined
}

/** One repair, checked by the caller (lease held, something to do). */
export interface SqlRepair {
  readonly sessionId: string
  readonly torn: TornTail | undefined
  readonly closers: readonly SessionEvent[]
  readonly record: SqlLeaseRecord
}

/**
 * The fenced writes of one SQL store instance.
 *
 * @internal
 */
export class SqlWrites {
  readonly #options: SqlWritesOptions
  readonly #insertSession: string
  readonly #updateSession: string
  readonly #quarantine: string
  readonly #deleteFrom: string
  readonly #deleteEvents: string
  readonly #deleteQuarantine: string
  readonly #deleteSession: string
  readonly #deleteLease: string
  readonly #selectLease: string

  constructor(options: SqlWritesOptions) {
    this.#options = options
    const { statements } = options
    const { sessions, events, quarantine, leases } = statements.tables
    const now = statements.dialect.nowMs
    this.#insertSession = statements.bind(
      `INSERT INTO ${sessions} (id, header, next_seq, batch_seq, revision, created_at) VALUES (?, ?, ?, ?, ?, ${now})`,
    )
    this.#updateSession = statements.bind(
      `UPDATE ${sessions} SET next_seq = ?, batch_seq = ?, revision = ? WHERE id = ?`,
    )
    this.#quarantine = statements.bind(
      `INSERT INTO ${quarantine} (session, seq, last_seq, body, quarantined_at, revision) SELECT session, seq, last_seq, body, ${now}, CAST(? AS ${statements.dialect.text}) FROM ${events} WHERE session = ? AND seq >= ?`,
    )
    this.#deleteFrom = statements.bind(`DELETE FROM ${events} WHERE session = ? AND seq >= ?`)
    this.#deleteEvents = statements.bind(`DELETE FROM ${events} WHERE session = ?`)
    this.#deleteQuarantine = statements.bind(`DELETE FROM ${quarantine} WHERE session = ?`)
    this.#deleteSession = statements.bind(`DELETE FROM ${sessions} WHERE id = ? RETURNING id`)
    this.#deleteLease = statements.bind(`DELETE FROM ${leases} WHERE session = ?`)
    this.#selectLease = statements.bind(
      `SELECT ${LEASE_COLUMNS}, ${now} AS now FROM ${leases} WHERE session = ? ${statements.dialect.forUpdate}`,
    )
  }

  /**
   * Appends a batch in one fenced transaction. A batch that is already stored as it is (its reply
   * was lost, so it was sent again) resolves and writes nothing.
   *
   * @throws `LeaseLostError`, `SeqConflictError`, `PersistenceError` `SESSION_NOT_FOUND` / `SESSION_EXISTS`
   */
  async append(append: SqlAppend): Promise<void> {
    const { executor, reader, leases } = this.#options
    const { sessionId, events, expectedSeq, record, registered } = append
    const extension = this.#options.extension
    const marks = extension?.marksOf(events) ?? []
    // A batch carrying marked messages takes the transaction: its marks must commit with its events.
    if (registered === undefined && marks.length === 0 && (await this.#appendInOneStatement(append))) {
      await executor.announce?.(sessionId, expectedSeq + events.length)
      return
    }
    const recordMarks = async (tx: SqlQuery): Promise<void> => {
      if (marks.length > 0) await extension?.record(tx, sessionId, marks)
    }
    await executor.transaction(async (tx) => {
      await leases.fence(tx, record)
      const session = await reader.session(tx, sessionId)
      if (session === undefined) {
        if (registered === undefined) {
          throw new PersistenceError({
            code: ErrorCode.SESSION_NOT_FOUND,
            sessionId,
            detail: `no stored log (${reader.locationOf(sessionId)}); nothing was written`,
          })
        }
        if (expectedSeq !== 0) throw this.#conflict(sessionId, expectedSeq, 0)
        await tx.query(this.#insertSession, [
          sessionId,
          encodeHeaderLine(registered).slice(0, -1),
          events.length,
          0,
          randomHex(16),
        ])
        await this.#insertEvents(tx, sessionId, events, append.texts)
        await recordMarks(tx)
        return
      }
      if (expectedSeq === session.nextSeq && registered === undefined) {
        await this.#write(tx, sessionId, session, events, expectedSeq, append.texts)
        await recordMarks(tx)
        return
      }
      // A batch sent again after its reply was lost: already stored as it is, it succeeds.
      if (await this.#alreadyStored(tx, append, session)) return
      if (registered !== undefined) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_EXISTS,
          sessionId,
          detail: `another writer stored a log first (${reader.locationOf(sessionId)}); nothing was written`,
        })
      }
      throw this.#conflict(sessionId, expectedSeq, session.nextSeq)
    })
    // After the commit, never inside it: see the executor's announce.
    await executor.announce?.(sessionId, expectedSeq + events.length)
  }

  /**
   * The common append (lease live, `expectedSeq` at the stored end, rows that fit one `INSERT`) as
   * one statement, where the dialect can: one round trip instead of a transaction's six. Resolves
   * whether it wrote; when it did not, nothing was written, and the full transaction finds out
   * why (lease, seq, session, or a retried batch) and answers as it always does, checks in the
   * same order.
   */
  async #appendInOneStatement(append: SqlAppend): Promise<boolean> {
    const { statements, executor } = this.#options
    if (statements.dialect.singleStatementAppend !== true) return false
    const { sessionId, events, expectedSeq, record } = append
    const rows = eventRowsOf(events, append.texts)
    // A batch of more rows than one INSERT carries takes the transaction: its rows outweigh the round trips.
    const statement = rows.length <= ROWS_PER_INSERT ? statements.foldedAppend(rows.length) : undefined
    if (statement === undefined) return false
    const params: unknown[] = [
      sessionId,
      record.token,
      record.epoch,
      expectedSeq + events.length,
      expectedSeq,
      randomHex(16),
      expectedSeq,
    ]
    for (const row of rows) params.push(row.seq, row.lastSeq, row.body)
    const written = await executor.query(statement, params)
    return written.length > 0
  }

  /**
   * Whether `append` is already stored, event for event at its seqs, byte for byte: any batch that
   * committed (not only the last one) may be sent again when its reply was lost. One that only
   * partly matches or reaches past the stored end is not, and conflicts.
   */
  async #alreadyStored(tx: SqlQuery, append: SqlAppend, session: SessionRow): Promise<boolean> {
    const { expectedSeq, events, sessionId } = append
    if (expectedSeq >= session.nextSeq || expectedSeq + events.length > session.nextSeq) return false
    const rows = await this.#options.reader.rows(tx, sessionId, expectedSeq)
    if (rows === undefined) return false
    const decoded = decodeEventRows(rows.events, undefined, expectedSeq)
    const measured = append.texts?.length === events.length ? append.texts : undefined
    for (let index = 0; index < events.length; index++) {
      const stored = decoded.events[index]
      if (stored === undefined || stored.seq !== events[index]!.seq) return false
      const text = measured?.[index] ?? jsonText(events[index] as unknown as JsonValue)
      if (jsonText(stored as unknown as JsonValue) !== text) return false
    }
    return true
  }

  /**
   * Repairs in one fenced transaction: a damaged tail's rows move to the quarantine table, then
   * `recovered ++ closers` are appended.
   *
   * @throws `LeaseLostError`, `SeqConflictError` `expectedRevision`, `PersistenceError` `SESSION_NOT_FOUND`
   */
  async repair(repair: SqlRepair): Promise<RepairCommit | undefined> {
    const { executor, reader, leases, statements } = this.#options
    const { sessionId, torn, closers, record } = repair
    const repaired = await executor.transaction(async (tx) => {
      await leases.fence(tx, record)
      const session = await reader.session(tx, sessionId)
      if (session === undefined) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_NOT_FOUND,
          sessionId,
          detail: `no stored log (${reader.locationOf(sessionId)}); nothing was changed`,
        })
      }
      if (torn !== undefined && torn.revision !== session.revision) {
        throw new SeqConflictError({
          code: ErrorCode.SEQ_CONFLICT,
          sessionId,
          detail: `the log changed since it was read (revision ${session.revision}, expected ${torn.revision}); nothing was changed`,
          expectedRevision: torn.revision,
        })
      }
      let nextSeq = session.nextSeq
      let quarantine: string | undefined
      if (torn?.kind === 'corrupt') {
        const rows = await reader.rows(tx, sessionId)
        const damagedSeq = rows === undefined ? undefined : reader.events(rows).damagedSeq
        if (damagedSeq !== undefined) {
          // The damaged row and every row after it move aside, kept with the revision they were read at.
          await tx.query(this.#quarantine, [session.revision, sessionId, damagedSeq])
          await tx.query(this.#deleteFrom, [sessionId, damagedSeq])
          nextSeq = damagedSeq
          quarantine = statements.tables.quarantine
        }
      }
      const batch = [...(torn?.recovered ?? []), ...closers]
      checkEventBatch(batch, nextSeq, torn === undefined ? 'closers' : 'recovered ++ closers')
      await this.#write(tx, sessionId, { ...session, nextSeq }, batch, nextSeq, undefined)
      return quarantine === undefined ? undefined : { quarantine }
    })
    // Where the log now ends depends on what the repair moved aside: listeners read it again.
    await executor.announce?.(sessionId, undefined)
    return repaired
  }

  /**
   * Deletes a stored session, its quarantined rows and its lease row, in one transaction.
   *
   * @param registered - whether `create` registered it in this instance (then it exists even unstored)
   * @throws `SessionLockedError` while another instance holds a live lease; `PersistenceError` `SESSION_NOT_FOUND`
   */
  async remove(sessionId: string, registered: boolean): Promise<void> {
    const { executor, reader, leases } = this.#options
    await executor.transaction(async (tx) => {
      const rows = await tx.query(this.#selectLease, [sessionId])
      const lease = rows[0] === undefined ? undefined : leaseRowOf(rows[0])
      const mine = leases.current(sessionId)
      if (lease !== undefined && isLiveLease(lease) && lease.token !== mine?.token) {
        throw new SessionLockedError({
          code: ErrorCode.SESSION_LOCKED,
          sessionId,
          detail: `another adapter instance holds its lease (${describeHolder(lease)}); nothing was deleted`,
          holder: lease.holder,
          location: reader.locationOf(sessionId),
        })
      }
      const deleted = await tx.query(this.#deleteSession, [sessionId])
      if (deleted.length === 0 && !registered) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_NOT_FOUND,
          sessionId,
          detail: `no stored log (${reader.locationOf(sessionId)})`,
        })
      }
      await tx.query(this.#deleteEvents, [sessionId])
      await tx.query(this.#deleteQuarantine, [sessionId])
      await tx.query(this.#deleteLease, [sessionId])
    })
  }

  /** Writes events at the stored end and moves the session row on (new revision). */
  async #write(
    tx: SqlQuery,
    sessionId: string,
    session: SessionRow,
    events: readonly SessionEvent[],
    batchSeq: number,
    texts: readonly string[] | undefined,
  ): Promise<void> {
    if (events.length > 0) await this.#insertEvents(tx, sessionId, events, texts)
    await tx.query(this.#updateSession, [session.nextSeq + events.length, batchSeq, randomHex(16), sessionId])
  }

  async #insertEvents(
    tx: SqlQuery,
    sessionId: string,
    events: readonly SessionEvent[],
    texts: readonly string[] | undefined,
  ): Promise<void> {
    const rows = eventRowsOf(events, texts)
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const slice = rows.slice(start, start + ROWS_PER_INSERT)
      const params: unknown[] = []
      for (const row of slice) params.push(sessionId, row.seq, row.lastSeq, row.body)
      await tx.query(this.#options.statements.insertEvents(slice.length), params)
    }
  }

  #conflict(sessionId: string, expectedSeq: number, storedSeq: number): SeqConflictError {
    return new SeqConflictError({
      code: ErrorCode.SEQ_CONFLICT,
      sessionId,
      detail:
        storedSeq === 0
          ? `expected seq ${expectedSeq}, but nothing is stored yet (next seq 0); nothing was written`
          : `expected seq ${expectedSeq}, but the stored log continues at seq ${storedSeq}; nothing was written`,
      expectedSeq,
      storedSeq,
    })
  }
}
