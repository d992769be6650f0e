/**
 * The seeded pieces shared by the crash child and its parent: a PRNG, the producer of valid
 * turns, and the digest both sides compute over a log prefix.
 *
 * @module
 */
import { createHash, type Hash } from 'node:crypto'
import type { Harness, JsonValue, Session, SessionEvent } from '../../../src/index.js'
import type { AppendOptions } from '../../../src/session/index.js'

/** mulberry32: a small, fast, seedable PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** A derived 32-bit seed, so each run and session gets an independent stream. */
export function deriveSeed(seed: number, ...parts: number[]): number {
  let value = seed >>> 0
  for (const part of parts) value = (Math.imul(value ^ (part + 0x9e3779b9), 0x85ebca6b) + 0x27d4eb2f) >>> 0
  return value
}

/** An integer in [low, high]. */
export function between(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1))
}

/** One event to append: the arguments of `session.append`. */
export interface Planned {
  readonly type: string
  readonly data: JsonValue
  readonly options: AppendOptions
}

const alphabet = 'abcdefghijklmnopqrstuvwxyz ü😀é\u00a0—'
function randomText(random: () => number): string {
  // Mostly short deltas; now and then a long one, so a batch spans many pages and a kill can land mid-write.
  const roll = random()
  const length =
    roll < 0.9 ? between(random, 0, 24) : roll < 0.98 ? between(random, 200, 2_000) : between(random, 20_000, 60_000)
  const characters = [...alphabet]
  let text = ''
  for (let index = 0; index < length; index++) text += characters[Math.floor(random() * characters.length)]
  return text
}

/**
 * The producer of one session: an endless stream of valid turns (turn/start, step/start,
 * user/message, assistant/chunk×k, assistant/message with 0–2 tool calls, each followed by its
 * tool/call and tool/result, step/end; one or two steps; turn/end). `next(seq)` returns the event
 * that will get `seq`.
 */
export class TurnProducer {
  readonly #random: () => number
  readonly #pending: ((seq: number) => Planned)[] = []
  #turn = 0

  constructor(random: () => number) {
    this.#random = random
  }

  next(seq: number): Planned {
    if (this.#pending.length === 0) this.#planTurn()
    return this.#pending.shift()!(seq)
  }

  #planTurn(): void {
    const random = this.#random
    const turn = ++this.#turn
    const steps = between(random, 1, 2)
    const queue = this.#pending
    queue.push(() => ({ type: 'turn/start', data: { turn }, options: {} }))
    for (let step = 1; step <= steps; step++) {
      queue.push(() => ({ type: 'step/start', data: { turn, step }, options: {} }))
      if (step === 1) {
        const text = randomText(random)
        queue.push((seq) => ({
          type: 'user/message',
          data: { id: `u-${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
          options: { surfaceOp: 'append' },
        }))
      }
      const chunkSeqs: number[] = []
      const deltas: string[] = []
      const chunks = between(random, 0, 6)
      for (let index = 0; index < chunks; index++) {
        const delta = randomText(random)
        deltas.push(delta)
        queue.push((seq) => {
          chunkSeqs.push(seq)
          return {
            type: 'assistant/chunk',
            data: { turn, step, chunk: { type: 'text-delta', index: 0, text: delta } },
            options: {},
          }
        })
      }
      const calls = Array.from({ length: between(random, 0, 2) }, (_, index) => ({
        id: `c${turn}-${step}-${index}`,
        arguments: JSON.stringify({ q: randomText(random).slice(0, 40) }),
      }))
      queue.push((seq) => ({
        type: 'assistant/message',
        data: {
          turn,
          step,
          message: {
            id: `a-${seq}`,
            role: 'assistant',
            content: [
              { type: 'text', text: deltas.join('') },
              ...calls.map((call) => ({ type: 'tool-call', id: call.id, name: 'search', arguments: call.arguments })),
            ],
            source: { kind: 'model', provider: 'mock', model: 'mock' },
          },
        },
        options: { surfaceOp: 'append', sourceEventSeqs: [...chunkSeqs] },
      }))
      for (const call of calls) {
        let callSeq = -1
        const result = randomText(random)
        queue.push((seq) => {
          callSeq = seq
          return {
            type: 'tool/call',
            data: { turn, step, callId: call.id, name: 'search', arguments: call.arguments },
            options: {},
          }
        })
        queue.push(() => ({
          type: 'tool/result',
          data: {
            turn,
            step,
            message: {
              id: `r-${call.id}`,
              role: 'user',
              source: { kind: 'tool', callId: call.id },
              content: [{ type: 'tool-result', toolCallId: call.id, content: [{ type: 'text', text: result }] }],
            },
          },
          options: { surfaceOp: 'append', sourceEventSeqs: [callSeq] },
        }))
      }
      queue.push(() => ({ type: 'step/end', data: { turn, step }, options: {} }))
    }
    queue.push(() => ({ type: 'turn/end', data: { turn, reason: { kind: 'completed' } }, options: {} }))
  }
}

/** The running digest of a log: SHA-256 over `JSON.stringify(event) + '\n'` of each event in order. */
export function logDigest(): Hash {
  return createHash('sha256')
}

/** The digest of `events[0..count)`. */
export function digestOf(events: readonly SessionEvent[], count: number): string {
  const hash = logDigest()
  for (let index = 0; index < count; index++) hash.update(`${JSON.stringify(events[index])}\n`)
  return hash.digest('hex')
}

/** One acknowledgement line of the child: `seq` and everything before it are durable. */
export interface Ack {
  readonly session: string
  readonly acked: number
  readonly digest: string
}

/** The child's options, passed as one JSON argument. */
export interface ChildOptions {
  readonly dir: string
  readonly compression: 'none' | 'gzip' | 'zstd'
  readonly seed: number
  readonly run: number
  readonly sessions: number
  readonly windowMs: number
  /**
   * Make some `write` calls short (a random prefix, then a pause of 0–4 ms before the adapter
   * writes the rest), so a kill can land between the two halves of a batch, as a power cut or a
   * kill during a long write would: a real torn tail.
   */
  readonly shortWrites: boolean
  /**
   * `'repair'`: instead of producing, cold-`load` (and so repair) each of `sessionIds` in turn,
   * writing `{"repaired": id}` to fd 3 after each; exits when done, unless killed first.
   */
  readonly mode?: 'produce' | 'repair'
  /** The sessions a repairing child loads. */
  readonly sessionIds?: readonly string[]
}

/** The session ids run `run` uses. */
export function sessionIdsOf(run: number, sessions: number): string[] {
  return Array.from({ length: sessions }, (_, index) => `run${run}-s${index}`)
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const turnOfLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * The producing loop of one crash-child session: appends the seeded turns forever, flushing at
 * random points; after each flush resolves, `ack` gets the session and the digest of everything
 * flushed (every seq up to `session.length - 1` is durable then).
 *
 * @param harness - the child's harness
 * @param id - the session id
 * @param random - the session's seeded PRNG
 * @param ack - reports one acknowledged flush
 */
export async function produceSession(
  harness: Harness,
  id: string,
  random: () => number,
  ack: (session: Session, digest: string) => void,
): Promise<never> {
  const producer = new TurnProducer(random)
  const session = harness.sessions.create({ id })
  const digest = logDigest()
  for (;;) {
    const planned = producer.next(session.length)
    const event = session.append(planned.type, planned.data, planned.options)
    digest.update(`${JSON.stringify(event)}\n`)
    const roll = random()
    if (roll < 0.08) {
      // Nothing of this session is appended while its flush runs, so the flush covers all of it.
      await harness.sessions.flush(session)
      ack(session, digest.copy().digest('hex'))
    } else if (roll < 0.3) await turnOfLoop()
    else if (roll < 0.36) await pause(between(random, 0, 4))
  }
}
