/**
 * Kernel benchmarks: each case next to a plain-loop floor measured in the same
 * run. The ratio says how many times slower than the floor the kernel path is.
 */
import { defineEvents, type Emit, type Logger, type Waterfall } from 'yoke'
import { createRootContext } from '../src/kernel/index.js'
import { measure, report } from './measure.js'

declare module 'yoke' {
  interface YokeEvents {
    'bench/tick': Emit<{ readonly n: number }>
    'bench/wrap': Waterfall<{ readonly n: number }, number>
  }
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** Runs every kernel case and returns the ratios by case name. */
export async function runKernelBench(): Promise<Record<string, number>> {
  const root = createRootContext({ logger: silent })
  root.registerEvents(
    defineEvents<{
      'bench/tick': Emit<{ readonly n: number }>
      'bench/wrap': Waterfall<{ readonly n: number }, number>
    }>({
      'bench/tick': 'emit',
      'bench/wrap': 'waterfall',
    }),
  )
  let sink = 0
  const ratios: Record<string, number> = {}

  // emit to 10 listeners
  const plainListeners: ((payload: { readonly n: number }) => void)[] = []
  for (let index = 0; index < 10; index++) {
    const listener = (payload: { readonly n: number }): void => {
      sink += payload.n
    }
    plainListeners.push(listener)
    root.on('bench/tick', listener)
  }
  const payload = { n: 1 }
  const emitCase = await measure('emit to 10 listeners', () => root.emit('bench/tick', payload), { batch: 10_000 })
  const emitFloor = await measure(
    'for-loop over 10 functions',
    () => {
      for (const listener of plainListeners) listener(payload)
    },
    { batch: 10_000 },
  )
  ratios['emit-10'] = report(emitCase, emitFloor).ratio

  // waterfall through 5 listeners
  type Middleware = (
    payload: { readonly n: number },
    next: (replacement?: { readonly n: number }) => Promise<number>,
  ) => Promise<number>
  const middleware: Middleware[] = []
  for (let index = 0; index < 5; index++) {
    const listener: Middleware = async (current, next) => (await next()) + current.n
    middleware.push(listener)
    root.on('bench/wrap', listener)
  }
  const inner = (current: { readonly n: number }): number => current.n
  const waterfallCase = await measure('waterfall through 5 listeners', () =>
    root.waterfall('bench/wrap', payload, inner),
  )
  const runChain = (index: number, current: { readonly n: number }): Promise<number> => {
    const listener = middleware[index]
    if (listener === undefined) return Promise.resolve(inner(current))
    return listener(current, (replacement) => runChain(index + 1, replacement ?? current))
  }
  const waterfallFloor = await measure('hand-written chain of 5 async functions', () => runChain(0, payload))
  ratios['waterfall-5'] = report(waterfallCase, waterfallFloor).ratio

  // provide/dispose of 1,000 effects
  const effectsCase = await measure(
    'register + dispose 1,000 effects',
    async () => {
      const context = root.child('bench')
      for (let index = 0; index < 1_000; index++) {
        context.effect(() => () => {
          sink++
        })
      }
      await context.dispose()
    },
    { batch: 10, roundMs: 300 },
  )
  const effectsFloor = await measure(
    'push 1,000 closures, run them in reverse',
    async () => {
      const cleanups: (() => void | Promise<void>)[] = []
      for (let index = 0; index < 1_000; index++) {
        cleanups.push(() => {
          sink++
        })
      }
      for (let index = cleanups.length - 1; index >= 0; index--) await cleanups[index]?.()
    },
    { batch: 10, roundMs: 300 },
  )
  ratios['effects-1000'] = report(effectsCase, effectsFloor).ratio

  await root.dispose()
  if (sink === -1) console.log(sink)
  return ratios
}
