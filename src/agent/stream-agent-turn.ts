import { StreamOverflowError } from '../errors/agent-errors.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { SessionEvent } from '../session/session-event.js'
import { type AgentStreamEvent, asStreamEvent } from '../stream/agent-stream-event.js'
import type { AgentRun, StreamOptions } from './agent.js'
import { checkRunOptions, type RunSource, runAgentTurn } from './run-agent.js'
import type { UserMessageInput } from './user-message-input.js'

/** The default {@link StreamOptions.highWaterMark}. */
const defaultHighWaterMark = 1024

/** The bounded buffer between the session's commits and one consumer. */
class TurnEventBuffer implements AsyncIterator<AgentStreamEvent> {
  readonly #limit: number
  readonly #events: AgentStreamEvent[] = []
  #head = 0
  #overflowed = false
  #ended = false
  #failure: { readonly error: unknown } | undefined
  #lastYieldedSeq = -1
  #wake: (() => void) | undefined
  #release: (() => void) | undefined

  constructor(limit: number) {
    this.#limit = limit
  }

  /** Sets what a consumer's early exit releases (the session tap). */
  onRelease(release: () => void): void {
    this.#release = release
  }

  get open(): boolean {
    return !this.#ended && !this.#overflowed
  }

  push(event: AgentStreamEvent): void {
    if (!this.open) return
    if (this.#events.length - this.#head >= this.#limit) {
      this.#overflowed = true
      this.#release?.()
    } else this.#events.push(event)
    this.#signal()
  }

  end(): void {
    this.#ended = true
    this.#release?.()
    this.#signal()
  }

  fail(error: unknown): void {
    if (this.#ended) return
    this.#failure = { error }
    this.end()
  }

  async next(): Promise<IteratorResult<AgentStreamEvent>> {
    for (;;) {
      if (this.#head < this.#events.length) {
        const event = this.#events[this.#head] as AgentStreamEvent
        this.#events[this.#head++] = undefined as unknown as AgentStreamEvent
        if (this.#head > 1024 && this.#head * 2 > this.#events.length) {
          this.#events.splice(0, this.#head)
          this.#head = 0
        }
        this.#lastYieldedSeq = event.seq
        return { value: event, done: false }
      }
      if (this.#overflowed) {
        this.#overflowed = false
        this.#ended = true
        throw new StreamOverflowError({ limit: this.#limit, lastYieldedSeq: this.#lastYieldedSeq })
      }
      const failure = this.#failure
      if (failure !== undefined) {
        this.#failure = undefined
        throw failure.error
      }
      if (this.#ended) return { value: undefined, done: true }
      await new Promise<void>((resolve) => {
        this.#wake = resolve
      })
    }
  }

  async return(): Promise<IteratorResult<AgentStreamEvent>> {
    this.#ended = true
    this.#events.length = 0
    this.#head = 0
    this.#failure = undefined
    this.#release?.()
    this.#signal()
    return { value: undefined, done: true }
  }

  #signal(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}

function checkHighWaterMark(value: unknown): number {
  if (value === undefined) return defaultHighWaterMark
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError({ argument: 'highWaterMark', reason: 'must be a positive safe integer', value })
  }
  return value
}

/**
 * `agent.stream(input)`: `run` plus the claiming turn's durable
 * events. Only the current turn's events are kept, at most `highWaterMark` of them undelivered.
 *
 * @param source - the agent, its driver's notices, its queue and its session tap
 * @param input - the prompt
 * @param options - a signal and the buffer bound
 * @returns the run
 * @throws {@link InvalidArgumentError} `argument: 'options'`, `'options.signal'` or `'highWaterMark'`; {@link AgentDisposedError} or
 *   {@link InvalidMessageError}, nothing queued
 */
export function streamAgentTurn(source: RunSource, input: UserMessageInput, options: StreamOptions): AgentRun {
  checkRunOptions(options)
  const buffer = new TurnEventBuffer(checkHighWaterMark(options.highWaterMark))
  let turn: number | undefined
  let nextSeq = Number.POSITIVE_INFINITY
  const deliver = (event: SessionEvent): void => {
    if (event.seq < nextSeq || !buffer.open) return
    nextSeq = event.seq + 1
    const typed = asStreamEvent(event)
    buffer.push(typed)
    if (typed.type === 'turn/end' && typed.data.turn === turn) buffer.end()
  }
  const untap = source.tapSession(deliver)
  buffer.onRelease(untap)
  let run: ReturnType<typeof runAgentTurn>
  try {
    run = runAgentTurn(source, input, options, {
      claimed(claimingTurn, startSeq) {
        turn = claimingTurn
        nextSeq = startSeq
        for (const event of source.agent.session.slice(startSeq)) deliver(event)
      },
    })
  } catch (error) {
    untap()
    throw error
  }
  // The result settles on its own; an unobserved rejection must not crash a consumer that only iterates.
  run.result.then(
    () => buffer.end(),
    (error: unknown) => buffer.fail(error),
  )
  let iterated = false
  return {
    agent: source.agent,
    message: run.message,
    result: run.result,
    [Symbol.asyncIterator](): AsyncIterator<AgentStreamEvent> {
      if (iterated)
        throw new InvalidArgumentError({
          argument: 'iterator',
          reason: 'an AgentRun can be iterated once',
          value: undefined,
        })
      iterated = true
      return buffer
    },
  }
}
