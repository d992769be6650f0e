/**
 * Deep-freezes `value` in place and returns it. Iterative (a 20,000-deep value is fine) and it
 * does not descend into objects that are already frozen: logged data is deep-frozen, so freezing
 * a structure that holds it costs only its own new parts.
 *
 * @internal
 */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item !== 'object' || item === null || Object.isFrozen(item)) continue
    Object.freeze(item)
    for (const child of Object.values(item)) stack.push(child)
  }
  return value
}
