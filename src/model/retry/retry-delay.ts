import type { Clock } from '../../kernel/host-services.js'
import type { RetryPolicy } from './retry-policy.js'

/** The inputs of {@link retryDelay} besides the policy. */
export interface RetryDelayInput {
  /** The retry number, 1-based: the first retry of a step (or of a `withRetry` call) is 1. */
  readonly retry: number
  /**
   * The jitter seed: `"<sessionId>:<turn>:<step>:<n>"` for the `retry` plugin,
   * `"<sessionId>:<purpose>:<n>"` for `withRetry`.
   */
  readonly seed: string
  /** The failure's `retryAfterMs`, if any. */
  readonly retryAfterMs?: number
}

const fnvOffsetBasis = 0x811c9dc5
const fnvPrime = 0x01000193
const encoder = new TextEncoder()

/**
 * FNV-1a, 32 bits, over the UTF-8 bytes of `text`.
 *
 * @param text - the input
 * @returns the hash, an unsigned 32-bit integer
 */
export function fnv1a32(text: string): number {
  let hash = fnvOffsetBasis
  for (const byte of encoder.encode(text)) {
    hash ^= byte
    hash = Math.imul(hash, fnvPrime) >>> 0
  }
  return hash >>> 0
}

/**
 * The delay before retry `n`. With `honorRetryAfter` and a `retryAfterMs`: that
 * value exactly when it is at most `maxDelayMs`, else `undefined` (give up: the failure stands).
 * Otherwise `round(min(initialDelayMs × 2^(n−1), maxDelayMs) × (1 + jitter × (2u − 1)))` clamped to
 * `[0, maxDelayMs]`, where `u = fnv1a32(seed) / 2^32` ∈ [0, 1): the same seed always gives the same
 * delay (axiom 5).
 *
 * @param policy - a resolved policy
 * @param input - the retry number, the seed and the failure's `retryAfterMs`
 * @returns the delay in milliseconds, or `undefined` to give up
 * @example
 * ```ts
 * retryDelay({ ...defaultRetryPolicy, jitter: 0 }, { retry: 2, seed: 's1:1:1:2' }) // 1000
 * ```
 */
export function retryDelay(policy: RetryPolicy, input: RetryDelayInput): number | undefined {
  if (policy.honorRetryAfter && input.retryAfterMs !== undefined) {
    return input.retryAfterMs <= policy.maxDelayMs ? input.retryAfterMs : undefined
  }
  const base = Math.min(policy.initialDelayMs * 2 ** (input.retry - 1), policy.maxDelayMs)
  const u = fnv1a32(input.seed) / 2 ** 32
  const delay = Math.round(base * (1 + policy.jitter * (2 * u - 1)))
  return Math.min(Math.max(delay, 0), policy.maxDelayMs)
}

/**
 * Waits `delayMs` on `clock`, cancellable by any of `signals`. Never rejects.
 *
 * @param clock - the clock whose timer is used
 * @param delayMs - the delay
 * @param signals - cancel the wait when any aborts (one already aborted: no timer is set)
 * @returns `true` once the delay passed, `false` when a signal aborted first
 * @internal
 */
export function waitDelay(clock: Clock, delayMs: number, signals: readonly AbortSignal[]): Promise<boolean> {
  if (signals.some((signal) => signal.aborted)) return Promise.resolve(false)
  return new Promise<boolean>((resolve) => {
    let cancelTimer: (() => void) | undefined
    let done = false
    const finish = (elapsed: boolean): void => {
      if (done) return
      done = true
      for (const signal of signals) signal.removeEventListener('abort', onAbort)
      if (!elapsed) cancelTimer?.()
      resolve(elapsed)
    }
    const onAbort = (): void => finish(false)
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true })
    cancelTimer = clock.setTimer(() => finish(true), delayMs)
  })
}
