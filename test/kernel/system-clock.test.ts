/**
 * `systemClock()`: a timer longer than Node's `setTimeout` limit
 * (2^31 − 1 ms, about 24.8 days) waits its whole delay instead of firing after 1 ms.
 */
import { afterEach, describe, expect, test, vi } from 'vitest'
import { systemClock } from '../../src/kernel/index.js'

afterEach(() => {
  vi.useRealTimers()
})

describe('systemClock().setTimer', () => {
  test('a delay above 2^31 − 1 ms fires once, when it is due; a short one as usual', () => {
    vi.useFakeTimers({ now: 0 })
    const clock = systemClock()
    const fired: string[] = []
    const long = 30 * 24 * 60 * 60 * 1000
    clock.setTimer(() => fired.push('long'), long)
    clock.setTimer(() => fired.push('short'), 10)
    vi.advanceTimersByTime(10)
    expect(fired).toEqual(['short'])
    vi.advanceTimersByTime(2_147_483_647)
    expect(fired).toEqual(['short'])
    vi.advanceTimersByTime(long - 10 - 2_147_483_647 - 1)
    expect(fired).toEqual(['short'])
    vi.advanceTimersByTime(1)
    expect(fired).toEqual(['short', 'long'])
    expect(clock.now()).toBe(long)
  })

  test('cancelling a long timer in either leg stops it', () => {
    vi.useFakeTimers({ now: 0 })
    const clock = systemClock()
    let fired = 0
    const cancelEarly = clock.setTimer(() => fired++, 3_000_000_000)
    const cancelLate = clock.setTimer(() => fired++, 3_000_000_000)
    cancelEarly()
    vi.advanceTimersByTime(2_500_000_000)
    cancelLate()
    vi.advanceTimersByTime(1_000_000_000)
    expect(fired).toBe(0)
  })
})
