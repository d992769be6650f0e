import type { JsonArray, JsonObject, JsonValue } from '../json-value.js'

/** Whether a JSON container is an array. */
export function isJsonArray(value: JsonArray | JsonObject): value is JsonArray {
  return Array.isArray(value)
}

/**
 * Structural equality of two JSON values; object key order is ignored. Iterative, so any depth works.
 *
 * @param left - a JSON value
 * @param right - another JSON value
 * @returns `true` when both hold the same data
 */
export function jsonEquals(left: JsonValue, right: JsonValue): boolean {
  const pending: JsonValue[] = [left, right]
  /** Container pairs already compared or being compared: a cyclic value cannot loop forever. */
  let compared: Map<object, Set<object>> | undefined
  while (pending.length > 0) {
    const second = pending.pop()!
    const first = pending.pop()!
    if (first === second) continue
    if (typeof first !== 'object' || typeof second !== 'object' || first === null || second === null) return false
    compared ??= new Map()
    let partners = compared.get(first)
    if (partners === undefined) compared.set(first, (partners = new Set()))
    else if (partners.has(second)) continue
    partners.add(second)
    const firstIsArray = isJsonArray(first)
    if (firstIsArray !== isJsonArray(second)) return false
    if (isJsonArray(first)) {
      const secondArray = second as JsonArray
      if (first.length !== secondArray.length) return false
      for (let index = 0; index < first.length; index++) pending.push(first[index]!, secondArray[index]!)
    } else {
      const secondObject = second as JsonObject
      const keys = Object.keys(first)
      if (keys.length !== Object.keys(secondObject).length) return false
      for (const key of keys) {
        if (!Object.hasOwn(secondObject, key)) return false
        pending.push(first[key]!, secondObject[key]!)
      }
    }
  }
  return true
}
