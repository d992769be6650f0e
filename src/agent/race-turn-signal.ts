/**
 * Settles like `promise`, or, once the turn signal aborted and `promise` is still pending after
 * everything already queued has run (one macrotask), rejects with the signal's reason
 * (every await in the loop honours the turn signal). The pause lets a listener that cancels and
 * then fails be heard (its error becomes the end's `cause`); a
 * listener that ignores the signal cannot hold the turn up. A `promise` that loses keeps running
 * and its rejection is observed.
 *
 * @param promise - a listener dispatch of the loop
 * @param signal - the turn signal
 * @returns what `promise` resolves with
 * @throws (as a rejection) what `promise` rejects with, or `signal.reason`
 * @internal
 */
export function raceTurnSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false
    let pending: ReturnType<typeof setImmediate> | undefined
    const onAbort = (): void => {
      pending = setImmediate(() => {
        if (!settled) reject(signal.reason)
      })
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    const finish = (): void => {
      settled = true
      signal.removeEventListener('abort', onAbort)
      if (pending !== undefined) clearImmediate(pending)
    }
    promise.then(
      (value) => {
        finish()
        resolve(value)
      },
      (error: unknown) => {
        finish()
        reject(error)
      },
    )
  })
}
