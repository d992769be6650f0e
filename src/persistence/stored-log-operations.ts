import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { isAbortSignal } from '../kernel/is-abort-signal.js'
import { interruptedTurnClosers } from '../session/interrupted-turn-closers.js'
import type { SessionHeader } from '../session/session-header.js'
import type { Session } from '../session/session.js'
import { checkStoredLog } from './check-stored-log.js'
import type { CoordinatorHost } from './coordinator-host.js'
import type { Lease, PersistenceAdapter, RepairCommit, StoredLog, StoredSuffix } from './persistence-adapter.js'
import type {
  InspectedLog,
  LoadedLog,
  OperationOptions,
  PersistenceCoordinator,
  RepairReport,
  SessionPreparation,
} from './persistence-coordinator.js'
import type { Reservation, SessionLeases } from './session-leases.js'

/**
 * Checks an operation's options (an object; `signal` an `AbortSignal`; `truncateAtCorruption` a
 * boolean), then rejects with the reason of an already aborted signal, before any I/O or lease.
 */
function checkOperationOptions(options: OperationOptions & { readonly truncateAtCorruption?: unknown }): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError({
      argument: 'options',
      reason: 'must be an options object { signal? }',
      value: options,
    })
  }
  const signal: unknown = options.signal
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new InvalidArgumentError({ argument: 'options.signal', reason: 'must be an AbortSignal', value: signal })
  }
  if (options.truncateAtCorruption !== undefined && typeof options.truncateAtCorruption !== 'boolean') {
    throw new InvalidArgumentError({
      argument: 'options.truncateAtCorruption',
      reason: 'must be a boolean',
      value: options.truncateAtCorruption,
    })
  }
  if (signal?.aborted === true) throw signal.reason
}

/**
 * The coordinator's operations on stored logs: loads (gated and repaired), inspection, preparation
 * of a resume, suffix reads, listing, deletion and repair. A live session is flushed through its
 * writer first.
 *
 * @internal
 */
export class StoredLogOperations implements PersistenceCoordinator {
  readonly #host: CoordinatorHost
  readonly #leases: SessionLeases
  readonly #flushLive: (session: Session) => Promise<void>

  /**
   * @param host - the harness side: adapter, catalog, logger, live sessions
   * @param leases - the per-session queues and leases shared with the live writer
   * @param flushLive - writes every pending event of a live session
   */
  constructor(host: CoordinatorHost, leases: SessionLeases, flushLive: (session: Session) => Promise<void>) {
    this.#host = host
    this.#leases = leases
    this.#flushLive = flushLive
  }

  /** The adapter this coordinator writes to. */
  get adapter(): PersistenceAdapter {
    return this.#host.adapter
  }

  /**
   * Loads a session's log, balanced: a live session is flushed (and must not have an open turn);
   * a cold one is read under its lease, gated, and repaired at most once.
   *
   * @param id - the session id
   * @param options - `signal`
   * @returns header, events and revision
   * @throws `PersistenceError` (`SESSION_NOT_FOUND`, `LIVE_TURN_OPEN`, `REPAIR_INCOMPLETE`…), `PersistenceCorruptionError`, `SessionFormatUnsupportedError`, `SessionLockedError`
   */
  async load(id: string, options: OperationOptions = {}): Promise<LoadedLog> {
    checkOperationOptions(options)
    const live = this.#host.live(id)
    if (live !== undefined) {
      await this.#flushLive(live)
      if (live.turnState().openTurn !== null) {
        throw new PersistenceError({
          code: ErrorCode.LIVE_TURN_OPEN,
          sessionId: id,
          detail: `turn ${live.turnState().openTurn} is still open`,
        })
      }
      return { header: live.header, events: live.events, revision: `live:${live.length}` }
    }
    const reservation = this.#leases.reservations.get(id)
    if (reservation !== undefined) return this.#leases.serial(id, () => this.#adapterLog(id, options))
    return this.#leases.serial(id, async () => {
      const lease = await this.#leases.acquire(id)
      try {
        return (await this.#loadAndRepair(id, lease, options, false)).log
      } finally {
        await lease.release()
      }
    })
  }

  /**
   * Reads a log as `load` would return it, changing nothing (no lease, no write).
   *
   * @param id - the session id
   * @param options - `signal`
   * @returns the log with its closers in memory, and whether a repair is pending
   */
  async inspect(id: string, options: OperationOptions = {}): Promise<InspectedLog> {
    checkOperationOptions(options)
    const live = this.#host.live(id)
    if (live !== undefined)
      return { header: live.header, events: live.events, revision: `live:${live.length}`, repairPending: false }
    return this.#leases.serial(id, async () => {
      const stored = await this.#leases.io.load(id, options.signal === undefined ? {} : { signal: options.signal })
      checkStoredLog(id, stored, this.#host.catalog, { full: true })
      const closers = interruptedTurnClosers(stored.events)
      return {
        header: stored.header,
        events: Object.freeze([...stored.events, ...closers]),
        revision: stored.revision,
        repairPending: stored.torn !== undefined || closers.length > 0,
        ...(stored.torn?.droppedBytes === undefined ? {} : { droppedBytes: stored.torn.droppedBytes }),
      }
    })
  }

  /** Cold operations refuse a session that is live in this harness: its log is still being written. */
  #refuseLive(id: string): void {
    if (this.#host.live(id) === undefined) return
    throw new PersistenceError({
      code: ErrorCode.SESSION_LIVE,
      sessionId: id,
      detail: 'the session is live in this harness',
    })
  }

  /**
   * Loads a cold session and keeps its lease, reserving the id until `release()` or until a
   * session created with the prepared events binds it.
   *
   * @param id - the session id
   * @param options - `signal`
   * @returns the balanced log and `release()`
   * @throws `PersistenceError` `SESSION_LIVE` / `SESSION_RESERVED`, and every `load` error
   */
  async prepare(id: string, options: OperationOptions = {}): Promise<SessionPreparation> {
    checkOperationOptions(options)
    this.#refuseLive(id)
    if (this.#leases.reservations.has(id)) {
      throw new PersistenceError({
        code: ErrorCode.SESSION_RESERVED,
        sessionId: id,
        detail: 'the session is already prepared',
      })
    }
    return this.#leases.serial(id, async () => {
      // A prepare queued behind another one of the same id finds the id reserved only now.
      if (this.#leases.reservations.has(id)) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_RESERVED,
          sessionId: id,
          detail: 'the session is already prepared',
        })
      }
      const lease = await this.#leases.acquire(id)
      let log: LoadedLog
      try {
        log = (await this.#loadAndRepair(id, lease, options, false)).log
      } catch (error) {
        await lease.release()
        throw error
      }
      const reservation: Reservation = { lease, events: log.events, released: false }
      this.#leases.reservations.set(id, reservation)
      return {
        ...log,
        release: async () => {
          if (reservation.released) return
          reservation.released = true
          if (this.#leases.reservations.get(id) === reservation) this.#leases.reservations.delete(id)
          await lease.release()
        },
      }
    })
  }

  /**
   * Takes the lease of a new id before its session exists, so `createAgent` resolves only once
   * this harness holds it: of two harnesses creating one id at once, exactly one wins. The
   * session created with the id adopts the lease and creates its log.
   *
   * @param id - the new session id
   * @returns gives the lease and the id back (idempotent; a no-op once a session adopted it)
   * @throws `PersistenceError` `SESSION_LIVE` / `SESSION_RESERVED` / `SESSION_EXISTS` (a log is
   *   stored), `SessionLockedError` naming the holder when another writer has the lease
   */
  async reserveNew(id: string): Promise<() => Promise<void>> {
    this.#refuseLive(id)
    const reserved = (): PersistenceError =>
      new PersistenceError({
        code: ErrorCode.SESSION_RESERVED,
        sessionId: id,
        detail: 'the session is already prepared',
      })
    if (this.#leases.reservations.has(id)) throw reserved()
    return this.#leases.serial(id, async () => {
      if (this.#leases.reservations.has(id)) throw reserved()
      const lease = await this.#leases.acquire(id)
      try {
        // Under the lease, so a log another writer stored just before it is seen.
        await this.#leases.io.load(id).then(
          () => {
            throw new PersistenceError({
              code: ErrorCode.SESSION_EXISTS,
              sessionId: id,
              detail: 'a log is already stored for this id',
            })
          },
          (error: unknown) => {
            if (!(PersistenceError.is(error) && error.code === ErrorCode.SESSION_NOT_FOUND)) throw error
          },
        )
      } catch (error) {
        await lease.release()
        throw error
      }
      const reservation: Reservation = { lease, events: [], released: false, fresh: true }
      this.#leases.reservations.set(id, reservation)
      return async () => {
        if (reservation.released) return
        reservation.released = true
        if (this.#leases.reservations.get(id) === reservation) this.#leases.reservations.delete(id)
        await lease.release()
      }
    })
  }

  /**
   * Reads what is durable now from `fromSeq` on (no flush, no lease, no closers).
   *
   * @param id - the session id
   * @param fromSeq - a non-negative integer
   * @param options - `signal`
   * @returns the header and the suffix
   * @throws {@link InvalidArgumentError} (`fromSeq`), and the read errors
   */
  async readFrom(id: string, fromSeq: number, options: OperationOptions = {}): Promise<StoredSuffix> {
    if (typeof fromSeq !== 'number' || !Number.isSafeInteger(fromSeq) || fromSeq < 0) {
      throw new InvalidArgumentError({ argument: 'fromSeq', reason: 'must be a non-negative integer', value: fromSeq })
    }
    checkOperationOptions(options)
    const adapter = this.#leases.io
    const signalOption = options.signal === undefined ? {} : { signal: options.signal }
    return this.#leases.serial(id, async () => {
      if (adapter.readFrom !== undefined) {
        const result = await adapter.readFrom(id, fromSeq, signalOption)
        checkStoredLog(id, { header: result.header, events: result.events, revision: '' }, this.#host.catalog, {
          full: false,
        })
        return result
      }
      const stored = await adapter.load(id, signalOption)
      // `events` ends with `torn.recovered`, which readFrom never returns: salvaged records are not committed.
      const committed = stored.events.slice(0, stored.events.length - (stored.torn?.recovered.length ?? 0))
      const events = committed.filter((event) => event.seq >= fromSeq)
      checkStoredLog(id, { ...stored, events }, this.#host.catalog, { full: false })
      return { header: stored.header, events }
    })
  }

  /**
   * Headers of every stored session, sorted by id; damaged headers and logs in a format this Yoke
   * cannot read are logged as warnings, not thrown.
   *
   * @param options - `signal`
   * @returns the headers
   */
  async list(options: OperationOptions = {}): Promise<readonly SessionHeader[]> {
    checkOperationOptions(options)
    const listing = await this.#leases.io.list(options.signal === undefined ? {} : { signal: options.signal })
    for (const damaged of listing.damaged)
      this.#host.logger.warn('a stored session header is damaged', { error: damaged })
    for (const unreadable of listing.unreadable ?? [])
      this.#host.logger.warn('a stored session is in a log format this Yoke cannot read', { error: unreadable })
    return listing.headers
  }

  /**
   * Deletes a cold session's log.
   *
   * @param id - the session id
   * @param options - `signal`
   * @throws `PersistenceError` `SESSION_LIVE`, `SESSION_NOT_FOUND`; `SessionLockedError`
   */
  async delete(id: string, options: OperationOptions = {}): Promise<void> {
    checkOperationOptions(options)
    this.#refuseLive(id)
    const adapter = this.#leases.io
    if (adapter.delete === undefined) {
      throw new PersistenceError({
        code: ErrorCode.WRITE_FAILED,
        sessionId: id,
        detail: `the ${adapter.name} adapter cannot delete`,
      })
    }
    const remove = adapter.delete.bind(adapter)
    await this.#leases.serial(id, async () => {
      const lease = await this.#leases.acquire(id)
      try {
        await remove(id)
      } finally {
        await lease.release()
      }
    })
  }

  /**
   * Repairs a cold session: cuts a torn tail, closes an interrupted turn, or (with
   * `truncateAtCorruption`) moves damage aside keeping the valid prefix.
   *
   * @param id - the session id
   * @param options - `truncateAtCorruption`, `signal`
   * @returns what was done
   */
  async repair(
    id: string,
    options: OperationOptions & { readonly truncateAtCorruption?: boolean } = {},
  ): Promise<RepairReport> {
    checkOperationOptions(options)
    this.#refuseLive(id)
    return this.#leases.serial(id, async () => {
      const lease = await this.#leases.acquire(id)
      try {
        return (await this.#loadAndRepair(id, lease, options, options.truncateAtCorruption === true)).report
      } finally {
        await lease.release()
      }
    })
  }

  async #adapterLog(id: string, options: OperationOptions): Promise<LoadedLog> {
    const reservation = this.#leases.reservations.get(id) as Reservation
    const stored = await this.#leases.io.load(id, options.signal === undefined ? {} : { signal: options.signal })
    return { header: stored.header, events: reservation.events, revision: stored.revision }
  }

  async #loadAndRepair(
    id: string,
    _lease: Lease,
    options: OperationOptions,
    truncateAtCorruption: boolean,
  ): Promise<{ log: LoadedLog; report: RepairReport }> {
    const adapter = this.#leases.io
    const loadOptions = {
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(truncateAtCorruption ? { truncateAtCorruption: true } : {}),
    }
    const stored = await adapter.load(id, loadOptions)
    checkStoredLog(id, stored, this.#host.catalog, { full: true })
    const closers = interruptedTurnClosers(stored.events)
    if (stored.torn === undefined && closers.length === 0) {
      return { log: logOf(stored), report: { action: 'none', keptEvents: stored.events.length, closers: [] } }
    }
    // `adapter` is the wrapped one: a raw failure arrives as WRITE_FAILED.
    const commit: RepairCommit | undefined | void = await adapter.commitRepair(id, stored.torn, closers)
    // An abort during the commit takes effect after it: the commit is not torn in half.
    checkOperationOptions(options)
    const repaired = await adapter.load(id)
    checkStoredLog(id, repaired, this.#host.catalog, { full: true })
    if (repaired.torn !== undefined || interruptedTurnClosers(repaired.events).length > 0) {
      throw new PersistenceCorruptionError({
        code: ErrorCode.REPAIR_INCOMPLETE,
        sessionId: id,
        detail: 'the repair left a torn tail or an open turn behind',
        location: repaired.location ?? id,
      })
    }
    const quarantined = stored.torn?.kind === 'corrupt'
    return {
      log: logOf(repaired),
      report: {
        action: quarantined ? 'quarantined' : 'repaired',
        keptEvents: stored.events.length,
        closers: closers.map((event) => event.type),
        ...(stored.torn?.droppedBytes === undefined ? {} : { droppedBytes: stored.torn.droppedBytes }),
        ...(quarantined && commit?.quarantine !== undefined ? { quarantine: commit.quarantine } : {}),
      },
    }
  }
}

function logOf(stored: StoredLog): LoadedLog {
  return { header: stored.header, events: stored.events, revision: stored.revision }
}
