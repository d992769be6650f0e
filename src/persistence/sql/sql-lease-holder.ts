/**
 * A lease row of `yoke_leases` read back: its holder as errors name it, and its age by the
 * database's clock.
 *
 * @module
 */
import type { LockHolder } from '../../errors/lock-holder.js'
import type { StoredLease } from '../persistence-adapter.js'
import type { SqlRow } from './sql-executor.js'
import { sqlInteger } from './sql-integer.js'

/** The columns a lease read selects: the row and the database's clock as `now`. */
export const LEASE_COLUMNS = 'owner, token, epoch, pid, host, acquired_at, heartbeat_at, ttl_ms'

/**
 * A lease row, decoded.
 *
 * @internal
 */
export interface LeaseRow {
  /** The random token of the current lease; `''` once released or broken. */
  readonly token: string
  readonly holder: LockHolder
  /** The database's clock when the row was read (ms). */
  readonly now: number
}

/**
 * Decodes a row selected with {@link LEASE_COLUMNS} and `now`.
 *
 * @param row - the row
 * @returns the decoded lease
 * @internal
 */
export function leaseRowOf(row: SqlRow): LeaseRow {
  return {
    token: String(row['token']),
    now: sqlInteger(row['now'], 'now'),
    holder: Object.freeze({
      pid: sqlInteger(row['pid'], 'yoke_leases.pid'),
      host: String(row['host']),
      acquiredAt: sqlInteger(row['acquired_at'], 'yoke_leases.acquired_at'),
      owner: String(row['owner']),
      epoch: sqlInteger(row['epoch'], 'yoke_leases.epoch'),
      heartbeatAt: sqlInteger(row['heartbeat_at'], 'yoke_leases.heartbeat_at'),
      ttlMs: sqlInteger(row['ttl_ms'], 'yoke_leases.ttl_ms'),
    }),
  }
}

/**
 * How long ago the row's last heartbeat was, by the database's clock (never negative).
 *
 * @internal
 */
export function leaseAge(row: LeaseRow): number {
  return Math.max(0, row.now - (row.holder.heartbeatAt ?? row.holder.acquiredAt))
}

/**
 * Whether the row holds a live lease: not released, and its last heartbeat younger than its TTL.
 *
 * @internal
 */
export function isLiveLease(row: LeaseRow): boolean {
  return row.token !== '' && leaseAge(row) < (row.holder.ttlMs ?? 0)
}

/**
 * The row as `inspectLease` returns it, or `undefined` for a released one.
 *
 * @param sessionId - the session
 * @param row - the row, when there is one
 * @internal
 */
export function storedLeaseOf(sessionId: string, row: LeaseRow | undefined): StoredLease | undefined {
  if (row === undefined || row.token === '') return undefined
  return Object.freeze({ sessionId, holder: row.holder, ageMs: leaseAge(row), live: isLiveLease(row) })
}

/**
 * The holder in words, for messages: owner, epoch, pid, host and the last heartbeat's age.
 *
 * @internal
 */
export function describeHolder(row: LeaseRow): string {
  const holder = row.holder
  return `owner ${holder.owner}, epoch ${holder.epoch}, pid ${holder.pid} on ${holder.host}, last heartbeat ${leaseAge(row)} ms ago`
}
