/**
 * The leases of one JSONL adapter instance, exclusive per id across processes: a lock file per
 * leased id (or, with `lock: false`, only this table), the token check before every write, and
 * release, which kills the lease and removes the lock while it still carries our token.
 *
 * @module
 */
import { hostname } from 'node:os'
import { ErrorCode } from '../../errors/codes.js'
import { LeaseLostError } from '../../errors/lease-lost-error.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import type { Lease } from '../persistence-adapter.js'
import { LeaseSignal } from '../lease-signal.js'
import type { JsonlFileSystem } from './jsonl-file-system.js'
import { lockTokenAt, readLockFile, removeLockFile, takeLockFile } from './jsonl-lock-file.js'
import { randomHex } from '../random-hex.js'

/** One lease of this instance. */
export interface LeaseRecord {
  /** The lease handed out. */
  readonly lease: Lease
  /** Aborts `lease.signal`. */
  readonly controller: LeaseSignal
  /** When it was acquired (epoch ms). */
  readonly acquiredAt: number
  /** `false` once released, lost or closed. */
  live: boolean
}

/** What a {@link JsonlLeases} table needs. */
export interface JsonlLeasesOptions {
  /** The file system. */
  readonly fileSystem: JsonlFileSystem
  /** Whether leases are lock files (`true`) or in this instance only. */
  readonly lock: boolean
  /** The clock of `acquiredAt`. */
  readonly now: () => number
  /** The lock file of an id. */
  readonly lockPathOf: (sessionId: string) => string
  /** Runs once when a lease of `sessionId` ends. */
  readonly onEnd: (sessionId: string) => void
}

function leaseLost(sessionId: string, detail: string): LeaseLostError {
  return new LeaseLostError({ code: ErrorCode.LEASE_LOST, sessionId, detail, epoch: 1 })
}

/**
 * The lease table of one adapter instance.
 *
 * @internal
 */
export class JsonlLeases {
  readonly #options: JsonlLeasesOptions
  readonly #records = new Map<string, LeaseRecord>()

  /** @param options - the file system, locking mode, clock, lock paths and end hook */
  constructor(options: JsonlLeasesOptions) {
    this.#options = options
  }

  /**
   * Takes the lease of `sessionId`, writing its lock file or taking over a stale one.
   *
   * @param sessionId - a storable id
   * @returns the live lease
   * @throws `SessionLockedError` when this instance or another holder has it
   */
  async acquire(sessionId: string): Promise<Lease> {
    const { fileSystem, lock, now, lockPathOf } = this.#options
    const held = this.#records.get(sessionId)
    if (held?.live === true) {
      throw new SessionLockedError({
        code: ErrorCode.SESSION_LOCKED,
        sessionId,
        detail: `this adapter instance already holds its lease (pid ${process.pid} on ${hostname()})`,
        holder: { pid: process.pid, host: hostname(), acquiredAt: held.acquiredAt },
        location: lockPathOf(sessionId),
      })
    }
    const acquiredAt = now()
    const taken = lock
      ? await takeLockFile({ fileSystem, now: () => acquiredAt }, sessionId, lockPathOf(sessionId))
      : { token: randomHex(16) }
    const controller = new LeaseSignal()
    let record: LeaseRecord | undefined
    const lease: Lease = Object.freeze({
      sessionId,
      token: taken.token,
      epoch: 1,
      get signal(): AbortSignal {
        return controller.signal
      },
      ...(taken.tookOver === undefined ? {} : { tookOver: Object.freeze(taken.tookOver) }),
      release: async (): Promise<void> => {
        if (record !== undefined) await this.release(record, 'released')
      },
    })
    record = { lease, controller, acquiredAt, live: true }
    this.#records.set(sessionId, record)
    return lease
  }

  /**
   * The live lease of `sessionId` (and exactly `lease`, when given).
   *
   * @throws `LeaseLostError` when this instance holds none
   */
  require(sessionId: string, lease: Lease | undefined): LeaseRecord {
    const record = this.#records.get(sessionId)
    if (record === undefined || !record.live || (lease !== undefined && record.lease !== lease)) {
      throw new LeaseLostError({
        code: ErrorCode.LEASE_LOST,
        sessionId,
        detail: 'this adapter instance holds no live lease for it; nothing was written',
        epoch: lease?.epoch ?? 1,
      })
    }
    return record
  }

  /** The live lease record of `sessionId`, if this instance holds one. */
  current(sessionId: string): LeaseRecord | undefined {
    const record = this.#records.get(sessionId)
    return record?.live === true ? record : undefined
  }

  /**
   * Before every append and repair, the lock file must still carry the lease's token; otherwise the
   * lease dies and its signal aborts with the error thrown.
   *
   * @throws `LeaseLostError`
   */
  async checkToken(record: LeaseRecord): Promise<void> {
    this.confirmToken(record, await this.readToken(record))
  }

  /**
   * The first half of {@link checkToken}, to run beside other reads: the token the lock file
   * carries now (`undefined` when it is missing or unreadable), or `null` without locking.
   *
   * @throws `LeaseLostError` when the lease already ended; the file system's read errors
   */
  async readToken(record: LeaseRecord): Promise<string | null | undefined> {
    const sessionId = record.lease.sessionId
    if (!record.live) throw leaseLost(sessionId, 'the lease ended; nothing was written')
    if (!this.#options.lock) return null
    return lockTokenAt(this.#options.fileSystem, this.#options.lockPathOf(sessionId))
  }

  /**
   * The second half of {@link checkToken}: the verdict on what {@link readToken} read.
   *
   * @throws `LeaseLostError`
   */
  confirmToken(record: LeaseRecord, token: string | null | undefined): void {
    const sessionId = record.lease.sessionId
    if (!record.live) throw leaseLost(sessionId, 'the lease ended; nothing was written')
    if (token === null || token === record.lease.token) return
    const error = leaseLost(
      sessionId,
      `the lock ${this.#options.lockPathOf(sessionId)} is missing or names another holder; nothing was written`,
    )
    this.#end(record, () => error)
    throw error
  }

  /**
   * Rejects when another holder has the lock of `sessionId` (for writes without a lease).
   *
   * @throws `SessionLockedError`
   */
  async assertUnlocked(sessionId: string): Promise<void> {
    if (!this.#options.lock) return
    const path = this.#options.lockPathOf(sessionId)
    const holder = await readLockFile(this.#options.fileSystem, path)
    if (holder === null) return
    throw new SessionLockedError({
      code: ErrorCode.SESSION_LOCKED,
      sessionId,
      detail: `another writer holds the lock ${path}`,
      ...(holder === undefined
        ? {}
        : { holder: { pid: holder.pid, host: holder.host, acquiredAt: holder.acquiredAt } }),
      location: path,
    })
  }

  /** Kills the lease and removes its lock file while it still carries our token; idempotent. */
  async release(record: LeaseRecord, how: 'released' | 'closed'): Promise<void> {
    if (!record.live) return
    const sessionId = record.lease.sessionId
    this.#end(record, () => leaseLost(sessionId, `the lease was ${how}`))
    if (this.#options.lock)
      await removeLockFile(this.#options.fileSystem, this.#options.lockPathOf(sessionId), record.lease.token)
  }

  /**
   * Releases every lease (adapter close).
   *
   * @returns the errors of lock files that could not be removed
   */
  async releaseAll(): Promise<unknown[]> {
    const errors: unknown[] = []
    for (const record of [...this.#records.values()]) {
      try {
        await this.release(record, 'closed')
      } catch (error) {
        errors.push(error)
      }
    }
    return errors
  }

  #end(record: LeaseRecord, reason: () => LeaseLostError): void {
    if (!record.live) return
    record.live = false
    const sessionId = record.lease.sessionId
    if (this.#records.get(sessionId) === record) this.#records.delete(sessionId)
    this.#options.onEnd(sessionId)
    record.controller.abort(reason)
  }
}
