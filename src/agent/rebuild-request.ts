import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { RequestNotFoundError } from '../errors/agent-errors.js'
import type { Clock } from '../kernel/host-services.js'
import type { ModelRequest } from '../model/model-request.js'
import type { AssistantChunkData } from '../session/core-event-types.js'
import { coreEventTypes } from '../session/core-event-types.js'
import { createSession } from '../session/create-session.js'
import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-event.js'
import { loopRequestBody } from './build-request.js'

/** Which request attempt to rebuild: attempt *n* is the *n*-th run of the step's `assistant/chunk`s. */
export interface RequestCoordinates {
  /** The turn number. */
  readonly turn: number
  /** The step number within the turn. */
  readonly step: number
  /**
   * The attempt number within the step.
   *
   * @default 1
   */
  readonly attempt?: number
}

/** A request as {@link rebuildRequest} returns it: a loop request without its `signal`, deep-frozen. */
export type RebuiltRequest = Omit<ModelRequest, 'signal'>

/** The clock of a replay session: only its `session/end-seed` marker reads it. */
const stillClock: Clock = Object.freeze({ now: () => 0, setTimer: () => () => {} })

/**
 * Rebuilds the request (without `signal`) that a fresh process builds from the log prefix ending
 * just before that attempt's first `assistant/chunk` (04-agent.md §12.4): the prefix is replayed
 * into a fresh, unregistered session, whose folded header and `deriveMessages()` make the
 * request. Events of plugin types are replayed as `ignorable` (they never shape a request).
 * Cost O(prefix); not for hot paths.
 *
 * @param session - the session whose log holds the attempt
 * @param coordinates - turn, step and attempt (default 1)
 * @returns the deep-frozen request, keys in loop-request order
 * @throws {@link RequestNotFoundError} `REQUEST_NOT_FOUND` when the step has no such run of chunks (or no header precedes it)
 * @throws `InvalidArgumentError` `INVALID_ARGUMENT` when a coordinate is not a positive safe integer
 * @example
 * ```ts
 * const request = rebuildRequest(agent.session, { turn: 1, step: 1, attempt: 2 })
 * console.log(request.messages.length)
 * ```
 */
export function rebuildRequest(session: Session, coordinates: RequestCoordinates): RebuiltRequest {
  return rebuildRequestAt(session, coordinates, false)
}

/**
 * {@link rebuildRequest}, optionally also for the pending attempt: the next attempt of the open
 * step, whose chunks are not logged yet (the prefix is then the whole log). Used by
 * `verifyReconstruction` just before the adapter is called.
 *
 * @internal
 */
export function rebuildRequestAt(
  session: Session,
  coordinates: RequestCoordinates,
  allowPending: boolean,
): RebuiltRequest {
  const turn = coordinate(coordinates.turn, 'turn')
  const step = coordinate(coordinates.step, 'step')
  const attempt = coordinate(coordinates.attempt ?? 1, 'attempt')
  const found = { turn, step, attempt }
  const end = prefixEnd(session, found, allowPending)
  if (end === undefined) throw new RequestNotFoundError(found)
  const seed = replayableSeed(session.slice(0, end))
  const replay = createSession({ id: session.id, seed, clock: stillClock })
  const header = replay.requestHeader()
  if (header === undefined) throw new RequestNotFoundError(found)
  return Object.freeze(loopRequestBody(header, replay.deriveMessages(), session.id))
}

/** The seq of the attempt's first chunk, the log length for an allowed pending attempt, else `undefined`. */
function prefixEnd(
  session: Session,
  coordinates: { turn: number; step: number; attempt: number },
  allowPending: boolean,
): number | undefined {
  const { turn, step, attempt } = coordinates
  const starts: number[] = []
  let inRun = false
  for (const event of session.events) {
    if (event.type !== 'assistant/chunk') continue
    const data = event.data as unknown as AssistantChunkData
    if (data.turn !== turn || data.step !== step) continue
    if (!inRun) {
      if (starts.length + 1 === attempt) return event.seq
      starts.push(event.seq)
      inRun = true
    }
    if (data.chunk.type === 'finish') inRun = false
  }
  const state = session.turnState()
  const pending =
    allowPending && !inRun && starts.length + 1 === attempt && state.openTurn === turn && state.openStep === step
  return pending ? session.length : undefined
}

/** The prefix with every event of a non-core type marked `ignorable`, so a core-only catalog replays it. */
function replayableSeed(prefix: readonly SessionEvent[]): readonly SessionEvent[] {
  const core = coreEventTypes()
  return prefix.map((event) =>
    core.has(event.type) || event.ignorable === true ? event : { ...event, ignorable: true },
  )
}

function coordinate(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError({
      argument: `coordinates.${name}`,
      reason: 'must be a positive safe integer',
      value,
    })
  }
  return value
}
