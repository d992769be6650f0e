/**
 * The idle watchdog of an HTTP model call.
 *
 * @module
 */
import type { Clock } from '../../kernel/host-services.js'

/**
 * A timer that fires once the connection has been silent for `timeoutMs`.
 *
 * @internal
 */
export interface IdleWatchdog {
  /** Records activity (a received byte): the silence window starts again now. */
  kick(): void
  /** Stops counting while the consumer holds the stream (a chunk handed out, not yet pulled again). */
  pause(): void
  /** Counts again, from now. */
  resume(): void
  /** Stops the watchdog for good; it never fires afterwards. */
  stop(): void
  /** Whether it fired. */
  readonly expired: boolean
}

/**
 * Starts a watchdog, armed now. `kick()` is O(1) (it records the time; the one pending timer
 * re-arms itself for the remainder when it falls due), so re-arming on every body chunk costs no
 * timer churn.
 *
 * @internal
 * @param options - the silence limit, the clock, and the callback run once on expiry
 */
export function startIdleWatchdog(options: {
  readonly timeoutMs: number
  readonly clock: Clock
  readonly onExpire: () => void
}): IdleWatchdog {
  const { timeoutMs, clock, onExpire } = options
  let lastActivity = clock.now()
  let expired = false
  let stopped = false
  let paused = false
  let cancel: (() => void) | undefined

  const schedule = (delayMs: number): void => {
    cancel = clock.setTimer(check, delayMs)
  }
  function check(): void {
    cancel = undefined
    if (stopped) return
    if (paused) {
      schedule(timeoutMs)
      return
    }
    const silentFor = clock.now() - lastActivity
    if (silentFor < timeoutMs) {
      schedule(timeoutMs - silentFor)
      return
    }
    expired = true
    stopped = true
    onExpire()
  }
  schedule(timeoutMs)

  return {
    kick() {
      lastActivity = clock.now()
    },
    pause() {
      paused = true
    },
    resume() {
      paused = false
      lastActivity = clock.now()
    },
    stop() {
      stopped = true
      cancel?.()
      cancel = undefined
    },
    get expired() {
      return expired
    },
  }
}
