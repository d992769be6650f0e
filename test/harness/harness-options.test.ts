import { describe, expect, test, vi } from 'vitest'
import {
  ConfigError,
  createHarness,
  definePlugin,
  describeHarness,
  HarnessError,
  type HarnessOptions,
  InvalidOptionsError,
  PluginStartError,
  services,
} from 'yoke'
import { fakeClock, fakeIds } from 'yoke/testing'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

/** Options that fail the schema on purpose: the type system would refuse them. */
function unchecked(options: unknown): HarnessOptions {
  return options as HarnessOptions
}

function asInvalidOptions(value: unknown): InvalidOptionsError {
  expect(InvalidOptionsError.is(value)).toBe(true)
  return value as InvalidOptionsError
}

/** A plugin whose apply and constructor are spies, to prove no plugin code ran. */
function spyPlugins() {
  const apply = vi.fn()
  const constructed = vi.fn()
  class SpyClass {
    constructor() {
      constructed()
    }
    apply(): void {
      apply()
    }
  }
  const definition = definePlugin({ name: 'spy', apply })
  return { apply, constructed, plugins: [definition, SpyClass] }
}

describe('createHarness options: unknown keys', () => {
  test('an unknown key is an issue { path: [key], message: "unknown option" }', async () => {
    const logger = recordingLogger()
    const error = asInvalidOptions(await rejectionOf(createHarness(unchecked({ tool: [], logger }))))
    expect(error.code).toBe('INVALID_OPTIONS')
    expect(error.name).toBe('InvalidOptionsError')
    expect(error.issues).toEqual([{ path: ['tool'], message: 'unknown option' }])
    expect(error.field).toBe('tool')
    expect(error.value).toEqual([])
    expect(error.message).toBe('options.tool: unknown option')
    expect(logger.records).toEqual([])
  })

  test('several unknown keys are each an issue', async () => {
    const error = asInvalidOptions(
      await rejectionOf(createHarness(unchecked({ tool: 1, agents: 2, logger: recordingLogger() }))),
    )
    expect(error.issues).toEqual([
      { path: ['tool'], message: 'unknown option' },
      { path: ['agents'], message: 'unknown option' },
    ])
  })
})

describe('createHarness options: maxParallelToolCalls', () => {
  test.each([
    ['zero', 0],
    ['a fraction', 1.5],
    ['a numeric string', '4'],
    ['negative', -1],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('%s is refused with a message naming the option', async (_label, value) => {
    const error = asInvalidOptions(
      await rejectionOf(createHarness(unchecked({ maxParallelToolCalls: value, logger: recordingLogger() }))),
    )
    expect(error.code).toBe('INVALID_OPTIONS')
    expect(error.field).toBe('maxParallelToolCalls')
    expect(error.value).toBe(value)
    expect(error.issues).toEqual([{ path: ['maxParallelToolCalls'], message: 'must be a positive integer' }])
    expect(error.message).toBe('options.maxParallelToolCalls: must be a positive integer')
  })

  test.each([1, 4, 10])('%d is accepted', async (value) => {
    const harness = await createHarness({ maxParallelToolCalls: value, logger: recordingLogger() })
    expect(harness.closed).toBe(false)
    await harness.close()
  })
})

describe('createHarness options: host services', () => {
  test.each([
    ['clock not an object', { clock: 5 }, [{ path: ['clock'], message: 'must be a Clock { now(), setTimer() }' }], 5],
    [
      'clock without methods',
      { clock: {} },
      [
        { path: ['clock', 'now'], message: 'must be a function' },
        { path: ['clock', 'setTimer'], message: 'must be a function' },
      ],
      undefined,
    ],
    [
      'clock.setTimer not a function',
      { clock: { now: () => 0, setTimer: 1 } },
      [{ path: ['clock', 'setTimer'], message: 'must be a function' }],
      1,
    ],
    ['ids not a function', { ids: 'uuid' }, [{ path: ['ids'], message: 'must be a function' }], 'uuid'],
    [
      'logger without error',
      { logger: { debug() {}, info() {}, warn() {} } },
      [{ path: ['logger', 'error'], message: 'must be a function' }],
      undefined,
    ],
    [
      'logger null',
      { logger: null },
      [{ path: ['logger'], message: 'must be a Logger { debug, info, warn, error }' }],
      null,
    ],
  ])('%s is refused', async (_label, options, issues, value) => {
    const error = asInvalidOptions(await rejectionOf(createHarness(unchecked(options))))
    expect(error.code).toBe('INVALID_OPTIONS')
    expect(error.issues).toEqual(issues)
    const first = issues[0]!
    expect(error.field).toBe(first.path.join('.'))
    expect(error.value).toBe(value)
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
    expect(error.message).toBe(`options.${first.path.join('.')}: ${first.message}${more}`)
  })

  test('a logger whose methods live on its prototype is accepted', async () => {
    const records: string[] = []
    class ClassLogger {
      debug(): void {}
      info(): void {}
      warn(message: string): void {
        records.push(message)
      }
      error(message: string): void {
        records.push(message)
      }
    }
    const logger = new ClassLogger()
    const harness = await createHarness({ logger })
    expect(harness.ctx.logger).toBe(logger)
    await harness.close()
    expect(records).toEqual([])
  })

  test('valid host services are used by reference', async () => {
    const clock = fakeClock({ now: 5 })
    const ids = fakeIds()
    const logger = recordingLogger()
    const harness = await createHarness({ clock, ids, logger })
    expect(harness.ctx.get(services.clock)).toBe(clock)
    expect(harness.ctx.get(services.ids)).toBe(ids)
    expect(harness.ctx.get(services.logger)).toBe(logger)
    expect(harness.ctx.logger).toBe(logger)
    await harness.close()
  })
})

describe('createHarness options: the whole object', () => {
  test.each([
    ['a number', 5],
    ['null', null],
    ['an array', []],
  ])('%s is refused with an empty path', async (_label, options) => {
    const error = asInvalidOptions(await rejectionOf(createHarness(unchecked(options))))
    expect(error.issues).toEqual([{ path: [], message: 'must be an options object' }])
    expect(error.field).toBe('')
    expect(error.value).toEqual(options)
    expect(error.message).toBe('options: must be an options object')
  })

  test.each([
    ['plugins', { plugins: 'metrics' }, 'must be an array of plugins or entries'],
    ['patches', { patches: {} }, 'must be an array of patches'],
  ])('%s of the wrong shape is refused', async (key, options, message) => {
    const error = asInvalidOptions(await rejectionOf(createHarness(unchecked(options))))
    expect(error.issues).toEqual([{ path: [key], message }])
    expect(error.field).toBe(key)
  })

  test('every issue is reported at once, in the order of the options keys', async () => {
    const first = asInvalidOptions(
      await rejectionOf(createHarness(unchecked({ tool: [], maxParallelToolCalls: 0, ids: 'x' }))),
    )
    expect(first.issues).toEqual([
      { path: ['tool'], message: 'unknown option' },
      { path: ['maxParallelToolCalls'], message: 'must be a positive integer' },
      { path: ['ids'], message: 'must be a function' },
    ])
    expect(first.field).toBe('tool')
    expect(first.value).toEqual([])
    expect(first.message).toBe('options.tool: unknown option (and 2 more)')

    const reordered = asInvalidOptions(
      await rejectionOf(createHarness(unchecked({ maxParallelToolCalls: 0, tool: [] }))),
    )
    expect(reordered.issues.map((issue) => issue.path)).toEqual([['maxParallelToolCalls'], ['tool']])
    expect(reordered.field).toBe('maxParallelToolCalls')
    expect(reordered.value).toBe(0)
    expect(reordered.message).toBe('options.maxParallelToolCalls: must be a positive integer (and 1 more)')
  })

  test('no plugin code runs and nothing is created', async () => {
    const spies = spyPlugins()
    const logger = recordingLogger()
    const clock = fakeClock({ now: 0 })
    const now = vi.spyOn(clock, 'now')
    const setTimer = vi.spyOn(clock, 'setTimer')
    const ids = vi.fn(fakeIds())
    const error = asInvalidOptions(
      await rejectionOf(
        createHarness(unchecked({ tool: [], maxParallelToolCalls: 0, plugins: spies.plugins, logger, clock, ids })),
      ),
    )
    expect(error.issues.map((issue) => issue.path)).toEqual([['tool'], ['maxParallelToolCalls']])
    expect(spies.apply).not.toHaveBeenCalled()
    expect(spies.constructed).not.toHaveBeenCalled()
    expect(now).not.toHaveBeenCalled()
    expect(setTimer).not.toHaveBeenCalled()
    expect(ids).not.toHaveBeenCalled()
    expect(logger.records).toEqual([])
  })

  test('the same options are valid for plugins that would otherwise start', async () => {
    const spies = spyPlugins()
    const harness = await createHarness({ plugins: spies.plugins, logger: recordingLogger() })
    expect(spies.apply).toHaveBeenCalledTimes(2)
    expect(spies.constructed).toHaveBeenCalledTimes(1)
    await harness.close()
  })

  test('createHarness rejects rather than throwing synchronously', async () => {
    let promise: Promise<unknown> | undefined
    expect(() => {
      promise = createHarness(unchecked({ tool: [] }))
    }).not.toThrow()
    expect(promise).toBeInstanceOf(Promise)
    asInvalidOptions(await rejectionOf(promise ?? Promise.resolve()))
  })

  test('describeHarness throws the same error synchronously', () => {
    const error = asInvalidOptions(thrownBy(() => describeHarness(unchecked({ tool: [], maxParallelToolCalls: 1.5 }))))
    expect(error.code).toBe('INVALID_OPTIONS')
    expect(error.issues).toEqual([
      { path: ['tool'], message: 'unknown option' },
      { path: ['maxParallelToolCalls'], message: 'must be a positive integer' },
    ])
  })
})

describe('InvalidOptionsError', () => {
  test('is a ConfigError and a HarnessError by design, and nothing else', async () => {
    const error = await rejectionOf(createHarness(unchecked({ maxParallelToolCalls: '4' })))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(ConfigError.is(error)).toBe(true)
    expect(HarnessError.is(error)).toBe(true)
    expect(PluginStartError.is(error)).toBe(false)
    expect(error).toBeInstanceOf(Error)
  })

  test('carries the ConfigError fields of its first issue', async () => {
    const error = asInvalidOptions(await rejectionOf(createHarness(unchecked({ ids: 42, tool: true }))))
    expect(error.option).toBe('ids')
    expect(error.reason).toBe('must be a function')
    expect(error.value).toBe(42)
    expect(error.field).toBe('ids')
    expect(error.issues).toEqual([
      { path: ['ids'], message: 'must be a function' },
      { path: ['tool'], message: 'unknown option' },
    ])
  })

  test('a plain ConfigError is not an InvalidOptionsError', () => {
    const error = new ConfigError({ option: 'dir', reason: 'is a file', value: '/tmp/x' })
    expect(ConfigError.is(error)).toBe(true)
    expect(InvalidOptionsError.is(error)).toBe(false)
    expect(error.code).toBe('CONFIG_INVALID')
    expect(error.message).toBe('dir: is a file')
  })
})

describe('createHarness options: writeBehind is the persistence entry’s to check', () => {
  test.each([[5], [null], [[]], [{ windowMs: -1 }], [{ foo: 1 }]])(
    'writeBehind %j → PluginStartError (persistence) with a PluginConfigError cause',
    async (writeBehind) => {
      const error = await rejectionOf(createHarness({ writeBehind: writeBehind as never, logger: recordingLogger() }))
      expect(error).toMatchObject({ name: 'PluginStartError', code: 'PLUGIN_START_FAILED' })
      expect((error as { cause?: { name?: string } }).cause?.name).toBe('PluginConfigError')
    },
  )
})
