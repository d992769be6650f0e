import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { Clock } from '../kernel/host-services.js'
import { checkOptions, type OptionRule } from '../kernel/option-issues.js'

/** Options of {@link fakeClock}. */
export interface FakeClockOptions {
  /**
   * The starting time, in milliseconds since the epoch.
   *
   * @default 0
   */
  readonly now?: number
  /**
   * How many timers `runAll()` fires before it gives up (a timer that keeps rescheduling itself).
   *
   * @default 10000
   */
  readonly maxTimers?: number
}

/** A timer of a {@link FakeClock} not yet fired or cancelled. */
export interface PendingTimer {
  /** When it falls due (clock milliseconds). */
  readonly dueAt: number
  /** The delay it was set with. */
  readonly delayMs: number
}

/** A manual {@link Clock}: time moves only when a test says so. */
export interface FakeClock extends Clock {
  /**
   * Moves time forward by `ms`, firing every timer that falls due, in due order (ties in the order
   * they were set). As with real timers, each callback's asynchronous follow-ups (promise
   * continuations) run before the next timer fires, so they see the time of the timer that caused
   * them; timers they set that fall due within the same window fire too. Await the returned promise.
   *
   * @param ms - a finite, non-negative number of milliseconds
   * @returns resolves once nothing due is left
   * @throws `InvalidArgumentError` for a negative or non-finite `ms`
   */
  advance(ms: number): Promise<void>
  /**
   * Fires every pending timer, moving time to each one's due time, until none is left (timers set
   * by callbacks included).
   *
   * @returns resolves once no timer is pending
   * @throws `InvalidArgumentError` when more than `maxTimers` fire (a timer loop)
   */
  runAll(): Promise<void>
  /**
   * The timers not yet fired or cancelled, soonest first.
   *
   * @returns each timer's due time and delay
   */
  pending(): readonly PendingTimer[]
}

interface Timer {
  readonly dueAt: number
  readonly delayMs: number
  readonly order: number
  readonly callback: () => void
}

const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  now: (value) => (typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a finite number'),
  maxTimers: (value) =>
    Number.isSafeInteger(value) && (value as number) > 0 ? undefined : 'must be a positive safe integer',
})

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Creates a fake clock for deterministic tests.
 *
 * @param options - the starting time and the `runAll()` timer budget
 * @returns a clock to pass as `createHarness({ clock })`; its `setTimer` throws
 *   `InvalidArgumentError` (`argument: 'callback'`) for a callback that is not a function
 * @throws `InvalidOptionsError` for bad options (not an object, an unknown key, a `now` that is
 *   not a finite number, a `maxTimers` that is not a positive safe integer)
 * @example
 * ```ts
 * const clock = fakeClock({ now: 0 })
 * clock.setTimer(() => console.log('fired'), 1000)
 * await clock.advance(1000) // logs "fired"
 * ```
 */
export function fakeClock(options: FakeClockOptions = {}): FakeClock {
  checkOptions(options, optionRules, '{ now?, maxTimers? }', 'fakeClock options')
  let now = options.now ?? 0
  const maxTimers = options.maxTimers ?? 10_000
  let counter = 0
  const timers = new Set<Timer>()

  const nextDue = (limit: number): Timer | undefined => {
    let best: Timer | undefined
    for (const timer of timers) {
      if (timer.dueAt > limit) continue
      if (best === undefined || timer.dueAt < best.dueAt || (timer.dueAt === best.dueAt && timer.order < best.order)) {
        best = timer
      }
    }
    return best
  }

  const fireNext = (limit: number, budget: { left: number }): boolean => {
    const timer = nextDue(limit)
    if (timer === undefined) return false
    if (budget.left-- <= 0) {
      throw new InvalidArgumentError({
        argument: 'timers',
        reason: `more than ${maxTimers} timers fired; a timer keeps rescheduling itself`,
      })
    }
    timers.delete(timer)
    now = Math.max(now, timer.dueAt)
    timer.callback()
    return true
  }

  // One timer per turn: the follow-ups of a callback run (at its due time) before the next fires.
  const settle = async (limit: () => number): Promise<void> => {
    const budget = { left: maxTimers }
    for (;;) {
      const fired = fireNext(limit(), budget)
      await yieldToEventLoop()
      if (!fired && nextDue(limit()) === undefined) return
    }
  }

  return {
    now: () => now,
    setTimer(callback, delayMs) {
      if (typeof callback !== 'function')
        throw new InvalidArgumentError({ argument: 'callback', reason: 'must be a function', value: callback })
      const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0
      const timer: Timer = { dueAt: now + delay, delayMs: delay, order: counter++, callback }
      timers.add(timer)
      return () => {
        timers.delete(timer)
      }
    },
    advance(ms) {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        return Promise.reject(
          new InvalidArgumentError({ argument: 'ms', reason: 'must be a finite, non-negative number', value: ms }),
        )
      }
      const target = now + ms
      try {
        return settle(() => target).finally(() => {
          now = Math.max(now, target)
        })
      } catch (error) {
        return Promise.reject(error)
      }
    },
    runAll() {
      try {
        return settle(() => Number.POSITIVE_INFINITY)
      } catch (error) {
        return Promise.reject(error)
      }
    },
    pending() {
      return [...timers]
        .sort((left, right) => left.dueAt - right.dueAt || left.order - right.order)
        .map((timer) => ({ dueAt: timer.dueAt, delayMs: timer.delayMs }))
    },
  }
}
