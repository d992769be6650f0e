/**
 * Values known to be deep-frozen lossless JSON, so a snapshot, a seed or a JSON check keeps them
 * instead of walking and copying them again.
 *
 * @module
 */
import type { JsonValue } from '../json-value.js'

/**
 * Copies `snapshotJson` returned that were recorded with {@link shareSnapshot}: deep-frozen
 * lossless JSON, never changed, so a sharing snapshot holding one keeps it instead of copying it
 * (and `isJsonValue` skips it). Only hot values are recorded (a weak set is not free).
 */
const knownJson = new WeakSet<object>()

/**
 * Records a result of `snapshotJson` so a later sharing snapshot keeps it (e.g. a stream
 * chunk the model boundary admitted, which the loop then appends inside its `assistant/chunk`).
 *
 * @param copy - a value `snapshotJson` returned
 * @returns `copy`
 * @internal
 */
export function shareSnapshot<T extends JsonValue>(copy: T): T {
  if (typeof copy === 'object' && copy !== null) knownJson.add(copy)
  return copy
}

/**
 * Adopts a list of fresh `JSON.parse` results that nobody else holds (a load its adapter marked
 * `freshlyParsed`): deep-freezes it in place and, when every value is lossless JSON, freezes the
 * list and records it like {@link shareSnapshot}, so a seed from it (the check of a loaded log, a
 * resume) keeps its values instead of walking and copying each again.
 * `JSON.parse` yields plain, dense, acyclic, string-keyed data; what is checked is what it cannot
 * rule out (an overflowing literal parses to `Infinity`, `-0` to negative zero) and what a
 * wrapping adapter could have put in since (another prototype, a non-JSON value, a node seen
 * twice). A list that fails stays unrecorded (parts of it may be frozen), and the full snapshot
 * of a seed then rejects or copies it as usual.
 *
 * @param values - a list an adapter's `load` returned, marked `freshlyParsed`
 * @returns whether it was recorded (a frozen list, adopted before, is not again)
 * @internal
 */
export function adoptParsedJson(values: readonly unknown[]): boolean {
  if (Object.isFrozen(values) || !Array.isArray(values)) return false
  const pending: object[] = []
  for (const value of values) {
    if (typeof value !== 'object' || value === null) return false
    pending.push(value)
    while (pending.length > 0) {
      const node = pending.pop() as Record<string, unknown>
      if (Object.isFrozen(node)) return false
      const isArray = Array.isArray(node)
      if (Object.getPrototypeOf(node) !== (isArray ? Array.prototype : Object.prototype)) return false
      const keys = isArray ? undefined : Object.keys(node)
      const length = keys === undefined ? (node as unknown as unknown[]).length : keys.length
      for (let index = 0; index < length; index++) {
        const child = keys === undefined ? (node as unknown as unknown[])[index] : node[keys[index] as string]
        switch (typeof child) {
          case 'object':
            if (child !== null) pending.push(child)
            break
          case 'number':
            if (child - child !== 0 || (child === 0 && 1 / child < 0)) return false
            break
          case 'string':
          case 'boolean':
            break
          default:
            return false
        }
      }
      Object.freeze(node)
    }
  }
  knownJson.add(Object.freeze(values))
  return true
}

/**
 * Whether `value` was recorded as deep-frozen lossless JSON ({@link shareSnapshot},
 * {@link adoptParsedJson}).
 *
 * @internal
 */
export function isSharedSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && knownJson.has(value)
}

/**
 * {@link isSharedSnapshot} for a value known to be a non-null object (the walk's hot path).
 *
 * @internal
 */
export function isSharedObject(value: object): boolean {
  return knownJson.has(value)
}
