/**
 * Reads a tail in the background for the tail tests: what it yielded so far, a wait for a count,
 * and how the iteration ended.
 *
 * @module
 */
import type { AgentStreamEvent } from '../../src/index.js'

/** A tail being read. */
export interface Collected {
  /** The events yielded so far, in order. */
  readonly events: AgentStreamEvent[]
  /** Resolves once at least `count` events came (rejects after `timeoutMs`, or when the tail failed). */
  waitFor(count: number, timeoutMs?: number): Promise<void>
  /** Resolves once the iteration ended: `undefined` when it finished, the error when it rejected. */
  readonly ended: Promise<unknown>
}

/**
 * Starts reading `tail`.
 *
 * @param tail - the stream of events
 * @param delayMs - a pause after each event, as a slow reader takes
 * @returns the reading
 */
export function collect(tail: AsyncIterable<AgentStreamEvent>, delayMs = 0): Collected {
  const events: AgentStreamEvent[] = []
  let failure: unknown
  let done = false
  const ended = (async () => {
    try {
      for await (const event of tail) {
        events.push(event)
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
      }
    } catch (error) {
      failure = error
      return error
    } finally {
      done = true
    }
    return undefined
  })()
  return {
    events,
    ended,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      while (events.length < count) {
        if (done) throw new Error(`the tail ended after ${events.length} of ${count} events: ${String(failure)}`)
        if (Date.now() > deadline) throw new Error(`timed out after ${events.length} of ${count} events`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    },
  }
}

/**
 * Whether `events` are the seqs `from`, `from + 1`, … with no gap and no repeat.
 *
 * @param events - what a tail yielded
 * @param from - the first seq expected
 * @returns the seqs that break the run (empty when none)
 */
export function seqBreaks(events: readonly AgentStreamEvent[], from: number): number[] {
  const breaks: number[] = []
  events.forEach((event, index) => {
    if (event.seq !== from + index) breaks.push(event.seq)
  })
  return breaks
}
