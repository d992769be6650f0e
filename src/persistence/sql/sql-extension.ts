/**
 * What a driver may add to the SQL store: tables of its own, migrated with the store's, and a step
 * run inside the transaction of every append that carries certain message ids. PostgreSQL uses it
 * for the worker's inbox, whose rows are marked consumed in the transaction that logs them; SQLite
 * adds nothing.
 *
 * @module
 */
import type { SessionEvent } from '../../session/session-event.js'
import type { SqlQuery } from './sql-executor.js'

/** One message of an append batch that the extension records: its id and the seq of the event carrying it. */
export interface SqlAppendMark {
  /** The message id. */
  readonly id: string
  /** The seq of the event that logs it. */
  readonly seq: number
}

/**
 * A driver's addition to the SQL store.
 *
 * @internal
 */
export interface SqlExtension {
  /**
   * Creates or migrates the extension's tables, inside the store's migration transaction (under
   * its lock), after the store's own tables are current.
   *
   * @param tx - the migration transaction
   */
  migrate(tx: SqlQuery): Promise<void>
  /**
   * The messages of a batch the extension records, found by a cheap scan; empty for most
   * batches, which then keep the store's fastest write path.
   *
   * @param events - the batch
   */
  marksOf(events: readonly SessionEvent[]): readonly SqlAppendMark[]
  /**
   * Records `marks` inside the append's transaction, after its events are written: both commit
   * together or neither does.
   *
   * @param tx - the append's transaction
   * @param sessionId - the session appended to
   * @param marks - what {@link SqlExtension.marksOf} found
   */
  record(tx: SqlQuery, sessionId: string, marks: readonly SqlAppendMark[]): Promise<void>
}
