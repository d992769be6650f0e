/**
 * Settles like `promise`, or rejects as soon as `signal` aborts, whichever comes first. The
 * abort listener is removed once `promise` settles, so a long-lived signal collects nothing; a
 * `promise` that loses the race keeps running, and its rejection is observed (never unhandled).
 *
 * @param promise - the work to wait for
 * @param signal - cuts the wait short
 * @param reasonOf - what to reject with on abort (default: `signal.reason`)
 * @returns what `promise` resolves with
 * @throws (as a rejection) what `promise` rejects with, or `reasonOf()` once `signal` aborted
 * @internal
 */
export function raceSignal<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  reasonOf: () => unknown = () => signal.reason,
): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined)
    return Promise.reject(reasonOf())
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(reasonOf())
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
