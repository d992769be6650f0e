/**
 * The `plantLease` hook of the SQL conformance targets: a `yoke_leases` row as an earlier process
 * would have left it, written with the test's own connection.
 *
 * @module
 */
import type { LockHolder } from '../../src/errors/lock-holder.js'
import { randomHex } from '../../src/persistence/random-hex.js'

/**
 * The lease row's values for a planted holder: everything as given, except that its times keep
 * their age on the database's clock (by which the adapter judges expiry) rather than this
 * process's clock.
 *
 * @param sessionId - the session
 * @param holder - the holder to record (owner, epoch and ttlMs are required)
 * @returns the parameters of a {@link plantStatement}
 */
export function plantedRow(sessionId: string, holder: LockHolder): readonly (string | number)[] {
  const { owner, epoch, ttlMs } = holder
  if (owner === undefined || epoch === undefined || ttlMs === undefined) {
    throw new Error(`a planted lease row needs owner, epoch and ttlMs: ${JSON.stringify(holder)}`)
  }
  const now = Date.now()
  return [
    sessionId,
    owner,
    randomHex(16),
    epoch,
    holder.pid,
    holder.host,
    now - holder.acquiredAt,
    now - (holder.heartbeatAt ?? holder.acquiredAt),
    ttlMs,
  ]
}

/**
 * Inserts or replaces a lease row with the parameters of {@link plantedRow}.
 *
 * @param leases - the lease table, quoted as needed
 * @param placeholders - the statement's nine placeholders
 * @param now - the database clock in ms, as SQL
 * @returns the statement
 */
export function plantStatement(leases: string, placeholders: readonly string[], now: string): string {
  const [session, owner, token, epoch, pid, host, acquiredAge, heartbeatAge, ttlMs] = placeholders
  return `INSERT INTO ${leases} (session, owner, token, epoch, pid, host, acquired_at, heartbeat_at, ttl_ms) VALUES (${session}, ${owner}, ${token}, ${epoch}, ${pid}, ${host}, ${now} - ${acquiredAge}, ${now} - ${heartbeatAge}, ${ttlMs}) ON CONFLICT (session) DO UPDATE SET owner = excluded.owner, token = excluded.token, epoch = excluded.epoch, pid = excluded.pid, host = excluded.host, acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at, ttl_ms = excluded.ttl_ms`
}
