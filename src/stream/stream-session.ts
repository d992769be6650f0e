import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { LastEventIdError } from '../errors/last-event-id-error.js'
import type { Context } from '../kernel/context.js'
import type { Session } from '../session/session.js'
import { type AgentStreamEvent, asStreamEvent } from './agent-stream-event.js'
import { parseSeq } from './parse-seq.js'

/**
 * What a session stream reads: an agent, or any `{ session, ctx }` pair, such as
 * `{ session, ctx: harness.ctx }` for a live session without an agent.
 */
export interface SessionOwner {
  /** The live session to read. */
  readonly session: Session
  /** A context of the session's harness: the stream listens for commits at its root. */
  readonly ctx: Context
}

/** What a session stream reads: an agent, or a live session with a context of its harness. */
export type SessionStreamSource = SessionOwner

/** When a session stream ends on its own. */
export type SessionStreamUntil = 'turn-end' | 'dispose'

/** Options of {@link streamSession}. */
export interface SessionStreamOptions {
  /**
   * The last seq the reader already has, as a number or as the raw `Last-Event-ID` header value:
   * the stream starts right after it. `null` and `undefined` mean "none" (then `from` applies).
   * Anything else that is not a decimal seq, or a seq past the log's end, is refused with
   * {@link LastEventIdError}.
   */
  readonly lastEventId?: string | number | null
  /**
   * The first seq to yield when there is no `lastEventId`; at most the log's length (the next seq).
   *
   * @default 0 (the whole log)
   */
  readonly from?: number
  /**
   * `'turn-end'` ends the stream after the first `turn/end` it yields (at once when the
   * `lastEventId` event is itself a `turn/end`: the reader has the whole turn); `'dispose'` follows
   * the session until it is disposed (its agent disposed) or the harness closes. Either way the
   * stream ends then, after the events committed until then.
   *
   * @default 'dispose'
   */
  readonly until?: SessionStreamUntil
}

/** A session's events from a seq on: the stored ones, then the live ones, each seq exactly once. */
export interface SessionStream extends AsyncIterable<AgentStreamEvent> {
  /** The session read. */
  readonly sessionId: string
  /** The seq the next yielded event will have. */
  readonly nextSeq: number
}

function resumeSeq(value: string | number, session: Session): number {
  const seq = parseSeq(value)
  const lastSeq = session.length - 1
  if (seq === undefined) {
    throw new LastEventIdError({ value, problem: 'not-a-seq', sessionId: session.id, lastSeq })
  }
  if (seq > lastSeq) throw new LastEventIdError({ value, problem: 'beyond-log', sessionId: session.id, lastSeq })
  return seq
}

const sourceReason = 'must be an agent, or { session, ctx } with a live session and a context of its harness'

function sessionOf(source: unknown): Session {
  const session = (source as { readonly session?: unknown } | null)?.session as Partial<Session> | null | undefined
  if (
    typeof session !== 'object' ||
    session === null ||
    typeof session.at !== 'function' ||
    typeof session.id !== 'string'
  ) {
    throw new InvalidArgumentError({ argument: 'source', reason: sourceReason, value: source })
  }
  return session as Session
}

/**
 * The root of the source's context tree. Sessions announce their commits without a scope, and
 * only a listener at the harness's root hears those, so an agent's own context is walked up.
 */
function rootContextOf(source: unknown): Context {
  let ctx = (source as { readonly ctx?: Partial<Context> } | null)?.ctx
  if (typeof ctx !== 'object' || ctx === null || typeof ctx.on !== 'function') {
    throw new InvalidArgumentError({ argument: 'source', reason: sourceReason, value: source })
  }
  while (ctx.parent !== undefined) ctx = ctx.parent
  return ctx as Context
}

/**
 * @internal Checks a stream source without listening to anything: its live session and the root
 * of its context tree.
 * @throws {@link InvalidArgumentError} `source` for anything but an agent or `{ session, ctx }`
 */
export function checkSource(source: unknown): { readonly session: Session; readonly ctx: Context } {
  return { session: sessionOf(source), ctx: rootContextOf(source) }
}

/**
 * @internal The cursor behind a {@link SessionStream}: it holds one seq, not events, since the
 * session keeps its whole log in memory; a slow reader therefore costs nothing but its lag.
 */
export class SessionCursor implements AsyncIterator<AgentStreamEvent> {
  readonly #session: Session
  readonly #until: SessionStreamUntil
  #next: number
  #finished = false
  #closed = false
  #wake: (() => void) | undefined
  readonly #release: () => void
  #onCommit: (() => void) | undefined

  constructor(ctx: Context, session: Session, first: number, until: SessionStreamUntil, finished: boolean) {
    this.#session = session
    this.#until = until
    this.#next = first
    this.#finished = finished
    if (finished || session.disposed || ctx.signal.aborted) {
      this.#closed = true
      this.#release = () => {}
      return
    }
    // Subscribing before the first read matters less than it seems: the cursor reads the log by
    // seq, so a commit heard late or twice can neither skip nor repeat an event.
    const stopCommits = ctx.on('session/event', (payload) => {
      if (payload.session !== session) return
      this.#signal()
      this.#onCommit?.()
    })
    const stopDisposal = ctx.on('session/disposed', (payload) => {
      if (payload.session === session) this.#close()
    })
    const onAbort = (): void => this.#close()
    ctx.signal.addEventListener('abort', onAbort, { once: true })
    this.#release = () => {
      ctx.signal.removeEventListener('abort', onAbort)
      if (ctx.signal.aborted) return
      stopCommits()
      stopDisposal()
    }
  }

  get sessionId(): string {
    return this.#session.id
  }

  get nextSeq(): number {
    return this.#next
  }

  /** How many committed events wait behind the cursor. */
  get lag(): number {
    return this.#finished ? 0 : this.#session.length - this.#next
  }

  /** Sets what to call after each commit of the session (the SSE lag check). */
  onCommit(listener: () => void): void {
    this.#onCommit = listener
  }

  async next(): Promise<IteratorResult<AgentStreamEvent>> {
    for (;;) {
      if (this.#finished) return { value: undefined, done: true }
      const event = this.#session.at(this.#next)
      if (event !== undefined) {
        this.#next++
        if (this.#until === 'turn-end' && event.type === 'turn/end') this.#finish()
        return { value: asStreamEvent(event), done: false }
      }
      if (this.#closed) {
        this.#finish()
        continue
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve
      })
    }
  }

  async return(): Promise<IteratorResult<AgentStreamEvent>> {
    this.#finish()
    return { value: undefined, done: true }
  }

  #close(): void {
    this.#closed = true
    this.#release()
    this.#signal()
  }

  #finish(): void {
    if (this.#finished && this.#closed) return
    this.#finished = true
    if (!this.#closed) this.#close()
    this.#onCommit = undefined
  }

  #signal(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}

/**
 * @internal Validates the options and opens the cursor.
 * @throws {@link LastEventIdError}; {@link InvalidArgumentError}
 */
export function openSessionCursor(source: SessionStreamSource, options: SessionStreamOptions = {}): SessionCursor {
  const { session, ctx } = checkSource(source)
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be an object', value: options })
  }
  const until = options.until ?? 'dispose'
  if (until !== 'turn-end' && until !== 'dispose') {
    throw new InvalidArgumentError({
      argument: 'options.until',
      reason: "must be 'turn-end' or 'dispose'",
      value: until,
    })
  }
  const { lastEventId, from } = options
  if (lastEventId !== undefined && lastEventId !== null) {
    const seq = resumeSeq(lastEventId, session)
    const finished = until === 'turn-end' && session.at(seq)?.type === 'turn/end'
    return new SessionCursor(ctx, session, seq + 1, until, finished)
  }
  if (from !== undefined && (!Number.isSafeInteger(from) || from < 0 || from > session.length)) {
    throw new InvalidArgumentError({
      argument: 'options.from',
      reason: `must be a seq from 0 to the log's length (${session.length})`,
      value: from,
    })
  }
  return new SessionCursor(ctx, session, from ?? 0, until, false)
}

/**
 * A session's events from a seq on: first the stored ones, read from the log, then the live ones
 * as they are committed, each seq exactly once and in order. Nothing is buffered: the stream
 * keeps a cursor into the session's log, so a slow reader only falls behind. Breaking out of the
 * iteration stops listening; it never cancels anything.
 *
 * A `lastEventId` is a seq of this session's log; a seq of another session's log cannot be told
 * apart when it is within this log's length (keep the session in the URL).
 *
 * @param source - the agent, or `{ session, ctx: harness.ctx }` for a live session of a harness
 * @param options - where to start (`lastEventId`, `from`) and when to end (`until`)
 * @returns the stream; iterate it once
 * @throws {@link LastEventIdError} `INVALID_LAST_EVENT_ID` for a `lastEventId` that is not a seq or
 *   is past the log's end; {@link InvalidArgumentError} for a bad source or option
 * @example
 * ```ts
 * for await (const event of streamSession(agent, { lastEventId: '41', until: 'turn-end' })) {
 *   console.log(event.seq, event.type)
 * }
 * ```
 */
export function streamSession(source: SessionStreamSource, options?: SessionStreamOptions): SessionStream {
  const cursor = openSessionCursor(source, options)
  let iterated = false
  return {
    get sessionId(): string {
      return cursor.sessionId
    },
    get nextSeq(): number {
      return cursor.nextSeq
    },
    [Symbol.asyncIterator](): AsyncIterator<AgentStreamEvent> {
      if (iterated) {
        throw new InvalidArgumentError({
          argument: 'iterator',
          reason: 'a SessionStream can be iterated once',
          value: undefined,
        })
      }
      iterated = true
      return cursor
    },
  }
}
