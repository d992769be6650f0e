/**
 * The frames of a UI message stream: each chunk with the id a reader resumes after. An event that
 * gives several chunks numbers them `<seq>.0`, `<seq>.1`, … and its last one is plain `<seq>`, so a
 * reader cut off between two chunks of one event resumes at the next chunk, neither missing nor
 * repeating one.
 *
 * @module
 */
import type { AgentRun, AgentStreamEvent, SessionOwner } from 'yoke'
import { LastEventIdError } from '../errors/last-event-id-error.js'
import type { Session } from '../session/session.js'
import { asStreamEvent } from '../stream/agent-stream-event.js'
import { checkSource, openSessionCursor, type SessionCursor } from '../stream/stream-session.js'
import { type TranslatorOptions, UIChunkTranslator } from './ui-chunk-translator.js'
import type { UIMessageChunk } from './ui-message-chunk.js'

/** @internal One chunk and the id a reader that has it resumes after. */
export interface UIFrame {
  /** `<seq>` or `<seq>.<k>`. */
  readonly id: string
  /** The chunk. */
  readonly chunk: UIMessageChunk
}

/** @internal Reads the frames of one turn, pulling events from the session log as they are committed. */
export interface UIFrameReader {
  /** The next frame; `undefined` once the turn's last one was read. */
  next(): Promise<UIFrame | undefined>
  /** Events committed but not read yet (0 before the reader opened). */
  readonly lag: number
  /** The seq of the last event read (`-1` before the first). */
  readonly lastReadSeq: number
  /** Sets what to call after each commit (the lag check). */
  onCommit(listener: () => void): void
  /** Stops reading; never cancels the turn. */
  close(): void
}

const eventIdPattern = /^(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?$/

/** The frames of one event's chunks. */
function framesOf(seq: number, chunks: readonly UIMessageChunk[]): UIFrame[] {
  return chunks.map((chunk, k) => ({ id: k === chunks.length - 1 ? String(seq) : `${seq}.${k}`, chunk }))
}

function eventAt(session: Session, seq: number): AgentStreamEvent {
  const event = session.at(seq)
  if (event === undefined) throw new RangeError(`no event at seq ${seq}`)
  return asStreamEvent(event)
}

/** The seq of the `turn/start` of the turn that holds `seq`, if one does. */
function enclosingTurnStart(session: Session, seq: number): number | undefined {
  for (let at = seq; at >= 0; at--) {
    const type = session.at(at)?.type
    if (type === 'turn/start') return at
    if (type === 'turn/end' && at !== seq) return undefined
  }
  return undefined
}

/**
 * @internal The seq of the open turn's `turn/start`, or `undefined` when no turn runs.
 */
export function activeTurnStart(session: Session): number | undefined {
  for (let at = session.length - 1; at >= 0; at--) {
    const type = session.at(at)?.type
    if (type === 'turn/start') return at
    if (type === 'turn/end') return undefined
  }
  return undefined
}

class CursorFrameReader implements UIFrameReader {
  readonly #open: () => Promise<SessionCursor | undefined>
  readonly #translator: UIChunkTranslator
  readonly #pending: UIFrame[]
  #cursor: SessionCursor | undefined
  #opened = false
  #closed = false
  #onCommit: (() => void) | undefined

  constructor(open: () => Promise<SessionCursor | undefined>, translator: UIChunkTranslator, pending: UIFrame[]) {
    this.#open = open
    this.#translator = translator
    this.#pending = pending
  }

  get lag(): number {
    return this.#cursor?.lag ?? 0
  }

  get lastReadSeq(): number {
    return this.#cursor === undefined ? -1 : this.#cursor.nextSeq - 1
  }

  onCommit(listener: () => void): void {
    this.#onCommit = listener
    this.#cursor?.onCommit(listener)
  }

  async next(): Promise<UIFrame | undefined> {
    for (;;) {
      const pending = this.#pending.shift()
      if (pending !== undefined) return pending
      if (this.#closed) return undefined
      if (!this.#opened) {
        this.#opened = true
        const cursor = await this.#open()
        if (this.#closed) {
          void cursor?.return()
          return undefined
        }
        this.#cursor = cursor
        if (this.#onCommit !== undefined) cursor?.onCommit(this.#onCommit)
      }
      const cursor = this.#cursor
      if (cursor === undefined) return undefined
      const next = await cursor.next()
      if (next.done === true || this.#closed) return undefined
      this.#pending.push(...framesOf(next.value.seq, this.#translator.translate(next.value)))
    }
  }

  close(): void {
    this.#closed = true
    void this.#cursor?.return()
  }
}

/**
 * @internal Frames of the turn a run claims, from its `turn/start` to its `turn/end`.
 */
export function runFrames(run: AgentRun, options: Omit<TranslatorOptions, 'sessionId'>): UIFrameReader {
  const { session } = checkSource(run.agent)
  const translator = new UIChunkTranslator({ ...options, sessionId: session.id })
  return new CursorFrameReader(
    async () => {
      const iterator = run[Symbol.asyncIterator]()
      try {
        const first = await iterator.next()
        const from = first.done === true ? session.length : first.value.seq
        return openSessionCursor(run.agent, { from, until: 'turn-end' })
      } finally {
        // The cursor reads the turn from the log; the run's own buffer is not needed.
        await iterator.return?.()
      }
    },
    translator,
    [],
  )
}

/**
 * @internal Frames of a session: after `lastEventId` to the end of its turn, or else the running turn
 * from its `turn/start`; `undefined` when there is neither (no turn runs).
 * @throws `LastEventIdError` for an id that is not a frame id or lies past the log's end
 */
export function sessionFrames(
  source: SessionOwner,
  lastEventId: string | number | null | undefined,
  options: Omit<TranslatorOptions, 'sessionId'>,
): UIFrameReader | undefined {
  const { session } = checkSource(source)
  const translator = new UIChunkTranslator({ ...options, sessionId: session.id })
  if (lastEventId === undefined || lastEventId === null) {
    const from = activeTurnStart(session)
    if (from === undefined) return undefined
    const cursor = openSessionCursor(source, { from, until: 'turn-end' })
    return new CursorFrameReader(() => Promise.resolve(cursor), translator, [])
  }
  const match = eventIdPattern.exec(String(lastEventId))
  const lastSeq = session.length - 1
  if (match === null || (typeof lastEventId === 'number' && !Number.isSafeInteger(lastEventId))) {
    throw new LastEventIdError({ value: lastEventId, problem: 'not-a-seq', sessionId: session.id, lastSeq })
  }
  const seq = Number(match[1])
  if (!Number.isSafeInteger(seq)) {
    throw new LastEventIdError({ value: lastEventId, problem: 'not-a-seq', sessionId: session.id, lastSeq })
  }
  if (seq > lastSeq)
    throw new LastEventIdError({ value: lastEventId, problem: 'beyond-log', sessionId: session.id, lastSeq })
  // The translator is replayed through what the reader has, so it continues exactly where it was.
  const start = enclosingTurnStart(session, seq)
  if (start !== undefined) for (let at = start; at < seq; at++) translator.translate(eventAt(session, at))
  const chunks = translator.translate(eventAt(session, seq))
  const had = match[2] === undefined ? chunks.length : Math.min(Number(match[2]) + 1, chunks.length)
  const pending = framesOf(seq, chunks).slice(had)
  if (!translator.turnOpen && start !== undefined) {
    // The turn ended at or before this event: the reader gets the rest of its chunks, then the end.
    return new CursorFrameReader(() => Promise.resolve(undefined), translator, pending)
  }
  const cursor = openSessionCursor(source, { from: seq + 1, until: 'turn-end' })
  return new CursorFrameReader(() => Promise.resolve(cursor), translator, pending)
}
