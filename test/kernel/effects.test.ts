import { describe, expect, test } from 'vitest'
import { type Context, ContextDisposedError, defineService, InvalidArgumentError } from 'yoke'
import { type Cleanup, type EffectSetup, inspectContext } from '../../src/kernel/index.js'
import { findNode, recordKernelErrors, thrownBy } from '../helpers/outcomes.js'
import { testRoot } from '../helpers/root.js'

const A = defineService<string>('test/a')

interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T): void
  reject(reason: unknown): void
}

function deferred<T = void>(): Deferred<T> {
  let resolve: (value: T) => void = () => {}
  let reject: (reason: unknown) => void = () => {}
  const promise = new Promise<T>((resolvePromise, rejectPromise) => {
    resolve = resolvePromise
    reject = rejectPromise
  })
  return { promise, resolve, reject }
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** The labels of the effects of `ctx` (the root, or a uniquely labelled descendant). */
function labelsOf(ctx: Context): string[] {
  const tree = inspectContext(ctx).effects
  const node = ctx.parent === undefined ? tree : findNode(tree, `context:${ctx.label}`)
  return (node?.children ?? []).map((child) => child.label)
}

describe('setup', () => {
  test('setup runs synchronously inside effect()', () => {
    const { root } = testRoot()
    const order: string[] = []
    root.effect(() => {
      order.push('setup')
    })
    order.push('after')
    expect(order).toEqual(['setup', 'after'])
  })

  test('a setup that returns nothing registers an effect whose disposer resolves', async () => {
    const { root } = testRoot()
    const disposer = root.effect(() => {}, 'plain')
    expect(labelsOf(root)).toContain('plain')
    await expect(disposer.ready).resolves.toBeUndefined()
    await expect(disposer()).resolves.toBeUndefined()
    expect(labelsOf(root)).not.toContain('plain')
  })

  test('a throwing setup rethrows its error and registers nothing', () => {
    const { root } = testRoot()
    const before = labelsOf(root)
    const z = new Error('z')
    const error = thrownBy(() =>
      root.effect(() => {
        throw z
      }, 'throws'),
    )
    expect(error).toBe(z)
    expect(labelsOf(root)).toEqual(before)
  })

  test.each([
    ['a number', 42],
    ['a string', 'cleanup'],
    ['null', null],
    ['an object', { dispose() {} }],
    ['a boolean', true],
  ])(
    'a setup returning %s throws InvalidArgumentError for argument effect result and registers nothing',
    (_case, value) => {
      const { root } = testRoot()
      const before = labelsOf(root)
      const setup = (() => value) as unknown as EffectSetup
      const error = thrownBy(() => root.effect(setup, 'bad'))
      expect(InvalidArgumentError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'effect result', value })
      expect(labelsOf(root)).toEqual(before)
    },
  )

  test('a setup that is not a function throws InvalidArgumentError for argument setup', () => {
    const { root } = testRoot()
    const error = thrownBy(() => root.effect(42 as unknown as EffectSetup))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'setup' })
  })

  test.each([[42], [{ label: 'x' }], [null]])(
    'a label %j that is not a string throws InvalidArgumentError for argument label before setup runs',
    (label) => {
      const { root } = testRoot()
      const before = labelsOf(root)
      let ran = false
      const error = thrownBy(() =>
        root.effect(
          () => {
            ran = true
          },
          label as unknown as string,
        ),
      )
      expect(InvalidArgumentError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'label', value: label })
      expect(ran).toBe(false)
      expect(labelsOf(root)).toEqual(before)
    },
  )

  test('an async setup resolving to another kind of value is a rejected setup', async () => {
    const { root } = testRoot()
    const errors = recordKernelErrors(root)
    const setup = (async () => 42) as unknown as EffectSetup
    const disposer = root.effect(setup, 'odd')
    const error = await disposer.ready.then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'effect result', value: 42 })
    expect(errors).toEqual([{ error, phase: 'effect-setup', label: 'odd', context: 'harness' }])
    expect(labelsOf(root)).not.toContain('odd')
  })
})

describe('disposers', () => {
  test('a disposer is idempotent, flips disposed on the first call and carries its label', async () => {
    const { root } = testRoot()
    let cleanups = 0
    const disposer = root.effect(
      () => () => {
        cleanups++
      },
      'counted',
    )
    expect(disposer.label).toBe('counted')
    expect(disposer.disposed).toBe(false)
    const first = disposer()
    expect(disposer.disposed).toBe(true)
    expect(disposer()).toBe(first)
    await first
    expect(disposer()).toBe(first)
    expect(cleanups).toBe(1)
  })

  test('an unlabelled effect is labelled effect', () => {
    const { root } = testRoot()
    expect(root.effect(() => {}).label).toBe('effect')
  })

  test('a disposer called before its context disposes removes the effect: it is not run again', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    let cleanups = 0
    const disposer = worker.effect(
      () => () => {
        cleanups++
      },
      'early',
    )
    worker.effect(() => {}, 'kept')
    await disposer()
    expect(labelsOf(worker)).toEqual(['kept'])
    const report = await worker.dispose()
    expect(report.errors).toEqual([])
    expect(cleanups).toBe(1)
  })

  test('returning an existing disposer as the cleanup runs the inner effect once (the seed pattern)', async () => {
    const { root } = testRoot()
    const plugin = root.child('plugin')
    const statuses: unknown[] = []
    let innerCleanups = 0
    plugin.effect(() => {
      const inner = plugin.effect(
        () => () => {
          innerCleanups++
        },
        'inner',
      )
      return inner
    }, 'outer')
    plugin.effect(() => plugin.on('test/status', (status) => statuses.push(status)), 'seed')
    expect(labelsOf(plugin)).toEqual(['inner', 'outer', 'listener:test/status', 'seed'])
    root.emit('test/status', 'before')
    const report = await plugin.dispose()
    root.emit('test/status', 'after')
    expect(report.errors).toEqual([])
    expect(innerCleanups).toBe(1)
    expect(statuses).toEqual(['before'])
    expect(inspectContext(root).events.find((event) => event.name === 'test/status')?.listeners).toBe(0)
  })

  test('a directly called disposer rejects with the cleanup error, unreported', async () => {
    const { root, logger } = testRoot()
    const errors = recordKernelErrors(root)
    const boom = new Error('boom')
    const disposer = root.effect(
      () => () => {
        throw boom
      },
      'direct',
    )
    await expect(disposer()).rejects.toBe(boom)
    expect(errors).toEqual([])
    expect(logger.at('error')).toEqual([])
    expect(labelsOf(root)).not.toContain('direct')
    const report = await root.dispose()
    expect(report.errors).toEqual([])
  })

  test('context disposal waits for a directly called disposer still in flight', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const gate = deferred()
    const log: string[] = []
    const disposer = worker.effect(() => async () => {
      await gate.promise
      log.push('direct cleanup done')
    })
    void disposer()
    let settled = false
    const disposal = worker.dispose().then((report) => {
      settled = true
      return report
    })
    await flush()
    expect(settled).toBe(false)
    expect(worker.state).toBe('disposing')
    gate.resolve()
    await expect(disposal).resolves.toEqual({ errors: [] })
    expect(log).toEqual(['direct cleanup done'])
    expect(worker.state).toBe('disposed')
  })

  test('a directly called disposer of an async cleanup rejects with its rejection', async () => {
    const { root } = testRoot()
    const boom = new Error('async boom')
    const disposer = root.effect(() => async () => {
      throw boom
    })
    await expect(disposer()).rejects.toBe(boom)
  })
})

describe('async setup', () => {
  test('a rejected setup rejects ready, reports effect-setup once, leaves the tree, and its disposer resolves', async () => {
    const { root, logger } = testRoot()
    const errors = recordKernelErrors(root)
    const y = new Error('y')
    const disposer = root.effect(async () => {
      throw y
    }, 'failing')
    expect(typeof disposer).toBe('function')
    expect(labelsOf(root)).toContain('failing')
    await expect(disposer.ready).rejects.toBe(y)
    expect(errors).toEqual([{ error: y, phase: 'effect-setup', label: 'failing', context: 'harness' }])
    expect(logger.at('error')).toHaveLength(1)
    expect(labelsOf(root)).not.toContain('failing')
    await expect(disposer()).resolves.toBeUndefined()
    const report = await root.dispose()
    expect(report.errors).toEqual([])
    expect(errors).toHaveLength(1)
  })

  test('an unawaited rejected ready causes no unhandled rejection', async () => {
    const { root } = testRoot()
    root.effect(async () => {
      throw new Error('ignored')
    })
    await flush()
    await root.dispose()
  })

  test('an async setup is registered at once; disposal waits for it, then runs the cleanup it produced', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const gate = deferred<Cleanup>()
    const order: string[] = []
    const disposer = worker.effect(() => gate.promise, 'async')
    expect(labelsOf(worker)).toEqual(['async'])
    let disposed = false
    const disposal = worker.dispose().then((report) => {
      disposed = true
      return report
    })
    await flush()
    expect(disposed).toBe(false)
    gate.resolve(() => {
      order.push('cleanup')
    })
    await expect(disposal).resolves.toEqual({ errors: [] })
    await expect(disposer.ready).resolves.toBeUndefined()
    expect(order).toEqual(['cleanup'])
  })

  test('a disposer called during an async setup waits for it before cleaning up', async () => {
    const { root } = testRoot()
    const gate = deferred<Cleanup | undefined>()
    const order: string[] = []
    const disposer = root.effect(() => gate.promise)
    const disposal = disposer().then(() => order.push('disposed'))
    expect(disposer.disposed).toBe(true)
    await flush()
    expect(order).toEqual([])
    gate.resolve(() => {
      order.push('cleanup')
    })
    await disposal
    expect(order).toEqual(['cleanup', 'disposed'])
  })

  test('an async setup rejecting during disposal is reported and does not fail the disposal', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const errors = recordKernelErrors(root)
    const gate = deferred<Cleanup>()
    worker.effect(() => gate.promise, 'late')
    const disposal = worker.dispose()
    const late = new Error('late')
    gate.reject(late)
    await expect(disposal).resolves.toEqual({ errors: [] })
    expect(errors).toEqual([{ error: late, phase: 'effect-setup', label: 'late', context: 'harness/worker' }])
  })
})

describe('teardown order', () => {
  test('effects tear down last in, first out, each cleanup awaited before the next', async () => {
    const { root } = testRoot()
    const log: string[] = []
    const gates = new Map<string, Deferred<void>>()
    for (const name of ['a', 'b', 'c']) {
      const gate = deferred()
      gates.set(name, gate)
      root.effect(
        () => async () => {
          log.push(`start:${name}`)
          await gate.promise
          log.push(`end:${name}`)
        },
        name,
      )
    }
    const disposal = root.dispose()
    expect(log).toEqual(['start:c'])
    await flush()
    expect(log).toEqual(['start:c'])
    gates.get('c')?.resolve()
    await flush()
    expect(log).toEqual(['start:c', 'end:c', 'start:b'])
    gates.get('b')?.resolve()
    await flush()
    expect(log).toEqual(['start:c', 'end:c', 'start:b', 'end:b', 'start:a'])
    gates.get('a')?.resolve()
    await disposal
    expect(log).toEqual(['start:c', 'end:c', 'start:b', 'end:b', 'start:a', 'end:a'])
  })

  test('a child context is disposed at its position, fully, before earlier effects', async () => {
    const { root } = testRoot()
    const order: string[] = []
    let childStateAtE1: string | undefined
    root.effect(
      () => () => {
        order.push('e1')
        childStateAtE1 = k.state
      },
      'e1',
    )
    const k = root.child('k')
    k.effect(
      () => async () => {
        await Promise.resolve()
        order.push('k1')
      },
      'k1',
    )
    root.effect(
      () => () => {
        order.push('e2')
      },
      'e2',
    )
    await root.dispose()
    expect(order).toEqual(['e2', 'k1', 'e1'])
    expect(childStateAtE1).toBe('disposed')
  })
})

describe('teardown errors', () => {
  test('a failing cleanup does not stop teardown; its error is reported once', async () => {
    const { root, logger } = testRoot()
    const errors = recordKernelErrors(root)
    const ran: string[] = []
    const boom = new Error('boom')
    root.effect(
      () => () => {
        ran.push('a')
      },
      'a',
    )
    root.effect(
      () => () => {
        ran.push('b')
        throw boom
      },
      'b',
    )
    root.effect(
      () => () => {
        ran.push('c')
      },
      'c',
    )
    const report = await root.dispose()
    expect(report).toEqual({ errors: [{ label: 'b', error: boom }] })
    expect(report.errors[0]?.error).toBe(boom)
    expect(ran).toEqual(['c', 'b', 'a'])
    expect(errors).toEqual([{ error: boom, phase: 'dispose', label: 'b', context: 'harness' }])
    expect(logger.at('error')).toHaveLength(1)
  })

  test('errors of a child context join the parent report in teardown order and are reported once each', async () => {
    const { root, logger } = testRoot()
    const errors = recordKernelErrors(root)
    const early = new Error('early')
    const inner = new Error('inner')
    const late = new Error('late')
    root.effect(
      () => () => {
        throw early
      },
      'early',
    )
    const k = root.child('k')
    k.effect(
      () => async () => {
        throw inner
      },
      'k1',
    )
    root.effect(
      () => () => {
        throw late
      },
      'late',
    )
    const report = await root.dispose()
    expect(report.errors.map((entry) => entry.error)).toEqual([late, inner, early])
    expect(report.errors.map((entry) => entry.label)).toEqual(['late', 'k1', 'early'])
    expect(errors.map((event) => [event.label, event.context])).toEqual([
      ['late', 'harness'],
      ['k1', 'harness/k'],
      ['early', 'harness'],
    ])
    expect(logger.at('error')).toHaveLength(3)
  })

  test('a child disposed on its own reports its errors in its own report only', async () => {
    const { root } = testRoot()
    const boom = new Error('boom')
    const k = root.child('k')
    k.effect(
      () => () => {
        throw boom
      },
      'k1',
    )
    await expect(k.dispose()).resolves.toEqual({ errors: [{ label: 'k1', error: boom }] })
    await expect(root.dispose()).resolves.toEqual({ errors: [] })
  })
})

describe('registration during teardown', () => {
  test('a root cleanup that registers an effect puts a ContextDisposedError into the report', async () => {
    const { root } = testRoot()
    let ranLate = false
    root.effect(
      () => () => {
        root.effect(() => {
          ranLate = true
        })
      },
      'registers',
    )
    const report = await root.dispose()
    expect(report.errors).toHaveLength(1)
    const [entry] = report.errors
    expect(entry?.label).toBe('registers')
    expect(ContextDisposedError.is(entry?.error)).toBe(true)
    expect(entry?.error).toMatchObject({ code: 'CONTEXT_DISPOSED', context: 'harness', operation: 'effect' })
    expect(ranLate).toBe(false)
  })

  test('a cleanup that catches the refusal lets the teardown continue cleanly', async () => {
    const { root } = testRoot()
    const k = root.child('k')
    const refusals: unknown[] = []
    k.effect(() => () => {
      try {
        k.provide(A, 'late')
      } catch (error) {
        refusals.push(error)
      }
    })
    await expect(k.dispose()).resolves.toEqual({ errors: [] })
    expect(refusals).toMatchObject([{ code: 'CONTEXT_DISPOSED', context: 'harness/k', operation: 'provide' }])
    expect(root.getOptional(A)).toBeUndefined()
  })
})
