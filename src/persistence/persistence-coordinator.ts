import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { isAbortSignal } from '../kernel/is-abort-signal.js'
import { PersistenceBackpressureError } from '../errors/persistence-backpressure-error.js'
import { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { Clock, Logger } from '../kernel/host-services.js'
import { jsonText } from '../session/json-text.js'
import { wrapAdapterError, wrapAdapterErrors } from './wrap-adapter-errors.js'
import type { JsonValue } from '../session/json-value.js'
import { interruptedTurnClosers } from '../session/interrupted-turn-closers.js'
import type { SessionCatalog } from '../session/session-catalog.js'
import type { SessionEvent } from '../session/session-event.js'
import type { SessionHeader } from '../session/session-header.js'
import type { Session } from '../session/session.js'
import type { Lease, PersistenceAdapter, RepairCommit, StoredLog, StoredSuffix } from './persistence-adapter.js'
import { checkStoredLog } from './check-stored-log.js'
import { WriteBehind, type WriteBehindOptions } from './write-behind.js'

/** Options of every coordinator operation. */
export interface OperationOptions {
  /** Aborts the operation; an already aborted signal rejects with its reason before any I/O. */
  readonly signal?: AbortSignal
}

/** A balanced stored log, as `load` returns it. */
export interface LoadedLog {
  /** The stored header. */
  readonly header: SessionHeader
  /** The events, balanced (closers committed when a turn was open). */
  readonly events: readonly SessionEvent[]
  /** The storage revision read. */
  readonly revision: string
}

/** What `inspect` sees: the log as it would load, without changing storage. */
export interface InspectedLog extends LoadedLog {
  /** Whether a `load` would repair (a torn tail, or closers to append). */
  readonly repairPending: boolean
  /** How many bytes a repair would drop. */
  readonly droppedBytes?: number
}

/** A cold log loaded under a kept lease, reserved for `sessions.create({ id, seed })`. */
export interface SessionPreparation extends LoadedLog {
  /** Gives the lease and the id back (idempotent). */
  release(): Promise<void>
}

/** What `repair` did. */
export interface RepairReport {
  /** `none`, `repaired` (tail cut or closers appended) or `quarantined` (damage moved aside). */
  readonly action: 'none' | 'repaired' | 'quarantined'
  /** Events kept from storage. */
  readonly keptEvents: number
  /** The types of the closers appended. */
  readonly closers: readonly string[]
  /** Bytes dropped. */
  readonly droppedBytes?: number
  /** Where the damaged original went (`quarantined`). */
  readonly quarantine?: string
}

/** @internal What the coordinator needs from its harness. */
export interface CoordinatorHost {
  readonly adapter: PersistenceAdapter
  readonly writeBehind: WriteBehindOptions
  readonly clock: Clock
  readonly logger: Logger
  readonly catalog: SessionCatalog
  /** The live session with this id, if any. */
  live(id: string): Session | undefined
  /** Reports a failed background write (`session/write-failed`). */
  writeFailed(sessionId: string, error: unknown, pendingEvents: number): void
}

interface Binding {
  readonly session: Session
  readonly writeBehind: WriteBehind
  ready: Promise<void>
  lease: Lease | undefined
  cursor: number
  failure: unknown
}

interface Reservation {
  readonly lease: Lease
  readonly events: readonly SessionEvent[]
  released: boolean
}

/**
 * Checks an operation's options (an object; `signal` an `AbortSignal`; `truncateAtCorruption` a
 * boolean), then C8: an already aborted signal rejects with its reason before any I/O or lease.
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
 * The only caller of a persistence adapter (03-persistence.md §5): binds live sessions to
 * write-behind queues, serializes operations per session, and runs cold reads through the read
 * gates and crash repair. Provided as `services.persistence`.
 */
export class PersistenceCoordinator {
  readonly #host: CoordinatorHost
  readonly #bindings = new Map<string, Binding>()
  /** Bindings of disposed sessions whose final flush failed, displaced by a new session of their id (C5). */
  readonly #retained: Binding[] = []
  /** Vetoed sessions whose lease is still being acquired or released, by id. */
  readonly #discards = new Map<string, Promise<void>>()
  readonly #reservations = new Map<string, Reservation>()
  readonly #chains = new Map<string, Promise<unknown>>()
  #closing: Promise<void> | undefined
  /** The adapter as called: its raw errors wrapped (C6). */
  readonly #io: PersistenceAdapter

  /** @internal */
  constructor(host: CoordinatorHost) {
    this.#host = host
    this.#io = wrapAdapterErrors(host.adapter)
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
      await this.flushSession(live)
      if (live.turnState().openTurn !== null) {
        throw new PersistenceError({
          code: ErrorCode.LIVE_TURN_OPEN,
          sessionId: id,
          detail: `turn ${live.turnState().openTurn} is still open`,
        })
      }
      return { header: live.header, events: live.events, revision: `live:${live.length}` }
    }
    const reservation = this.#reservations.get(id)
    if (reservation !== undefined) return this.#serial(id, () => this.#adapterLog(id, options))
    return this.#serial(id, async () => {
      const lease = await this.#acquire(id)
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
    return this.#serial(id, async () => {
      const stored = await this.#io.load(id, options.signal === undefined ? {} : { signal: options.signal })
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
    if (this.#host.live(id) !== undefined) {
      throw new PersistenceError({
        code: ErrorCode.SESSION_LIVE,
        sessionId: id,
        detail: 'the session is live in this harness',
      })
    }
    if (this.#reservations.has(id)) {
      throw new PersistenceError({
        code: ErrorCode.SESSION_RESERVED,
        sessionId: id,
        detail: 'the session is already prepared',
      })
    }
    return this.#serial(id, async () => {
      // A prepare queued behind another one of the same id finds the id reserved only now.
      if (this.#reservations.has(id)) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_RESERVED,
          sessionId: id,
          detail: 'the session is already prepared',
        })
      }
      const lease = await this.#acquire(id)
      let log: LoadedLog
      try {
        log = (await this.#loadAndRepair(id, lease, options, false)).log
      } catch (error) {
        await lease.release()
        throw error
      }
      const reservation: Reservation = { lease, events: log.events, released: false }
      this.#reservations.set(id, reservation)
      return {
        ...log,
        release: async () => {
          if (reservation.released) return
          reservation.released = true
          if (this.#reservations.get(id) === reservation) this.#reservations.delete(id)
          await lease.release()
        },
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
    const adapter = this.#io
    const signalOption = options.signal === undefined ? {} : { signal: options.signal }
    return this.#serial(id, async () => {
      if (adapter.readFrom !== undefined) {
        const result = await adapter.readFrom(id, fromSeq, signalOption)
        checkStoredLog(id, { header: result.header, events: result.events, revision: '' }, this.#host.catalog, {
          full: false,
        })
        return result
      }
      const stored = await adapter.load(id, signalOption)
      // `events` ends with `torn.recovered` (A4), which readFrom never returns (A7).
      const committed = stored.events.slice(0, stored.events.length - (stored.torn?.recovered.length ?? 0))
      const events = committed.filter((event) => event.seq >= fromSeq)
      checkStoredLog(id, { ...stored, events }, this.#host.catalog, { full: false })
      return { header: stored.header, events }
    })
  }

  /**
   * Headers of every stored session, sorted by id; damaged headers are logged, not thrown.
   *
   * @param options - `signal`
   * @returns the headers
   */
  async list(options: OperationOptions = {}): Promise<readonly SessionHeader[]> {
    checkOperationOptions(options)
    const listing = await this.#io.list(options.signal === undefined ? {} : { signal: options.signal })
    for (const damaged of listing.damaged)
      this.#host.logger.warn('a stored session header is damaged', { error: damaged })
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
    if (this.#host.live(id) !== undefined) {
      throw new PersistenceError({
        code: ErrorCode.SESSION_LIVE,
        sessionId: id,
        detail: 'the session is live in this harness',
      })
    }
    const adapter = this.#io
    if (adapter.delete === undefined) {
      throw new PersistenceError({
        code: ErrorCode.WRITE_FAILED,
        sessionId: id,
        detail: `the ${adapter.name} adapter cannot delete`,
      })
    }
    const remove = adapter.delete.bind(adapter)
    await this.#serial(id, async () => {
      const lease = await this.#acquire(id)
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
    if (this.#host.live(id) !== undefined) {
      throw new PersistenceError({
        code: ErrorCode.SESSION_LIVE,
        sessionId: id,
        detail: 'the session is live in this harness',
      })
    }
    return this.#serial(id, async () => {
      const lease = await this.#acquire(id)
      try {
        return (await this.#loadAndRepair(id, lease, options, options.truncateAtCorruption === true)).report
      } finally {
        await lease.release()
      }
    })
  }

  async #adapterLog(id: string, options: OperationOptions): Promise<LoadedLog> {
    const reservation = this.#reservations.get(id) as Reservation
    const stored = await this.#io.load(id, options.signal === undefined ? {} : { signal: options.signal })
    return { header: stored.header, events: reservation.events, revision: stored.revision }
  }

  async #loadAndRepair(
    id: string,
    _lease: Lease,
    options: OperationOptions,
    truncateAtCorruption: boolean,
  ): Promise<{ log: LoadedLog; report: RepairReport }> {
    const adapter = this.#io
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
    // `adapter` is the wrapped one: a raw failure arrives as WRITE_FAILED (C6).
    const commit: RepairCommit | undefined | void = await adapter.commitRepair(id, stored.torn, closers)
    // C8: an abort during the commit takes effect after it.
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

  /**
   * Binds a new live session (C2): a prepared id adopts its preparation; any other id is
   * created in storage lazily.
   *
   * @internal
   */
  bind(session: Session): void {
    const id = session.id
    if (this.#closing !== undefined) {
      // C7: refused, not ignored: an unbound session's flush would resolve without writing anything.
      throw new PersistenceError({
        code: ErrorCode.CLOSED,
        sessionId: id,
        detail: 'persistence is closing; no new session can be stored',
      })
    }
    const reservation = this.#reservations.get(id)
    let cursor = 0
    let lease: Lease | undefined
    if (reservation !== undefined) {
      const prepared = reservation.events
      const events = session.events
      const matches =
        events.length >= prepared.length &&
        prepared.every((event, index) => sameEvent(event, events[index] as SessionEvent))
      if (!matches) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_EXISTS,
          sessionId: id,
          detail: 'the session is prepared from storage, and its seed does not start with the prepared events',
        })
      }
      this.#reservations.delete(id)
      reservation.released = true
      lease = reservation.lease
      cursor = prepared.length
    }
    const binding: Binding = {
      session,
      writeBehind: undefined as unknown as WriteBehind,
      ready: Promise.resolve(),
      lease,
      cursor,
      failure: undefined,
    }
    const writeBehind = new WriteBehind({
      clock: this.#host.clock,
      options: this.#host.writeBehind,
      write: (batch, texts, frozen) => this.#write(binding, batch, frozen ? texts : undefined),
      onFailure: (error, pendingEvents) => {
        this.#host.logger.warn(`session "${id}": a background write failed; events are kept and retried`, {
          error,
          pendingEvents,
        })
        this.#host.writeFailed(id, error, pendingEvents)
      },
    })
    ;(binding as { writeBehind: WriteBehind }).writeBehind = writeBehind
    if (lease === undefined) {
      binding.ready = (async () => {
        const acquired = await this.#acquire(id)
        try {
          await this.#io.create(session.header)
        } catch (error) {
          await acquired.release()
          throw error
        }
        binding.lease = acquired
      })()
      binding.ready.catch((error: unknown) => {
        // The lease's own release may fail raw; the adapter calls are wrapped already.
        binding.failure = wrapAdapterError(id, error, 'create')
      })
    }
    const previous = this.#bindings.get(id)
    // A disposed session whose last flush failed keeps its queue and lease until close retries it (C5).
    if (previous !== undefined) this.#retained.push(previous)
    this.#bindings.set(id, binding)
    for (const event of session.events.slice(cursor)) writeBehind.enqueue(event)
  }

  /** @internal Enqueues a committed event of a bound session. */
  record(session: Session, event: SessionEvent): void {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session) return
    binding.writeBehind.enqueue(event)
  }

  /** @internal The commit guard (WB9): refuses events while the session is back-pressured. */
  guard(event: SessionEvent, session: Session): void {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session || !binding.writeBehind.backpressured) return
    throw new PersistenceBackpressureError({
      code: ErrorCode.PERSISTENCE_BACKPRESSURE,
      sessionId: session.id,
      detail: `${binding.writeBehind.pendingEvents} events are waiting to be written and the last write failed; ${event.type} is refused until a write succeeds`,
      pendingEvents: binding.writeBehind.pendingEvents,
      pendingBytes: binding.writeBehind.pendingBytes,
      cause: binding.writeBehind.lastError,
    })
  }

  /**
   * Writes every pending event of a live session (the `session/flush` listener, D1–D5).
   *
   * @internal
   */
  async flushSession(session: Session): Promise<void> {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session) return
    await binding.writeBehind.flush()
  }

  /** @internal The `session/disposed` listener (C5): flush, release, forget. */
  async unbind(session: Session): Promise<void> {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session) return
    await binding.writeBehind.flush()
    this.#bindings.delete(session.id)
    binding.writeBehind.dispose()
    await binding.ready.catch(() => {})
    await binding.lease?.release()
  }

  /**
   * The `session/disposed` listener for a vetoed session (02-session.md §9, `session/created`):
   * the session never became live, so its queued events are dropped, not written; its lease (a
   * fresh one, or the one its preparation held) is released, which also frees the id in the
   * adapter.
   *
   * @internal
   */
  discard(session: Session): Promise<void> {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session) return Promise.resolve()
    this.#bindings.delete(session.id)
    binding.writeBehind.dispose()
    const done = (async () => {
      await binding.ready.catch(() => {})
      await binding.lease?.release()
    })()
    // Close, and a new lease for the same id, wait for it: the lease may still be being acquired.
    const id = session.id
    this.#discards.set(id, done)
    const forget = (): void => {
      if (this.#discards.get(id) === done) this.#discards.delete(id)
    }
    done.then(forget, forget)
    return done
  }

  /**
   * Closes (C7): refuses new bindings, flushes every live session in parallel, releases every
   * lease and preparation, then always closes the adapter.
   *
   * @internal
   */
  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    const errors: unknown[] = []
    for (const discarding of [...this.#discards.values()])
      await discarding.catch((error: unknown) => errors.push(error))
    const bindings = [...this.#retained.splice(0), ...this.#bindings.values()]
    const outcomes = await Promise.allSettled(bindings.map((binding) => binding.writeBehind.flush()))
    // Forget the bindings before disposing their queues: a late event is then ignored, not thrown.
    this.#bindings.clear()
    for (const [index, outcome] of outcomes.entries()) {
      const binding = bindings[index] as Binding
      if (outcome.status === 'rejected') errors.push(outcome.reason)
      binding.writeBehind.dispose()
      await binding.ready.catch(() => {})
      try {
        await binding.lease?.release()
      } catch (error) {
        errors.push(error)
      }
    }
    for (const reservation of this.#reservations.values()) {
      reservation.released = true
      await reservation.lease.release().catch((error: unknown) => errors.push(error))
    }
    this.#reservations.clear()
    try {
      await this.#io.close()
    } catch (error) {
      errors.push(error)
    }
    if (errors.length > 0) {
      throw new PersistenceError({
        code: ErrorCode.CLOSE_FAILED,
        detail: `${errors.length} session(s) could not be written or released at close`,
        errors,
        cause: errors[0],
      })
    }
  }

  async #write(binding: Binding, batch: readonly SessionEvent[], texts: readonly string[] | undefined): Promise<void> {
    const id = binding.session.id
    await binding.ready.catch(() => {})
    if (binding.failure !== undefined) throw binding.failure
    const options = { expectedSeq: binding.cursor, lease: binding.lease as Lease }
    await this.#serial(id, () => this.#io.append(id, batch, texts === undefined ? options : { ...options, texts }))
    binding.cursor += batch.length
  }

  /** Takes the lease of `id`, logging a stale holder it replaced (J16). */
  async #acquire(id: string): Promise<Lease> {
    // A vetoed session of this id may still hold (or be taking) the lease: let it go first.
    await this.#discards.get(id)?.catch(() => {})
    const lease = await this.#io.acquire(id)
    const holder = lease.tookOver
    if (holder !== undefined) {
      this.#host.logger.warn(
        `session "${id}": took over the stale lock of pid ${holder.pid} on ${holder.host} (acquired at ${holder.acquiredAt}); that process is gone`,
        { sessionId: id, holder },
      )
    }
    return lease
  }

  #serial<T>(id: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.#chains.get(id) ?? Promise.resolve()
    const next = previous.then(operation, operation)
    const settled = next.then(
      () => {},
      () => {},
    )
    this.#chains.set(id, settled)
    void settled.then(() => {
      if (this.#chains.get(id) === settled) this.#chains.delete(id)
    })
    return next
  }
}

/**
 * C2's byte-exact comparison of a prepared event and the seeded one, up to the envelope's key
 * order, which seeding puts in canonical order (02-session.md §1): a log written with another
 * order is still resumable. A seed from an adopted load keeps the loaded `data` and
 * `sourceEventSeqs` (adoptParsedJson), so those usually match by identity, without serializing.
 */
function sameEvent(left: SessionEvent, right: SessionEvent): boolean {
  if (left === right) return true
  return (
    left.type === right.type &&
    left.seq === right.seq &&
    left.time === right.time &&
    left.ignorable === right.ignorable &&
    sameJson(left.surfaceOp, right.surfaceOp) &&
    sameJson(left.sourceEventSeqs, right.sourceEventSeqs) &&
    sameJson(left.data, right.data)
  )
}

function sameJson(left: unknown, right: unknown): boolean {
  if (left === right) return true
  if (left === undefined || right === undefined) return false
  return jsonText(left as JsonValue) === jsonText(right as JsonValue)
}

function logOf(stored: StoredLog): LoadedLog {
  return { header: stored.header, events: stored.events, revision: stored.revision }
}
