/**
 * The leases of one JSONL adapter instance, exclusive per id across processes: a lock file per
 * leased id (or, with `lock: false`, only this table) renewed by a heartbeat, the lock check
 * before every write, and release, which kills the lease and removes the lock while it still
 * carries our token.
 *
 * @module
 */
import type { BigIntStats } from 'node:fs'
import { hostname } from 'node:os'
import { ErrorCode } from '../../errors/codes.js'
import { LeaseLostError } from '../../errors/lease-lost-error.js'
import type { LockHolder } from '../../errors/lock-holder.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import type { LeaseTiming } from '../lease-options.js'
import { LeaseSignal } from '../lease-signal.js'
import type { Lease, StoredLease } from '../persistence-adapter.js'
import { randomHex } from '../random-hex.js'
import type { JsonlFileSystem } from './jsonl-file-system.js'
import { errorCodeOf } from './jsonl-file-operations.js'
import {
  breakLockFile,
  describeHolder,
  holderOf,
  isDeadHere,
  isEmptiedLock,
  isExpired,
  isPinnedFile,
  type LockFileContext,
  type LockRecord,
  type PinnedLock,
  pinLockFile,
  readLockFile,
  removeLockFile,
  renewLockFile,
  takeLockFile,
} from './jsonl-lock-file.js'

/** One lease of this instance. */
export interface LeaseRecord {
  /** The lease handed out. */
  readonly lease: Lease
  /** Aborts `lease.signal`. */
  readonly controller: LeaseSignal
  /** When it was acquired (epoch ms). */
  readonly acquiredAt: number
  /** What our lock file says (its `heartbeatAt` moves with every heartbeat); `undefined` without locking. */
  lock: LockRecord | undefined
  /** The heartbeat timer. */
  timer: ReturnType<typeof setInterval> | undefined
  /** The heartbeat running now, if any. */
  beating: Promise<void> | undefined
  /** `false` once released, lost or closed. */
  live: boolean
  /**
   * The lock file as the last check read it, kept open: a check whose `stat` still names it uses
   * what it said instead of reading it again.
   */
  pin: PinnedLock | undefined
  /** The pin's close, once the lease ended. */
  unpinned: Promise<void> | undefined
}

/** What a {@link JsonlLeases} table needs. */
export interface JsonlLeasesOptions {
  /** The file system. */
  readonly fileSystem: JsonlFileSystem
  /** Whether leases are lock files (`true`) or in this instance only. */
  readonly lock: boolean
  /** The clock of `acquiredAt`, heartbeats and expiry. */
  readonly now: () => number
  /** The lock file of an id. */
  readonly lockPathOf: (sessionId: string) => string
  /** Runs once when a lease of `sessionId` ends. */
  readonly onEnd: (sessionId: string) => void
  /** This instance's owner id. */
  readonly owner: string
  /** The lease TTL and heartbeat interval. */
  readonly timing: LeaseTiming
}

function leaseLost(sessionId: string, epoch: number, detail: string, holder?: LockHolder): LeaseLostError {
  return new LeaseLostError({
    code: ErrorCode.LEASE_LOST,
    sessionId,
    detail,
    epoch,
    ...(holder === undefined ? {} : { holder }),
  })
}

/**
 * The lease table of one adapter instance.
 *
 * @internal
 */
export class JsonlLeases {
  readonly #options: JsonlLeasesOptions
  readonly #context: LockFileContext
  readonly #records = new Map<string, LeaseRecord>()

  /** @param options - the file system, locking mode, clock, lock paths, end hook, owner and timing */
  constructor(options: JsonlLeasesOptions) {
    this.#options = options
    this.#context = {
      fileSystem: options.fileSystem,
      now: options.now,
      owner: options.owner,
      ttlMs: options.timing.ttlMs,
    }
  }

  /**
   * Takes the lease of `sessionId`, writing its lock file or taking over an expired one.
   *
   * @param sessionId - a storable id
   * @returns the live lease
   * @throws `SessionLockedError` when this instance or another live holder has it
   */
  async acquire(sessionId: string): Promise<Lease> {
    const { lock, now, lockPathOf, owner } = this.#options
    const held = this.#records.get(sessionId)
    if (held?.live === true) {
      const holder = this.#holderOf(held)
      throw new SessionLockedError({
        code: ErrorCode.SESSION_LOCKED,
        sessionId,
        detail: `this adapter instance already holds its lease (${describeHolder(holder)})`,
        holder,
        location: lockPathOf(sessionId),
      })
    }
    const acquiredAt = now()
    const taken = lock ? await takeLockFile(this.#context, sessionId, lockPathOf(sessionId)) : undefined
    const controller = new LeaseSignal()
    let record: LeaseRecord | undefined
    const lease: Lease = Object.freeze({
      sessionId,
      token: taken?.lock.token ?? randomHex(16),
      owner,
      epoch: taken?.lock.epoch ?? 1,
      get signal(): AbortSignal {
        return controller.signal
      },
      ...(taken?.tookOver === undefined ? {} : { tookOver: Object.freeze(taken.tookOver) }),
      release: async (): Promise<void> => {
        if (record !== undefined) await this.release(record, 'released')
      },
    })
    record = {
      lease,
      controller,
      acquiredAt: taken?.lock.acquiredAt ?? acquiredAt,
      lock: taken?.lock,
      timer: undefined,
      beating: undefined,
      live: true,
      pin: undefined,
      unpinned: undefined,
    }
    this.#records.set(sessionId, record)
    if (taken !== undefined) this.#startHeartbeat(record)
    return lease
  }

  /** Who holds `record`: its lock's holder, or this process without locking. */
  #holderOf(record: LeaseRecord): LockHolder {
    if (record.lock !== undefined) return holderOf(record.lock)
    const { owner, timing } = this.#options
    return {
      pid: process.pid,
      host: hostname(),
      acquiredAt: record.acquiredAt,
      owner,
      epoch: record.lease.epoch,
      ttlMs: timing.ttlMs,
    }
  }

  /** The stored lease a lock describes at `now`; a lock of this host's dead process is not live. */
  #storedLease(sessionId: string, lock: LockRecord): StoredLease {
    const now = this.#options.now()
    const ttlMs = lock.ttlMs ?? this.#options.timing.ttlMs
    return {
      sessionId,
      // A lock of an older version names no TTL: ours is the one it is judged by.
      holder: { ...holderOf(lock), ttlMs },
      ageMs: Math.max(0, now - (lock.heartbeatAt ?? lock.acquiredAt)),
      live: !isExpired(lock, now, ttlMs) && !isDeadHere(lock),
    }
  }

  /**
   * The lease of `sessionId` as stored, read without taking it: its lock file, or without locking
   * this instance's own lease (heartbeats are then not tracked: its age is 0).
   *
   * @returns the lease, or `undefined` when there is none (no lock, or a broken one)
   * @throws `SessionLockedError` when the lock file is unreadable (only breaking it removes it)
   */
  async inspect(sessionId: string): Promise<StoredLease | undefined> {
    const { fileSystem, lock, lockPathOf } = this.#options
    if (!lock) {
      const record = this.current(sessionId)
      return record === undefined ? undefined : { sessionId, holder: this.#holderOf(record), ageMs: 0, live: true }
    }
    const path = lockPathOf(sessionId)
    const current = await readLockFile(fileSystem, path)
    if (current === null || current?.brokenAt !== undefined) return undefined
    if (current === undefined) {
      throw new SessionLockedError({
        code: ErrorCode.SESSION_LOCKED,
        sessionId,
        detail: `the lock ${path} is held, but its content is unreadable; only breaking the lease (\`yoke unlock --force\`) removes it`,
        location: path,
      })
    }
    return this.#storedLease(sessionId, current)
  }

  /**
   * Ends the lease of `sessionId` whoever holds it (see {@link breakLockFile}); a lease of this
   * instance ends at once, another holder's at its next write or heartbeat.
   *
   * @returns the lease that was ended, or `undefined` when there was none (or its lock was unreadable)
   * @throws `SessionLockedError` when other takers keep the lock busy
   */
  async break(sessionId: string): Promise<StoredLease | undefined> {
    const { lock, lockPathOf } = this.#options
    const own = this.current(sessionId)
    const broken = (): LeaseLostError =>
      leaseLost(sessionId, own?.lease.epoch ?? 1, 'the lease was broken (`breakLease`, `yoke unlock --force`)')
    if (!lock) {
      if (own === undefined) return undefined
      const ended: StoredLease = { sessionId, holder: this.#holderOf(own), ageMs: 0, live: true }
      this.#end(own, broken)
      return ended
    }
    const outcome = await breakLockFile(this.#context, sessionId, lockPathOf(sessionId))
    if (own !== undefined) this.#end(own, broken)
    return outcome.kind === 'broken' ? this.#storedLease(sessionId, outcome.lock) : undefined
  }

  #startHeartbeat(record: LeaseRecord): void {
    const timer = setInterval(() => {
      if (record.beating !== undefined || !record.live) return
      record.beating = this.#beat(record).finally(() => {
        record.beating = undefined
      })
    }, this.#options.timing.heartbeatMs)
    // A heartbeat must not keep the process alive: `close()` (or the exit) ends the lease anyway.
    timer.unref?.()
    record.timer = timer
  }

  async #beat(record: LeaseRecord): Promise<void> {
    const lock = record.lock
    if (lock === undefined) return
    const sessionId = record.lease.sessionId
    let outcome: Awaited<ReturnType<typeof renewLockFile>>
    try {
      outcome = await renewLockFile(this.#context, this.#options.lockPathOf(sessionId), lock)
    } catch {
      // A failed heartbeat is retried at the next tick; a write checks the expiry itself.
      return
    }
    if (outcome.kind === 'renewed' && outcome.pin !== undefined) this.#repin(record, outcome.pin)
    if (!record.live) return
    if (outcome.kind === 'renewed') record.lock = outcome.lock
    else if (outcome.kind === 'lost') {
      const current = outcome.current
      const error = this.#lostTo(record, current)
      this.#end(record, () => error)
    }
  }

  #lostTo(record: LeaseRecord, current: LockRecord | null | undefined): LeaseLostError {
    const { sessionId, epoch } = record.lease
    const path = this.#options.lockPathOf(sessionId)
    if (current === null || current === undefined) {
      return leaseLost(
        sessionId,
        epoch,
        `the lock ${path} is ${current === null ? 'missing' : 'unreadable'}; nothing was written`,
      )
    }
    if (isEmptiedLock(current)) return leaseLost(sessionId, epoch, `the lock ${path} is empty; nothing was written`)
    if (current.brokenAt !== undefined) {
      return leaseLost(
        sessionId,
        epoch,
        `the lease was broken by ${describeHolder(current)} (\`yoke unlock --force\`); nothing was written`,
      )
    }
    return leaseLost(
      sessionId,
      epoch,
      `the lock ${path} was taken over by ${describeHolder(current)}; nothing was written`,
      holderOf(current),
    )
  }

  /**
   * The live lease of `sessionId` (and exactly `lease`, when given).
   *
   * @throws `LeaseLostError` when this instance holds none
   */
  require(sessionId: string, lease: Lease | undefined): LeaseRecord {
    const record = this.#records.get(sessionId)
    if (record === undefined || !record.live || (lease !== undefined && record.lease !== lease)) {
      throw leaseLost(
        sessionId,
        lease?.epoch ?? 1,
        'this adapter instance holds no live lease for it; nothing was written',
      )
    }
    return record
  }

  /** The live lease record of `sessionId`, if this instance holds one. */
  current(sessionId: string): LeaseRecord | undefined {
    const record = this.#records.get(sessionId)
    return record?.live === true ? record : undefined
  }

  /**
   * Before every append and repair, the lock file must still carry the lease's token and epoch,
   * and its last heartbeat must be younger than the TTL; otherwise the lease dies and its signal
   * aborts with the error thrown.
   *
   * @throws `LeaseLostError`
   */
  async checkToken(record: LeaseRecord): Promise<void> {
    this.confirmToken(record, await this.readToken(record))
  }

  /**
   * The first half of {@link checkToken}, to run beside other reads: the lock file as it is now
   * (`null` when missing, `undefined` when unreadable), or `false` without locking.
   *
   * A `stat` of the lock path, and a read only when it names another file than the one the last
   * check read (and still holds open): every change of a lock (a heartbeat, a takeover, a break)
   * puts a new file there, so an unchanged file says what it said then.
   *
   * @throws `LeaseLostError` when the lease already ended; the file system's read errors
   */
  async readToken(record: LeaseRecord): Promise<LockRecord | null | undefined | false> {
    const sessionId = record.lease.sessionId
    if (!record.live) throw leaseLost(sessionId, record.lease.epoch, 'the lease ended; nothing was written')
    if (!this.#options.lock) return false
    const { fileSystem, lockPathOf } = this.#options
    const path = lockPathOf(sessionId)
    let stats: BigIntStats
    try {
      stats = await fileSystem.stat(path)
    } catch (error) {
      if (errorCodeOf(error) === 'ENOENT') return null
      throw error
    }
    const pinned = record.pin
    if (pinned !== undefined && isPinnedFile(pinned, stats)) return pinned.lock
    const pin = await pinLockFile(fileSystem, path)
    if (pin === null) return null
    this.#repin(record, pin)
    return pin.lock
  }

  /** Makes `pin` the lock file the next check compares with (closes it at once when the lease ended). */
  #repin(record: LeaseRecord, pin: PinnedLock): void {
    if (!record.live) {
      void this.#closePin(pin)
      return
    }
    const previous = record.pin
    record.pin = pin
    if (previous !== undefined) void this.#closePin(previous)
  }

  #closePin(pin: PinnedLock): Promise<void> {
    return this.#options.fileSystem.close(pin.handle).catch(() => undefined)
  }

  /**
   * The second half of {@link checkToken}: the verdict on what {@link readToken} read. Run it
   * right before the write, in the same serialized step: the only window left is a pause of this
   * process between this check and the write's system call that outlasts the rest of the TTL.
   *
   * @throws `LeaseLostError`
   */
  confirmToken(record: LeaseRecord, lock: LockRecord | null | undefined | false): void {
    const { sessionId, epoch, token } = record.lease
    if (!record.live) throw leaseLost(sessionId, epoch, 'the lease ended; nothing was written')
    if (lock === false) return
    if (lock === null || lock === undefined || lock.token !== token || (lock.epoch ?? 1) !== epoch) {
      const error = this.#lostTo(record, lock)
      this.#end(record, () => error)
      throw error
    }
    const now = this.#options.now()
    if (isExpired(lock, now, this.#options.timing.ttlMs)) {
      // Nobody took it over yet, but anyone may at any moment: writing now could cross a takeover.
      const error = leaseLost(
        sessionId,
        epoch,
        `the lease expired: its last heartbeat was ${now - (lock.heartbeatAt ?? lock.acquiredAt)} ms ago (TTL ${lock.ttlMs ?? this.#options.timing.ttlMs} ms); nothing was written`,
      )
      this.#end(record, () => error)
      throw error
    }
  }

  /**
   * Rejects when a live holder has the lock of `sessionId` (for writes without a lease).
   *
   * @throws `SessionLockedError`
   */
  async assertUnlocked(sessionId: string): Promise<void> {
    if (!this.#options.lock) return
    const path = this.#options.lockPathOf(sessionId)
    const holder = await readLockFile(this.#options.fileSystem, path)
    if (holder === null) return
    if (holder !== undefined && isExpired(holder, this.#options.now(), this.#options.timing.ttlMs)) return
    throw new SessionLockedError({
      code: ErrorCode.SESSION_LOCKED,
      sessionId,
      detail: `another writer holds the lock ${path}`,
      ...(holder === undefined ? {} : { holder: holderOf(holder) }),
      location: path,
    })
  }

  /** Kills the lease and removes its lock file while it still carries our token; idempotent. */
  async release(record: LeaseRecord, how: 'released' | 'closed'): Promise<void> {
    if (!record.live) return
    const sessionId = record.lease.sessionId
    this.#end(record, () => leaseLost(sessionId, record.lease.epoch, `the lease was ${how}`))
    // A heartbeat in flight rewrites the lock by rename: let it land before the lock goes.
    await record.beating
    await record.unpinned
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
    if (record.timer !== undefined) clearInterval(record.timer)
    record.timer = undefined
    const pin = record.pin
    record.pin = undefined
    if (pin !== undefined) record.unpinned = this.#closePin(pin)
    const sessionId = record.lease.sessionId
    if (this.#records.get(sessionId) === record) this.#records.delete(sessionId)
    this.#options.onEnd(sessionId)
    record.controller.abort(reason)
  }
}
