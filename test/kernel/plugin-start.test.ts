import { describe, expect, test, vi } from 'vitest'
import { z } from 'zod'
import {
  type Context,
  createHarness,
  definePlugin,
  defineService,
  describeHarness,
  type Disposer,
  HarnessError,
  type HarnessOptions,
  InvalidArgumentError,
  MissingServicesError,
  PluginConfigError,
  PluginCycleError,
  type PluginDefinition,
  PluginStartError,
  ServiceConflictError,
  ServiceMissingError,
  services,
} from 'yoke'
import { type HarnessInspection, inspectContext } from '../../src/kernel/index.js'
import { fakeClock } from 'yoke/testing'
import { defaultIds, disableDefaults } from '../helpers/no-defaults.js'
import { rejectionOf, requireContext, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testEvents } from '../helpers/test-events.js'

const A = defineService<string>('test/a')
const B = defineService<string>('test/b')

function asStartError(value: unknown): PluginStartError {
  expect(PluginStartError.is(value)).toBe(true)
  expect(HarnessError.is(value)).toBe(true)
  const typed = value as PluginStartError
  expect(typed.code).toBe('PLUGIN_START_FAILED')
  return typed
}

/** Records every `kernel/plugin-state` on the root (which stays live until the root itself disposes). */
function stateRecorder(): { plugin: PluginDefinition; states: string[]; root: () => Context } {
  const states: string[] = []
  let root: Context | undefined
  const plugin = definePlugin({
    name: 'recorder',
    apply(ctx) {
      root = requireContext(ctx.parent)
      root.on('kernel/plugin-state', (event) => {
        states.push(`${event.id}:${event.state}`)
      })
    },
  })
  return { plugin, states, root: () => requireContext(root) }
}

function only(states: readonly string[], id: string): string[] {
  return states.filter((state) => state.startsWith(`${id}:`)).map((state) => state.slice(id.length + 1))
}

describe('start order and stop order', () => {
  test('dependencies start first; describe() shows the start index; close disposes in reverse', async () => {
    const applied: string[] = []
    const cleaned: string[] = []
    const aborted: string[] = []
    const track = (name: string, ctx: Context): void => {
      applied.push(name)
      ctx.signal.addEventListener('abort', () => aborted.push(name))
      ctx.effect(() => () => {
        cleaned.push(name)
      })
    }
    const c = definePlugin({ name: 'c', inject: [B], apply: (ctx) => track('c', ctx) })
    const a = definePlugin({
      name: 'a',
      provides: [A],
      apply(ctx) {
        track('a', ctx)
        ctx.provide(A, 'a')
      },
    })
    const b = definePlugin({
      name: 'b',
      inject: [A],
      provides: [B],
      apply(ctx) {
        track('b', ctx)
        ctx.provide(B, `${ctx.get(A)}b`)
      },
    })
    const options: HarnessOptions = { plugins: [c, a, b], patches: disableDefaults, logger: recordingLogger() }
    const harness = await createHarness(options)
    expect(applied).toEqual(['a', 'b', 'c'])
    const entries = harness.describe().entries
    expect(entries.map((entry) => [entry.id, entry.startIndex])).toEqual([
      ...defaultIds.map((id) => [id, null]),
      ['c', 2],
      ['a', 0],
      ['b', 1],
    ])
    expect(entries.slice(0, 8).map((entry) => [entry.disabled, entry.patchedBy])).toEqual(
      defaultIds.map((_id, index) => [true, [`patches[${index}]`]]),
    )
    expect(describeHarness(options)).toEqual(harness.describe())
    expect(harness.inspect().plugins.map((plugin) => [plugin.id, plugin.startIndex])).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ])
    expect(harness.ctx.get(B)).toBe('ab')
    await harness.close()
    expect(aborted).toEqual(['c', 'b', 'a'])
    expect(cleaned).toEqual(['c', 'b', 'a'])
  })

  test('among startable entries the earliest in the composition starts first', async () => {
    const applied: string[] = []
    const plugin = (name: string, extra: Partial<{ inject: string[]; optional: string[]; provides: string[] }>) =>
      definePlugin({
        name,
        ...extra,
        apply(ctx) {
          applied.push(name)
          for (const key of extra.provides ?? []) ctx.provide(defineService<string>(key), name)
        },
      })
    const harness = await createHarness({
      plugins: [
        plugin('late', { inject: ['test/b'] }),
        plugin('free-one', {}),
        plugin('maybe', { optional: ['test/a', 'test/unprovided'] }),
        plugin('free-two', {}),
        plugin('provides-b', { provides: ['test/b'] }),
        plugin('provides-a', { provides: ['test/a'] }),
      ],
      patches: disableDefaults,
      logger: recordingLogger(),
    })
    expect(applied).toEqual(['free-one', 'free-two', 'provides-b', 'late', 'provides-a', 'maybe'])
    await harness.close()
  })

  test('a required host key is satisfied and does not order anything', async () => {
    const applied: string[] = []
    const host = definePlugin({
      name: 'uses-clock',
      inject: [services.clock, 'logger', services.ids],
      apply() {
        applied.push('uses-clock')
      },
    })
    const harness = await createHarness({ plugins: [host], logger: recordingLogger() })
    expect(applied).toEqual(['uses-clock'])
    expect(harness.describe().entries.at(-1)?.startIndex).toBe(8)
    await harness.close()
  })
})

describe('planning errors', () => {
  test('every missing key is reported at once, in entry then key order; no apply ran', async () => {
    const apply = vi.fn()
    const x = definePlugin({ name: 'x', inject: ['test/a'], apply })
    const y = definePlugin({ name: 'y', inject: ['test/b'], apply })
    const error = await rejectionOf(createHarness({ plugins: [x, y], logger: recordingLogger() }))
    expect(MissingServicesError.is(error)).toBe(true)
    const typed = error as MissingServicesError
    expect(typed.code).toBe('SERVICES_MISSING')
    expect(typed.missing).toEqual([
      { plugin: 'x', key: 'test/a' },
      { plugin: 'y', key: 'test/b' },
    ])
    expect(typed.message).toBe('required services are not provided: "x" needs "test/a", "y" needs "test/b"')
    expect(apply).not.toHaveBeenCalled()
  })

  test('keys are listed in each entry’s own order and a disabled provider is named', () => {
    const needsMany = definePlugin({ name: 'z', inject: [B, A, 'test/c'], apply() {} })
    const provider = definePlugin({ name: 'provider', provides: [A], apply() {} })
    const error = thrownBy(() =>
      describeHarness({ plugins: [needsMany, provider], patches: [{ id: 'provider', disabled: true }] }),
    )
    expect(MissingServicesError.is(error)).toBe(true)
    expect((error as MissingServicesError).missing).toEqual([
      { plugin: 'z', key: 'test/b' },
      { plugin: 'z', key: 'test/a', disabledProvider: 'provider' },
      { plugin: 'z', key: 'test/c' },
    ])
  })

  test('a key provided in apply but not listed in provides does not satisfy planning', () => {
    const sneaky = definePlugin({
      name: 'sneaky',
      apply(ctx) {
        ctx.provide(A, 'a')
      },
    })
    const needy = definePlugin({ name: 'needy', inject: [A], apply() {} })
    const error = thrownBy(() => describeHarness({ plugins: [sneaky, needy] }))
    expect(MissingServicesError.is(error)).toBe(true)
    expect((error as MissingServicesError).missing).toEqual([{ plugin: 'needy', key: 'test/a' }])
  })

  test('a dependency cycle rejects PluginCycleError; no apply ran', async () => {
    const apply = vi.fn()
    const a = definePlugin({ name: 'a', inject: [B], provides: [A], apply })
    const b = definePlugin({ name: 'b', inject: [A], provides: [B], apply })
    const error = await rejectionOf(createHarness({ plugins: [a, b], logger: recordingLogger() }))
    expect(PluginCycleError.is(error)).toBe(true)
    const typed = error as PluginCycleError
    expect(typed.code).toBe('PLUGIN_CYCLE')
    expect(typed.cycle).toEqual(['a', 'b', 'a'])
    expect(typed.message).toBe('plugin dependencies form a cycle: a -> b -> a')
    expect(apply).not.toHaveBeenCalled()
  })

  test('an optional dependency closes a cycle too', () => {
    const a = definePlugin({ name: 'a', optional: [B], provides: [A], apply() {} })
    const b = definePlugin({ name: 'b', inject: [A], provides: [B], apply() {} })
    const error = thrownBy(() => describeHarness({ plugins: [b, a] }))
    expect(PluginCycleError.is(error)).toBe(true)
    expect((error as PluginCycleError).cycle).toEqual(['b', 'a', 'b'])
  })

  test('two enabled providers of one key reject ServiceConflictError before any apply', async () => {
    const apply = vi.fn()
    const p1 = definePlugin({ name: 'p1', provides: [A], apply })
    const p2 = definePlugin({ name: 'p2', provides: [A], apply })
    const error = await rejectionOf(createHarness({ plugins: [p1, p2], logger: recordingLogger() }))
    expect(ServiceConflictError.is(error)).toBe(true)
    const typed = error as ServiceConflictError
    expect(typed.code).toBe('SERVICE_CONFLICT')
    expect(typed.key).toBe('test/a')
    expect(typed.existingProvider).toBe('harness/p1')
    expect(typed.attemptedProvider).toBe('harness/p2')
    expect(apply).not.toHaveBeenCalled()
  })

  test('a disabled second provider is no conflict', async () => {
    const p1 = definePlugin({
      name: 'p1',
      provides: [A],
      apply(ctx) {
        ctx.provide(A, '1')
      },
    })
    const p2 = definePlugin({ name: 'p2', provides: [A], apply() {} })
    const harness = await createHarness({ plugins: [p1, { plugin: p2, disabled: true }], logger: recordingLogger() })
    expect(harness.ctx.get(A)).toBe('1')
    await harness.close()
  })

  test('an entry listing a host key in provides is a conflict', () => {
    const clockThief = definePlugin({ name: 'clock-thief', provides: [services.clock], apply() {} })
    const error = thrownBy(() => describeHarness({ plugins: [clockThief] }))
    expect(ServiceConflictError.is(error)).toBe(true)
    const typed = error as ServiceConflictError
    expect(typed.key).toBe('clock')
    expect(typed.existingProvider).toBe('harness')
    expect(typed.attemptedProvider).toBe('harness/clock-thief')
  })
})

describe('fail fast with rollback', () => {
  test('a rejecting apply rolls back every started entry in reverse and leaves nothing behind', async () => {
    const recorder = stateRecorder()
    const boom = new Error('boom')
    const cleaned: string[] = []
    const clock = fakeClock({ now: 0 })
    let listener: Disposer | undefined
    const independent = (name: string): PluginDefinition =>
      definePlugin({
        name,
        apply(ctx) {
          ctx.effect(() => () => {
            cleaned.push(name)
          })
        },
      })
    const a = definePlugin({
      name: 'a',
      provides: [A],
      events: [testEvents],
      apply(ctx) {
        ctx.provide(A, 'a')
        ctx.effect(() => ctx.get(services.clock).setTimer(() => cleaned.push('timer fired'), 100), 'timer')
        ctx.effect(() => () => {
          cleaned.push('a')
        })
      },
    })
    const c = definePlugin({
      name: 'c',
      async apply(ctx) {
        listener = ctx.on('test/e', () => {})
        await Promise.resolve()
        throw boom
      },
    })
    const afterApply = vi.fn()
    const d = definePlugin({ name: 'd', apply: afterApply })
    const error = asStartError(
      await rejectionOf(
        createHarness({
          plugins: [recorder.plugin, a, independent('b'), c, d],
          patches: disableDefaults,
          clock,
          logger: recordingLogger(),
        }),
      ),
    )
    expect(error.plugin).toBe('c')
    expect(error.pluginName).toBe('c')
    expect(error.cause).toBe(boom)
    expect(error.rollbackErrors).toEqual([])
    expect(error.message).toBe('plugin "c" failed to start: boom')
    expect(cleaned).toEqual(['b', 'a'])
    expect(afterApply).not.toHaveBeenCalled()
    expect(listener?.disposed).toBe(true)

    expect(only(recorder.states, 'c')).toEqual(['loading', 'failed'])
    expect(only(recorder.states, 'b')).toEqual(['loading', 'active', 'disposing', 'disposed'])
    expect(only(recorder.states, 'a')).toEqual(['loading', 'active', 'disposing', 'disposed'])
    expect(only(recorder.states, 'd')).toEqual(['disposed'])
    const bDisposed = recorder.states.indexOf('b:disposed')
    expect(recorder.states.indexOf('c:failed')).toBeLessThan(bDisposed)
    expect(bDisposed).toBeLessThan(recorder.states.indexOf('a:disposing'))
    expect(recorder.states.indexOf('a:disposed')).toBeLessThan(recorder.states.indexOf('d:disposed'))

    const root = recorder.root()
    expect(root.state).toBe('disposed')
    const after = inspectContext(root)
    expect(after.services).toEqual([])
    expect(after.events).toEqual([])
    expect(after.effects.children).toEqual([])
    expect(clock.pending()).toEqual([])
    expect(after.plugins.map((plugin) => [plugin.id, plugin.state])).toEqual([
      ['recorder', 'disposed'],
      ['a', 'disposed'],
      ['b', 'disposed'],
      ['c', 'failed'],
      ['d', 'disposed'],
    ])
    expect(after.plugins.find((plugin) => plugin.id === 'c')?.error).toEqual({
      name: 'Error',
      code: 'UNKNOWN',
      message: 'boom',
    })
  })

  test('the inspection is taken when the entry failed, before the rollback', async () => {
    const boom = new Error('boom')
    const a = definePlugin({
      name: 'a',
      provides: [A],
      apply(ctx) {
        ctx.provide(A, 'a')
      },
    })
    const c = definePlugin({
      name: 'c',
      events: [testEvents],
      apply(ctx) {
        ctx.on('test/e', () => {})
        throw boom
      },
    })
    const error = asStartError(
      await rejectionOf(createHarness({ plugins: [a, c], patches: disableDefaults, logger: recordingLogger() })),
    )
    const inspection = error.inspection as HarnessInspection
    expect(inspection.plugins.map((plugin) => [plugin.id, plugin.state])).toEqual([
      ['a', 'active'],
      ['c', 'failed'],
    ])
    expect(inspection.plugins[1]?.error).toMatchObject({ name: 'Error', code: 'UNKNOWN', message: 'boom' })
    expect(inspection.services).toContainEqual({ key: 'test/a', owner: 'a' })
    expect(inspection.events).toContainEqual({ name: 'test/e', mode: 'emit', listeners: 1 })
    const cNode = inspection.effects.children.find((node) => node.label === 'plugin:c')
    expect(cNode?.children).toEqual([{ label: 'listener:test/e', kind: 'listener', children: [] }])
    expect(JSON.parse(JSON.stringify(inspection))).toEqual(inspection)
  })

  test('cleanups that throw during the rollback are collected as rollbackErrors, in teardown order', async () => {
    const boom = new Error('boom')
    const cleanupA = new Error('cleanup-a')
    const cleanupC = new Error('cleanup-c')
    const logger = recordingLogger()
    const a = definePlugin({
      name: 'a',
      apply(ctx) {
        ctx.effect(
          () => () => {
            throw cleanupA
          },
          'a-effect',
        )
      },
    })
    const b = definePlugin({ name: 'b', apply() {} })
    const c = definePlugin({
      name: 'c',
      apply(ctx) {
        ctx.effect(
          () => () => {
            throw cleanupC
          },
          'c-effect',
        )
        throw boom
      },
    })
    const error = asStartError(
      await rejectionOf(createHarness({ plugins: [a, b, c], patches: disableDefaults, logger })),
    )
    expect(error.plugin).toBe('c')
    expect(error.cause).toBe(boom)
    expect(error.rollbackErrors).toEqual([
      { label: 'c-effect', error: cleanupC },
      { label: 'a-effect', error: cleanupA },
    ])
    expect(logger.at('error').map((record) => record.fields?.['label'])).toEqual(['c-effect', 'a-effect'])
    expect(logger.at('error').map((record) => record.fields?.['phase'])).toEqual(['dispose', 'dispose'])
  })

  test('pluginName is the plugin’s name and plugin the entry id', async () => {
    class Failing {
      apply(): Promise<void> {
        return Promise.reject(new Error('nope'))
      }
    }
    const error = asStartError(
      await rejectionOf(createHarness({ plugins: [{ id: 'custom', plugin: Failing }], logger: recordingLogger() })),
    )
    expect(error.plugin).toBe('custom')
    expect(error.pluginName).toBe('Failing')
    expect((error.cause as Error).message).toBe('nope')
  })

  test('a constructor that throws fails the start like apply', async () => {
    const thrown = new Error('constructor')
    class Exploding {
      constructor() {
        throw thrown
      }
      apply(): void {}
    }
    const error = asStartError(await rejectionOf(createHarness({ plugins: [Exploding], logger: recordingLogger() })))
    expect(error.plugin).toBe('exploding')
    expect(error.cause).toBe(thrown)
  })
})

describe('config validation', () => {
  test('an invalid entry config fails with a PluginConfigError cause; apply is not called', async () => {
    const recorder = stateRecorder()
    const apply = vi.fn()
    const n = definePlugin({ name: 'n', config: z.object({ size: z.number() }), apply })
    const error = asStartError(
      await rejectionOf(
        createHarness({
          plugins: [recorder.plugin, { plugin: n, config: { size: 'x' } }],
          patches: disableDefaults,
          logger: recordingLogger(),
        }),
      ),
    )
    expect(error.plugin).toBe('n')
    expect(PluginConfigError.is(error.cause)).toBe(true)
    const cause = error.cause as PluginConfigError
    expect(cause.code).toBe('PLUGIN_CONFIG_INVALID')
    expect(cause.plugin).toBe('n')
    expect(cause.issues).toHaveLength(1)
    expect(cause.issues[0]?.path).toEqual(['size'])
    expect(cause.issues[0]?.message).toMatch(/expected number/)
    expect(cause.message).toMatch(/^config of plugin "n" is invalid: size: /)
    expect(apply).not.toHaveBeenCalled()
    expect(only(recorder.states, 'n')).toEqual(['loading', 'failed'])
  })

  test('the parsed config (defaults, transforms) is what apply receives', async () => {
    const received: unknown[] = []
    const n = definePlugin({
      name: 'n',
      config: z.object({ size: z.number().default(3), label: z.string().transform((value) => value.toUpperCase()) }),
      apply(_ctx, config) {
        received.push(config)
      },
    })
    const harness = await createHarness({
      plugins: [{ plugin: n, config: { label: 'ok' } }],
      logger: recordingLogger(),
    })
    expect(received).toEqual([{ size: 3, label: 'OK' }])
    await harness.close()
  })

  test('an async schema is parsed asynchronously', async () => {
    const received: unknown[] = []
    const n = definePlugin({
      name: 'n',
      config: z.string().refine(async (value) => value.length > 1, { message: 'too short' }),
      apply(_ctx, config) {
        received.push(config)
      },
    })
    const harness = await createHarness({ plugins: [{ plugin: n, config: 'long' }], logger: recordingLogger() })
    expect(received).toEqual(['long'])
    await harness.close()
    const error = asStartError(
      await rejectionOf(createHarness({ plugins: [{ plugin: n, config: 'x' }], logger: recordingLogger() })),
    )
    expect((error.cause as PluginConfigError).issues).toEqual([{ path: [], message: 'too short' }])
  })
})

describe('after apply', () => {
  test('a key listed in provides but never provided fails the start with ServiceMissingError', async () => {
    const liar = definePlugin({ name: 'liar', provides: [A], apply() {} })
    const error = asStartError(await rejectionOf(createHarness({ plugins: [liar], logger: recordingLogger() })))
    expect(error.plugin).toBe('liar')
    expect(ServiceMissingError.is(error.cause)).toBe(true)
    const cause = error.cause as ServiceMissingError
    expect(cause.code).toBe('SERVICE_MISSING')
    expect(cause.key).toBe('test/a')
    expect(cause.requestedBy).toBe('harness/liar')
    expect(cause.owner).toBe('liar')
  })

  test('apply returning something other than nothing or a cleanup fails the start', async () => {
    const odd = definePlugin({ name: 'odd', apply: (() => 42) as unknown as () => void })
    const error = asStartError(await rejectionOf(createHarness({ plugins: [odd], logger: recordingLogger() })))
    expect(InvalidArgumentError.is(error.cause)).toBe(true)
    const cause = error.cause as InvalidArgumentError
    expect(cause.code).toBe('INVALID_ARGUMENT')
    expect(cause.argument).toBe('apply result')
  })

  test('a service provided during apply is visible to later entries and owned by the provider', async () => {
    const seen: string[] = []
    const provider = definePlugin({
      name: 'provider',
      provides: [A],
      async apply(ctx) {
        await Promise.resolve()
        ctx.provide(A, 'late but ready')
      },
    })
    const consumer = definePlugin({
      name: 'consumer',
      inject: [A],
      apply(ctx) {
        seen.push(ctx.get(A))
      },
    })
    const harness = await createHarness({ plugins: [consumer, provider], logger: recordingLogger() })
    expect(seen).toEqual(['late but ready'])
    expect(harness.inspect().services).toContainEqual({ key: 'test/a', owner: 'provider' })
    await harness.close()
  })
})
