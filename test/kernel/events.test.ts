import { describe, expect, test } from 'vitest'
import {
  type Context,
  ContextDisposedError,
  defineEvents,
  type Emit,
  EventConflictError,
  EventModeError,
  InvalidArgumentError,
  type KernelErrorEvent,
  type Serial,
  UnknownEventError,
  type Waterfall,
} from 'yoke'
import { createRootContext, inspectContext, isEventCatalog, kernelEvents } from '../../src/kernel/index.js'
import { recordKernelErrors, rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testRoot } from '../helpers/root.js'
import { catalogOf, testEvents } from '../helpers/test-events.js'

function listenerCount(root: Context, name: string): number | undefined {
  return inspectContext(root).events.find((event) => event.name === name)?.listeners
}

describe('defineEvents', () => {
  test('returns a frozen catalog of each name and its mode', () => {
    const catalog = defineEvents({ 'acme/order-placed': 'emit', 'acme-shop/order/paid': 'serial' })
    expect(isEventCatalog(catalog)).toBe(true)
    expect(Object.isFrozen(catalog)).toBe(true)
    expect(Object.isFrozen(catalog.modes)).toBe(true)
    expect(catalog.modes).toEqual({ 'acme/order-placed': 'emit', 'acme-shop/order/paid': 'serial' })
  })

  test('isEventCatalog rejects a plain object of modes', () => {
    expect(isEventCatalog({ modes: { 'test/e': 'emit' } })).toBe(false)
    expect(isEventCatalog(null)).toBe(false)
  })

  test.each(['Status', 'status', 'a/', '/a', 'a//b', '1a/b', 'a/B', 'a b/c', 'a_b/c'])(
    'the name %j throws InvalidArgumentError for argument event name',
    (name) => {
      const error = thrownBy(() => defineEvents({ [name]: 'emit' }))
      expect(InvalidArgumentError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'event name', value: name })
    },
  )

  test.each(['bail', 'EMIT', '', 42])('the mode %j throws InvalidArgumentError for argument event mode', (mode) => {
    const error = thrownBy(() => defineEvents({ 'a/b': mode as 'emit' }))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'event mode', value: mode })
  })

  test('a definitions value that is not an object throws InvalidArgumentError for argument definitions', () => {
    const error = thrownBy(() => defineEvents(null as unknown as { 'a/b': 'emit' }))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'definitions' })
  })

  test('the kernel catalog defines kernel/error, kernel/plugin-state and kernel/service as emit', () => {
    expect(kernelEvents.modes).toEqual({
      'kernel/error': 'emit',
      'kernel/plugin-state': 'emit',
      'kernel/service': 'emit',
    })
  })
})

describe('registerEvents', () => {
  test('a catalog takes effect when registered, as an effect labelled events', async () => {
    const root = createRootContext({ logger: recordingLogger() })
    expect(thrownBy(() => root.on('test/e', () => {}))).toMatchObject({ code: 'UNKNOWN_EVENT' })
    const disposer = root.registerEvents(testEvents)
    expect(disposer.label).toBe('events')
    expect(inspectContext(root).events.find((event) => event.name === 'test/w')).toEqual({
      name: 'test/w',
      mode: 'waterfall',
      listeners: 0,
    })
    root.on('test/e', () => {})
    expect(listenerCount(root, 'test/e')).toBe(1)
    await disposer()
    expect(inspectContext(root).events.map((event) => event.name)).toEqual([
      'kernel/error',
      'kernel/plugin-state',
      'kernel/service',
    ])
  })

  test('registering a name again with the same mode succeeds; it stays defined until the last registration is disposed', async () => {
    const root = createRootContext({ logger: recordingLogger() })
    const first = root.registerEvents(
      catalogOf<{ 'test/w': Waterfall<{ n: number }, unknown> }>({ 'test/w': 'waterfall' }),
    )
    const second = root.registerEvents(
      catalogOf<{ 'test/w': Waterfall<{ n: number }, unknown> }>({ 'test/w': 'waterfall' }),
    )
    await first()
    await expect(root.waterfall('test/w', { n: 1 }, () => 'still defined')).resolves.toBe('still defined')
    await second()
    const error = await rejectionOf(root.waterfall('test/w', { n: 1 }, () => 'gone'))
    expect(UnknownEventError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'UNKNOWN_EVENT', event: 'test/w' })
  })

  test('registering a name with another mode throws EventConflictError and defines nothing of that catalog', () => {
    const root = createRootContext({ logger: recordingLogger() })
    root.registerEvents(catalogOf<{ 'test/w': Waterfall<{ n: number }, unknown> }>({ 'test/w': 'waterfall' }))
    const before = inspectContext(root).effects.children.length
    const error = thrownBy(() =>
      root.registerEvents(
        catalogOf<{ 'test/e': Emit<unknown>; 'test/w': Serial<unknown, unknown> }>({
          'test/e': 'emit',
          'test/w': 'serial',
        }),
      ),
    )
    expect(EventConflictError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'EVENT_CONFLICT', event: 'test/w', existing: 'waterfall', attempted: 'serial' })
    expect(inspectContext(root).effects.children.length).toBe(before)
    expect(UnknownEventError.is(thrownBy(() => root.on('test/e', () => {})))).toBe(true)
    expect(inspectContext(root).events.find((event) => event.name === 'test/w')?.mode).toBe('waterfall')
  })

  test('a kernel event cannot be redefined with another mode', () => {
    const { root } = testRoot()
    const error = thrownBy(() => root.registerEvents(defineEvents({ 'kernel/error': 'serial' })))
    expect(EventConflictError.is(error)).toBe(true)
    expect(error).toMatchObject({ event: 'kernel/error', existing: 'emit', attempted: 'serial' })
  })

  test('a value that is not a catalog throws InvalidArgumentError for argument catalog', () => {
    const { root } = testRoot()
    const error = thrownBy(() => root.registerEvents({ modes: { 'test/x': 'emit' } }))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'catalog' })
  })

  test('disposing the context of a registration removes its definitions', async () => {
    const root = createRootContext({ logger: recordingLogger() })
    const owner = root.child('owner')
    owner.registerEvents(testEvents)
    root.on('test/e', () => {})
    await owner.dispose()
    expect(UnknownEventError.is(thrownBy(() => root.emit('test/e', 1)))).toBe(true)
  })
})

describe('listeners', () => {
  test('on is an effect labelled listener:<name>; its disposer removes the listener', async () => {
    const { root } = testRoot()
    const calls: unknown[] = []
    const disposer = root.on('test/e', (payload) => {
      calls.push(payload)
    })
    expect(disposer.label).toBe('listener:test/e')
    expect(listenerCount(root, 'test/e')).toBe(1)
    root.emit('test/e', 1)
    await disposer()
    root.emit('test/e', 2)
    expect(calls).toEqual([1])
    expect(listenerCount(root, 'test/e')).toBe(0)
  })

  test('an undefined name throws UnknownEventError and registers nothing', () => {
    const { root } = testRoot()
    const before = inspectContext(root).effects.children.length
    const error = thrownBy(() => root.on('nope/x' as 'test/e', () => {}))
    expect(UnknownEventError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'UNKNOWN_EVENT', event: 'nope/x' })
    expect(inspectContext(root).effects.children.length).toBe(before)
    expect(UnknownEventError.is(thrownBy(() => root.once('nope/x' as 'test/e', () => {})))).toBe(true)
  })

  test.each([undefined, null, 'listener', {}])('a non-function listener %j throws InvalidArgumentError', (listener) => {
    const { root } = testRoot()
    const error = thrownBy(() => root.on('test/e', listener as unknown as () => void))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'listener' })
    expect(listenerCount(root, 'test/e')).toBe(0)
  })

  test.each([
    ['null options', null, 'options'],
    ['a number', 1, 'options'],
    ['an unknown key', { prepnd: true }, 'options.prepnd'],
    ['a non-boolean prepend', { prepend: 'yes' }, 'options.prepend'],
  ])('%s: options %o throw InvalidArgumentError for argument %s and register nothing', (_case, options, argument) => {
    const { root } = testRoot()
    for (const register of [
      () => root.on('test/e', () => {}, options as never),
      () => root.once('test/e', () => {}, options as never),
    ]) {
      const error = thrownBy(register)
      expect(InvalidArgumentError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument })
    }
    expect(listenerCount(root, 'test/e')).toBe(0)
  })

  test('once disposes its registration just before the first call', () => {
    const { root } = testRoot()
    const calls: unknown[] = []
    const disposedAtCall: boolean[] = []
    const disposer = root.once('test/e', (payload) => {
      calls.push(payload)
      disposedAtCall.push(disposer.disposed)
    })
    expect(disposer.label).toBe('listener:test/e')
    root.emit('test/e', 1)
    root.emit('test/e', 2)
    expect(calls).toEqual([1])
    expect(disposedAtCall).toEqual([true])
    expect(listenerCount(root, 'test/e')).toBe(0)
  })

  test('once is removed even when its listener throws', () => {
    const { root } = testRoot()
    let calls = 0
    root.once('test/e', () => {
      calls++
      throw new Error('once failed')
    })
    root.emit('test/e', 1)
    root.emit('test/e', 2)
    expect(calls).toBe(1)
  })

  test('once applies to the async modes too', async () => {
    const { root } = testRoot()
    const results: string[] = []
    root.once('test/s', () => 'first')
    root.on('test/s', () => 'second')
    results.push(String(await root.serial('test/s', 1)))
    results.push(String(await root.serial('test/s', 2)))
    expect(results).toEqual(['first', 'second'])
  })
})

describe('call order', () => {
  test('prepended listeners run first, most recently prepended first, then the others in registration order', () => {
    const { root } = testRoot()
    const order: string[] = []
    root.on('test/e', () => order.push('A'))
    root.on('test/e', () => order.push('B'))
    root.on('test/e', () => order.push('p1'), { prepend: true })
    root.on('test/e', () => order.push('p2'), { prepend: true })
    root.emit('test/e', 1)
    expect(order).toEqual(['p2', 'p1', 'A', 'B'])
  })

  test('prepend orders the async modes the same way', async () => {
    const { root } = testRoot()
    const order: string[] = []
    root.on('test/p', () => {
      order.push('A')
    })
    root.on(
      'test/p',
      () => {
        order.push('P')
      },
      { prepend: true },
    )
    await root.parallel('test/p', 1)
    expect(order).toEqual(['P', 'A'])
  })

  test('listeners are snapshotted: one added during a dispatch waits for the next, one removed is skipped', () => {
    const { root } = testRoot()
    const order: string[] = []
    let registered = false
    const disposeB = { current: (): Promise<void> => Promise.resolve() }
    root.on('test/e', () => {
      order.push('A')
      if (!registered) {
        registered = true
        root.on('test/e', () => order.push('D'))
        void disposeB.current()
      }
    })
    disposeB.current = root.on('test/e', () => order.push('B'))
    root.on('test/e', () => order.push('C'))
    root.emit('test/e', 1)
    expect(order).toEqual(['A', 'C'])
    order.length = 0
    root.emit('test/e', 2)
    expect(order).toEqual(['A', 'C', 'D'])
  })

  test('a listener whose context began disposing before its turn is skipped', () => {
    const { root } = testRoot()
    const order: string[] = []
    const worker = root.child('worker')
    root.on('test/e', () => {
      order.push('root')
      void worker.dispose()
    })
    worker.on('test/e', () => order.push('worker'))
    root.emit('test/e', 1)
    expect(order).toEqual(['root'])
  })

  test('a serial listener removed by an earlier one is skipped', async () => {
    const { root } = testRoot()
    const order: string[] = []
    let disposeSecond: () => Promise<void> = () => Promise.resolve()
    root.on('test/s', async () => {
      order.push('first')
      await disposeSecond()
      return undefined
    })
    disposeSecond = root.on('test/s', () => {
      order.push('second')
      return 'second'
    })
    await expect(root.serial('test/s', 1)).resolves.toBeUndefined()
    expect(order).toEqual(['first'])
  })
})

describe('dispatch checks', () => {
  test('emit of an undefined name throws UnknownEventError synchronously', () => {
    const { root } = testRoot()
    const error = thrownBy(() => root.emit('nope/x' as 'test/e', {}))
    expect(UnknownEventError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'UNKNOWN_EVENT', event: 'nope/x' })
  })

  test.each([
    ['parallel', (root: Context) => root.parallel('nope/x' as 'test/p', {})],
    ['serial', (root: Context) => root.serial('nope/x' as 'test/s', {})],
    ['waterfall', (root: Context) => root.waterfall('nope/x' as 'test/w', { n: 1 }, () => 0)],
  ])('%s of an undefined name rejects with UnknownEventError', async (_mode, dispatch) => {
    const { root } = testRoot()
    const error = await rejectionOf(dispatch(root))
    expect(UnknownEventError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'UNKNOWN_EVENT', event: 'nope/x' })
  })

  test('emit of a waterfall event throws EventModeError synchronously and calls no listener', () => {
    const { root } = testRoot()
    let called = 0
    root.on('test/w', () => {
      called++
      return undefined
    })
    const error = thrownBy(() => root.emit('test/w' as 'test/e', {}))
    expect(EventModeError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'EVENT_MODE_MISMATCH',
      event: 'test/w',
      defined: 'waterfall',
      attempted: 'emit',
    })
    expect(called).toBe(0)
  })

  test.each([
    ['parallel', (root: Context) => root.parallel('test/w' as 'test/p', {})],
    ['serial', (root: Context) => root.serial('test/w' as 'test/s', {})],
  ])('%s of a waterfall event rejects with EventModeError and calls no listener', async (attempted, dispatch) => {
    const { root } = testRoot()
    let called = 0
    root.on('test/w', () => {
      called++
      return undefined
    })
    const error = await rejectionOf(dispatch(root))
    expect(EventModeError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'EVENT_MODE_MISMATCH', event: 'test/w', defined: 'waterfall', attempted })
    expect(called).toBe(0)
  })

  test('waterfall of an emit event rejects with EventModeError without calling inner', async () => {
    const { root } = testRoot()
    let innerCalls = 0
    const error = await rejectionOf(
      root.waterfall('test/e' as 'test/w', { n: 1 }, () => {
        innerCalls++
        return 0
      }),
    )
    expect(error).toMatchObject({
      code: 'EVENT_MODE_MISMATCH',
      event: 'test/e',
      defined: 'emit',
      attempted: 'waterfall',
    })
    expect(innerCalls).toBe(0)
  })

  test('in one sequence: wrong mode refused, conflicting catalog refused, same catalog again accepted', async () => {
    const root = createRootContext({ logger: recordingLogger() })
    const waterfallOnly = () => catalogOf<{ 'test/w': Waterfall<{ n: number }, unknown> }>({ 'test/w': 'waterfall' })
    root.registerEvents(waterfallOnly())
    let called = 0
    root.on('test/w', () => {
      called++
      return undefined
    })

    const emitted = thrownBy(() => root.emit('test/w' as never, {} as never))
    expect(EventModeError.is(emitted)).toBe(true)
    expect(emitted).toMatchObject({
      code: 'EVENT_MODE_MISMATCH',
      event: 'test/w',
      defined: 'waterfall',
      attempted: 'emit',
    })
    const serial = await rejectionOf(root.serial('test/w' as never, {} as never))
    expect(EventModeError.is(serial)).toBe(true)
    expect(serial).toMatchObject({
      code: 'EVENT_MODE_MISMATCH',
      event: 'test/w',
      defined: 'waterfall',
      attempted: 'serial',
    })
    expect(called).toBe(0)

    const conflict = thrownBy(() =>
      root.registerEvents(catalogOf<{ 'test/w': Serial<unknown, unknown> }>({ 'test/w': 'serial' })),
    )
    expect(EventConflictError.is(conflict)).toBe(true)
    expect(conflict).toMatchObject({
      code: 'EVENT_CONFLICT',
      event: 'test/w',
      existing: 'waterfall',
      attempted: 'serial',
    })

    const again = root.registerEvents(waterfallOnly())
    expect(again.label).toBe('events')
    expect(inspectContext(root).events.find((event) => event.name === 'test/w')).toEqual({
      name: 'test/w',
      mode: 'waterfall',
      listeners: 1,
    })
    await expect(root.waterfall('test/w', { n: 1 }, () => 'inner')).resolves.toBe('inner')
    expect(called).toBe(1)
  })

  test('the async modes never throw synchronously for a failed check', () => {
    const { root } = testRoot()
    const promise = root.serial('test/w' as 'test/s', {})
    expect(promise).toBeInstanceOf(Promise)
    promise.catch(() => {})
  })
})

describe('emit', () => {
  test('failures are contained and reported in order; every listener runs with the payload', async () => {
    const { root, logger } = testRoot()
    const errors = recordKernelErrors(root)
    const a = new Error('a')
    const b = new Error('b')
    const received: unknown[] = []
    root.on('test/e', () => {
      throw a
    })
    root.on('test/e', () => Promise.reject(b))
    root.on('test/e', (payload) => {
      received.push(payload)
    })
    const payload = { id: 1 }
    expect(root.emit('test/e', payload)).toBeUndefined()
    expect(received).toEqual([payload])
    expect(received[0]).toBe(payload)
    await Promise.resolve()
    expect(errors).toEqual([
      { error: a, phase: 'listener', event: 'test/e', context: 'harness' },
      { error: b, phase: 'listener', event: 'test/e', context: 'harness' },
    ])
    expect(errors.map((event) => event.error)).toEqual([a, b])
    expect(errors[0]?.error).toBe(a)
    expect(errors[1]?.error).toBe(b)
    expect(logger.at('error')).toHaveLength(2)
  })

  test('a rejected listener promise is observed: no unhandled rejection', async () => {
    const { root } = testRoot()
    const errors = recordKernelErrors(root)
    const unhandled: unknown[] = []
    const onUnhandled = (error: unknown): void => {
      unhandled.push(error)
    }
    process.on('unhandledRejection', onUnhandled)
    const b = new Error('b')
    try {
      root.on('test/e', () => Promise.reject(b))
      root.emit('test/e', 1)
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
    expect(unhandled).toEqual([])
    expect(errors).toEqual([{ error: b, phase: 'listener', event: 'test/e', context: 'harness' }])
  })

  test('listeners run synchronously and returned promises are not awaited', () => {
    const { root } = testRoot()
    const order: string[] = []
    root.on('test/e', async () => {
      order.push('first:start')
      await Promise.resolve()
      order.push('first:end')
    })
    root.on('test/e', () => {
      order.push('second')
    })
    root.emit('test/e', 1)
    order.push('returned')
    expect(order).toEqual(['first:start', 'second', 'returned'])
  })

  test('the failure names the context the listener was registered through', () => {
    const { root } = testRoot()
    const errors = recordKernelErrors(root)
    const failure = new Error('worker failed')
    root.child('worker').on('test/e', () => {
      throw failure
    })
    root.emit('test/e', 1)
    expect(errors).toEqual([{ error: failure, phase: 'listener', event: 'test/e', context: 'harness/worker' }])
  })

  test('a failing kernel/error listener is only written to the logger, never re-dispatched', () => {
    const { root, logger } = testRoot()
    const calls: KernelErrorEvent[] = []
    root.on('kernel/error', (event) => {
      calls.push(event)
      throw new Error('kernel/error listener failed')
    })
    const failure = new Error('listener failed')
    root.on('test/e', () => {
      throw failure
    })
    root.emit('test/e', 1)
    expect(calls).toHaveLength(1)
    expect(calls[0]?.error).toBe(failure)
    expect(logger.at('error')).toHaveLength(2)
    expect(logger.at('error')[1]?.fields).toMatchObject({ context: 'harness' })
  })

  test('emit with no listeners is a no-op', () => {
    const { root } = testRoot()
    expect(root.emit('test/other', 1)).toBeUndefined()
  })
})

describe('parallel', () => {
  test('all listeners start before any settles; the promise rejects after all settled with the failures in order', async () => {
    const { root, clock } = testRoot()
    const started: string[] = []
    const failure1 = new Error('failure1')
    const failure3 = new Error('failure3')
    let l2Settled = false
    root.on('test/p', () => {
      started.push('l1')
      return new Promise<void>((_resolve, reject) => {
        clock.setTimer(() => reject(failure1), 10)
      })
    })
    root.on('test/p', () => {
      started.push('l2')
      return new Promise<void>((resolve) => {
        clock.setTimer(() => {
          l2Settled = true
          resolve()
        }, 30)
      })
    })
    root.on('test/p', () => {
      started.push('l3')
      throw failure3
    })
    const outcome: { settled: boolean; resolved: boolean; reason: unknown } = {
      settled: false,
      resolved: false,
      reason: undefined,
    }
    root.parallel('test/p', 1).then(
      () => {
        outcome.settled = true
        outcome.resolved = true
      },
      (reason: unknown) => {
        outcome.settled = true
        outcome.reason = reason
      },
    )
    expect(started).toEqual(['l1', 'l2', 'l3'])
    await clock.advance(10)
    expect(outcome.settled).toBe(false)
    await clock.advance(19)
    expect(outcome.settled).toBe(false)
    expect(l2Settled).toBe(false)
    await clock.advance(1)
    expect(l2Settled).toBe(true)
    expect(outcome.settled).toBe(true)
    expect(outcome.resolved).toBe(false)
    expect(outcome.reason).toBeInstanceOf(AggregateError)
    const errors = (outcome.reason as AggregateError).errors
    expect(errors).toHaveLength(2)
    expect(errors[0]).toBe(failure1)
    expect(errors[1]).toBe(failure3)
  })

  test('a single failure is still an AggregateError', async () => {
    const { root } = testRoot()
    const only = new Error('only')
    root.on('test/p', () => {})
    root.on('test/p', async () => {
      throw only
    })
    const error = await rejectionOf(root.parallel('test/p', 1))
    expect(error).toBeInstanceOf(AggregateError)
    expect((error as AggregateError).errors).toHaveLength(1)
    expect((error as AggregateError).errors[0]).toBe(only)
  })

  test('it resolves with undefined once every listener settled, and at once with none', async () => {
    const { root } = testRoot()
    await expect(root.parallel('test/p', 1)).resolves.toBeUndefined()
    const payloads: unknown[] = []
    root.on('test/p', async (payload) => {
      await Promise.resolve()
      payloads.push(payload)
    })
    await expect(root.parallel('test/p', 'x')).resolves.toBeUndefined()
    expect(payloads).toEqual(['x'])
  })

  test('failures are not reported to kernel/error', async () => {
    const { root, logger } = testRoot()
    const errors = recordKernelErrors(root)
    root.on('test/p', () => {
      throw new Error('p')
    })
    await rejectionOf(root.parallel('test/p', 1))
    expect(errors).toEqual([])
    expect(logger.at('error')).toEqual([])
  })
})

describe('serial', () => {
  test('the first result that is not undefined wins; null counts; later listeners are not called', async () => {
    const { root } = testRoot()
    const called: string[] = []
    root.on('test/s', () => {
      called.push('undefined')
      return undefined
    })
    root.on('test/s', () => {
      called.push('null')
      return null
    })
    root.on('test/s', () => {
      called.push('x')
      return 'x'
    })
    await expect(root.serial('test/s', 1)).resolves.toBeNull()
    expect(called).toEqual(['undefined', 'null'])
  })

  test('false and 0 count as results', async () => {
    const { root } = testRoot()
    root.on('test/s', () => false)
    root.on('test/s', () => 'never')
    await expect(root.serial('test/s', 1)).resolves.toBe(false)
    const other = testRoot().root
    other.on('test/s', async () => 0)
    await expect(other.serial('test/s', 1)).resolves.toBe(0)
  })

  test('listeners run one at a time, each awaited, with the payload', async () => {
    const { root } = testRoot()
    const log: string[] = []
    root.on('test/s', async (payload) => {
      log.push(`first:start:${String(payload)}`)
      await new Promise((resolve) => setImmediate(resolve))
      log.push('first:end')
      return undefined
    })
    root.on('test/s', (payload) => {
      log.push(`second:${String(payload)}`)
      return 'done'
    })
    await expect(root.serial('test/s', 'p')).resolves.toBe('done')
    expect(log).toEqual(['first:start:p', 'first:end', 'second:p'])
  })

  test('a throwing first listener rejects the dispatch unchanged; the second is not called', async () => {
    const { root } = testRoot()
    const s = new Error('s')
    let secondCalled = false
    root.on('test/s', () => {
      throw s
    })
    root.on('test/s', () => {
      secondCalled = true
      return 'second'
    })
    await expect(root.serial('test/s', 1)).rejects.toBe(s)
    expect(secondCalled).toBe(false)
  })

  test('a rejecting listener rejects the dispatch unchanged', async () => {
    const { root } = testRoot()
    const rejected = new Error('rejected')
    root.on('test/s', () => Promise.reject(rejected))
    await expect(root.serial('test/s', 1)).rejects.toBe(rejected)
  })

  test('with no listeners, or none with an opinion, the result is undefined', async () => {
    const { root } = testRoot()
    await expect(root.serial('test/s', 1)).resolves.toBeUndefined()
    root.on('test/s', () => undefined)
    await expect(root.serial('test/s', 1)).resolves.toBeUndefined()
  })
})

describe('nested dispatch', () => {
  test('an emit inside an emit listener completes before the outer listener continues', () => {
    const { root } = testRoot()
    const log: string[] = []
    root.on('test/e', () => {
      log.push('outer:start')
      root.emit('test/inner', 1)
      log.push('outer:end')
    })
    root.on('test/inner', () => {
      log.push('inner')
    })
    root.emit('test/e', 1)
    expect(log).toEqual(['outer:start', 'inner', 'outer:end'])
  })

  test('a serial listener may dispatch the same event again', async () => {
    const { root } = testRoot()
    root.on('test/s', async (payload) => {
      if (payload === 'outer') return `wrapped(${String(await root.serial('test/s', 'inner'))})`
      return 'inner result'
    })
    await expect(root.serial('test/s', 'outer')).resolves.toBe('wrapped(inner result)')
  })
})

describe('dispatch through disposed contexts', () => {
  test('emit through a disposed context is a silent no-op', async () => {
    const { root } = testRoot()
    const k = root.child('k')
    const calls: unknown[] = []
    root.on('kernel/service', (event) => {
      calls.push(event)
    })
    root.on('test/e', (payload) => {
      calls.push(payload)
    })
    await k.dispose()
    expect(k.emit('kernel/service', { key: 'test/a', kind: 'provided', owner: 'harness' })).toBeUndefined()
    expect(k.emit('test/e', 1)).toBeUndefined()
    expect(calls).toEqual([])
  })

  test.each([
    ['serial', (ctx: Context) => ctx.serial('test/s', 1)],
    ['parallel', (ctx: Context) => ctx.parallel('test/p', 1)],
    ['waterfall', (ctx: Context) => ctx.waterfall('test/w', { n: 1 }, () => 0)],
  ])('%s through a disposed context rejects with ContextDisposedError', async (operation, dispatch) => {
    const { root } = testRoot()
    const k = root.child('k')
    let called = 0
    root.on('test/s', () => {
      called++
      return 'x'
    })
    await k.dispose()
    const error = await rejectionOf(dispatch(k))
    expect(ContextDisposedError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'CONTEXT_DISPOSED', context: 'harness/k', operation })
    expect(called).toBe(0)
  })

  test('through a disposing context, dispatch still works', async () => {
    const { root } = testRoot()
    const k = root.child('k')
    const seen: unknown[] = []
    root.on('test/e', (payload) => {
      seen.push(payload)
    })
    root.on('test/s', () => 'answer')
    k.effect(() => async () => {
      k.emit('test/e', 'from cleanup')
      seen.push(await k.serial('test/s', 1))
    })
    await expect(k.dispose()).resolves.toEqual({ errors: [] })
    expect(seen).toEqual(['from cleanup', 'answer'])
  })

  test('root listeners still hear kernel/error while the root is disposing', async () => {
    const { root } = testRoot()
    const errors = recordKernelErrors(root)
    const failure = new Error('late')
    root.effect(
      () => () => {
        throw failure
      },
      'late',
    )
    await root.dispose()
    expect(errors).toEqual([{ error: failure, phase: 'dispose', label: 'late', context: 'harness' }])
  })
})
