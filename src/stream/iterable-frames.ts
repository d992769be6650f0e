/**
 * Any stream of committed events (a tail of a log in a database, a session stream) read as the
 * frames of an event-stream response.
 *
 * @module
 */
import type { AgentStreamEvent } from './agent-stream-event.js'
import type { FrameReader } from './frame-body.js'

/**
 * @internal Reads `events` one at a time as the body asks for them. Such a stream reads its log
 * on demand, so a slow reader holds nothing: the lag is always `0` and the body is never cut.
 * Closing ends the iteration (`return()`), never the writer.
 *
 * @param events - the events, in seq order
 * @returns the reader
 */
export function iterableFrames(events: AsyncIterable<AgentStreamEvent>): FrameReader<AgentStreamEvent> {
  const iterator = events[Symbol.asyncIterator]()
  let lastReadSeq = -1
  return {
    async next() {
      const next = await iterator.next()
      if (next.done === true) return undefined
      lastReadSeq = next.value.seq
      return next.value
    },
    get lag() {
      return 0
    },
    get lastReadSeq() {
      return lastReadSeq
    },
    onCommit() {},
    close() {
      void Promise.resolve(iterator.return?.()).catch(() => {})
    },
  }
}
