/**
 * How the worker and the submit client reach the database of a `postgresPersistence` adapter: a
 * symbol-keyed property the adapter carries, invisible to its public type.
 *
 * @module
 */
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import type { SqlExecutor } from '../persistence/sql/sql-executor.js'
import type { PgPool } from './pg-pool.js'
import type { WorkerTables } from './worker-tables.js'

/** The key of the handle on an adapter. @internal */
export const postgresHandleKey: unique symbol = Symbol.for('yoke.postgres.handle')

/** A started adapter's database, for code of this subpath. @internal */
export interface PostgresStarted {
  /** The migrated executor: statements and transactions on the pool. */
  readonly executor: SqlExecutor
  /** The pool (for a dedicated `LISTEN` connection). */
  readonly pool: PgPool
  /** The worker's tables and channel. */
  readonly tables: WorkerTables
  /** The lease TTL in milliseconds. */
  readonly leaseTtlMs: number
  /** The lease heartbeat interval in milliseconds. */
  readonly heartbeatMs: number
  /** How long ago the adapter's lease of a session was renewed (its own clock); `undefined` when it holds none. */
  leaseAgeMs(sessionId: string): number | undefined
  /**
   * Ends this adapter's lease of a session at once (later writes under it fail `LEASE_LOST`) and
   * gives it back in the database when it answers. Never throws.
   */
  dropLease(sessionId: string): void
}

/** The handle a `postgresPersistence` adapter carries. @internal */
export interface PostgresHandle {
  /** The schema. */
  readonly schema: string
  /** Connects and migrates (once), then resolves with the database. */
  start(): Promise<PostgresStarted>
}

/**
 * The handle of a `postgresPersistence` adapter.
 *
 * @param adapter - what the caller passed as `persistence`
 * @param subject - names the options in the error
 * @returns the handle
 * @throws {@link InvalidOptionsError} naming `persistence` when it is not a `postgresPersistence` adapter
 * @internal
 */
export function postgresHandleOf(adapter: unknown, subject: string): PostgresHandle {
  const handle =
    typeof adapter === 'object' && adapter !== null
      ? (adapter as { [postgresHandleKey]?: PostgresHandle })[postgresHandleKey]
      : undefined
  if (handle === undefined) {
    throw new InvalidOptionsError({
      issues: [{ path: ['persistence'], message: 'must be a postgresPersistence(…) adapter' }],
      value: adapter,
      subject,
    })
  }
  return handle
}
