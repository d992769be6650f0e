import { ReconstructionError } from '../errors/agent-errors.js'
import { SessionEventError } from '../errors/session-event-error.js'
import { firstDifference } from '../session/first-difference.js'
import type { JsonValue } from '../session/json-value.js'
import type { Session } from '../session/session.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'
import type { LoopRequestMarks } from './build-request.js'
import { type RequestCoordinates, rebuildRequestAt } from './rebuild-request.js'

/**
 * Checks a loop request against its reconstruction (04-agent.md §12.4, `verifyReconstruction`):
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
