/**
 * Whether `value` is an `AbortSignal`, by shape (`aborted` boolean, `addEventListener` and
 * `removeEventListener` functions), so a signal of another realm (a `vm` context) passes too.
 *
 * @param value - anything
 * @returns `true` for an abort signal
 * @internal
 */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true
  const shape = value as {
    readonly aborted?: unknown
    readonly addEventListener?: unknown
    readonly removeEventListener?: unknown
  } | null
  return (
    typeof value === 'object' &&
    shape !== null &&
    typeof shape.aborted === 'boolean' &&
    typeof shape.addEventListener === 'function' &&
    typeof shape.removeEventListener === 'function'
  )
}
