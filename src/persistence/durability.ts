import type { FlushCheckpoint } from '../session/flush-checkpoint.js'

/**
 * When a live session's events are synced to stable storage (`createHarness({ durability })`).
 *
 * - `'step'` (the default): before a model request is sent, before a tool body runs and at the
 *   end of a turn, everything logged so far is synced. The flush between two steps writes its
 *   events and leaves the sync to the next step's request checkpoint, which follows with only
 *   that step's opening events between them.
 * - `'turn'`: every checkpoint still writes the events logged so far, in order (a killed
 *   process loses none of them), but only the end of a turn syncs. A crash of the machine (power
 *   loss, kernel panic) can lose what the open turn wrote since its start; resuming then closes
 *   the turn as interrupted, like any crash.
 */
export type Durability = 'step' | 'turn'

/** The accepted values of {@link Durability}. */
export const durabilityValues: readonly Durability[] = Object.freeze(['step', 'turn'])

/**
 * Whether a flush asked at `checkpoint` must sync, at `durability`.
 *
 * @param durability - the harness's durability
 * @param checkpoint - the turn checkpoint asking; absent for a flush that must be durable now
 * @returns `true` when the flush must end with everything synced
 * @internal
 */
export function flushSyncs(durability: Durability, checkpoint: FlushCheckpoint | undefined): boolean {
  if (checkpoint === undefined || checkpoint === 'turn-end') return true
  if (checkpoint === 'between-steps') return false
  return durability === 'step'
}
