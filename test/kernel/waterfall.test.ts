import { describe, expect, test } from 'vitest'
import { type Context, createHarness, definePlugin, type KernelErrorEvent, WaterfallNextError } from 'yoke'
import type { WaterfallNext } from '../../src/kernel/index.js'
import { rejectionOf, requireContext } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testRoot } from '../helpers/root.js'
import { testEvents } from '../helpers/test-events.js'

type Next = WaterfallNext<{ n: number }, unknown>

describe('replacement and decision', () => {
  test('next(replacement) passes the replacement further in; the caller payload is untouched', async () => {
    const { root } = testRoot()
    const seenByB: { n: number }[] = []
    const seenByInner: { n: number }[] = []
    root.on('test/w', (payload, next) => next({ n: payload.n + 1 }))
    root.on('test/w', (payload, next) => {
      seenByB.push(payload)
      return next()
    })
    const payload = Object.freeze({ n: 1 })
    const result = await root.waterfall('test/w', payload, (current) => {
      seenByInner.push(current)
      return current.n * 10
    })
    expect(result).toBe(20)
    expect(seenByB).toEqual([{ n: 2 }])
    expect(seenByInner).toEqual([{ n: 2 }])
    expect(payload).toEqual({ n: 1 })
  })

  test('next() without an argument passes the current payload object itself', async () => {
    const { root } = testRoot()
    const payload = { n: 1 }
    let seen: unknown
    root.on('test/w', (_payload, next) => next())
    const result = await root.waterfall('test/w', payload, (current) => {
      seen = current
      return 'inner'
    })
    expect(result).toBe('inner')
    expect(seen).toBe(payload)
  })

  test('any replacement other than undefined is passed on, null included', async () => {
    const { root } = testRoot()
    let seen: unknown = 'not called'
    root.on('test/w', (_payload, next) => next(null as unknown as { n: number }))
    await root.waterfall('test/w', { n: 1 }, (current) => {
      seen = current
      return 'inner'
    })
    expect(seen).toBeNull()
  })

  test('a listener that returns a value without calling next decides; nothing further in runs', async () => {
    const { root } = testRoot()
    const called: string[] = []
    root.on('test/w', () => {
      called.push('a2')
      return 'deny'
    })
    root.on('test/w', (_payload, next) => {
      called.push('B')
      return next()
    })
    const result = await root.waterfall('test/w', { n: 1 }, () => {
      called.push('inner')
      return 'allow'
    })
    expect(result).toBe('deny')
    expect(called).toEqual(['a2'])
  })

  test('an inner listener can decide too; outer listeners see its result through next', async () => {
    const { root } = testRoot()
    const outerSaw: unknown[] = []
    root.on('test/w', async (_payload, next) => {
      const inner = await next()
      outerSaw.push(inner)
      return `outer(${String(inner)})`
    })
    root.on('test/w', async () => 'decided')
    await expect(root.waterfall('test/w', { n: 1 }, () => 'default')).resolves.toBe('outer(decided)')
    expect(outerSaw).toEqual(['decided'])
  })

  test('the first listener is the outermost: listeners wrap inner in registration order', async () => {
    const { root } = testRoot()
    const log: string[] = []
    for (const name of ['A', 'B', 'C']) {
      root.on('test/w', async (_payload, next) => {
        log.push(`${name}:in`)
        const result = await next()
        log.push(`${name}:out`)
        return result
      })
    }
    await root.waterfall('test/w', { n: 1 }, () => {
      log.push('inner')
      return 'done'
    })
    expect(log).toEqual(['A:in', 'B:in', 'C:in', 'inner', 'C:out', 'B:out', 'A:out'])
  })

  test('with no listeners the result is inner(payload)', async () => {
    const { root } = testRoot()
    const payload = { n: 4 }
    let seen: unknown
    const result = await root.waterfall('test/w', payload, (current) => {
      seen = current
      return current.n * 10
    })
    expect(result).toBe(40)
    expect(seen).toBe(payload)
  })

  test('an async inner is awaited', async () => {
    const { root } = testRoot()
    root.on('test/w', (_payload, next) => next())
    await expect(root.waterfall('test/w', { n: 1 }, async () => 'async inner')).resolves.toBe('async inner')
  })
})

describe('next misuse', () => {
  test('a second next call throws WaterfallNextError called-twice; the dispatch rejects with it; inner ran once', async () => {
    const { root } = testRoot()
    let innerCalls = 0
    let secondCallError: unknown
    root.on('test/w', async (_payload, next) => {
      await next()
      try {
        return await next()
      } catch (error) {
        secondCallError = error
        throw error
      }
    })
    const error = await rejectionOf(
      root.waterfall('test/w', { n: 1 }, () => {
        innerCalls++
        return 'inner'
      }),
    )
    expect(WaterfallNextError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'WATERFALL_NEXT', event: 'test/w', reason: 'called-twice' })
    expect(error).toBe(secondCallError)
    expect(innerCalls).toBe(1)
  })

  test('the second next call throws synchronously, even without awaiting the first', async () => {
    const { root } = testRoot()
    let thrown: unknown
    root.on('test/w', (_payload, next) => {
      const first = next()
      try {
        void next()
      } catch (error) {
        thrown = error
      }
      return first
    })
    await expect(root.waterfall('test/w', { n: 1 }, () => 'inner')).resolves.toBe('inner')
    expect(WaterfallNextError.is(thrown)).toBe(true)
    expect(thrown).toMatchObject({ reason: 'called-twice' })
  })

  test('a next call after the listener settled throws WaterfallNextError after-settle', async () => {
    const { root } = testRoot()
    let saved: Next | undefined
    let innerCalls = 0
    root.on('test/w', (_payload, next) => {
      saved = next
      return 'decided'
    })
    await expect(
      root.waterfall('test/w', { n: 1 }, () => {
        innerCalls++
        return 'inner'
      }),
    ).resolves.toBe('decided')
    let thrown: unknown
    try {
      void saved?.({ n: 2 })
    } catch (error) {
      thrown = error
    }
    expect(WaterfallNextError.is(thrown)).toBe(true)
    expect(thrown).toMatchObject({ code: 'WATERFALL_NEXT', event: 'test/w', reason: 'after-settle' })
    expect(innerCalls).toBe(0)
  })

  test('after a pass-through, a late next call throws after-settle and inner does not run again', async () => {
    const { root } = testRoot()
    let saved: Next | undefined
    let innerCalls = 0
    root.on('test/w', (_payload, next) => {
      saved = next
      return undefined
    })
    await root.waterfall('test/w', { n: 1 }, () => {
      innerCalls++
      return 'inner'
    })
    let thrown: unknown
    try {
      void saved?.()
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ reason: 'after-settle' })
    expect(innerCalls).toBe(1)
  })
})

describe('no opinion passes through', () => {
  test('a listener settling with undefined without calling next is passed through', async () => {
    const { root } = testRoot()
    const called: string[] = []
    root.on('test/w', () => {
      called.push('A')
      return undefined
    })
    root.on('test/w', (_payload, next) => {
      called.push('B')
      return next()
    })
    await expect(root.waterfall('test/w', { n: 1 }, () => 'default')).resolves.toBe('default')
    expect(called).toEqual(['A', 'B'])
  })

  test('an async listener resolving undefined without next is passed through with the original payload', async () => {
    const { root } = testRoot()
    let seen: unknown
    const payload = { n: 3 }
    root.on('test/w', async () => undefined)
    const result = await root.waterfall('test/w', payload, (current) => {
      seen = current
      return 'default'
    })
    expect(result).toBe('default')
    expect(seen).toBe(payload)
  })

  test('a listener that called next and settled with undefined yields what next resolved to', async () => {
    const { root } = testRoot()
    let innerCalls = 0
    root.on('test/w', async (_payload, next) => {
      await next()
    })
    await expect(
      root.waterfall('test/w', { n: 1 }, () => {
        innerCalls++
        return 'default'
      }),
    ).resolves.toBe('default')
    expect(innerCalls).toBe(1)
  })

  test('a logging listener keeps a decision made further in', async () => {
    const { root } = testRoot()
    const log: unknown[] = []
    root.on('test/w', async (_payload, next) => {
      log.push(await next())
    })
    root.on('test/w', () => 'deny')
    await expect(root.waterfall('test/w', { n: 1 }, () => 'default')).resolves.toBe('deny')
    expect(log).toEqual(['deny'])
  })

  test('a listener may override the result after calling next', async () => {
    const { root } = testRoot()
    root.on('test/w', async (_payload, next) => {
      await next()
      return 'override'
    })
    await expect(root.waterfall('test/w', { n: 1 }, () => 'default')).resolves.toBe('override')
  })

  test('null is an opinion, not a pass-through', async () => {
    const { root } = testRoot()
    let innerCalls = 0
    root.on('test/w', () => null)
    await expect(
      root.waterfall('test/w', { n: 1 }, () => {
        innerCalls++
        return 'default'
      }),
    ).resolves.toBeNull()
    expect(innerCalls).toBe(0)
  })
})

describe('errors', () => {
  test('an inner failure propagates to a listener that can recover', async () => {
    const { root } = testRoot()
    const w = new Error('w')
    let caught: unknown
    root.on('test/w', async (_payload, next) => {
      try {
        return await next()
      } catch (error) {
        caught = error
        return 'recovered'
      }
    })
    const result = await root.waterfall('test/w', { n: 1 }, () => {
      throw w
    })
    expect(result).toBe('recovered')
    expect(caught).toBe(w)
  })

  test('a listener that catches a failure of next and settles with undefined has no opinion: the failure stands', async () => {
    let ctx: Context | undefined
    const plugin = definePlugin({
      name: 'acme',
      events: [testEvents],
      apply(pluginCtx) {
        ctx = pluginCtx
      },
    })
    const harness = await createHarness({ plugins: [plugin], logger: recordingLogger() })
    const w = new Error('w')
    const logged: unknown[] = []
    const pluginCtx = requireContext(ctx)
    pluginCtx.on('test/w', async (_payload, next) => {
      try {
        return await next()
      } catch (error) {
        logged.push(error)
        return undefined
      }
    })
    await expect(
      pluginCtx.waterfall('test/w', { n: 1 }, () => {
        throw w
      }),
    ).rejects.toBe(w)
    expect(logged).toEqual([w])
    await harness.close()
  })

  test('uncaught, an inner failure rejects the dispatch unchanged', async () => {
    const { root } = testRoot()
    const w = new Error('w')
    root.on('test/w', async (_payload, next) => {
      await next()
      return 'unreachable'
    })
    await expect(
      root.waterfall('test/w', { n: 1 }, () => {
        throw w
      }),
    ).rejects.toBe(w)
  })

  test('an inner failure with no listeners rejects, never throws synchronously', async () => {
    const { root } = testRoot()
    const w = new Error('w')
    let promise: Promise<unknown> | undefined
    expect(() => {
      promise = root.waterfall('test/w', { n: 1 }, () => {
        throw w
      })
    }).not.toThrow()
    await expect(promise).rejects.toBe(w)
  })

  test('a synchronously throwing listener rejects the dispatch; listeners further in do not run', async () => {
    const { root } = testRoot()
    const failure = new Error('listener')
    const called: string[] = []
    root.on('test/w', () => {
      throw failure
    })
    root.on('test/w', (_payload, next) => {
      called.push('B')
      return next()
    })
    await expect(
      root.waterfall('test/w', { n: 1 }, () => {
        called.push('inner')
        return 'inner'
      }),
    ).rejects.toBe(failure)
    expect(called).toEqual([])
  })

  test('an inner listener failure propagates outward through every await next()', async () => {
    const { root } = testRoot()
    const failure = new Error('deep')
    const saw: string[] = []
    root.on('test/w', async (_payload, next) => {
      try {
        return await next()
      } finally {
        saw.push('outer:finally')
      }
    })
    root.on('test/w', async () => {
      throw failure
    })
    await expect(root.waterfall('test/w', { n: 1 }, () => 'inner')).rejects.toBe(failure)
    expect(saw).toEqual(['outer:finally'])
  })

  test('waterfall failures are not reported to kernel/error', async () => {
    const { root, logger } = testRoot()
    const errors: KernelErrorEvent[] = []
    root.on('kernel/error', (event) => {
      errors.push(event)
    })
    root.on('test/w', () => {
      throw new Error('w')
    })
    await rejectionOf(root.waterfall('test/w', { n: 1 }, () => 'inner'))
    expect(errors).toEqual([])
    expect(logger.at('error')).toEqual([])
  })
})

describe('snapshot', () => {
  test('a listener disposed by an outer one before its turn is skipped', async () => {
    const { root } = testRoot()
    const called: string[] = []
    let disposeInner: () => Promise<void> = () => Promise.resolve()
    root.on('test/w', async (_payload, next) => {
      called.push('outer')
      await disposeInner()
      return next()
    })
    disposeInner = root.on('test/w', () => {
      called.push('inner listener')
      return 'inner listener'
    })
    await expect(root.waterfall('test/w', { n: 1 }, () => 'default')).resolves.toBe('default')
    expect(called).toEqual(['outer'])
  })

  test('a listener added during the dispatch is not called by it', async () => {
    const { root } = testRoot()
    const called: string[] = []
    root.on('test/w', (_payload, next) => {
      called.push('first')
      root.on('test/w', () => {
        called.push('late')
        return 'late'
      })
      return next()
    })
    await expect(root.waterfall('test/w', { n: 1 }, () => 'default')).resolves.toBe('default')
    expect(called).toEqual(['first'])
  })
})
