import { z } from 'zod'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { fieldPath, joinField } from '../errors/issue.js'
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { Clock } from '../kernel/host-services.js'
import { typedSchema } from '../session/schema-primitives.js'
import type { SessionEvent } from '../session/session-event.js'
import { jsonText } from '../session/json-text.js'
import { deltaEventTextLength } from './delta-event-text-length.js'
import type { JsonValue } from '../session/json-value.js'

/** The batching options of write-behind (the `writeBehind` config). */
export interface WriteBehindOptions {
  /**
   * How long the first unwritten event may wait before its batch is written, in milliseconds.
   * The window opens when the queue turns non-empty and later events never extend it.
   *
   * @default 200
   */
  readonly windowMs: number
  /**
   * The high-water mark in events: this many unwritten events start a write at once.
   *
   * @default 10000
   */
  readonly maxPendingEvents: number
  /**
   * The high-water mark in JSON size (UTF-16 code units): this much unwritten text starts a write
   * at once.
   *
   * @default 16777216 (16 MiB)
   */
  readonly maxPendingBytes: number
}

const positiveSafeInteger = z
  .number({ error: 'must be a positive safe integer' })
  .int({ error: 'must be a positive safe integer' })
  .min(1, { error: 'must be a positive safe integer' })
  .max(Number.MAX_SAFE_INTEGER, { error: 'must be a positive safe integer' })

/**
 * The schema of {@link WriteBehindOptions}: a strict object whose missing fields take their
 * defaults (`windowMs` an integer 1…2 147 483 647, the high-water marks positive safe integers).
 *
 * @example
 * ```ts
 * writeBehindOptionsSchema.parse({ windowMs: 50 })
 * // { windowMs: 50, maxPendingEvents: 10000, maxPendingBytes: 16777216 }
 * ```
 */
export const writeBehindOptionsSchema = typedSchema<WriteBehindOptions>()(
  z.strictObject(
    {
      windowMs: z
        .number({ error: 'must be an integer from 1 to 2147483647' })
        .int({ error: 'must be an integer from 1 to 2147483647' })
        .min(1, { error: 'must be an integer from 1 to 2147483647' })
        .max(2_147_483_647, { error: 'must be an integer from 1 to 2147483647' })
        .default(200),
      maxPendingEvents: positiveSafeInteger.default(10_000),
      maxPendingBytes: positiveSafeInteger.default(16 * 1024 * 1024),
    },
    // An unknown key keeps zod's message, which names the key; only a non-object gets this one.
    { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'must be a write-behind options object') },
  ),
)

/** What a {@link WriteBehind} is built from. */
export interface WriteBehindInit {
  /** Every timer goes through `clock.setTimer`. */
  readonly clock: Clock
  /** The batching options, as {@link writeBehindOptionsSchema} returns them. */
  readonly options: WriteBehindOptions
  /**
   * Writes one batch (the whole queue, oldest first, frozen) with the JSON text of each event
   * (`texts[i] === JSON.stringify(batch[i])`). `frozen` says whether every event is frozen, so
   * the texts stay true while the write runs and may be stored as they are (committed events
   * always are), and has a text (stream deltas are measured without one: `false` then). `sync`
   * false: the batch must be written but need not be synced yet (a later synced write covers it).
   * Never called twice at once; called with an empty batch only to sync what unsynced writes left
   * (`sync` true). Rejecting (or throwing) is a failed write: the batch goes back to the head of
   * the queue.
   */
  readonly write: (
    batch: readonly SessionEvent[],
    texts: readonly string[],
    frozen: boolean,
    sync: boolean,
  ) => Promise<void>
  /**
   * Whether the automatic writes (window, high-water mark) sync. `false` leaves the syncing to
   * the flushes that ask for it.
   *
   * @default true
   */
  readonly syncAutomaticWrites?: boolean
  /**
   * The background failure report: called once per failed automatic write (window or
   * high-water), with the error and the events now waiting; not for the writes of a
   * {@link WriteBehind.flush} (its promise rejects instead) and not after `dispose()`. Must not
   * throw; a throw is ignored.
   */
  readonly onFailure: (error: unknown, pendingEvents: number) => void
}

type WriteOutcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown }

/**
 * The write-behind queue of one bound session: committed events are batched
 * per window and written one batch at a time; failures keep the events and pause automatic writes;
 * {@link WriteBehind.flush} is the durability barrier.
 *
 * @example
 * ```ts
 * const queue = new WriteBehind({
 *   clock,
 *   options: writeBehindOptionsSchema.parse({}),
 *   write: (batch) => adapter.append(id, batch, { expectedSeq, lease }),
 *   onFailure: (error, pendingEvents) => logger.warn('write failed', { error, pendingEvents }),
 * })
 * queue.enqueue(event)
 * await queue.flush()
 * ```
 */
export class WriteBehind {
  readonly #clock: Clock
  readonly #options: WriteBehindOptions
  readonly #write: WriteBehindInit['write']
  readonly #onFailure: WriteBehindInit['onFailure']
  readonly #syncAutomatic: boolean

  #events: SessionEvent[] = []
  #texts: string[] = []
  #bytes = 0
  /**
   * Queued events without a usable text: not frozen at their top (never committed ones), so their
   * batch's texts may go stale, or stream deltas, measured without one.
   */
  #unfrozen = 0
  /** The settle handling of the write in flight (never rejects). */
  #inFlight: Promise<WriteOutcome> | undefined
  #cancelWindow: (() => void) | undefined
  /** Identifies the current window's timer, so a late callback of a cancelled one is ignored. */
  #window = 0
  /** The window's timer fired while a write was in flight. */
  #windowExpired = false
  #paused = false
  #latestFailed = false
  #lastError: unknown
  #draining = false
  #barrier: Promise<void> | undefined
  /** A flush of the drain under way asked for a sync. */
  #syncWanted = false
  /** A write that did not sync succeeded, and no synced one since. */
  #unsynced = false
  #disposed = false

  /**
   * @param init - the clock, the options, the batch writer and the failure report
   * @throws `InvalidArgumentError` when an option is out of its bounds
   */
  constructor(init: WriteBehindInit) {
    const parsed = writeBehindOptionsSchema.safeParse(init.options)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const path = fieldPath(issue?.path.map((part) => (typeof part === 'number' ? part : String(part))) ?? [])
      throw new InvalidArgumentError({
        argument: joinField('options', path),
        reason: issue?.message ?? 'invalid',
        value: init.options,
      })
    }
    this.#clock = init.clock
    this.#options = parsed.data
    this.#write = init.write
    this.#onFailure = init.onFailure
    this.#syncAutomatic = init.syncAutomaticWrites !== false
  }

  /** Whether a write that did not sync succeeded and no synced write has covered it yet. */
  get unsynced(): boolean {
    return this.#unsynced
  }

  /** Whether events wait or a write is in flight. */
  get hasWork(): boolean {
    return this.#events.length > 0 || this.#inFlight !== undefined
  }

  /** Events waiting to be written (a write in flight not counted; a failed batch counted again). */
  get pendingEvents(): number {
    return this.#events.length
  }

  /** The JSON size of the waiting events, in UTF-16 code units. */
  get pendingBytes(): number {
    return this.#bytes
  }

  /** Whether automatic writes are paused after a failure; the next enqueue or a flush resumes. */
  get paused(): boolean {
    return this.#paused
  }

  /**
   * Whether the commit guard must refuse new events: the high-water mark is reached and the
   * latest write attempt failed. The next successful write clears it.
   */
  get backpressured(): boolean {
    return this.#latestFailed && this.#highWater()
  }

  /** The error of the latest write attempt when it failed; `undefined` once a write succeeds. */
  get lastError(): unknown {
    return this.#lastError
  }

  /**
   * Queues one committed event (O(1), kept by reference; its JSON text is measured once, here).
   * Opens the window when the queue turns non-empty, resumes a paused queue with a fresh full
   * window, and writes at once at the high-water mark.
   *
   * @param event - a committed, frozen event
   * @throws `PersistenceError CLOSED` after {@link WriteBehind.dispose}
   */
  enqueue(event: SessionEvent): void {
    if (this.#disposed) {
      throw new PersistenceError({
        code: ErrorCode.CLOSED,
        detail: `write-behind is disposed; event seq ${event.seq} refused`,
      })
    }
    // A stream delta is measured without building its text: the adapter encodes it once, in its
    // chunk row, so its batch goes without texts (like a batch with an unfrozen event).
    const deltaLength = deltaEventTextLength(event)
    const text = deltaLength === undefined ? jsonText(event as unknown as JsonValue) : ''
    // Passed on to the adapter with the batch; only a frozen event's text stays true.
    if (deltaLength !== undefined || !Object.isFrozen(event) || !Object.isFrozen(event.data)) this.#unfrozen++
    const wasEmpty = this.#events.length === 0
    this.#events.push(event)
    this.#texts.push(text)
    this.#bytes += deltaLength ?? text.length
    if (this.#draining) return
    if (this.#paused) {
      this.#paused = false
      this.#openWindow()
    } else if (wasEmpty) {
      this.#openWindow()
    }
    if (this.#highWater() && this.#inFlight === undefined) void this.#startWrite(true)
  }

  /**
   * Writes everything queued, now: cancels the window, awaits a write in flight whatever its
   * outcome, resumes, and writes until the queue is empty, events queued meanwhile included.
   * Concurrent calls share one promise (a call that asks for a sync makes the shared drain sync).
   * Nothing to do → resolves at once, with no write.
   *
   * @param options - `sync: false` writes without syncing (a later synced flush or write covers
   *   it); by default the flush ends with everything synced, unsynced earlier writes included
   * @returns resolves once every event queued before it settles is written (and synced, unless
   *   `sync` is false)
   * @throws (rejects) the error of the failed write (the batch is kept and automatic writes pause,
   *   with no `onFailure` report); `PersistenceError CLOSED` when disposed with events unwritten
   */
  flush(options?: { readonly sync?: boolean }): Promise<void> {
    const sync = options?.sync !== false
    if (sync) this.#syncWanted = true
    if (this.#barrier !== undefined) return this.#barrier
    if (this.#events.length === 0 && this.#inFlight === undefined && !(sync && this.#unsynced)) {
      this.#syncWanted = false
      return Promise.resolve()
    }
    const barrier = this.#drain()
    if (this.#draining) this.#barrier = barrier
    return barrier
  }

  /**
   * Retries a queue paused by a failed write at once (the owner learned that storage answers
   * again, e.g. a call that timed out completed late). Does nothing unless paused with events
   * waiting and no write in flight, or after `dispose()` or during a flush. A failure of this
   * write is reported like any automatic one.
   */
  resume(): void {
    if (!this.#paused || this.#disposed || this.#draining) return
    if (this.#events.length === 0 || this.#inFlight !== undefined) return
    this.#paused = false
    void this.#startWrite(true)
  }

  /**
   * Cancels the window; no write starts afterwards (a write in flight still settles, unreported).
   * Idempotent. Unwritten events stay counted; a later `flush` rejects if any remain.
   */
  dispose(): void {
    this.#disposed = true
    this.#closeWindow()
  }

  async #drain(): Promise<void> {
    this.#draining = true
    try {
      this.#closeWindow()
      if (this.#inFlight !== undefined) await this.#inFlight
      this.#paused = false
      while (this.#events.length > 0 || (this.#syncWanted && this.#unsynced)) {
        if (this.#disposed) {
          // No write starts after dispose, not even a sync.
          if (this.#events.length === 0) break
          throw new PersistenceError({
            code: ErrorCode.CLOSED,
            detail: `write-behind is disposed with ${this.#events.length} unwritten events`,
          })
        }
        // With nothing queued, this is an empty write that only syncs what earlier ones wrote.
        const outcome = await this.#startWrite(false, this.#syncWanted)
        if (!outcome.ok) throw outcome.error
      }
    } finally {
      this.#draining = false
      this.#barrier = undefined
      this.#syncWanted = false
    }
  }

  #highWater(): boolean {
    return this.#events.length >= this.#options.maxPendingEvents || this.#bytes >= this.#options.maxPendingBytes
  }

  #openWindow(): void {
    this.#closeWindow()
    const window = ++this.#window
    this.#cancelWindow = this.#clock.setTimer(() => this.#onWindowEnd(window), this.#options.windowMs)
  }

  #closeWindow(): void {
    this.#window++
    this.#windowExpired = false
    const cancel = this.#cancelWindow
    this.#cancelWindow = undefined
    cancel?.()
  }

  #onWindowEnd(window: number): void {
    if (window !== this.#window) return
    this.#cancelWindow = undefined
    if (this.#disposed || this.#draining || this.#paused || this.#events.length === 0) return
    if (this.#inFlight !== undefined) this.#windowExpired = true
    else void this.#startWrite(true)
  }

  /** Takes the whole queue as one batch and writes it; the returned promise never rejects. */
  #startWrite(automatic: boolean, sync: boolean = this.#syncAutomatic): Promise<WriteOutcome> {
    this.#closeWindow()
    // Frozen, so the texts passed on with it stay aligned with its events.
    const batch = Object.freeze(this.#events)
    const texts = this.#texts
    const bytes = this.#bytes
    const unfrozen = this.#unfrozen
    this.#events = []
    this.#texts = []
    this.#bytes = 0
    this.#unfrozen = 0
    let attempt: Promise<void>
    try {
      attempt = Promise.resolve(this.#write(batch, texts, unfrozen === 0, sync))
    } catch (error) {
      attempt = Promise.reject(error)
    }
    const settled = attempt.then(
      (): WriteOutcome => {
        this.#inFlight = undefined
        this.#latestFailed = false
        this.#lastError = undefined
        // A synced write covers every write before it; an unsynced one leaves them all unsynced.
        if (sync) this.#unsynced = false
        else if (batch.length > 0) this.#unsynced = true
        if (automatic) this.#afterAutomaticWrite()
        return { ok: true }
      },
      (error: unknown): WriteOutcome => {
        this.#inFlight = undefined
        this.#events = batch.concat(this.#events)
        this.#texts = texts.concat(this.#texts)
        this.#bytes += bytes
        this.#unfrozen += unfrozen
        this.#closeWindow()
        this.#paused = true
        this.#latestFailed = true
        this.#lastError = error
        if (automatic && !this.#disposed) {
          try {
            this.#onFailure(error, this.#events.length)
          } catch {
            // The report must not throw (documented); nothing else could observe this one.
          }
        }
        return { ok: false, error }
      },
    )
    this.#inFlight = settled
    return settled
  }

  /** After a successful automatic write: the next one starts now if its window expired meanwhile or the high-water mark is reached. */
  #afterAutomaticWrite(): void {
    if (this.#disposed || this.#draining || this.#paused || this.#events.length === 0) return
    if (this.#windowExpired || this.#highWater()) void this.#startWrite(true)
  }
}
