import { ErrorCode } from '../errors/codes.js'
import { SessionForkError } from '../errors/session-fork-error.js'
import type { SessionEvent } from './session-event.js'
import type { SessionHeader } from './session-header.js'

/** The source of a fork as {@link planFork} reads it: a live session, or a stored log. */
export interface ForkSource {
  /** The source's id. */
  readonly id: string
  /** Its header (`cwd` and `metadata` are inherited). */
  readonly header: SessionHeader
  /** How many events may be copied (for a stored log: its stored events only). */
  readonly length: number
  /** The event at a seq. */
  at(seq: number): SessionEvent | undefined
  /** The events `0..to-1`. */
  slice(to: number): readonly SessionEvent[]
}

/**
 * The checks of a fork after the child id's (a valid boundary `at`, and no turn left open at it)
 * and what the child is made from: the inclusive prefix `events[0..at]` and the lineage header
 * `{ parentSession, seedLength, cwd?, metadata? }`.
 *
 * @param source - the source's id, header and events
 * @param at - the last seq to copy (default: the last one)
 * @returns the child's seed and header
 * @throws `SessionForkError` `INVALID_BOUNDARY` (`at`, `lastSeq`) or `OPEN_TURN` (`turn`, `nearestBalancedSeq`)
 * @internal
 */
export function planFork(
  source: ForkSource,
  at: number | undefined,
): { readonly seed: readonly SessionEvent[]; readonly header: Partial<SessionHeader> } {
  const length = source.length
  const lastSeq = length === 0 ? null : length - 1
  // Only an omitted `at` of an empty source gives the empty prefix; an explicit `null` is not a seq.
  const boundary: unknown = at === undefined ? lastSeq : at
  let prefix: readonly SessionEvent[]
  if (boundary === null && at === undefined) {
    prefix = []
  } else {
    if (
      typeof boundary !== 'number' ||
      !Number.isSafeInteger(boundary) ||
      boundary < 0 ||
      boundary >= length ||
      source.at(boundary)?.seq !== boundary
    ) {
      throw new SessionForkError({
        code: ErrorCode.INVALID_BOUNDARY,
        sessionId: source.id,
        detail: `fork boundary ${String(boundary)} is not a seq of the session (last seq: ${lastSeq ?? 'none, it is empty'})`,
        at: boundary,
        lastSeq,
      })
    }
    prefix = source.slice(boundary + 1)
  }
  for (let index = prefix.length - 1; index >= 0; index--) {
    const event = prefix[index] as SessionEvent
    if (event.type === 'turn/end') break
    if (event.type === 'turn/start') {
      const turn = (event.data as { readonly turn: number }).turn
      const nearestBalancedSeq = index === 0 ? null : index - 1
      throw new SessionForkError({
        code: ErrorCode.OPEN_TURN,
        sessionId: source.id,
        detail: `fork boundary ${boundary} falls inside turn ${turn}, which is still open there${
          nearestBalancedSeq === null ? '' : `; fork at ${nearestBalancedSeq} instead`
        }`,
        turn,
        nearestBalancedSeq,
      })
    }
  }
  const header: Partial<{ -readonly [K in keyof SessionHeader]: SessionHeader[K] }> = {
    parentSession: source.id,
    seedLength: prefix.length,
  }
  if (source.header.cwd !== undefined) header.cwd = source.header.cwd
  if (source.header.metadata !== undefined) header.metadata = source.header.metadata
  return { seed: prefix, header }
}
