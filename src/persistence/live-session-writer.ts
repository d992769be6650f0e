import { ErrorCode } from '../errors/codes.js'
import { PersistenceBackpressureError } from '../errors/persistence-backpressure-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SeqConflictError } from '../errors/seq-conflict-error.js'
import { jsonText } from '../session/json-text.js'
import type { JsonValue } from '../session/json-value.js'
import { systemClock } from '../kernel/host-services.js'
import type { SessionEvent } from '../session/session-event.js'
import type { Session } from '../session/session.js'
import { type BoundedOperation, boundedCall, type CallBound } from './bounded-call.js'
import type { CoordinatorHost } from './coordinator-host.js'
import type { Lease } from './persistence-adapter.js'
import type { SessionLeases } from './session-leases.js'
import { WriteBehind } from './write-behind.js'
import { wrapAdapterError } from './wrap-adapter-errors.js'

/** A live session, its write-behind queue and where its stored log stands. */
interface Binding {
  readonly session: Session
  readonly writeBehind: WriteBehind
  /** Settles once the lease is held and the log registered (at once for a prepared id). */
  ready: Promise<void>
  lease: Lease | undefined
  /** The seq the next write starts at: the stored next seq. */
  cursor: number
  /** Why the lease or the registration failed; every write then fails with it (unless `retryable`). */
  failure: unknown
  /**
   * The failure was storage being unreachable (`WRITE_FAILED`), not a refusal: the next write
   * tries the lease and the registration again instead of failing for good.
   */
  retryable: boolean
  /** A lease taken for a registration that has not succeeded yet; kept across its retries. */
  held: Lease | undefined
  /** The step `ready` is in, named when it times out. */
  step: 'acquire' | 'create'
  /**
   * The append in flight, settled or not (never rejects): at most one per session, so a write
   * that timed out and its retry never race, and the retry starts at the cursor the late one left.
   */
  appending: Promise<void> | undefined
  /**
   * How many events from `cursor` on the last append sent before it failed. Storage may have
   * committed them with only the reply lost: when the retry, grown by later events, conflicts, it
   * sends exactly them again (an idempotent re-append), then the rest.
   */
  unconfirmed: number
}

/**
 * The coordinator's live side: binds each live session to a write-behind queue, writes its
 * committed events behind, refuses events while writes fail at the high-water mark, and flushes
 * and releases everything at dispose and close.
 *
 * @internal
 */
export class LiveSessionWriter {
  readonly #host: CoordinatorHost
  readonly #leases: SessionLeases
  readonly #bindings = new Map<string, Binding>()
  /** Bindings of disposed sessions whose final flush failed, displaced by a new session of their id. */
  readonly #retained: Binding[] = []
  readonly #bound: CallBound
  #closing: Promise<void> | undefined

  /**
   * @param host - the harness side: adapter, clock, logger, write-behind options, failure report
   * @param leases - the per-session queues and leases shared with the stored-log operations
   */
  constructor(host: CoordinatorHost, leases: SessionLeases) {
    this.#host = host
    this.#leases = leases
    // Real time, not the harness clock: a fake clock moved on by a test gives a disk no more time,
    // and a hung storage call is a real-time fault.
    this.#bound = { clock: systemClock(), timeoutMs: host.writeTimeoutMs }
  }

  /**
   * Binds a new live session (the `session/created` listener): a prepared id adopts its
   * preparation and lease; any other id is created in storage lazily.
   *
   * @param session - the new session
   * @throws `PersistenceError` `CLOSED` while closing; `SESSION_EXISTS` when a prepared id's seed
   *   does not start with the prepared events
   */
  bind(session: Session): void {
    const id = session.id
    if (this.#closing !== undefined) {
      // Refused, not ignored: an unbound session's flush would resolve without writing anything.
      throw new PersistenceError({
        code: ErrorCode.CLOSED,
        sessionId: id,
        detail: 'persistence is closing; no new session can be stored',
      })
    }
    const reservation = this.#leases.reservations.get(id)
    let cursor = 0
    let lease: Lease | undefined
    /** The lease of a new id reserved before its session existed: held already, its log still to create. */
    let reserved: Lease | undefined
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
      this.#leases.reservations.delete(id)
      reservation.released = true
      if (reservation.fresh === true) reserved = reservation.lease
      else lease = reservation.lease
      cursor = prepared.length
    }
    const binding: Binding = {
      session,
      writeBehind: undefined as unknown as WriteBehind,
      ready: Promise.resolve(),
      lease,
      cursor,
      failure: undefined,
      retryable: false,
      held: reserved,
      step: 'acquire',
      appending: undefined,
      unconfirmed: 0,
    }
    const writeBehind = new WriteBehind({
      clock: this.#host.clock,
      options: this.#host.writeBehind,
      write: (batch, texts, frozen, sync) => this.#write(binding, batch, frozen ? texts : undefined, sync),
      // At turn durability only the turn's end (and explicit flushes) sync.
      syncAutomaticWrites: this.#host.durability !== 'turn',
      onFailure: (error, pendingEvents) => {
        this.#host.logger.warn(`session "${id}": a background write failed; events are kept and retried`, {
          error,
          pendingEvents,
        })
        this.#host.writeFailed(id, error, pendingEvents)
      },
    })
    ;(binding as { writeBehind: WriteBehind }).writeBehind = writeBehind
    if (lease === undefined) this.#register(binding)
    const previous = this.#bindings.get(id)
    // A disposed session whose last flush failed keeps its queue and lease until close retries it.
    if (previous !== undefined) this.#retained.push(previous)
    this.#bindings.set(id, binding)
    for (const event of session.events.slice(cursor)) writeBehind.enqueue(event)
  }

  /**
   * Enqueues a committed event of a bound session (the `session/event` listener).
   *
   * @param session - the session
   * @param event - its new event
   */
  record(session: Session, event: SessionEvent): void {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session) return
    binding.writeBehind.enqueue(event)
  }

  /**
   * The commit guard: refuses events while the session is back-pressured (its queue is at the
   * high-water mark and the last write failed), so memory cannot grow without bound.
   *
   * @param event - the event about to be committed
   * @param session - its session
   * @throws `PersistenceBackpressureError` while back-pressured
   */
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
   * Writes every pending event of a live session (the `session/flush` listener).
   *
   * @param session - the session
   * @param sync - `false`: written in order, not synced yet (a later synced flush covers it)
   * @returns resolves once everything committed before the call is written, and durable unless
   *   `sync` is false
   */
  async flush(session: Session, sync = true): Promise<void> {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session) return
    await binding.writeBehind.flush({ sync })
  }

  /**
   * The `session/disposed` listener: flush, release, forget.
   *
   * @param session - the disposed session
   */
  async unbind(session: Session): Promise<void> {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session) return
    await binding.writeBehind.flush()
    this.#bindings.delete(session.id)
    binding.writeBehind.dispose()
    await this.#settle(binding)
    await this.#release(binding)
  }

  /**
   * The `session/disposed` listener for a session vetoed at `session/created`: it never became
   * live, so its queued events are dropped, not written; its lease (a fresh one, or the one its
   * preparation held) is released, which also frees the id in the adapter.
   *
   * @param session - the vetoed session
   */
  discard(session: Session): Promise<void> {
    const binding = this.#bindings.get(session.id)
    if (binding === undefined || binding.session !== session) return Promise.resolve()
    this.#bindings.delete(session.id)
    binding.writeBehind.dispose()
    const done = (async () => {
      await this.#settle(binding)
      await this.#release(binding)
    })()
    // Close, and a new lease for the same id, wait for it: the lease may still be being acquired.
    const id = session.id
    this.#leases.discards.set(id, done)
    const forget = (): void => {
      if (this.#leases.discards.get(id) === done) this.#leases.discards.delete(id)
    }
    done.then(forget, forget)
    return done
  }

  /**
   * Closes: refuses new bindings, flushes every live session in parallel, releases every lease
   * and preparation, then always closes the adapter. Idempotent (one shared promise).
   *
   * @throws (rejects) `PersistenceError` `CLOSE_FAILED` naming every session that could not be
   *   written or released
   */
  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    const errors: unknown[] = []
    // A discard's own steps are bounded by the write timeout already.
    for (const discarding of [...this.#leases.discards.values()])
      await discarding.catch((error: unknown) => errors.push(error))
    const bindings = [...this.#retained.splice(0), ...this.#bindings.values()]
    const outcomes = await Promise.allSettled(bindings.map((binding) => binding.writeBehind.flush()))
    // Forget the bindings before disposing their queues: a late event is then ignored, not thrown.
    this.#bindings.clear()
    // Each session's lease goes back on its own: a hung release of one must not hold up the rest.
    const released = await Promise.all(
      outcomes.map(async (outcome, index) => {
        const binding = bindings[index] as Binding
        const failures: unknown[] = outcome.status === 'rejected' ? [outcome.reason] : []
        binding.writeBehind.dispose()
        try {
          await this.#settle(binding)
          await this.#release(binding)
        } catch (error) {
          failures.push(error)
        }
        return failures
      }),
    )
    for (const failures of released) errors.push(...failures)
    const reservations = [...this.#leases.reservations]
    const returned = await Promise.all(
      reservations.map(([id, reservation]) => {
        reservation.released = true
        return boundedCall(this.#bound, reservation.lease.release(), id, 'release').then(
          () => undefined,
          (error: unknown) => ({ error }),
        )
      }),
    )
    for (const failure of returned) if (failure !== undefined) errors.push(failure.error)
    this.#leases.reservations.clear()
    try {
      await boundedCall(this.#bound, this.#leases.io.close(), undefined, 'close')
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

  /**
   * Takes the lease of a new session and registers its log (`binding.ready`). A refusal (the id
   * is locked or exists, a bad header) gives the lease back and fails every later write. Storage
   * that cannot be reached (`WRITE_FAILED`: a database that is down) keeps the lease if it was
   * taken and lets the next write try again, so a session created just before an outage is
   * stored once storage is back, like the sessions that were registered before it.
   */
  #register(binding: Binding): void {
    const id = binding.session.id
    binding.failure = undefined
    binding.retryable = false
    binding.ready = (async () => {
      binding.step = 'acquire'
      binding.held ??= await this.#leases.acquire(id)
      binding.step = 'create'
      try {
        await this.#leases.io.create(binding.session.header)
      } catch (error) {
        if (isUnreachable(error)) throw error
        const held = binding.held
        binding.held = undefined
        await held.release()
        throw error
      }
      binding.lease = binding.held
      binding.held = undefined
    })()
    binding.ready.catch((error: unknown) => {
      binding.retryable = isUnreachable(error)
      // The lease's own release may fail raw; the adapter calls are wrapped already.
      binding.failure = wrapAdapterError(id, error, 'create')
    })
  }

  /**
   * Waits for the lease and the registration of a binding, bounded by the write timeout (a hung
   * `acquire` or `create` must not hold a dispose or a close for ever); their failure stays on
   * the binding, for the writes.
   */
  async #settle(binding: Binding): Promise<void> {
    try {
      await boundedCall(
        this.#bound,
        binding.ready.catch(() => {}),
        binding.session.id,
        () => binding.step,
      )
    } catch (error) {
      // Nobody waits for this binding any more: a lease that comes in late goes straight back.
      void binding.ready.then(
        () => binding.lease?.release().catch(() => {}),
        () => binding.held?.release().catch(() => {}),
      )
      throw error
    }
  }

  /** Gives a binding's lease back, bounded by the write timeout. */
  async #release(binding: Binding): Promise<void> {
    const lease = binding.lease ?? binding.held
    if (lease === undefined) return
    await boundedCall(this.#bound, lease.release(), binding.session.id, 'release')
  }

  /**
   * One write of the queue, bounded as a whole by the write timeout: waits for the lease and the
   * registration, then for an append still in flight (one that timed out earlier), then appends
   * what is not stored yet. A timeout rejects the write, so the queue keeps the batch, while the
   * append itself goes on: when it completes late, the cursor moves past it and the retry skips
   * those events; when it fails, the retry writes them all. Either way the adapter sees each seq
   * once, and a queue paused by the timeout is resumed, so the events get written when storage
   * returns.
   */
  async #write(
    binding: Binding,
    batch: readonly SessionEvent[],
    texts: readonly string[] | undefined,
    sync: boolean,
  ): Promise<void> {
    const id = binding.session.id
    // Until the lease and the registration are in, a timeout names the step they hang in.
    let appendStep = false
    let timedOut = false
    const attempt = (async () => {
      await binding.ready.catch(() => {})
      if (binding.failure !== undefined && binding.retryable) {
        this.#register(binding)
        await binding.ready.catch(() => {})
      }
      if (binding.failure !== undefined) throw binding.failure
      appendStep = true
      while (binding.appending !== undefined) await binding.appending
      // Timed out while waiting: the queue kept the batch, and its retry starts now storage answers.
      if (timedOut) {
        binding.writeBehind.resume()
        return
      }
      const appending = this.#leases.serial(id, () => this.#append(binding, batch, texts, sync))
      const settled = appending.then(
        () => {},
        () => {},
      )
      binding.appending = settled
      void settled.then(() => {
        if (binding.appending === settled) binding.appending = undefined
        if (timedOut) binding.writeBehind.resume()
      })
      await appending
    })()
    try {
      await boundedCall(this.#bound, attempt, id, (): BoundedOperation => (appendStep ? 'append' : binding.step))
    } catch (error) {
      if (PersistenceError.is(error) && error.code === ErrorCode.WRITE_TIMEOUT) timedOut = true
      throw error
    }
  }

  /** Appends the events of `batch` the stored log does not hold yet (an earlier append may have completed late). */
  async #append(
    binding: Binding,
    batch: readonly SessionEvent[],
    texts: readonly string[] | undefined,
    sync: boolean,
  ): Promise<void> {
    if (batch.length === 0) {
      // Nothing new: an empty synced append syncs what earlier unsynced appends wrote.
      if (sync && binding.lease !== undefined)
        await this.#leases.io.append(binding.session.id, [], { expectedSeq: binding.cursor, lease: binding.lease })
      return
    }
    const first = batch.findIndex((event) => event.seq >= binding.cursor)
    if (first === -1) return
    const events = first === 0 ? batch : batch.slice(first)
    const eventTexts = texts === undefined || first === 0 ? texts : texts.slice(first)
    const resend = binding.unconfirmed
    try {
      await this.#appendOnce(binding, events, eventTexts, sync)
    } catch (error) {
      // The append that failed last may have committed with only its reply lost: grown by the
      // events queued since, it conflicts. Sent again exactly as it was, it is an idempotent
      // re-append (or a plain one, had it not committed); then the rest follows.
      if (!(SeqConflictError.is(error) && resend > 0 && resend < events.length)) throw error
      await this.#appendOnce(binding, events.slice(0, resend), eventTexts?.slice(0, resend), sync)
      await this.#appendOnce(binding, events.slice(resend), eventTexts?.slice(resend), sync)
    }
  }

  /** One adapter append at the cursor; remembers what it sent until it is confirmed. */
  async #appendOnce(
    binding: Binding,
    events: readonly SessionEvent[],
    texts: readonly string[] | undefined,
    sync: boolean,
  ): Promise<void> {
    const options = { expectedSeq: binding.cursor, lease: binding.lease as Lease, ...(sync ? {} : { sync: false }) }
    binding.unconfirmed = events.length
    await this.#leases.io.append(binding.session.id, events, texts === undefined ? options : { ...options, texts })
    binding.unconfirmed = 0
    binding.cursor += events.length
  }
}

/**
 * Whether a prepared event and the seeded one are the same, byte for byte up to the envelope's
 * key order, which seeding puts in canonical order: a log written with another order is still
 * resumable. A seed from an adopted load keeps the loaded `data` and `sourceEventSeqs`, so those
 * usually match by identity, without serializing.
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

/** Whether a lease or registration failure is storage being unreachable, worth trying again. */
function isUnreachable(error: unknown): boolean {
  return PersistenceError.is(error) && error.code === ErrorCode.WRITE_FAILED
}
