/**
 * A session's log read from a seq on by any process: the stored events, then each new one as
 * whichever process holds the session appends it. It keeps one seq, never a copy of the log: after
 * every wake-up (a notification, a poll) it reads the log from that seq, so notifications that
 * coalesce, arrive late, or arrive before the read can see the row cost a read, never an event.
 *
 * @module
 */
import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { LastEventIdError } from '../errors/last-event-id-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { SessionEvent } from '../session/session-event.js'
import { type AgentStreamEvent, asStreamEvent } from '../stream/agent-stream-event.js'
import { parseSeq } from '../stream/parse-seq.js'
import type { AppendWake } from './append-listener.js'

/** When a tail ends on its own (it always ends when its signal aborts). */
export type SessionTailUntil = 'turn-end' | 'abort'

/** Options of `tail(sessionId, options)`. */
export interface SessionTailOptions {
  /**
   * The first seq to yield: from `0` to the log's length (its next seq, to hear only new events).
   * A seq past the end rejects the first read with `InvalidArgumentError`.
   *
   * @defaultValue 0 (the whole log)
   */
  readonly fromSeq?: number
  /**
   * The last seq the reader already has, as a number or as the raw `Last-Event-ID` header value:
   * the tail starts right after it (and `fromSeq` is ignored). `null` and `undefined` mean "none".
   * A value that is not a decimal seq, or a seq past the log's end, rejects the first read with
   * `LastEventIdError`.
   */
  readonly lastEventId?: string | number | null
  /** Ends the tail when aborted: the iteration finishes (no error) and its connection is given back. */
  readonly signal?: AbortSignal
  /**
   * `'turn-end'` ends the tail after the first `turn/end` it yields (at once when the
   * `lastEventId` event is itself a `turn/end`: the reader has the whole turn); `'abort'` follows
   * the session until `signal` aborts or the tail's factory closes.
   *
   * @defaultValue 'abort'
   */
  readonly until?: SessionTailUntil
  /**
   * How often to read the log when nothing woke the tail, in milliseconds: the bound on how late
   * an append is seen when its notification is lost or not sent.
   *
   * @defaultValue the factory's `pollMs`
   */
  readonly pollMs?: number
  /**
   * Whether a session that is not stored yet is waited for (its first append, by any process,
   * starts the tail) rather than refused with `PersistenceError` `SESSION_NOT_FOUND`: for a client
   * that may subscribe before the session's first turn was written.
   *
   * @defaultValue false
   */
  readonly waitForSession?: boolean
}

/** A session's events from a seq on, stored then live, each seq exactly once and in order. */
export interface SessionTail extends AsyncIterable<AgentStreamEvent> {
  /** The session read. */
  readonly sessionId: string
  /** The seq the next yielded event will have. */
  readonly nextSeq: number
}

/** Where a tail reads and who wakes it. @internal */
export interface TailSource {
  /**
   * The session's events with `seq ≥ fromSeq`, in order.
   *
   * @throws `PersistenceError` `SESSION_NOT_FOUND` for an unknown session; any read failure
   */
  read(sessionId: string, fromSeq: number, signal: AbortSignal): Promise<readonly SessionEvent[]>
  /** The session's next seq (`undefined` when it is not stored), for the messages of a refused start. */
  nextSeqOf(sessionId: string): Promise<number | undefined>
  /** Wakes the tail for each announced append, until the returned function is called; absent: polling only. */
  subscribe?(sessionId: string, wake: AppendWake): () => void
  /** Whether a failed read is worth trying again after `pollMs` (the database unreachable, say). */
  retryable(error: unknown): boolean
}

/** The checked options of one tail. @internal */
export interface TailStart {
  readonly sessionId: string
  /** The first seq to yield, or the raw `Last-Event-ID` to start after. */
  readonly start: { readonly fromSeq: number } | { readonly lastEventId: string | number }
  readonly until: SessionTailUntil
  readonly pollMs: number
  readonly signal: AbortSignal | undefined
  readonly waitForSession: boolean
}

/** The first wait after a notification that the read did not see yet; it doubles up to `pollMs`. */
const firstRecheckMs = 5

/**
 * The cursor of one tail: a seq, the events of the last read, and what wakes it.
 *
 * @internal
 */
export class TailCursor implements AsyncIterator<AgentStreamEvent> {
  readonly #source: TailSource
  readonly #options: TailStart
  /** Ends the current read or wait: the caller's signal, or `return()`. */
  readonly #stop = new AbortController()
  readonly #onEnd: () => void
  #next = 0
  #started = false
  #finished = false
  #buffer: readonly SessionEvent[] = []
  #index = 0
  /** The greatest next seq an announcement named. */
  #announced = -1
  /** Woken since the last read started. */
  #dirty = false
  #wake: (() => void) | undefined
  #unsubscribe: (() => void) | undefined
  readonly #onAbort = (): void => this.#finish()

  constructor(source: TailSource, options: TailStart, onEnd: () => void) {
    this.#source = source
    this.#options = options
    this.#onEnd = onEnd
    if ('fromSeq' in options.start) this.#next = options.start.fromSeq
    const { signal } = options
    if (signal?.aborted === true) {
      this.#finish()
      return
    }
    signal?.addEventListener('abort', this.#onAbort, { once: true })
  }

  get sessionId(): string {
    return this.#options.sessionId
  }

  get nextSeq(): number {
    return this.#next
  }

  async next(): Promise<IteratorResult<AgentStreamEvent>> {
    let recheckMs = firstRecheckMs
    for (;;) {
      if (this.#finished) return { value: undefined, done: true }
      const event = this.#buffer[this.#index]
      if (event !== undefined) {
        this.#index++
        // Never yield a seq twice, whatever a read returns.
        if (event.seq < this.#next) continue
        this.#next = event.seq + 1
        if (this.#options.until === 'turn-end' && event.type === 'turn/end') this.#finish()
        return { value: asStreamEvent(event), done: false }
      }
      try {
        if (!this.#started) {
          await this.#start()
          continue
        }
        this.#dirty = false
        const events = await this.#read(this.#next)
        if (events === undefined) continue
        if (events.length > 0) {
          this.#buffer = events
          this.#index = 0
          recheckMs = firstRecheckMs
          continue
        }
        if (this.#dirty) continue
        if (this.#announced > this.#next) {
          // Announced, but this read's snapshot did not show it yet: look again soon.
          await this.#sleep(recheckMs)
          recheckMs = Math.min(recheckMs * 2, this.#options.pollMs)
          continue
        }
        await this.#sleep(this.#options.pollMs)
      } catch (error) {
        if (this.#finished) return { value: undefined, done: true }
        this.#finish()
        throw error
      }
    }
  }

  async return(): Promise<IteratorResult<AgentStreamEvent>> {
    this.#finish()
    return { value: undefined, done: true }
  }

  /**
   * The first read: it subscribes first (so no announcement after the read is missed), checks that
   * the session exists and the start is within its log, and reads from the seq before the start:
   * its event proves the start is within the log, and tells whether a turn-end tail resuming
   * after it is done already.
   */
  async #start(): Promise<void> {
    const { sessionId, start } = this.#options
    if (this.#unsubscribe === undefined && this.#source.subscribe !== undefined) {
      this.#unsubscribe = this.#source.subscribe(sessionId, (nextSeq) => this.#announce(nextSeq))
    }
    let first: number
    if ('lastEventId' in start) {
      const seq = parseSeq(start.lastEventId)
      if (seq === undefined) throw await this.#refusedLastEventId('not-a-seq')
      first = seq + 1
    } else first = start.fromSeq
    this.#dirty = false
    let events: readonly SessionEvent[] | undefined
    try {
      events = await this.#read(Math.max(0, first - 1))
    } catch (error) {
      if (!this.#options.waitForSession || !isNotFound(error)) throw error
      // Its first append announces it (or the next poll finds it).
      await this.#sleep(this.#options.pollMs)
      return
    }
    if (events === undefined) return
    if (first > 0) {
      const before = events[0]
      if (before === undefined || before.seq > first - 1) {
        if ('lastEventId' in start) throw await this.#refusedLastEventId('beyond-log')
        const nextSeq = await this.#source.nextSeqOf(sessionId)
        throw new InvalidArgumentError({
          argument: 'options.fromSeq',
          reason: `is past the end of the log of session ${JSON.stringify(sessionId)} (its next seq is ${nextSeq ?? 0})`,
          value: start.fromSeq,
        })
      }
      this.#started = true
      this.#next = first
      this.#buffer = events
      this.#index = 0
      // A reader resuming after a turn's end has that whole turn; one that starts at a seq asked for what follows.
      if ('lastEventId' in start && this.#options.until === 'turn-end' && before.type === 'turn/end') this.#finish()
      return
    }
    this.#started = true
    this.#next = 0
    this.#buffer = events
    this.#index = 0
  }

  async #refusedLastEventId(problem: 'not-a-seq' | 'beyond-log'): Promise<LastEventIdError | PersistenceError> {
    const { sessionId, start } = this.#options
    const nextSeq = await this.#source.nextSeqOf(sessionId)
    if (nextSeq === undefined) return notFound(sessionId)
    return new LastEventIdError({
      value: 'lastEventId' in start ? start.lastEventId : undefined,
      problem,
      sessionId,
      lastSeq: nextSeq - 1,
    })
  }

  /**
   * Reads from `fromSeq`; a failure worth another try waits `pollMs` and resolves `undefined` (the
   * caller loops); anything else rejects.
   */
  async #read(fromSeq: number): Promise<readonly SessionEvent[] | undefined> {
    try {
      return await this.#source.read(this.#options.sessionId, fromSeq, this.#stop.signal)
    } catch (error) {
      if (this.#finished) return undefined
      if (!this.#source.retryable(error)) throw error
      await this.#sleep(this.#options.pollMs)
      return undefined
    }
  }

  #announce(nextSeq: number | undefined): void {
    if (nextSeq !== undefined) {
      // Nothing new for this reader: it already yielded every event up to that seq.
      if (nextSeq <= this.#next && this.#started) return
      if (nextSeq > this.#announced) this.#announced = nextSeq
    }
    this.#dirty = true
    this.#resolveWait()
  }

  /** Waits `ms`, or less when woken or finished. */
  #sleep(ms: number): Promise<void> {
    if (this.#finished || this.#dirty) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.#resolveWait(), ms)
      this.#wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  #resolveWait(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }

  #finish(): void {
    if (this.#finished) return
    this.#finished = true
    this.#buffer = []
    this.#options.signal?.removeEventListener('abort', this.#onAbort)
    this.#unsubscribe?.()
    this.#unsubscribe = undefined
    this.#stop.abort()
    this.#resolveWait()
    this.#onEnd()
  }
}

function isNotFound(error: unknown): boolean {
  return PersistenceError.is(error) && error.code === ErrorCode.SESSION_NOT_FOUND
}

/**
 * The error of a session that is not stored.
 *
 * @param sessionId - the session
 * @returns `PersistenceError` `SESSION_NOT_FOUND` naming it
 * @internal
 */
export function notFound(sessionId: string): PersistenceError {
  return new PersistenceError({
    code: ErrorCode.SESSION_NOT_FOUND,
    sessionId,
    detail: 'no stored log to tail',
  })
}
