import type { CancelCause } from '../session/turn-end-reason.js'

/**
 * The cancel cause a run's aborted `signal` stands for: `{ kind: 'timeout' }` when its reason is
 * a `TimeoutError` (what `AbortSignal.timeout(ms)` aborts with, also through `AbortSignal.any`),
 * else `{ kind: 'user' }`.
 *
 * @param signal - an aborted signal
 * @returns a fresh cause
 * @example
 * ```ts
 * signalCancelCause(AbortSignal.abort(new DOMException('late', 'TimeoutError'))) // { kind: 'timeout' }
 * ```
 * @internal
 */
export function signalCancelCause(signal: AbortSignal): CancelCause {
  const reason: unknown = signal.reason
  // A DOMException is an Error in Node, but a reason of another realm only matches by its name.
  const timedOut =
    typeof reason === 'object' && reason !== null && (reason as { readonly name?: unknown }).name === 'TimeoutError'
  return { kind: timedOut ? 'timeout' : 'user' }
}
