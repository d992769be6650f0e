import { describe, expect, test } from 'vitest'
import {
  type Context,
  createHarness,
  definePlugin,
  defineService,
  type Harness,
  HarnessCloseError,
  HarnessClosedError,
  HarnessError,
  type PluginDefinition,
  services,
} from 'yoke'
import { fakeClock } from 'yoke/testing'
import { disableDefaults } from '../helpers/no-defaults.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testEvents } from '../helpers/test-events.js'

const A = defineService<string>('test/a')

/** A plugin whose single effect logs `name` on cleanup, or throws `failure` when given. */
function loggingPlugin(name: string, log: string[], failure?: Error): PluginDefinition {
  return definePlugin({
    name,
    apply(ctx) {
      ctx.effect(
        () => () => {
          log.push(name)
          if (failure !== undefined) throw failure
        },
        `${name}-effect`,
      )
    },
  })
}

describe('harness.close() is idempotent', () => {
  test('every call returns the same promise and closed is true at once', async () => {
    const harness = await createHarness({ logger: recordingLogger() })
    expect(harness.closed).toBe(false)
    const first = harness.close()
    expect(harness.closed).toBe(true)
    const second = harness.close()
    expect(second).toBe(first)
    await expect(first).resolves.toBeUndefined()
    expect(harness.close()).toBe(first)
    expect(harness.closed).toBe(true)
  })

  test('Symbol.asyncDispose is close', async () => {
    const harness = await createHarness({ logger: recordingLogger() })
    const disposing = harness[Symbol.asyncDispose]()
    expect(harness.closed).toBe(true)
    expect(harness.close()).toBe(disposing)
    await disposing
  })

  test('await using closes the harness at the end of the block', async () => {
    const log: string[] = []
    let captured: Harness | undefined
    {
      await using harness = await createHarness({ plugins: [loggingPlugin('p', log)], logger: recordingLogger() })
      captured = harness
      expect(harness.closed).toBe(false)
      expect(log).toEqual([])
    }
    expect(captured.closed).toBe(true)
    expect(captured.ctx.state).toBe('disposed')
    expect(log).toEqual(['p'])
  })
})

describe('after close', () => {
  test('on() throws HarnessClosedError as soon as close was called', async () => {
    const harness = await createHarness({
      plugins: [definePlugin({ name: 'events', events: [testEvents], apply() {} })],
      logger: recordingLogger(),
    })
    const closing = harness.close()
    const early = thrownBy(() => harness.on('test/e', () => {}))
    expect(HarnessClosedError.is(early)).toBe(true)
    expect(HarnessError.is(early)).toBe(true)
    const typed = early as HarnessClosedError
    expect(typed.code).toBe('HARNESS_CLOSED')
    expect(typed.operation).toBe('on')
    expect(typed.message).toBe('the harness is closed (operation: on)')
    await closing
    const late = thrownBy(() => harness.on('kernel/service', () => {}))
    expect(HarnessClosedError.is(late)).toBe(true)
    expect((late as HarnessClosedError).operation).toBe('on')
  })

  test('a harness.on listener is removed at close', async () => {
    const harness = await createHarness({ logger: recordingLogger() })
    const heard: string[] = []
    const disposer = harness.on('kernel/service', (event) => {
      heard.push(`${event.kind}:${event.key}`)
    })
    expect(disposer.label).toBe('listener:kernel/service')
    expect(harness.inspect().events).toContainEqual({ name: 'kernel/service', mode: 'emit', listeners: 1 })
    await harness.close()
    expect(disposer.disposed).toBe(true)
    expect(harness.inspect().events).toEqual([])
    expect(harness.inspect().effects.children).toEqual([])
  })

  test('the root is disposed and no timer of a plugin fires afterwards', async () => {
    const clock = fakeClock({ now: 0 })
    const fired: string[] = []
    let pluginContext: Context | undefined
    const timed = definePlugin({
      name: 'timed',
      apply(ctx) {
        pluginContext = ctx
        ctx.effect(() => ctx.get(services.clock).setTimer(() => fired.push('tick'), 1000), 'timer')
      },
    })
    const harness = await createHarness({ plugins: [timed], clock, logger: recordingLogger() })
    expect(clock.pending()).toEqual([{ dueAt: 1000, delayMs: 1000 }])
    await harness.close()
    expect(harness.ctx.state).toBe('disposed')
    expect(pluginContext?.state).toBe('disposed')
    expect(pluginContext?.signal.aborted).toBe(true)
    expect(clock.pending()).toEqual([])
    await clock.advance(5000)
    expect(fired).toEqual([])
  })
})

describe('close order', () => {
  test('plugins stop in reverse start order, dependents first', async () => {
    const log: string[] = []
    const dependent = definePlugin({
      name: 'dependent',
      inject: [A],
      apply(ctx) {
        ctx.effect(() => () => {
          log.push(`dependent sees ${ctx.get(A)}`)
        })
      },
    })
    const provider = definePlugin({
      name: 'provider',
      provides: [A],
      apply(ctx) {
        ctx.provide(A, 'a')
        ctx.effect(() => () => {
          log.push('provider')
        })
      },
    })
    const harness = await createHarness({
      plugins: [dependent, loggingPlugin('independent', log), provider],
      patches: disableDefaults,
      logger: recordingLogger(),
    })
    expect(harness.inspect().plugins.map((plugin) => plugin.id)).toEqual(['independent', 'provider', 'dependent'])
    await harness.close()
    expect(log).toEqual(['dependent sees a', 'provider', 'independent'])
  })
})

describe('close failures', () => {
  test('a failing plugin cleanup rejects HarnessCloseError after every step ran', async () => {
    const log: string[] = []
    const boom = new Error('boom')
    const logger = recordingLogger()
    const harness = await createHarness({
      plugins: [loggingPlugin('a', log), loggingPlugin('b', log, boom), loggingPlugin('c', log)],
      patches: disableDefaults,
      logger,
    })
    const first = harness.close()
    expect(harness.closed).toBe(true)
    expect(harness.close()).toBe(first)
    const error = await rejectionOf(first)
    expect(HarnessCloseError.is(error)).toBe(true)
    expect(HarnessError.is(error)).toBe(true)
    const typed = error as HarnessCloseError
    expect(typed.code).toBe('CLOSE_FAILED')
    expect(typed.errors).toEqual([{ label: 'b-effect', error: boom }])
    expect(typed.errors[0]?.error).toBe(boom)
    expect(typed.unflushedSessions).toEqual([])
    expect(typed.message).toBe('closing the harness failed in 1 place(s): b-effect: boom')
    expect(log).toEqual(['c', 'b', 'a'])
    expect(harness.ctx.state).toBe('disposed')
    expect(logger.at('error')).toHaveLength(1)
    expect(logger.at('error')[0]?.fields).toMatchObject({ phase: 'dispose', label: 'b-effect', error: boom })
    expect(await rejectionOf(harness.close())).toBe(error)
  })

  test('every failure is collected, in teardown order, including a cleanup returned by apply', async () => {
    const log: string[] = []
    const first = new Error('first')
    const second = new Error('second')
    const fromApply = definePlugin({
      name: 'from-apply',
      apply() {
        return () => {
          log.push('from-apply')
          throw second
        }
      },
    })
    const harness = await createHarness({
      plugins: [fromApply, loggingPlugin('middle', log), loggingPlugin('last', log, first)],
      patches: disableDefaults,
      logger: recordingLogger(),
    })
    const error = await rejectionOf(harness.close())
    expect(HarnessCloseError.is(error)).toBe(true)
    const typed = error as HarnessCloseError
    expect(typed.code).toBe('CLOSE_FAILED')
    expect(typed.errors).toEqual([
      { label: 'last-effect', error: first },
      { label: 'apply', error: second },
    ])
    expect(typed.message).toBe('closing the harness failed in 2 place(s): last-effect: first')
    expect(log).toEqual(['last', 'middle', 'from-apply'])
  })
})
