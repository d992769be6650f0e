import { InvalidArgumentError } from '../../errors/invalid-argument-error.js'
import type { SessionEvent } from '../../session/session-event.js'
import { isEventEnvelope } from './jsonl-codec.js'

/**
 * Checks a batch an adapter is asked to store: every element a well-formed event envelope, seqs
 * contiguous from `firstSeq`. Payloads are not checked (the session did that at commit).
 *
 * @param events - the batch
 * @param firstSeq - the seq its first event must carry
 * @param argument - the argument name errors give (`'events'`, `'closers'`)
 * @throws `InvalidArgumentError` naming the first offending element
 */
export function checkEventBatch(events: readonly SessionEvent[], firstSeq: number, argument: string): void {
  for (let index = 0; index < events.length; index++) {
    const event = events[index]
    if (!isEventEnvelope(event)) {
      throw new InvalidArgumentError({
        argument,
        reason: `${argument}[${index}] is not a well-formed event envelope`,
        value: events,
      })
    }
    if (event.seq !== firstSeq + index) {
      throw new InvalidArgumentError({
        argument,
        reason: `${argument}[${index}].seq must be ${firstSeq + index} (got ${event.seq}): seqs must be contiguous from ${firstSeq}`,
        value: events,
      })
    }
  }
}
