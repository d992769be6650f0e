import type { AssistantMessageData } from '../session/core-event-types.js'
import type { Message, UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-event.js'

/** The `(turn, step)` a surface node belongs to; `0` where there is none. */
export interface Origin {
  /** The last `turn/start` at or before the node. */
  readonly turn: number
  /** The last `step/start` of that turn at or before the node. */
  readonly step: number
}

/** The `source.plugin` of compaction checkpoints and the instruction message. */
export const COMPACTION_PLUGIN = 'yoke/compaction'

const noOrigin: Origin = Object.freeze({ turn: 0, step: 0 })

/**
 * Compares two origins.
 *
 * @param left - an origin
 * @param right - an origin
 * @returns negative, zero or positive, like a sort comparator
 * @internal
 */
export function compareOrigins(left: Origin, right: Origin): number {
  return left.turn === right.turn ? left.step - right.step : left.turn - right.turn
}

/**
 * The model-history message a surface node projects to, or `undefined` for an
 * assistant message with empty content.
 *
 * @param event - a surface event
 * @returns the message
 * @internal
 */
export function nodeMessage(event: SessionEvent): Message | undefined {
  if (event.type === 'user/message') return event.data as unknown as UserMessage
  if (event.type === 'assistant/message') {
    const message = (event.data as unknown as AssistantMessageData).message
    return message.content.length === 0 ? undefined : message
  }
  return (event.data as unknown as { readonly message: Message }).message
}

/**
 * Whether `event` is a compaction checkpoint: a `user/message` from `yoke/compaction`, form `summary`.
 *
 * @param event - a committed event
 * @returns `true` for a checkpoint
 * @internal
 */
export function isCheckpoint(event: SessionEvent): boolean {
  if (event.type !== 'user/message') return false
  const source = (event.data as unknown as UserMessage).source
  return source.kind === 'plugin' && source.plugin === COMPACTION_PLUGIN && source.form === 'summary'
}

/**
 * How a node moves the tool-call balance: `+calls` for an append-form assistant message, `-1` for
 * a tool result, `0` otherwise.
 *
 * @param event - a surface event
 * @returns the delta
 * @internal
 */
export function balanceDelta(event: SessionEvent): number {
  if (event.type === 'tool/result') return -1
  if (event.type !== 'assistant/message' || event.surfaceOp !== 'append') return 0
  let calls = 0
  for (const block of (event.data as unknown as AssistantMessageData).message.content)
    if (block.type === 'tool-call') calls++
  return calls
}

/**
 * The incremental facts the engine keeps per session: node origins, the
 * per-node estimates and the seq of the last replace-form event. A check costs O(events appended
 * since the previous one).
 *
 * @internal
 */
export class SurfaceIndex {
  readonly #session: Session
  readonly #measure: (message: Message) => number
  readonly #origins = new Map<number, Origin>()
  readonly #tokens = new Map<number, number>()
  #processed = 0
  #current: Origin = noOrigin
  #lastReplaceSeq = -1
  #summed: { readonly nodes: readonly number[]; readonly replaceSeq: number; readonly total: number } | undefined

  /**
   * @param session - the session indexed
   * @param measure - the per-message estimate
   */
  constructor(session: Session, measure: (message: Message) => number) {
    this.#session = session
    this.#measure = measure
  }

  /** The session indexed. */
  get session(): Session {
    return this.#session
  }

  /** The seq of the newest replace-form event, `-1` when none. */
  get lastReplaceSeq(): number {
    this.sync()
    return this.#lastReplaceSeq
  }

  /** Folds the events appended since the last call. */
  sync(): void {
    const session = this.#session
    for (let seq = this.#processed; seq < session.length; seq++) {
      const event = session.at(seq) as SessionEvent
      if (event.type === 'turn/start') this.#current = { turn: (event.data as { readonly turn: number }).turn, step: 0 }
      else if (event.type === 'step/start')
        this.#current = { turn: this.#current.turn, step: (event.data as { readonly step: number }).step }
      else if (event.surfaceOp === 'append') this.#origins.set(seq, this.#current)
      else if (typeof event.surfaceOp === 'object') {
        this.#origins.set(seq, this.#origins.get(event.surfaceOp.end) ?? this.#current)
        this.#lastReplaceSeq = seq
      }
    }
    this.#processed = session.length
  }

  /**
   * The origin of a surface node.
   *
   * @param seq - a node seq
   * @returns its origin
   */
  origin(seq: number): Origin {
    this.sync()
    return this.#origins.get(seq) ?? noOrigin
  }

  /**
   * The per-message estimate of a node (cached by seq); `0` for a node that projects to nothing.
   *
   * @param seq - a node seq
   * @returns tokens
   */
  tokens(seq: number): number {
    const cached = this.#tokens.get(seq)
    if (cached !== undefined) return cached
    const message = nodeMessage(this.#session.at(seq) as SessionEvent)
    const tokens = message === undefined ? 0 : this.#measure(message)
    this.#tokens.set(seq, tokens)
    return tokens
  }

  /**
   * The summed per-node estimates of the current surface. Without a replace since the previous
   * call only the nodes appended since are measured, so a check is O(new nodes).
   *
   * @returns tokens
   */
  surfaceTokens(): number {
    const nodes = this.#session.surfaceNodes()
    const replaceSeq = this.lastReplaceSeq
    const previous = this.#summed
    if (previous?.nodes === nodes) return previous.total
    const reusable =
      previous !== undefined && previous.replaceSeq === replaceSeq && previous.nodes.length <= nodes.length
    let total = reusable ? previous.total : 0
    for (let position = reusable ? previous.nodes.length : 0; position < nodes.length; position++)
      total += this.tokens(nodes[position] as number)
    this.#summed = { nodes, replaceSeq, total }
    return total
  }

  /**
   * The messages of some nodes, in order, skipping nodes that project to nothing.
   *
   * @param seqs - node seqs
   * @returns the messages
   */
  messages(seqs: readonly number[]): readonly Message[] {
    const messages: Message[] = []
    for (const seq of seqs) {
      const message = nodeMessage(this.#session.at(seq) as SessionEvent)
      if (message !== undefined) messages.push(message)
    }
    return messages
  }
}
