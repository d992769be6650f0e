/**
 * The storage behind the memory adapter: logs as JSONL bytes, quarantined copies, revisions and
 * leases, shared by every `memoryPersistence` instance given the same store.
 *
 * @module
 */
import { ErrorCode } from '../errors/codes.js'
import { LeaseLostError } from '../errors/lease-lost-error.js'
import type { LockHolder } from '../errors/lock-holder.js'
import { compareIds } from './adapter-arguments.js'
import type { Lease } from './persistence-adapter.js'
import { DEFAULT_LEASE_TTL_MS } from './lease-options.js'
import { LeaseSignal } from './lease-signal.js'

/**
 * Shared storage for {@link memoryPersistence} instances: the logs as bytes, quarantined copies
 * and the leases. Its byte methods are the test seam for torn and damaged logs.
 */
export interface MemoryStore {
  /**
   * A copy of a stored log's bytes.
   *
   * @param sessionId - the session id
   * @returns the bytes, or `undefined` when nothing is stored
   */
  read(sessionId: string): Uint8Array | undefined
  /**
   * Replaces (or creates) a stored log's bytes, e.g. to tear or damage it; the log gets a new revision.
   *
   * @param sessionId - the session id
   * @param bytes - the new content (copied)
   */
  write(sessionId: string, bytes: Uint8Array): void
  /**
   * Removes a stored log.
   *
   * @param sessionId - the session id
   * @returns whether a log was stored
   */
  remove(sessionId: string): boolean
  /**
   * The ids with a stored log, sorted.
   *
   * @returns the ids
   */
  ids(): string[]
  /**
   * The damaged originals a `commitRepair` of a `corrupt` tail moved aside, oldest first.
   *
   * @param sessionId - the session id
   * @returns copies of the quarantined bytes
   */
  quarantined(sessionId: string): Uint8Array[]
  /**
   * Ends the current lease of a session as if it had expired: its `signal` aborts with
   * `LeaseLostError` and later writes under it fail (the conformance suite's `expireLease`).
   *
   * @param sessionId - the session id
   * @returns whether a lease was held
   */
  expireLease(sessionId: string): boolean
  /**
   * Makes the current lease of a session expire as if its holder had been frozen past its TTL:
   * its last heartbeat moves a TTL back on the holder's clock, and the holder is told nothing.
   * Another instance's `acquire` then takes it over, and the holder's next write fails with
   * `LeaseLostError` (the conformance suite's `ageLease`).
   *
   * @param sessionId - the session id
   * @returns whether a lease was held
   */
  ageLease(sessionId: string): boolean
  /**
   * Records a lease of a session as an earlier process would have left it: held by `holder`
   * (owner, epoch, pid, host, heartbeat, TTL) and by no instance of this process. Whether it is
   * live is decided by its heartbeat on `Date.now`, never by its pid (the conformance suite's
   * `plantLease`). A lease held now is ended as taken over.
   *
   * @param sessionId - the session id
   * @param holder - the recorded holder
   */
  plantLease(sessionId: string, holder: LockHolder): void
}

/**
 * What the store keeps per log.
 *
 * @internal
 */
export interface LogEntry {
  /**
   * The log's bytes in append order. An append pushes onto this array and stores it under a new
   * entry, so an earlier entry of the same log may see later pieces: read it only in the same
   * synchronous section that got the entry from `logs`, as every operation of the adapter does.
   */
  readonly pieces: Uint8Array[]
  readonly revision: string
  /** The scan of this exact content when it had no tail or a torn one. */
  scan: CachedScan | undefined
}

/**
 * The scan facts of one log content.
 *
 * @internal
 */
export interface CachedScan {
  readonly nextSeq: number
  readonly committedBytes: number
  readonly torn: boolean
}

/**
 * One lease, as the store tracks it.
 *
 * @internal
 */
export interface LeaseRecord {
  readonly lease: Lease
  /** The holding adapter instance. */
  readonly owner: object
  /** Who holds it, as errors name it; replaced at every heartbeat. */
  holder: LockHolder
  /** The holder's clock: a memory lease expires on the clock of its holder. */
  readonly clock: () => number
  /** The holder's TTL. */
  readonly ttlMs: number
  /** The heartbeat timer. */
  timer: ReturnType<typeof setInterval> | undefined
  readonly controller: LeaseSignal
  /** Runs once when the lease ends (released, expired, adapter closed). */
  readonly onEnd: () => void
  live: boolean
}

/** @internal */
export function concat(pieces: readonly Uint8Array[]): Uint8Array {
  let length = 0
  for (const piece of pieces) length += piece.length
  const bytes = new Uint8Array(length)
  let at = 0
  for (const piece of pieces) {
    bytes.set(piece, at)
    at += piece.length
  }
  return bytes
}

/** @internal */
export function locationOf(sessionId: string): string {
  return `memory:${sessionId}`
}

/**
 * The implementation behind {@link createMemoryStore}.
 *
 * @internal
 */
export class MemoryStoreState implements MemoryStore {
  readonly logs = new Map<string, LogEntry>()
  readonly leases = new Map<string, LeaseRecord>()
  readonly quarantine = new Map<string, Uint8Array[]>()
  /**
   * The last epoch handed out per id, kept only while the id has a stored log or a lease: a
   * service that creates and deletes sessions with unique ids must not grow by one entry per id.
   */
  readonly epochs = new Map<string, number>()
  /**
   * The highest epoch of any id whose entry was dropped. An id seen again starts above it, so its
   * epochs still only grow after a delete and re-create: a fenced writer of the old session never
   * shares an epoch with a lease of the new one.
   */
  #retiredEpoch = 0
  #revisions = 0

  read(sessionId: string): Uint8Array | undefined {
    const entry = this.logs.get(sessionId)
    return entry === undefined ? undefined : concat(entry.pieces)
  }

  write(sessionId: string, bytes: Uint8Array): void {
    this.put(sessionId, [new Uint8Array(bytes)], undefined)
  }

  remove(sessionId: string): boolean {
    const removed = this.logs.delete(sessionId)
    this.forgetEpoch(sessionId)
    return removed
  }

  ids(): string[] {
    return [...this.logs.keys()].sort(compareIds)
  }

  quarantined(sessionId: string): Uint8Array[] {
    return (this.quarantine.get(sessionId) ?? []).map((bytes) => new Uint8Array(bytes))
  }

  expireLease(sessionId: string): boolean {
    const record = this.leases.get(sessionId)
    if (record === undefined) return false
    this.endLease(record, 'expired')
    return true
  }

  ageLease(sessionId: string): boolean {
    const record = this.leases.get(sessionId)
    if (record === undefined) return false
    record.holder = Object.freeze({ ...record.holder, heartbeatAt: record.clock() - record.ttlMs })
    return true
  }

  plantLease(sessionId: string, holder: LockHolder): void {
    const epoch = holder.epoch ?? 1
    const held = this.leases.get(sessionId)
    if (held !== undefined) this.endLease(held, 'taken over', holder)
    // Later epochs of this id go above the planted one.
    this.epochs.set(sessionId, Math.max(this.epochs.get(sessionId) ?? this.#retiredEpoch, epoch))
    const lease: Lease = Object.freeze({
      sessionId,
      token: '',
      owner: holder.owner ?? '',
      epoch,
      signal: new AbortController().signal,
      release: async () => undefined,
    })
    this.leases.set(sessionId, {
      lease,
      owner: {},
      holder: Object.freeze({ ...holder }),
      clock: Date.now,
      ttlMs: holder.ttlMs ?? DEFAULT_LEASE_TTL_MS,
      timer: undefined,
      controller: new LeaseSignal(),
      onEnd: () => undefined,
      live: true,
    })
  }

  /** Stores new content under a fresh revision (revisions never repeat within a store). */
  put(sessionId: string, pieces: Uint8Array[], scan: CachedScan | undefined): void {
    this.#revisions++
    this.logs.set(sessionId, { pieces, revision: `mem:${this.#revisions}`, scan })
  }

  nextEpoch(sessionId: string): number {
    const epoch = (this.epochs.get(sessionId) ?? this.#retiredEpoch) + 1
    this.epochs.set(sessionId, epoch)
    return epoch
  }

  /** Drops the epoch of an id that has neither a stored log nor a lease any more. */
  forgetEpoch(sessionId: string): void {
    if (this.logs.has(sessionId) || this.leases.has(sessionId)) return
    const epoch = this.epochs.get(sessionId)
    if (epoch === undefined) return
    this.epochs.delete(sessionId)
    if (epoch > this.#retiredEpoch) this.#retiredEpoch = epoch
  }

  /** Whether a lease's last heartbeat is its TTL old, on its holder's clock. */
  isExpired(record: LeaseRecord): boolean {
    return (record.holder.heartbeatAt ?? record.holder.acquiredAt) + record.ttlMs <= record.clock()
  }

  endLease(
    record: LeaseRecord,
    how: 'released' | 'expired' | 'closed' | 'taken over' | 'broken',
    by?: LockHolder,
  ): void {
    if (!record.live) return
    record.live = false
    if (record.timer !== undefined) clearInterval(record.timer)
    record.timer = undefined
    const sessionId = record.lease.sessionId
    if (this.leases.get(sessionId) === record) this.leases.delete(sessionId)
    this.forgetEpoch(sessionId)
    record.onEnd()
    record.controller.abort(
      () =>
        new LeaseLostError({
          code: ErrorCode.LEASE_LOST,
          sessionId,
          detail: `the lease (epoch ${record.lease.epoch}) was ${how}${by === undefined ? '' : ` by owner ${by.owner} (epoch ${by.epoch})`}`,
          epoch: record.lease.epoch,
          ...(by === undefined ? {} : { holder: by }),
        }),
    )
  }
}

/**
 * Creates a store for {@link memoryPersistence}; share one between instances to model several
 * processes over one storage (leases then exclude each other).
 *
 * @returns an empty store
 * @example
 * ```ts
 * const store = createMemoryStore()
 * const a = memoryPersistence({ store })
 * const b = memoryPersistence({ store })
 * ```
 */
export function createMemoryStore(): MemoryStore {
  return new MemoryStoreState()
}
