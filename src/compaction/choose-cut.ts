import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-event.js'
import { balanceDelta, compareOrigins, isCheckpoint, type Origin, type SurfaceIndex } from './surface-index.js'

/**
 * Where a compaction may cut the surface: keep the recent turns (`turn`), keep only the newest
 * closed step and what follows (`step`), or keep only the open step (`open-step`).
 */
export type CutKind = 'turn' | 'step' | 'open-step'

/** What {@link chooseHead} reads. */
export interface CutInput {
  /** The session's index. */
  readonly index: SurfaceIndex
  /** `keepRecentTurns` of the engine. */
  readonly keepRecentTurns: number
  /** The turn the turn cut counts from: the open turn, or (manual) the next turn number. */
  readonly currentTurn: number
}

function eventAt(session: Session, seq: number): SessionEvent {
  return session.at(seq) as SessionEvent
}

/** The index of the first node at or after `origin`, or `nodes.length`. */
function firstAtOrAfter(nodes: readonly number[], index: SurfaceIndex, origin: Origin): number {
  const found = nodes.findIndex((seq) => compareOrigins(index.origin(seq), origin) >= 0)
  return found === -1 ? nodes.length : found
}

function openStepOrigin(session: Session): Origin | undefined {
  const state = session.turnState()
  return state.openTurn === null || state.openStep === null ? undefined : { turn: state.openTurn, step: state.openStep }
}

/** The raw cut position of a kind, before the open-step and balance rules; `undefined` = unusable. */
function rawCut(
  kind: CutKind,
  nodes: readonly number[],
  input: CutInput,
  open: Origin | undefined,
): number | undefined {
  const { index } = input
  if (kind === 'turn')
    return firstAtOrAfter(nodes, index, { turn: input.currentTurn - input.keepRecentTurns + 1, step: 0 })
  if (kind === 'open-step') return open === undefined ? undefined : firstAtOrAfter(nodes, index, open)
  for (let position = nodes.length - 1; position >= 0; position--) {
    const origin = index.origin(nodes[position] as number)
    if (open === undefined || compareOrigins(origin, open) !== 0) return firstAtOrAfter(nodes, index, origin)
  }
  return undefined
}

/**
 * Moves a cut toward the head until the head's tool calls are all answered inside it.
 *
 * @param session - the session
 * @param nodes - the surface nodes
 * @param cut - the first retained position
 * @returns the balanced position (`0` when none)
 * @internal
 */
export function balanceCut(session: Session, nodes: readonly number[], cut: number): number {
  let balance = 0
  for (let position = 0; position < cut; position++)
    balance += balanceDelta(eventAt(session, nodes[position] as number))
  let position = cut
  while (balance !== 0 && position > 0) {
    position--
    balance -= balanceDelta(eventAt(session, nodes[position] as number))
  }
  return position
}

/**
 * The head of a cut: every surface node before it, never a node of the open
 * step, never splitting a tool call from its result.
 *
 * @param kind - the cut
 * @param input - the index, `keepRecentTurns` and the current turn
 * @returns the head's node seqs, or `undefined` when the cut is unusable (empty head, or a lone earlier checkpoint)
 * @internal
 */
export function chooseHead(kind: CutKind, input: CutInput): readonly number[] | undefined {
  const session = input.index.session
  const nodes = session.surfaceNodes()
  const open = openStepOrigin(session)
  const raw = rawCut(kind, nodes, input, open)
  if (raw === undefined) return undefined
  const limit = open === undefined ? nodes.length : firstAtOrAfter(nodes, input.index, open)
  const cut = balanceCut(session, nodes, Math.min(raw, limit))
  if (cut === 0) return undefined
  const head = nodes.slice(0, cut)
  if (head.length === 1 && isCheckpoint(eventAt(session, head[0] as number))) return undefined
  return head
}

/**
 * The older half of a head: the prefix ending at the balanced step boundary
 * nearest to `floor(head.length / 2)` (ties: the smaller).
 *
 * @param index - the session's index
 * @param head - the head's node seqs
 * @returns the prefix, or `undefined` when the head has no balanced step boundary
 * @internal
 */
export function olderHalf(index: SurfaceIndex, head: readonly number[]): readonly number[] | undefined {
  const target = Math.floor(head.length / 2)
  let best: number | undefined
  let balance = 0
  for (let position = 1; position < head.length; position++) {
    balance += balanceDelta(eventAt(index.session, head[position - 1] as number))
    const boundary =
      compareOrigins(index.origin(head[position] as number), index.origin(head[position - 1] as number)) !== 0
    if (!boundary || balance !== 0) continue
    if (best === undefined || Math.abs(position - target) < Math.abs(best - target)) best = position
  }
  return best === undefined ? undefined : head.slice(0, best)
}
