import type { ModelRequest } from './model-request.js'

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // `__proto__` (from JSON data) must become an own data property, not a prototype change.
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}

/**
 * The deep-frozen form of a validated value: a container found deep-frozen is returned as it is
 * (and remembered in `known`); any other container is copied, with deep-frozen children shared.
 * Recursive: validated requests are shallow data (messages, tool schemas, JSON).
 */
function deepFrozen(value: unknown, known: WeakSet<object>, knownPrefix = 0): unknown {
  if (typeof value !== 'object' || value === null || known.has(value)) return value
  let changed = !Object.isFrozen(value)
  if (Array.isArray(value)) {
    const items: unknown[] = (value as unknown[]).slice(0, knownPrefix)
    for (let index = knownPrefix; index < value.length; index++) {
      const item: unknown = value[index]
      const next = deepFrozen(item, known)
      if (next !== item) changed = true
      items.push(next)
    }
    const result = changed ? Object.freeze(items) : value
    known.add(result)
    return result
  }
  const record = value as Record<string, unknown>
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(record)) {
    const item = record[key]
    const next = deepFrozen(item, known)
    if (next !== item) changed = true
    defineOwn(copy, key, next)
  }
  const result = changed ? Object.freeze(copy) : record
  known.add(result)
  return result
}

/**
 * Deep-freezes a validated request, its `signal` excepted. Already-frozen
 * objects are not copied: a deep-frozen request (a loop request) is returned as it is, and frozen
 * sub-objects (logged messages) are shared by the copy. The caller's unfrozen objects are never
 * modified; they are copied.
 *
 * @param request - a request that passed {@link validateModelRequest}
 * @param known - containers already known to be deep-frozen; found and created ones are added
 * @param knownPrefix - how many leading messages are known deep-frozen (shared without a lookup)
 * @returns the request itself when it was deep-frozen, else a frozen copy with the same signal
 * @internal
 */
export function freezeRequest(request: ModelRequest, known: WeakSet<object>, knownPrefix = 0): ModelRequest {
  const record = request as unknown as Record<string, unknown>
  let changed = !Object.isFrozen(request)
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(record)) {
    const item = record[key]
    const next = key === 'signal' ? item : deepFrozen(item, known, key === 'messages' ? knownPrefix : 0)
    if (next !== item) changed = true
    copy[key] = next
  }
  if (!Object.hasOwn(copy, 'signal')) {
    // A non-enumerable or inherited signal still reaches the adapter.
    copy['signal'] = request.signal
    changed = true
  }
  return changed ? (Object.freeze(copy) as unknown as ModelRequest) : request
}
