/**
 * Waiting for SQLite's write lock without blocking the event loop: better-sqlite3's own busy
 * timeout sleeps inside the synchronous call, so a second connection in the same process would
 * freeze the very event loop the lock holder needs to finish its transaction. Instead the
 * connection fails fast on a busy database and the call is retried on a timer until the busy
 * timeout has passed.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises'

/** Whether `error` is SQLite's "database is busy / locked" (the lock is held elsewhere). */
function isBusy(error: unknown): boolean {
  const code = (error as { readonly code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
}

/** The longest pause between two attempts, in milliseconds. */
const MAX_PAUSE_MS = 25

/**
 * Runs `attempt`, retrying while it fails because the database is busy, for up to `timeoutMs`.
 *
 * @param attempt - a synchronous database call
 * @param timeoutMs - how long to keep trying
 * @returns what `attempt` returned
 * @throws the last busy error once `timeoutMs` passed; any other error at once
 * @internal
 */
export async function retryBusy<T>(attempt: () => T, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let pause = 1
  for (;;) {
    try {
      return attempt()
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error
    }
    await sleep(Math.min(pause, Math.max(1, deadline - Date.now())))
    pause = Math.min(pause * 2, MAX_PAUSE_MS)
  }
}
