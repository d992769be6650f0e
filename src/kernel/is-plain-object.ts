/**
 * Whether `value` is a plain object: an object whose prototype is `Object.prototype` or `null`
 * (not an array, a class instance or a function).
 *
 * @param value - anything
 * @returns `true` for a plain object
 * @internal
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}
