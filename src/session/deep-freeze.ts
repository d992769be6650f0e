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

/** Values this library built deep-frozen and recorded with {@link markDeepFrozen}. */
const known = new WeakSet<object>()

/**
 * Records `value` as deep-frozen, so {@link isKnownDeepFrozen} vouches for it without a walk.
 * Only for a value whose every object is frozen (e.g. a result of {@link deepFreeze}).
 *
 * @param value - a deep-frozen object
 * @returns `value`
 * @internal
 */
export function markDeepFrozen<T extends object>(value: T): T {
  known.add(value)
  return value
}

/**
 * Whether `value` was recorded by {@link markDeepFrozen} (a deep-frozen value built by this
 * library, safe to share instead of copying).
 *
 * @param value - anything
 * @returns `true` for a recorded value
 * @internal
 */
export function isKnownDeepFrozen(value: unknown): boolean {
  return typeof value === 'object' && value !== null && known.has(value)
}
