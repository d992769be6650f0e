/**
 * The leases of the SQL store: rows of `yoke_leases` decided on the database's clock, taken and
 * taken over in one transaction, renewed by a heartbeat, and checked in the same transaction as
 * every write (the fence).
 *
 * @module
 */
import { hostname } from 'node:os'
import { performance } from 'node:perf_hooks'
import { ErrorCode } from '../../errors/codes.js'
import { LeaseLostError } from '../../errors/lease-lost-error.js'
import type { LockHolder } from '../../errors/lock-holder.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import type { LeaseTiming } from '../lease-options.js'
import { LeaseSignal } from '../lease-signal.js'
import type { Lease, StoredLease } from '../persistence-adapter.js'
import { randomHex } from '../random-hex.js'
import type { SqlExecutor, SqlQuery } from './sql-executor.js'
import { sqlInteger } from './sql-integer.js'
import {
  describeHolder,
  isLiveLease,
  LEASE_COLUMNS,
  type LeaseRow,
  leaseRowOf,
  storedLeaseOf,
} from './sql-lease-holder.js'
import type { SqlStatements } from './sql-statements.js'

/**
 * One lease of this instance.
 *
 * @internal
 */
export interface SqlLeaseRecord {
  readonly lease: Lease
  readonly sessionId: string
  readonly token: string
  readonly epoch: number
  readonly controller: LeaseSignal
  timer: ReturnType<typeof setInterval> | undefined
  /** `performance.now()` of the last heartbeat the database confirmed (or of the acquire). */
  lastBeat: number
  live: boolean
}

/**
 * The error of a write under no live lease of this instance (none taken, another instance's, a
 * copy of one, or one that ended).
 *
 * @param sessionId - the session written
 * @param lease - the lease the write came with, if any
 * @internal
 */
export function noLiveLease(sessionId: string, lease: Lease | undefined): LeaseLostError {
  return new LeaseLostError({
    code: ErrorCode.LEASE_LOST,
    sessionId,
    detail: 'this adapter instance holds no live lease for it; nothing was written',
    ...(lease?.epoch === undefined ? {} : { epoch: lease.epoch }),
  })
}

/** What {@link SqlLeases} needs. */
export interface SqlLeasesOptions {
  readonly executor: SqlExecutor
  readonly statements: SqlStatements
  readonly timing: LeaseTiming
  /** This instance's random owner id. */
  readonly owner: string
  /** Where a session's lease is, for errors. */
  readonly locationOf: (sessionId: string) => string
  /** Runs once when a lease of this instance ends (released, lost, closed). */
  readonly onEnd: (sessionId: string) => void
}

type AcquireOutcome =
  | { readonly won: true; readonly epoch: number; readonly holder: LockHolder; readonly tookOver?: LockHolder }
  | { readonly won: false; readonly row?: LeaseRow }

/**
 * The leases of one SQL store instance.
 *
 * @internal
 */
export class SqlLeases {
  readonly #options: SqlLeasesOptions
  readonly #byToken = new Map<string, SqlLeaseRecord>()
  readonly #bySession = new Map<string, SqlLeaseRecord>()
  readonly #select: string
  readonly #insert: string
  readonly #takeOver: string
  readonly #renew: string
  readonly #fence: string
  readonly #end: string

  constructor(options: SqlLeasesOptions) {
    this.#options = options
    const { statements } = options
    const { leases } = statements.tables
    const now = statements.dialect.nowMs
    this.#select = statements.bind(
      `SELECT ${LEASE_COLUMNS}, ${now} AS now FROM ${leases} WHERE session = ? ${statements.dialect.forUpdate}`,
    )
    this.#insert = statements.bind(
      `INSERT INTO ${leases} (session, ${LEASE_COLUMNS}) VALUES (?, ?, ?, 1, ?, ?, ${now}, ${now}, ?) ON CONFLICT (session) DO NOTHING RETURNING epoch, acquired_at`,
    )
    this.#takeOver = statements.bind(
      `UPDATE ${leases} SET owner = ?, token = ?, epoch = epoch + 1, pid = ?, host = ?, acquired_at = ${now}, heartbeat_at = ${now}, ttl_ms = ? WHERE session = ? AND token = ? RETURNING epoch, acquired_at`,
    )
    // A heartbeat renews only a live lease: one whose TTL passed is gone, even if nobody took it.
    this.#renew = statements.bind(
      `UPDATE ${leases} SET heartbeat_at = ${now} WHERE session = ? AND token = ? AND heartbeat_at + ttl_ms > ${now} RETURNING heartbeat_at`,
    )
    // Locks the row until the write commits, so no takeover slips between the check and the write.
    this.#fence = statements.bind(
      `UPDATE ${leases} SET heartbeat_at = heartbeat_at WHERE session = ? AND token = ? AND epoch = ? AND heartbeat_at + ttl_ms > ${now} RETURNING epoch`,
    )
    this.#end = statements.bind(`UPDATE ${leases} SET token = '', heartbeat_at = 0 WHERE session = ? AND token = ?`)
  }

  /** Ids this instance holds a lease of. */
  get sessions(): IterableIterator<string> {
    return this.#bySession.keys()
  }

  /** This instance's live lease of `sessionId`, if any. */
  current(sessionId: string): SqlLeaseRecord | undefined {
    return this.#bySession.get(sessionId)
  }

  /**
   * Takes the lease of `sessionId`: a new row at epoch 1, or an expired or released row taken over
   * at its epoch + 1.
   *
   * @throws `SessionLockedError` naming the holder, when a live lease is held or another instance won a race
   */
  async acquire(sessionId: string): Promise<Lease> {
    const { executor, timing, owner } = this.#options
    const token = randomHex(16)
    const pid = process.pid
    const host = hostname()
    const outcome = await executor.transaction(async (tx): Promise<AcquireOutcome> => {
      const row = await this.#read(tx, sessionId)
      if (row === undefined) {
        const inserted = await tx.query(this.#insert, [sessionId, owner, token, pid, host, timing.ttlMs])
        if (inserted.length === 0) return { won: false }
        return { won: true, ...this.#won(inserted[0]!, pid, host) }
      }
      if (isLiveLease(row)) return { won: false, row }
      const taken = await tx.query(this.#takeOver, [owner, token, pid, host, timing.ttlMs, sessionId, row.token])
      if (taken.length === 0) return { won: false }
      const result = this.#won(taken[0]!, pid, host)
      // A released lease was given back; only an expired one was taken from someone.
      return { won: true, ...result, ...(row.token === '' ? {} : { tookOver: row.holder }) }
    })
    if (!outcome.won) {
      // Lost a race: name whoever holds it now, not the row read before the race.
      const row = outcome.row ?? (await this.#read(executor, sessionId))
      throw this.#locked(sessionId, row)
    }
    return this.#install(sessionId, token, outcome.epoch, outcome.tookOver)
  }

  #won(row: Record<string, unknown>, pid: number, host: string): { epoch: number; holder: LockHolder } {
    const epoch = sqlInteger(row['epoch'], 'yoke_leases.epoch')
    const acquiredAt = sqlInteger(row['acquired_at'], 'yoke_leases.acquired_at')
    const { owner, timing } = this.#options
    return {
      epoch,
      holder: { pid, host, acquiredAt, owner, epoch, heartbeatAt: acquiredAt, ttlMs: timing.ttlMs },
    }
  }

  #install(sessionId: string, token: string, epoch: number, tookOver: LockHolder | undefined): Lease {
    const controller = new LeaseSignal()
    let record: SqlLeaseRecord | undefined
    const lease: Lease = Object.freeze({
      sessionId,
      token,
      owner: this.#options.owner,
      epoch,
      get signal(): AbortSignal {
        return controller.signal
      },
      ...(tookOver === undefined ? {} : { tookOver }),
      release: async (): Promise<void> => {
        if (record !== undefined) await this.release(record)
      },
    })
    const live: SqlLeaseRecord = {
      lease,
      sessionId,
      token,
      epoch,
      controller,
      timer: undefined,
      lastBeat: performance.now(),
      live: true,
    }
    record = live
    const timer = setInterval(() => void this.#heartbeat(live), this.#options.timing.heartbeatMs)
    // A heartbeat must not keep the process alive.
    timer.unref?.()
    live.timer = timer
    this.#byToken.set(token, live)
    this.#bySession.set(sessionId, live)
    return lease
  }

  #beating = new WeakSet<SqlLeaseRecord>()

  async #heartbeat(record: SqlLeaseRecord): Promise<void> {
    if (!record.live || this.#beating.has(record)) return
    this.#beating.add(record)
    try {
      const rows = await this.#options.executor.query(this.#renew, [record.sessionId, record.token])
      if (!record.live) return
      if (rows.length > 0) {
        record.lastBeat = performance.now()
        return
      }
      const row = await this.#read(this.#options.executor, record.sessionId).catch(() => undefined)
      this.end(record, this.#lost(record, row, 'its heartbeat found it expired or taken over'))
    } catch {
      // The database did not answer: the lease stays until its TTL passes, when writes refuse it.
    } finally {
      this.#beating.delete(record)
    }
  }

  /**
   * The live lease record of this instance for `sessionId`, checking `lease` when given: the
   * lease object itself (a copy carrying its token is not a lease of this instance), still live,
   * and renewed within its TTL by this instance's own clock.
   *
   * @throws `LeaseLostError`, naming who holds the lease now when the database says so in time
   */
  async require(sessionId: string, lease: Lease | undefined): Promise<SqlLeaseRecord> {
    const record = lease === undefined ? this.#bySession.get(sessionId) : this.#byToken.get(lease.token)
    if (
      record === undefined ||
      !record.live ||
      record.sessionId !== sessionId ||
      (lease !== undefined && record.lease !== lease)
    ) {
      throw noLiveLease(sessionId, lease)
    }
    const ttlMs = this.#options.timing.ttlMs
    if (performance.now() - record.lastBeat >= ttlMs) {
      // Frozen or cut off past its TTL: another instance may hold it now, so this one writes nothing.
      // Who holds it is read first (briefly: the database may be what is gone), so the error and
      // the lease's signal name the successor, as when the heartbeat finds the lease taken.
      const row = await this.#readWithin(sessionId, Math.min(this.#options.timing.heartbeatMs, 1_000))
      const error = this.#lost(record, row, `its last heartbeat is over ${ttlMs} ms old (the lease expired)`)
      this.end(record, error)
      throw error
    }
    return record
  }

  /**
   * Checks, inside the write's transaction, that the lease row still carries this lease's token
   * and epoch and is live on the database's clock; locks the row until the write commits.
   *
   * @throws `LeaseLostError` naming the current holder (the lease is ended here)
   */
  async fence(tx: SqlQuery, record: SqlLeaseRecord): Promise<void> {
    const rows = await tx.query(this.#fence, [record.sessionId, record.token, record.epoch])
    if (rows.length > 0) return
    const row = await this.#read(tx, record.sessionId)
    const error = this.#lost(record, row, 'it expired or was taken over')
    this.end(record, error)
    throw error
  }

  /** Gives a lease back (idempotent): the row stays, with token `''`, so the epoch keeps growing. */
  async release(record: SqlLeaseRecord): Promise<void> {
    if (!record.live) return
    this.end(record, this.#lost(record, undefined, 'it was released'))
    await this.#options.executor.query(this.#end, [record.sessionId, record.token])
  }

  /** Releases every lease of this instance. @returns the failures */
  async releaseAll(): Promise<unknown[]> {
    const errors: unknown[] = []
    for (const record of [...this.#byToken.values()]) {
      this.end(record, this.#lost(record, undefined, 'its adapter was closed'))
      await this.#options.executor.query(this.#end, [record.sessionId, record.token]).catch((error: unknown) => {
        errors.push(error)
      })
    }
    return errors
  }

  /** Ends a lease of this instance here (no statement): later writes under it fail with `error`. */
  end(record: SqlLeaseRecord, error: LeaseLostError): void {
    if (!record.live) return
    record.live = false
    if (record.timer !== undefined) clearInterval(record.timer)
    record.timer = undefined
    this.#byToken.delete(record.token)
    if (this.#bySession.get(record.sessionId) === record) this.#bySession.delete(record.sessionId)
    record.controller.abort(() => error)
    this.#options.onEnd(record.sessionId)
  }

  /** The stored lease of `sessionId`, read without taking it. */
  async inspect(sessionId: string): Promise<StoredLease | undefined> {
    return storedLeaseOf(sessionId, await this.#read(this.#options.executor, sessionId))
  }

  /** Ends the stored lease of `sessionId` whoever holds it. @returns what it ended */
  async break(sessionId: string): Promise<StoredLease | undefined> {
    const ended = await this.#options.executor.transaction(async (tx) => {
      const row = await this.#read(tx, sessionId)
      const stored = storedLeaseOf(sessionId, row)
      if (row === undefined || stored === undefined) return undefined
      await tx.query(this.#end, [sessionId, row.token])
      return { row, stored }
    })
    if (ended === undefined) return undefined
    const mine = this.#byToken.get(ended.row.token)
    if (mine !== undefined) this.end(mine, this.#lost(mine, undefined, 'it was broken (yoke unlock --force)'))
    return ended.stored
  }

  /** The lease row of `sessionId`, or `undefined` when there is none or no answer within `ms`. */
  async #readWithin(sessionId: string, ms: number): Promise<LeaseRow | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms)
    })
    try {
      return await Promise.race([this.#read(this.#options.executor, sessionId).catch(() => undefined), late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** The lease row of `sessionId` (locked until commit inside a transaction), or `undefined`. */
  async #read(query: SqlQuery, sessionId: string): Promise<LeaseRow | undefined> {
    const rows = await query.query(this.#select, [sessionId])
    return rows.length === 0 ? undefined : leaseRowOf(rows[0]!)
  }

  #locked(sessionId: string, row: LeaseRow | undefined): SessionLockedError {
    const holder = row === undefined ? '' : ` (${describeHolder(row)})`
    const mine = row !== undefined && row.holder.owner === this.#options.owner
    return new SessionLockedError({
      code: ErrorCode.SESSION_LOCKED,
      sessionId,
      detail: `${mine ? 'this' : 'another'} adapter instance holds its lease${holder}`,
      ...(row === undefined ? {} : { holder: row.holder }),
      location: this.#options.locationOf(sessionId),
    })
  }

  #lost(record: SqlLeaseRecord, row: LeaseRow | undefined, how: string): LeaseLostError {
    const successor = row !== undefined && row.token !== '' && row.token !== record.token ? row : undefined
    return new LeaseLostError({
      code: ErrorCode.LEASE_LOST,
      sessionId: record.sessionId,
      detail: `the lease (epoch ${record.epoch}) is gone: ${how}${successor === undefined ? '' : `; it is held by ${describeHolder(successor)}`}; nothing was written`,
      epoch: record.epoch,
      ...(successor === undefined ? {} : { holder: successor.holder }),
    })
  }
}
