import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { ReconstructionError, RequestNotFoundError } from '../errors/agent-errors.js'
import { SessionEventError } from '../errors/session-event-error.js'
import type { Clock } from '../kernel/host-services.js'
import type { ModelRequest } from '../model/model-request.js'
import type { AssistantChunkData } from '../session/core-event-types.js'
import { coreEventTypes } from '../session/core-event-types.js'
import { createSession } from '../session/create-session.js'
import { firstDifference } from '../session/first-difference.js'
import type { JsonValue } from '../session/json-value.js'
import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-event.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'
import { type LoopRequestMarks, requestFromLog } from './request-builder.js'

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
 * just before that attempt's first `assistant/chunk`: the prefix is replayed into a fresh,
 * unregistered session, and the live loop's own builder makes the request from its folded header
 * and `deriveMessages()`. Events of plugin types are replayed as `ignorable` (they never shape a request).
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
  const request = requestFromLog(replay)
  if (request === undefined) throw new RequestNotFoundError(found)
  return Object.freeze(request)
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

/**
 * Checks a loop request against its reconstruction:
 * it must be marked in `marks`, deep-frozen (its `signal` excepted) and deep-equal, as JSON with
 * key order ignored and `signal` excluded, to what `rebuildRequest` builds for the same
 * attempt. The attempt may be the pending one: the next attempt of the open step, whose chunks are
 * not logged yet (the check runs just before the adapter is called). Cost O(log).
 *
 * @param request - the request about to be sent
 * @param session - the session the request belongs to
 * @param coordinates - turn, step and attempt (default 1) of the request
 * @param marks - the harness's loop-request marks
 * @throws {@link ReconstructionError} `RECONSTRUCTION_MISMATCH`: `path` `'$'` for an unmarked or unfrozen request,
 *   else the first difference in `$.a[0].b` form, with the rebuilt (`expected`) and live (`actual`) values there
 * @throws `RequestNotFoundError` `REQUEST_NOT_FOUND` when the log has no such attempt and it is not the pending one
 * @example
 * ```ts
 * verifyReconstruction(request, agent.session, { turn, step, attempt }, marks)
 * ```
 */
export function verifyReconstruction(
  request: unknown,
  session: Session,
  coordinates: RequestCoordinates,
  marks: LoopRequestMarks,
): void {
  if (!marks.isLoopRequest(request)) {
    throw new ReconstructionError({
      path: '$',
      actual: request,
      reason: 'the request is not one the agent loop built (an llm/stream middleware may have replaced it)',
    })
  }
  const body = withoutSignal(request as object)
  const unfrozen = Object.isFrozen(request) ? firstUnfrozen(body) : '$'
  if (unfrozen !== undefined) {
    throw new ReconstructionError({
      path: '$',
      actual: request,
      reason: `the request is not deep-frozen (${unfrozen} is mutable)`,
    })
  }
  const expected = rebuildRequestAt(session, coordinates, true) as unknown as JsonValue
  let actual: JsonValue
  try {
    actual = snapshotJson(body, '$')
  } catch (error) {
    if (!SessionEventError.is(error) || error.path === undefined) throw error
    throw new ReconstructionError({
      path: error.path,
      expected: valueAt(expected, error.path),
      actual: valueAt(body, error.path),
      reason: `not JSON (${error.reason ?? 'invalid'})`,
    })
  }
  const path = firstDifference(expected, actual, '$')
  if (path !== undefined) {
    throw new ReconstructionError({ path, expected: valueAt(expected, path), actual: valueAt(body, path) })
  }
}

/** A shallow copy of the request without its `signal` key. */
function withoutSignal(request: object): Readonly<Record<string, unknown>> {
  const { signal: _signal, ...body } = request as Readonly<Record<string, unknown>>
  return body
}

/** The path of the first object or array under the request's fields that is not frozen. */
function firstUnfrozen(body: Readonly<Record<string, unknown>>): string | undefined {
  const stack: [unknown, string][] = Object.entries(body)
    .reverse()
    .map(([key, value]) => [value, `$.${key}`])
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const [value, path] = frame
    if (typeof value !== 'object' || value === null) continue
    if (!Object.isFrozen(value)) return path
    const entries = Object.entries(value)
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, child] = entries[index] as [string, unknown]
      stack.push([child, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`])
    }
  }
  return undefined
}

const segmentPattern = /^(?:\.([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/

/** The value at a `$.a[0]["b-c"]` path, or `undefined` where the path leads nowhere. */
function valueAt(root: unknown, path: string): unknown {
  let value = root
  let rest = path.slice(1)
  while (rest.length > 0) {
    const match = segmentPattern.exec(rest)
    if (match === null) return undefined
    const key = match[1] ?? (match[2] === undefined ? (JSON.parse(match[3] as string) as string) : Number(match[2]))
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined
    value = (value as Readonly<Record<string | number, unknown>>)[key]
    rest = rest.slice(match[0].length)
  }
  return value
}
