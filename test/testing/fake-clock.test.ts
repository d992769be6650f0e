import { describe, expect, test } from 'vitest'
import { InvalidArgumentError, InvalidOptionsError } from 'yoke'
import { fakeClock } from 'yoke/testing'
import { thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'

describe('fakeClock', () => {
  test('starts at the now option, 0 by default, and moves only on advance', async () => {
    expect(fakeClock().now()).toBe(0)
    const clock = fakeClock({ now: 1_000 })
    expect(clock.now()).toBe(1_000)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(clock.now()).toBe(1_000)
    await clock.advance(250)
    expect(clock.now()).toBe(1_250)
  })

  test.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '5', null])(
    'a now option of %s is refused with InvalidOptionsError at now',
    (now) => {
      expectError(
        thrownBy(() => fakeClock({ now } as never)),
        InvalidOptionsError,
        'INVALID_OPTIONS',
        {
          field: 'now',
          value: now,
          issues: [{ path: ['now'], message: 'must be a finite number' }],
        },
      )
    },
  )

  test.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '10'])(
    'a maxTimers option of %s is refused with InvalidOptionsError at maxTimers',
    (maxTimers) => {
      expectError(
        thrownBy(() => fakeClock({ maxTimers } as never)),
        InvalidOptionsError,
        'INVALID_OPTIONS',
        {
          field: 'maxTimers',
          value: maxTimers,
          issues: [{ path: ['maxTimers'], message: 'must be a positive safe integer' }],
        },
      )
    },
  )

  test('an unknown option is refused; every issue is reported at once, in key order', () => {
    expectError(
      thrownBy(() => fakeClock({ start: 5 } as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        field: 'start',
        value: 5,
        issues: [{ path: ['start'], message: 'unknown option' }],
      },
    )
    expectError(
      thrownBy(() => fakeClock({ maxTimers: 0, now: Number.NaN, startAt: 1 } as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        field: 'maxTimers',
        value: 0,
        issues: [
          { path: ['maxTimers'], message: 'must be a positive safe integer' },
          { path: ['now'], message: 'must be a finite number' },
          { path: ['startAt'], message: 'unknown option' },
        ],
      },
    )
  })

  test.each([
    ['null', null],
    ['a number', 1_000],
    ['an array', []],
  ])('options that are %s are refused with one root issue', (_name, options) => {
    const error = expectError(
      thrownBy(() => fakeClock(options as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        field: '',
        issues: [{ path: [], message: 'must be an options object { now?, maxTimers? }' }],
      },
    )
    expect(error.value).toBe(options)
  })

  test('undefined options and undefined values take the defaults; maxTimers 1 is allowed', async () => {
    expect(fakeClock(undefined).now()).toBe(0)
    expect(fakeClock({ now: undefined, maxTimers: undefined } as never).now()).toBe(0)
    expect(fakeClock({ now: -5 }).now()).toBe(-5)
    const clock = fakeClock({ maxTimers: 1 })
    let fired = 0
    clock.setTimer(() => fired++, 1)
    await clock.runAll()
    expect(fired).toBe(1)
  })

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'tick'],
    ['an object', { call: () => undefined }],
  ])(
    'setTimer with a callback that is %s throws InvalidArgumentError argument callback; no timer is added',
    async (_name, callback) => {
      const clock = fakeClock({ now: 5 })
      const error = expectError(
        thrownBy(() => clock.setTimer(callback as never, 10)),
        InvalidArgumentError,
        'INVALID_ARGUMENT',
        { argument: 'callback' },
      )
      expect(error.value).toBe(callback)
      expect(clock.pending()).toEqual([])
      const fired: string[] = []
      clock.setTimer(() => fired.push('good'), 10)
      expect(clock.pending()).toEqual([{ dueAt: 15, delayMs: 10 }])
      await clock.runAll()
      expect(fired).toEqual(['good'])
      expect(clock.now()).toBe(15)
    },
  )

  test('advance fires due timers in due order, ties in the order they were set, at their due time', async () => {
    const clock = fakeClock({ now: 100 })
    const fired: string[] = []
    const record = (name: string) => () => fired.push(`${name}@${clock.now()}`)
    clock.setTimer(record('thirty'), 30)
    clock.setTimer(record('ten-a'), 10)
    clock.setTimer(record('twenty'), 20)
    clock.setTimer(record('ten-b'), 10)
    clock.setTimer(record('later'), 31)
    await clock.advance(30)
    expect(fired).toEqual(['ten-a@110', 'ten-b@110', 'twenty@120', 'thirty@130'])
    expect(clock.now()).toBe(130)
    expect(clock.pending()).toEqual([{ dueAt: 131, delayMs: 31 }])
    await clock.advance(1)
    expect(fired.at(-1)).toBe('later@131')
    expect(clock.pending()).toEqual([])
  })

  test('time moves to the end of the window even when nothing is due', async () => {
    const clock = fakeClock()
    clock.setTimer(() => {}, 50)
    await clock.advance(20)
    expect(clock.now()).toBe(20)
    await clock.advance(0)
    expect(clock.now()).toBe(20)
  })

  test('a zero-delay timer fires on advance(0)', async () => {
    const clock = fakeClock()
    let fired = 0
    clock.setTimer(() => fired++, 0)
    expect(fired).toBe(0)
    await clock.advance(0)
    expect(fired).toBe(1)
  })

  test('setTimer returns a cancel function; a cancelled timer never fires', async () => {
    const clock = fakeClock()
    const fired: string[] = []
    const cancelFirst = clock.setTimer(() => fired.push('first'), 10)
    clock.setTimer(() => fired.push('second'), 10)
    cancelFirst()
    expect(clock.pending()).toEqual([{ dueAt: 10, delayMs: 10 }])
    await clock.advance(100)
    expect(fired).toEqual(['second'])
    cancelFirst() // cancelling again, or after the window, is a no-op
    expect(clock.pending()).toEqual([])
  })

  test('a callback can cancel a timer due later in the same window', async () => {
    const clock = fakeClock()
    const fired: string[] = []
    let cancelLate = (): void => {}
    clock.setTimer(() => {
      fired.push('early')
      cancelLate()
    }, 5)
    cancelLate = clock.setTimer(() => fired.push('late'), 8)
    await clock.advance(10)
    expect(fired).toEqual(['early'])
  })

  test('timers set inside callbacks fire when they fall due within the window', async () => {
    const clock = fakeClock()
    const fired: string[] = []
    clock.setTimer(() => {
      fired.push(`outer@${clock.now()}`)
      clock.setTimer(() => fired.push(`inner@${clock.now()}`), 5)
      clock.setTimer(() => fired.push(`beyond@${clock.now()}`), 50)
    }, 10)
    clock.setTimer(() => fired.push(`sibling@${clock.now()}`), 12)
    await clock.advance(20)
    expect(fired).toEqual(['outer@10', 'sibling@12', 'inner@15'])
    expect(clock.pending()).toEqual([{ dueAt: 60, delayMs: 50 }])
    expect(clock.now()).toBe(20)
  })

  test('await advance also fires timers that async follow-ups set within the window', async () => {
    const clock = fakeClock()
    const fired: string[] = []
    const followUp = async (): Promise<void> => {
      await Promise.resolve()
      await Promise.resolve()
      clock.setTimer(() => fired.push(`follow-up@${clock.now()}`), 3)
    }
    clock.setTimer(() => {
      fired.push(`first@${clock.now()}`)
      void followUp()
    }, 2)
    await clock.advance(10)
    expect(fired).toEqual(['first@2', 'follow-up@5'])
    expect(clock.now()).toBe(10)
  })

  test("a callback's follow-up runs at that callback's time, before later due timers fire", async () => {
    const clock = fakeClock()
    const fired: string[] = []
    clock.setTimer(() => {
      fired.push(`first@${clock.now()}`)
      void Promise.resolve()
        .then(() => undefined)
        .then(() => {
          fired.push(`continuation@${clock.now()}`)
          clock.setTimer(() => fired.push(`follow-up@${clock.now()}`), 3)
        })
    }, 2)
    clock.setTimer(() => fired.push(`second@${clock.now()}`), 4)
    await clock.advance(10)
    expect(fired).toEqual(['first@2', 'continuation@2', 'second@4', 'follow-up@5'])
  })

  test('an async loop sleeping on the clock wakes once per due sleep within the window', async () => {
    const clock = fakeClock()
    const fired: string[] = []
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => clock.setTimer(resolve, ms))
    const sleeper = async (): Promise<void> => {
      await sleep(4)
      fired.push(`woke@${clock.now()}`)
      await sleep(4)
      fired.push(`woke again@${clock.now()}`)
      await sleep(4)
      fired.push(`woke last@${clock.now()}`)
    }
    const sleeping = sleeper()
    await clock.advance(10)
    expect(fired).toEqual(['woke@4', 'woke again@8'])
    expect(clock.pending()).toEqual([{ dueAt: 12, delayMs: 4 }])
    await clock.advance(2)
    await sleeping
    expect(fired).toEqual(['woke@4', 'woke again@8', 'woke last@12'])
  })

  test('runAll fires every pending timer, chained ones included, moving time to each', async () => {
    const clock = fakeClock({ now: 10 })
    const fired: string[] = []
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 200)
    clock.setTimer(() => {
      fired.push(`a@${clock.now()}`)
      clock.setTimer(() => fired.push(`c@${clock.now()}`), 1_000)
      void Promise.resolve().then(() => clock.setTimer(() => fired.push(`d@${clock.now()}`), 5_000))
    }, 100)
    await clock.runAll()
    expect(fired).toEqual(['a@110', 'b@210', 'c@1110', 'd@5110'])
    expect(clock.now()).toBe(5_110)
    expect(clock.pending()).toEqual([])
  })

  test('runAll with nothing pending resolves and keeps the time', async () => {
    const clock = fakeClock({ now: 42 })
    await clock.runAll()
    expect(clock.now()).toBe(42)
  })

  test('pending() lists timers soonest first, ties in set order, with their delays', () => {
    const clock = fakeClock({ now: 1_000 })
    clock.setTimer(() => {}, 300)
    clock.setTimer(() => {}, 100)
    const cancel = clock.setTimer(() => {}, 200)
    clock.setTimer(() => {}, 100)
    clock.setTimer(() => {}, 50)
    cancel()
    expect(clock.pending()).toEqual([
      { dueAt: 1_050, delayMs: 50 },
      { dueAt: 1_100, delayMs: 100 },
      { dueAt: 1_100, delayMs: 100 },
      { dueAt: 1_300, delayMs: 300 },
    ])
  })

  test.each([-1, Number.NaN, Number.POSITIVE_INFINITY, -Number.EPSILON])(
    'advance(%s) rejects with InvalidArgumentError and changes nothing',
    async (ms) => {
      const clock = fakeClock({ now: 5 })
      let fired = false
      clock.setTimer(() => {
        fired = true
      }, 0)
      let promise: Promise<void> | undefined
      expect(() => {
        promise = clock.advance(ms)
      }).not.toThrow()
      await expect(promise).rejects.toThrow(InvalidArgumentError)
      await expect(promise).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'ms' })
      expect(fired).toBe(false)
      expect(clock.now()).toBe(5)
    },
  )

  test('a self-rescheduling timer makes runAll reject after maxTimers', async () => {
    const clock = fakeClock({ maxTimers: 25 })
    let fired = 0
    const tick = (): void => {
      fired++
      clock.setTimer(tick, 10)
    }
    clock.setTimer(tick, 10)
    await expect(clock.runAll()).rejects.toThrow(InvalidArgumentError)
    expect(fired).toBe(25)
  })

  test('a self-rescheduling timer through an async follow-up also hits the limit', async () => {
    const clock = fakeClock({ maxTimers: 10 })
    let fired = 0
    const tick = (): void => {
      fired++
      void Promise.resolve().then(() => clock.setTimer(tick, 1))
    }
    clock.setTimer(tick, 1)
    await expect(clock.runAll()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    expect(fired).toBe(10)
  })

  test('the default limit stops a zero-delay loop inside advance instead of hanging', async () => {
    const clock = fakeClock()
    let fired = 0
    const tick = (): void => {
      fired++
      clock.setTimer(tick, 0)
    }
    clock.setTimer(tick, 0)
    await expect(clock.advance(1)).rejects.toThrow(InvalidArgumentError)
    expect(fired).toBe(10_000)
  })
})
