import { ErrorCode } from '../../errors/codes.js'
import type { SessionErrorLocation } from '../../errors/session-error.js'
import { SessionEventError } from '../../errors/session-event-error.js'
import type { JsonValue } from '../json-value.js'
import { JsonWalk, primitiveReason } from './json-walk.js'
import { isSharedObject } from './shared-snapshots.js'

/**
 * Whether `value` is lossless JSON: what {@link snapshotJson} accepts. Reads
 * each property once, like {@link snapshotJson}; a throwing getter's error propagates.
 *
 * @param value - anything
 * @returns `true` when {@link snapshotJson} would accept `value`
 */
export function isJsonValue(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return primitiveReason(value) === undefined
  if (isSharedObject(value)) return true
  const walk = new JsonWalk(false, true)
  walk.run(value)
  return walk.reason === undefined
}

/**
 * Validates and copies `value` as lossless JSON in one iterative walk: any
 * depth works, each property and slot is read exactly once, shared sub-objects are copied
 * separately, and every object and array of the copy is frozen. The caller's value is never
 * modified. Copies are plain objects in the original key order; `toJSON` is ignored. With
 * `sharing`, a value that is an earlier result recorded with `shareSnapshot` (deep-frozen,
 * immutable) is kept instead of copied again, at the root or anywhere inside (the commit point's payload
 * copy: a copy would differ only by identity); without it every object is new.
 *
 * @example
 * ```ts
 * const data = snapshotJson({ turn: 1 }, 'data') // a frozen copy
 * snapshotJson({ a: [1, 2n] }, 'data') // throws NOT_JSON, path 'data.a[1]', reason 'bigint'
 * ```
 *
 * @param value - the candidate value
 * @param root - the name that starts error paths (`'data'`, `'options'`)
 * @param location - the session, type, seq or seed index to name in the error
 * @param sharing - keep recorded earlier results found in `value` instead of copying them
 * @returns a deep-frozen copy (primitives are returned as they are)
 * @throws {@link SessionEventError} `NOT_JSON` with the `path` of the first offending value and a `reason`
 */
export function snapshotJson(
  value: unknown,
  root = 'value',
  location?: SessionErrorLocation,
  sharing = false,
): JsonValue {
  let reason: string | undefined
  let path = root
  if (typeof value !== 'object' || value === null) {
    reason = primitiveReason(value)
    if (reason === undefined) return value as JsonValue
  } else {
    if (sharing && isSharedObject(value)) return value as JsonValue
    const walk = new JsonWalk(true, sharing)
    const copy = walk.run(value)
    if (walk.reason === undefined) return copy as JsonValue
    reason = walk.reason
    path = walk.path(root)
  }
  throw new SessionEventError({
    ...location,
    code: ErrorCode.NOT_JSON,
    detail: `${path} is not lossless JSON (${reason})`,
    path,
    reason,
  })
}
