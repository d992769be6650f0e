/**
 * The races waiting on each turn signal. A turn makes several races (every checkpoint and every
 * listener dispatch): one abort listener per signal, set up by its first race, calls them all,
 * instead of an `addEventListener`/`removeEventListener` pair per race. Keyed weakly by the
 * signal, so nothing outlives a turn and no two harnesses share an entry.
 */
const racersBySignal = new WeakMap<AbortSignal, Set<() => void>>()

function racersOf(signal: AbortSignal): Set<() => void> {
  let racers = racersBySignal.get(signal)
  if (racers === undefined) {
    const created = new Set<() => void>()
    racers = created
    racersBySignal.set(signal, created)
    signal.addEventListener(
      'abort',
      () => {
        // A copy: an abort callback only schedules, but a racer must not be skipped by a delete.
        for (const racer of [...created]) racer()
        created.clear()
      },
      { once: true },
    )
  }
  return racers
}

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
    const racers = signal.aborted ? undefined : racersOf(signal)
    if (racers === undefined) onAbort()
    else racers.add(onAbort)
    const finish = (): void => {
      settled = true
      racers?.delete(onAbort)
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
