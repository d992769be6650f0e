import type { JsonValue } from './json-value.js'

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * Appends a key to a JS access path: `data.message`, `data["a-b"]`, `data.content[0]`.
 *
 * @internal
 */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  return identifier.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

/**
 * The path of the first structural difference between two JSON values (object key order
 * ignored), or `undefined` when they are equal. Iterative, so deep values are fine.
 *
 * @internal
 */
export function firstDifference(left: JsonValue, right: JsonValue, root: string): string | undefined {
  const stack: [JsonValue, JsonValue, string][] = [[left, right, root]]
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const [a, b, path] = frame
    if (a === b) continue
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return path
    const aIsArray = Array.isArray(a)
    if (aIsArray !== Array.isArray(b)) return path
    if (aIsArray) {
      const aList = a as readonly JsonValue[]
      const bList = b as readonly JsonValue[]
      if (aList.length !== bList.length) return path
      for (let index = aList.length - 1; index >= 0; index--) {
        stack.push([aList[index] as JsonValue, bList[index] as JsonValue, childPath(path, index)])
      }
      continue
    }
    const aObject = a as { readonly [key: string]: JsonValue }
    const bObject = b as { readonly [key: string]: JsonValue }
    const aKeys = Object.keys(aObject)
    const bKeys = Object.keys(bObject)
    for (const key of bKeys) if (!Object.hasOwn(aObject, key)) return childPath(path, key)
    for (let index = aKeys.length - 1; index >= 0; index--) {
      const key = aKeys[index] as string
      if (!Object.hasOwn(bObject, key)) return childPath(path, key)
      stack.push([aObject[key] as JsonValue, bObject[key] as JsonValue, childPath(path, key)])
    }
  }
  return undefined
}
