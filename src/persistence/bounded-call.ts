import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { Clock } from '../kernel/host-services.js'

/** The storage calls a write timeout names. */
export type BoundedOperation = 'append' | 'create' | 'acquire' | 'release' | 'close' | 'load' | 'readFrom' | 'list'

/** What {@link boundedCall} needs to time a storage call. */
export interface CallBound {
  /** Where the timer is set (the system clock in a harness: storage hangs in real time). */
  readonly clock: Clock
  /** The write timeout in milliseconds; `0` waits for ever. */
  readonly timeoutMs: number
}

/**
 * Settles like `call`, or rejects with `PersistenceError` `WRITE_TIMEOUT` (naming the session and
 * the storage call) once `bound.timeoutMs` elapsed first. The call itself is not stopped (no
 * adapter can be made to give up a write it started): it keeps running, its outcome stays with
 * whoever holds `call`, and its late rejection is observed here so it is never unhandled.
 *
 * @param bound - the clock and the timeout
 * @param call - the storage call in flight
 * @param sessionId - the session concerned, when there is one
 * @param operation - which storage call it is, or a function asked when the timeout fires (a call
 *   made of steps names the step it hung in)
 * @returns what `call` resolves with
 * @throws (as a rejection) what `call` rejects with, or the `WRITE_TIMEOUT` error
 * @internal
 */
export function boundedCall<T>(
  bound: CallBound,
  call: Promise<T>,
  sessionId: string | undefined,
  operation: BoundedOperation | (() => BoundedOperation),
): Promise<T> {
  if (bound.timeoutMs === 0) return call
  return new Promise<T>((resolve, reject) => {
    const cancel = bound.clock.setTimer(() => {
      const name = typeof operation === 'function' ? operation() : operation
      reject(
        new PersistenceError({
          code: ErrorCode.WRITE_TIMEOUT,
          sessionId,
          detail: `the storage adapter's ${name} did not settle within ${bound.timeoutMs} ms; it counts as failed`,
          operation: name,
          timeoutMs: bound.timeoutMs,
        }),
      )
    }, bound.timeoutMs)
    call.then(
      (value) => {
        cancel()
        resolve(value)
      },
      (error: unknown) => {
        cancel()
        reject(error)
      },
    )
  })
}
