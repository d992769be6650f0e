/**
 * The in-memory persistence adapter: every log is kept as plain JSONL bytes in a {@link
 * MemoryStore}, written and read with the JSONL encoder, scanner and tail rules, so byte faults
 * behave as on disk. Leases are per store. Nothing survives the process.
 *
 * @module
 */
import { hostname } from 'node:os'
import { ErrorCode } from '../errors/codes.js'
import { LeaseLostError } from '../errors/lease-lost-error.js'
import type { LockHolder } from '../errors/lock-holder.js'
import { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SeqConflictError } from '../errors/seq-conflict-error.js'
import { SessionFormatUnsupportedError } from '../errors/session-format-unsupported-error.js'
import { SessionLockedError } from '../errors/session-locked-error.js'
import { checkOptions, type OptionRule, optionRule } from '../kernel/option-issues.js'
import type { SessionEvent } from '../session/session-event.js'
import type { SessionHeader } from '../session/session-header.js'
import { assertSeqArgument, headerToCreate } from './adapter-arguments.js'
import { checkEventBatch } from './jsonl/check-event-batch.js'
import { encodeBatch, encodeHeaderLine } from './jsonl/jsonl-codec.js'
import type { ScanResult } from './jsonl/log-scanner.js'
import { scanHeader, scanLog } from './jsonl/scan-log.js'
import type {
  AppendBatchOptions,
  Lease,
  LoadOptions,
  PersistenceAdapter,
  ReadOptions,
  RepairCommit,
  StoredLease,
  StoredListing,
  StoredLog,
  TornTail,
  StoredSuffix,
} from './persistence-adapter.js'
import {
  type CachedScan,
  concat,
  createMemoryStore,
  type LeaseRecord,
  type LogEntry,
  locationOf,
  type MemoryStore,
  MemoryStoreState,
} from './memory-store.js'
import { type LeaseOptions, leaseOptionsIssue, leaseTiming, newLeaseOwner } from './lease-options.js'
import { LeaseSignal } from './lease-signal.js'
import { absentCheck } from './known-absent.js'
import { matchesStoredBatch } from './matches-stored-batch.js'
import { assertStorableId } from './session-file-name.js'
import { randomHex } from './random-hex.js'

export { createMemoryStore, type MemoryStore } from './memory-store.js'

const encoder = new TextEncoder()

/** Options of {@link memoryPersistence}. */
export interface MemoryPersistenceOptions {
  /** The storage; share it between instances to share logs and leases. @defaultValue a private `createMemoryStore()` */
  readonly store?: MemoryStore
  /**
   * Store runs of chunk deltas as chunk-run rows (three or more consecutive deltas of one step and
   * one stream part, within a batch), as the JSONL adapter does. @defaultValue true
   */
  readonly packChunks?: boolean
  /**
   * The clock of lease `acquiredAt`, heartbeats and expiry: a lease expires on its holder's
   * clock (a test advances it to expire a lease). @defaultValue `Date.now`
   */
  readonly now?: () => number
  /**
   * The lease timing: the holder renews every `heartbeatMs`; a lease whose last heartbeat is
   * `ttlMs` old is taken over by another instance's `acquire`, and its holder writes nothing more.
   * `ttlMs` must be greater than `heartbeatMs` (else `InvalidOptionsError`).
   *
   * @defaultValue `{ ttlMs: 30000, heartbeatMs: 10000 }`
   */
  readonly lease?: LeaseOptions
}

/** The memory adapter: the full {@link PersistenceAdapter} contract plus its store. */
export interface MemoryPersistence extends PersistenceAdapter {
  /** The store holding this instance's logs and leases. */
  readonly store: MemoryStore
  /**
   * Committed events with `seq ≥ fromSeq` (never salvaged ones); no mutation.
   *
   * @param sessionId - the session id
   * @param fromSeq - a non-negative safe integer
   * @param options - `signal`
   * @returns the header and the suffix
   * @throws `InvalidArgumentError` (`fromSeq`), `PersistenceError SESSION_NOT_FOUND`, `PersistenceCorruptionError`
   */
  readFrom(sessionId: string, fromSeq: number, options?: ReadOptions): Promise<StoredSuffix>
  /**
   * Removes a stored log (an unmaterialized registration of this instance too).
   *
   * @param sessionId - the session id
   * @throws `PersistenceError SESSION_NOT_FOUND`; `SessionLockedError` while another instance holds the lease
   */
  delete(sessionId: string): Promise<void>
  /**
   * Reads the lease of a session in the store without taking it; its age is on its holder's clock.
   *
   * @param sessionId - the session id
   * @param options - `signal`
   * @returns the lease, or `undefined` when none is held
   */
  inspectLease(sessionId: string, options?: ReadOptions): Promise<StoredLease | undefined>
  /**
   * Ends the lease of a session whoever holds it, live or not: its signal aborts with
   * `LeaseLostError`, its holder writes nothing more, and the next `acquire` gets a greater epoch.
   *
   * @param sessionId - the session id
   * @returns the lease that was ended, or `undefined` when none was held
   */
  breakLease(sessionId: string): Promise<StoredLease | undefined>
}

/** The rules of `memoryPersistence` options: as for every factory, a bad one → `InvalidOptionsError`. */
const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  store: (value) => (value instanceof MemoryStoreState ? undefined : 'must come from createMemoryStore()'),
  packChunks: optionRule.boolean,
  now: optionRule.function,
  lease: leaseOptionsIssue,
})

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw signal.reason
}

/**
 * Creates an in-memory persistence adapter: logs are JSONL bytes in a memory store,
 * with the JSONL encoder, scanner and tail rules; leases are per store, so two instances over one
 * store exclude each other.
 *
 * @param options - the store, chunk packing and clock
 * @returns the adapter
 * @throws `InvalidOptionsError` for bad options (not an object, an unknown key, a `store` not made
 *   by `createMemoryStore()`, a non-boolean `packChunks`, a `now` that is not a function)
 * @example
 * ```ts
 * const harness = createHarness({ persistence: memoryPersistence() })
 * ```
 */
export function memoryPersistence(options: MemoryPersistenceOptions = {}): MemoryPersistence {
  checkOptions(options, optionRules, '{ store?, packChunks?, now?, lease? }', 'memoryPersistence options')
  const store = (options.store ?? createMemoryStore()) as MemoryStoreState
  const packChunks = options.packChunks ?? true
  const now = options.now ?? Date.now
  const timing = leaseTiming(options.lease)
  const owner = {}
  const ownerId = newLeaseOwner()
  /** Headers registered by `create` and not yet materialized. */
  const registrations = new Map<string, SessionHeader>()
  /** This instance's live leases, by token. */
  const leases = new Map<string, LeaseRecord>()
  let closed = false

  function ensureOpen(): void {
    if (closed) {
      throw new PersistenceError({ code: ErrorCode.CLOSED, detail: 'the memory persistence adapter is closed' })
    }
  }

  function notFound(sessionId: string): PersistenceError {
    return new PersistenceError({
      code: ErrorCode.SESSION_NOT_FOUND,
      sessionId,
      detail: `no stored log (${locationOf(sessionId)})`,
    })
  }

  function leaseLost(sessionId: string, epoch: number | undefined, detail: string): LeaseLostError {
    return new LeaseLostError({
      code: ErrorCode.LEASE_LOST,
      sessionId,
      detail,
      ...(epoch === undefined ? {} : { epoch }),
    })
  }

  /** The live lease record of this instance for `sessionId`, checking `lease` when given. */
  function requireLease(sessionId: string, lease: Lease | undefined): LeaseRecord {
    const record = lease === undefined ? store.leases.get(sessionId) : leases.get(lease.token)
    // The lease object itself, as in JSONL: a copy carrying the token is not a lease of this instance.
    const foreign = lease !== undefined && record !== undefined && record.lease !== lease
    if (
      record === undefined ||
      foreign ||
      record.owner !== owner ||
      !record.live ||
      record.lease.sessionId !== sessionId
    ) {
      // A lease of ours that ended says how (released, taken over, broken): its signal's reason.
      const reason =
        lease !== undefined && lease.sessionId === sessionId && lease.signal.aborted ? lease.signal.reason : undefined
      if (LeaseLostError.is(reason)) throw reason
      throw leaseLost(sessionId, lease?.epoch, 'this adapter instance holds no live lease for it; nothing was written')
    }
    if (store.leases.get(sessionId) !== record) {
      throw leaseLost(sessionId, record.lease.epoch, 'the lease is no longer current; nothing was written')
    }
    if (store.isExpired(record)) {
      // Nobody took it over yet, but anyone may: a holder past its TTL writes nothing.
      store.endLease(record, 'expired')
      throw leaseLost(
        sessionId,
        record.lease.epoch,
        `the lease expired (no heartbeat for ${timing.ttlMs} ms); nothing was written`,
      )
    }
    return record
  }

  function scanOf(sessionId: string, entry: LogEntry, truncateAtCorruption: boolean, fromSeq?: number): ScanResult {
    const result = scanLog(entry.pieces, {
      sessionId,
      location: locationOf(sessionId),
      truncateAtCorruption,
      ...(fromSeq === undefined ? {} : { fromSeq }),
    })
    if (result.torn?.kind !== 'corrupt') {
      entry.scan = { nextSeq: result.nextSeq, committedBytes: result.committedBytes, torn: result.torn !== undefined }
    }
    return result
  }

  /** The next seq and tail state of a stored log, scanning only when its content changed. */
  function stateOf(sessionId: string, entry: LogEntry): CachedScan {
    if (entry.scan !== undefined) return entry.scan
    const result = scanOf(sessionId, entry, false)
    return { nextSeq: result.nextSeq, committedBytes: result.committedBytes, torn: result.torn !== undefined }
  }

  function repairRequired(sessionId: string): PersistenceError {
    return new PersistenceError({
      code: ErrorCode.REPAIR_REQUIRED,
      sessionId,
      detail: `the stored log (${locationOf(sessionId)}) has a torn tail; load and repair it before appending`,
    })
  }

  function storedLeaseOf(record: LeaseRecord): StoredLease {
    const { holder } = record
    return {
      sessionId: record.lease.sessionId,
      holder,
      ageMs: Math.max(0, record.clock() - (holder.heartbeatAt ?? holder.acquiredAt)),
      live: !store.isExpired(record),
    }
  }

  function forgetRegistration(sessionId: string): void {
    registrations.delete(sessionId)
  }

  const adapter: MemoryPersistence & { readonly [absentCheck]: (sessionId: string) => boolean } = {
    name: 'memory',
    store,
    // Exactly when `readFrom` would reject SESSION_NOT_FOUND; a closed adapter leaves it to `readFrom`.
    [absentCheck]: (sessionId: string) => !closed && !store.logs.has(sessionId),

    async create(header: SessionHeader): Promise<void> {
      ensureOpen()
      const validated = headerToCreate(header)
      if (store.logs.has(validated.id) || registrations.has(validated.id)) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_EXISTS,
          sessionId: validated.id,
          detail: `a log is already stored or registered (${locationOf(validated.id)})`,
        })
      }
      registrations.set(validated.id, validated)
    },

    async append(sessionId: string, events: readonly SessionEvent[], batch: AppendBatchOptions): Promise<void> {
      ensureOpen()
      assertStorableId(sessionId)
      requireLease(sessionId, batch.lease)
      if (events.length === 0) return
      const expectedSeq = batch.expectedSeq
      assertSeqArgument('expectedSeq', expectedSeq)
      checkEventBatch(events, expectedSeq, 'events')
      const registered = registrations.get(sessionId)
      const entry = store.logs.get(sessionId)
      if (registered !== undefined) {
        if (entry !== undefined) {
          throw new PersistenceError({
            code: ErrorCode.SESSION_EXISTS,
            sessionId,
            detail: `another writer stored a log first (${locationOf(sessionId)}); nothing was written`,
          })
        }
        if (expectedSeq !== 0) {
          throw new SeqConflictError({
            code: ErrorCode.SEQ_CONFLICT,
            sessionId,
            detail: `expected seq ${expectedSeq}, but nothing is stored yet (next seq 0)`,
            expectedSeq,
            storedSeq: 0,
          })
        }
        const bytes = encoder.encode(
          encodeHeaderLine(registered) + encodeBatch(events, { packChunks, texts: batch.texts }),
        )
        store.put(sessionId, [bytes], { nextSeq: events.length, committedBytes: bytes.length, torn: false })
        registrations.delete(sessionId)
        return
      }
      if (entry === undefined) throw notFound(sessionId)
      const state = stateOf(sessionId, entry)
      if (state.torn) throw repairRequired(sessionId)
      if (expectedSeq < state.nextSeq) {
        // A batch sent again after its reply was lost: already stored as it is, it succeeds.
        const stored = scanOf(sessionId, entry, false, expectedSeq).events
        if (matchesStoredBatch(stored, events, batch.texts)) return
      }
      if (expectedSeq !== state.nextSeq) {
        throw new SeqConflictError({
          code: ErrorCode.SEQ_CONFLICT,
          sessionId,
          detail: `expected seq ${expectedSeq}, but the stored log continues at seq ${state.nextSeq}${expectedSeq < state.nextSeq ? ` and holds other events from seq ${expectedSeq}` : ''}; nothing was written`,
          expectedSeq,
          storedSeq: state.nextSeq,
        })
      }
      const bytes = encoder.encode(encodeBatch(events, { packChunks, texts: batch.texts }))
      // Pushed in place rather than copied, so an append costs the same at any log length.
      entry.pieces.push(bytes)
      store.put(sessionId, entry.pieces, {
        nextSeq: state.nextSeq + events.length,
        committedBytes: state.committedBytes + bytes.length,
        torn: false,
      })
    },

    async load(sessionId: string, loadOptions: LoadOptions = {}): Promise<StoredLog> {
      ensureOpen()
      assertStorableId(sessionId)
      checkSignal(loadOptions.signal)
      const entry = store.logs.get(sessionId)
      if (entry === undefined) throw notFound(sessionId)
      const result = scanOf(sessionId, entry, loadOptions.truncateAtCorruption === true)
      const log: { -readonly [K in keyof StoredLog]: StoredLog[K] } = {
        header: result.header,
        events: result.events,
        revision: entry.revision,
        location: locationOf(sessionId),
        // Parsed afresh from the stored bytes: the coordinator may adopt them rather than copy them.
        freshlyParsed: true,
      }
      if (result.torn !== undefined) log.torn = { ...result.torn, recovered: [], revision: entry.revision }
      return log
    },

    async commitRepair(
      sessionId: string,
      torn: TornTail | undefined,
      closers: readonly SessionEvent[],
    ): Promise<RepairCommit | undefined> {
      ensureOpen()
      assertStorableId(sessionId)
      requireLease(sessionId, undefined)
      if (torn === undefined && closers.length === 0) return undefined
      const entry = store.logs.get(sessionId)
      if (entry === undefined) throw notFound(sessionId)
      if (torn !== undefined && torn.revision !== entry.revision) {
        throw new SeqConflictError({
          code: ErrorCode.SEQ_CONFLICT,
          sessionId,
          detail: `the log changed since it was read (revision ${entry.revision}, expected ${torn.revision}); nothing was changed`,
          expectedRevision: torn.revision,
        })
      }
      const corrupt = torn?.kind === 'corrupt'
      let state: CachedScan
      if (corrupt) {
        const result = scanOf(sessionId, entry, true)
        state = { nextSeq: result.nextSeq, committedBytes: result.committedBytes, torn: result.torn !== undefined }
      } else {
        state = stateOf(sessionId, entry)
      }
      if (torn === undefined && state.torn) throw repairRequired(sessionId)
      const batch = [...(torn?.recovered ?? []), ...closers]
      checkEventBatch(batch, state.nextSeq, torn === undefined ? 'closers' : 'recovered ++ closers')
      const bytes = encoder.encode(encodeBatch(batch, { packChunks }))
      let quarantine: string | undefined
      if (corrupt) {
        const damaged = concat(entry.pieces)
        const list = store.quarantine.get(sessionId) ?? []
        list.push(damaged)
        store.quarantine.set(sessionId, list)
        // The name of the entry in `store.quarantine`: the session id and its index there.
        quarantine = `memory:${sessionId}#quarantine-${list.length - 1}`
      }
      const prefix = state.torn ? [concat(entry.pieces).slice(0, state.committedBytes)] : entry.pieces
      store.put(sessionId, [...prefix, bytes], {
        nextSeq: state.nextSeq + batch.length,
        committedBytes: state.committedBytes + bytes.length,
        torn: false,
      })
      return quarantine === undefined ? undefined : { quarantine }
    },

    async readFrom(sessionId: string, fromSeq: number, readOptions: ReadOptions = {}) {
      ensureOpen()
      assertStorableId(sessionId)
      assertSeqArgument('fromSeq', fromSeq)
      checkSignal(readOptions.signal)
      const entry = store.logs.get(sessionId)
      if (entry === undefined) throw notFound(sessionId)
      const result = scanOf(sessionId, entry, false, fromSeq)
      return { header: result.header, events: result.events }
    },

    async list(readOptions: ReadOptions = {}): Promise<StoredListing> {
      ensureOpen()
      checkSignal(readOptions.signal)
      const headers: SessionHeader[] = []
      const damaged: PersistenceCorruptionError[] = []
      const unreadable: SessionFormatUnsupportedError[] = []
      for (const sessionId of store.ids()) {
        const entry = store.logs.get(sessionId)!
        try {
          headers.push(scanHeader(entry.pieces, { sessionId, location: locationOf(sessionId) }))
        } catch (error) {
          if (PersistenceCorruptionError.is(error)) damaged.push(error)
          // Reported, never dropped silently: a log from a newer Yoke is still a session.
          else if (SessionFormatUnsupportedError.is(error)) unreadable.push(error)
          else throw error
        }
      }
      return unreadable.length === 0 ? { headers, damaged } : { headers, damaged, unreadable }
    },

    async delete(sessionId: string): Promise<void> {
      ensureOpen()
      assertStorableId(sessionId)
      const held = store.leases.get(sessionId)
      if (held !== undefined && held.owner !== owner && !store.isExpired(held)) {
        throw new SessionLockedError({
          code: ErrorCode.SESSION_LOCKED,
          sessionId,
          detail: 'another adapter instance holds its lease',
          holder: held.holder,
          location: locationOf(sessionId),
        })
      }
      const registered = registrations.delete(sessionId)
      if (!store.logs.delete(sessionId) && !registered) throw notFound(sessionId)
      // As in JSONL, the quarantined originals go with the log; the id's epoch goes once no lease is held.
      store.quarantine.delete(sessionId)
      store.forgetEpoch(sessionId)
    },

    async acquire(sessionId: string): Promise<Lease> {
      ensureOpen()
      assertStorableId(sessionId)
      const held = store.leases.get(sessionId)
      if (held !== undefined && !store.isExpired(held)) {
        const age = Math.max(0, held.clock() - (held.holder.heartbeatAt ?? held.holder.acquiredAt))
        throw new SessionLockedError({
          code: ErrorCode.SESSION_LOCKED,
          sessionId,
          detail: `${held.owner === owner ? 'this' : 'another'} adapter instance holds its lease (owner ${held.holder.owner}, epoch ${held.lease.epoch}, pid ${held.holder.pid} on ${held.holder.host}, last heartbeat ${age} ms ago)`,
          holder: held.holder,
          location: locationOf(sessionId),
        })
      }
      const controller = new LeaseSignal()
      const token = randomHex(16)
      const epoch = store.nextEpoch(sessionId)
      const at = now()
      const holder: LockHolder = Object.freeze({
        pid: process.pid,
        host: hostname(),
        acquiredAt: at,
        owner: ownerId,
        epoch,
        heartbeatAt: at,
        ttlMs: timing.ttlMs,
      })
      const tookOver = held?.holder
      // An expired holder ends here, in the same synchronous step that installs us: exactly one
      // of two racing instances sees it expired and takes it.
      if (held !== undefined) store.endLease(held, 'taken over', holder)
      let record: LeaseRecord | undefined
      const lease: Lease = Object.freeze({
        sessionId,
        token,
        owner: ownerId,
        epoch,
        get signal(): AbortSignal {
          return controller.signal
        },
        ...(tookOver === undefined ? {} : { tookOver }),
        release: async (): Promise<void> => {
          if (record !== undefined) store.endLease(record, 'released')
        },
      })
      const live: LeaseRecord = {
        lease,
        owner,
        holder,
        clock: now,
        ttlMs: timing.ttlMs,
        timer: undefined,
        controller,
        onEnd: () => {
          leases.delete(token)
          forgetRegistration(sessionId)
        },
        live: true,
      }
      record = live
      const timer = setInterval(() => {
        if (live.live) live.holder = Object.freeze({ ...live.holder, heartbeatAt: now() })
      }, timing.heartbeatMs)
      // A heartbeat must not keep the process alive.
      timer.unref?.()
      live.timer = timer
      store.leases.set(sessionId, live)
      leases.set(token, live)
      return lease
    },

    async inspectLease(sessionId: string, readOptions: ReadOptions = {}): Promise<StoredLease | undefined> {
      ensureOpen()
      assertStorableId(sessionId)
      checkSignal(readOptions.signal)
      const record = store.leases.get(sessionId)
      return record === undefined ? undefined : storedLeaseOf(record)
    },

    async breakLease(sessionId: string): Promise<StoredLease | undefined> {
      ensureOpen()
      assertStorableId(sessionId)
      const record = store.leases.get(sessionId)
      if (record === undefined) return undefined
      const ended = storedLeaseOf(record)
      // The epoch is kept above this lease's (the store retires it), so the next acquire's is greater.
      store.endLease(record, 'broken')
      return ended
    },

    async close(): Promise<void> {
      if (closed) return
      closed = true
      for (const record of [...leases.values()]) store.endLease(record, 'closed')
      registrations.clear()
    },
  }
  return adapter
}
