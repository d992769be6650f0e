/**
 * The check behind an idempotent re-append: a batch sent again after its reply was lost (a
 * timeout, a dropped connection) is already stored, event for event, at the seqs it names.
 *
 * @module
 */
import type { SessionEvent } from '../session/session-event.js'

/**
 * Whether `events` are exactly what is stored from their first seq on: every event of the batch
 * is stored at its seq with the same JSON text, byte for byte. A batch that only partly matches,
 * or reaches past the stored events, does not match.
 *
 * @param stored - the committed events from the batch's first seq on (at least those)
 * @param events - the batch
 * @param texts - the batch's JSON texts, index for index, when the caller has them
 * @returns whether the batch is already stored
 * @internal
 */
export function matchesStoredBatch(
  stored: readonly SessionEvent[],
  events: readonly SessionEvent[],
  texts: readonly string[] | undefined,
): boolean {
  if (stored.length < events.length) return false
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!
    const kept = stored[index]!
    if (kept.seq !== event.seq) return false
    // The stored record is parsed back and written again: for JSON that `JSON.stringify` wrote,
    // this gives the same text, so equal texts mean the same stored bytes.
    if (JSON.stringify(kept) !== (texts?.[index] ?? JSON.stringify(event))) return false
  }
  return true
}
