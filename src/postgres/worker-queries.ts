/**
 * The statements of the worker: claiming runnable sessions with `FOR UPDATE SKIP LOCKED`, reading
 * a session's waiting messages, finishing and giving back a session, and the sweep.
 *
 * @module
 */
import type { SqlExecutor } from '../persistence/sql/sql-executor.js'
import { sqlInteger } from '../persistence/sql/sql-integer.js'
import { PG_NOW_MS, type WorkerTables } from './worker-tables.js'

/** One waiting inbox message, as the worker reads it. @internal */
export interface InboxRow {
  readonly id: string
  /** The JSON of `{ content, source }`. */
  readonly body: string
  readonly busy: string
  readonly create: boolean
}

/** The first key of Yoke's advisory locks ("yoke" in ASCII), as the migrations use it. */
const LOCK_CLASS = 0x796f6b65

/**
 * The worker's statements over one schema.
 *
 * @internal
 */
export class WorkerQueries {
  readonly #executor: SqlExecutor
  readonly #tables: WorkerTables
  readonly #claim: string
  readonly #unconsumed: string
  readonly #finish: string
  readonly #unclaim: string
  readonly #sweep: string
  readonly #fail: string

  /**
   * @param executor - the adapter's executor
   * @param tables - the worker's tables
   */
  constructor(executor: SqlExecutor, tables: WorkerTables) {
    this.#executor = executor
    this.#tables = tables
    const { runnable, inbox, leases } = tables
    const free = `(l.session IS NULL OR l.token = '' OR l.heartbeat_at + l.ttl_ms <= ${PG_NOW_MS})`
    // The claim marks the rows it takes, so a second worker polling at the same moment skips them
    // (SKIP LOCKED while this statement runs, `claimed_until` afterwards) instead of racing for
    // the lease. Sessions whose lease is live are driven already: not claimable.
    this.#claim =
      `UPDATE ${runnable} SET claimed_by = $1, claimed_until = ${PG_NOW_MS} + $2 WHERE session IN (` +
      `SELECT r.session FROM ${runnable} r LEFT JOIN ${leases} l ON l.session = r.session ` +
      `WHERE (r.claimed_until IS NULL OR r.claimed_until <= ${PG_NOW_MS}) AND ${free} AND NOT (r.session = ANY($3::text[])) ` +
      'ORDER BY r.since, r.session LIMIT $4 FOR UPDATE OF r SKIP LOCKED) RETURNING session'
    // The wake counter is read first: a message submitted after it moves the counter, so the
    // finish below cannot delete the row under a message this read missed.
    this.#unconsumed =
      `SELECT r.wake, i.id, i.body, i.busy, i.create_session FROM (SELECT $1::text AS session) s ` +
      `LEFT JOIN ${runnable} r ON r.session = s.session ` +
      `LEFT JOIN ${inbox} i ON i.session = s.session AND i.consumed_at IS NULL ORDER BY i.position`
    this.#finish =
      `DELETE FROM ${runnable} WHERE session = $1 AND wake = $2 AND NOT EXISTS ` +
      `(SELECT 1 FROM ${inbox} WHERE session = $1 AND consumed_at IS NULL) RETURNING session`
    this.#unclaim = `UPDATE ${runnable} SET claimed_by = NULL, claimed_until = NULL WHERE session = $1 AND claimed_by = $2`
    this.#sweep =
      `INSERT INTO ${runnable} (session, since) SELECT DISTINCT i.session, ${PG_NOW_MS} FROM ${inbox} i ` +
      `LEFT JOIN ${leases} l ON l.session = i.session WHERE i.consumed_at IS NULL AND ${free} ` +
      'ON CONFLICT (session) DO NOTHING RETURNING session'
    this.#fail = `UPDATE ${inbox} SET consumed_at = ${PG_NOW_MS}, failure = $3 WHERE session = $1 AND id = ANY($2::text[]) AND consumed_at IS NULL`
  }

  /**
   * Claims up to `limit` runnable sessions nobody drives.
   *
   * @param workerId - the claiming worker
   * @param claimMs - how long the claim keeps other workers off before the lease does
   * @param exclude - sessions this worker drives already
   * @param limit - at most this many
   * @returns the claimed session ids
   */
  async claim(workerId: string, claimMs: number, exclude: readonly string[], limit: number): Promise<string[]> {
    const rows = await this.#executor.query(this.#claim, [workerId, claimMs, [...exclude], limit])
    return rows.map((row) => String(row['session']))
  }

  /**
   * The session's wake counter (`undefined` without a runnable row) and its waiting messages in
   * submit order.
   *
   * @param sessionId - the session
   */
  async unconsumed(sessionId: string): Promise<{ readonly wake: number | undefined; readonly rows: InboxRow[] }> {
    const found = await this.#executor.query(this.#unconsumed, [sessionId])
    const wakeValue = found[0]?.['wake']
    const wake = wakeValue === null || wakeValue === undefined ? undefined : sqlInteger(wakeValue, 'yoke_runnable.wake')
    const rows: InboxRow[] = []
    for (const row of found) {
      if (row['id'] === null || row['id'] === undefined) continue
      rows.push({
        id: String(row['id']),
        body: String(row['body']),
        busy: String(row['busy']),
        create: row['create_session'] === true,
      })
    }
    return { wake, rows }
  }

  /**
   * Deletes the session's runnable row when nothing was submitted since `wake` was read and no
   * message waits.
   *
   * @param sessionId - the session
   * @param wake - the counter read with the messages (`undefined`: there is no row)
   * @returns whether the session has no work left (the row is gone)
   */
  async finish(sessionId: string, wake: number | undefined): Promise<boolean> {
    if (wake === undefined) {
      const left = await this.unconsumed(sessionId)
      return left.rows.length === 0
    }
    return (await this.#executor.query(this.#finish, [sessionId, wake])).length > 0
  }

  /**
   * Gives a claimed session back, for another worker to take at once (a drain, a lost lease).
   *
   * @param sessionId - the session
   * @param workerId - the worker that claimed it
   */
  async unclaim(sessionId: string, workerId: string): Promise<void> {
    await this.#executor.transaction(async (tx) => {
      await tx.query(this.#unclaim, [sessionId, workerId])
      await tx.query('SELECT pg_notify($1, $2)', [this.#tables.channel, sessionId])
    })
  }

  /**
   * Re-queues sessions with waiting messages whose lease is expired or absent, one row per
   * session whatever runs it; only one worker at a time sweeps (an advisory lock it skips when
   * taken).
   *
   * @returns the sessions it made runnable
   */
  async sweep(): Promise<string[]> {
    return this.#executor.transaction(async (tx) => {
      const lock = await tx.query('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS won', [
        LOCK_CLASS,
        `${this.#tables.schema}:sweep`,
      ])
      if (lock[0]?.['won'] !== true) return []
      const rows = await tx.query(this.#sweep)
      const sessions = rows.map((row) => String(row['session']))
      for (const sessionId of sessions) await tx.query('SELECT pg_notify($1, $2)', [this.#tables.channel, sessionId])
      return sessions
    })
  }

  /**
   * Marks messages that cannot be delivered (their session is gone, their body does not parse)
   * as done, with the reason, so they do not keep the session runnable.
   *
   * @param sessionId - the session
   * @param ids - the messages
   * @param reason - why
   */
  async fail(sessionId: string, ids: readonly string[], reason: string): Promise<void> {
    await this.#executor.query(this.#fail, [sessionId, [...ids], reason])
  }
}
