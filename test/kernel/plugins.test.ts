import { describe, expect, test, vi } from 'vitest'
import {
  bindOwner,
  type CompactionEngine,
  type Context,
  createHarness,
  definePlugin,
  defineService,
  describeHarness,
  type Disposer,
  HarnessError,
  InvalidPluginError,
  type PluginDefinition,
  type PluginSpec,
  ServiceMissingError,
  services,
  type ToolRegistry,
} from 'yoke'
import { createRootContext, type PluginState } from '../../src/kernel/index.js'
import { disableDefaults } from '../helpers/no-defaults.js'
import { nodeOf, requireContext, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testEvents } from '../helpers/test-events.js'

const A = defineService<string>('test/a')

/** A plugin that records every `kernel/plugin-state` on the root, so it hears the whole lifecycle. */
function stateRecorder(): { plugin: PluginDefinition; states: string[] } {
  const states: string[] = []
  const plugin = definePlugin({
    name: 'recorder',
    apply(ctx) {
      const root = requireContext(ctx.parent)
      root.on('kernel/plugin-state', (event) => {
        states.push(`${event.id}:${event.previous}>${event.state}`)
      })
    },
  })
  return { plugin, states }
}

function invalidPlugin(spec: unknown): InvalidPluginError {
  const error = thrownBy(() => definePlugin(spec as PluginSpec))
  expect(InvalidPluginError.is(error)).toBe(true)
  expect(HarnessError.is(error)).toBe(true)
  const typed = error as InvalidPluginError
  expect(typed.code).toBe('INVALID_PLUGIN')
  return typed
}

describe('definePlugin', () => {
  test('validates, normalizes key lists to names and freezes the definition', () => {
    const apply = (): void => {}
    const definition = definePlugin({
      name: 'ledger',
      inject: [A, 'test/b'],
      optional: ['clock'],
      provides: [defineService<number>('test/c')],
      events: [testEvents],
      apply,
    })
    expect(definition.name).toBe('ledger')
    expect(definition.inject).toEqual(['test/a', 'test/b'])
    expect(definition.optional).toEqual(['clock'])
    expect(definition.provides).toEqual(['test/c'])
    expect(definition.events).toEqual([testEvents])
    expect(definition.config).toBeUndefined()
    expect(definition.apply).toBe(apply)
    expect(Object.isFrozen(definition)).toBe(true)
    expect(Object.isFrozen(definition.inject)).toBe(true)
  })

  test('an empty name is refused with field "name"', () => {
    const error = invalidPlugin({ name: '', apply() {} })
    expect(error.field).toBe('name')
    expect(error.plugin).toBe('')
    expect(error.message).toBe('a plugin has an invalid name: must be a non-empty string')
  })

  test.each([
    ['a non-string name', { name: 7, apply() {} }, '', 'name'],
    ['a missing apply', { name: 'p' }, 'p', 'apply'],
    ['inject that is not an array', { name: 'p', inject: 'test/a', apply() {} }, 'p', 'inject'],
    ['a malformed key name', { name: 'p', inject: ['Not A Key'], apply() {} }, 'p', 'inject'],
    ['a provides entry that is not a key', { name: 'p', provides: [42], apply() {} }, 'p', 'provides'],
    ['an optional entry that is malformed', { name: 'p', optional: ['/x'], apply() {} }, 'p', 'optional'],
    ['events that are not catalogs', { name: 'p', events: [{ 'test/e': 'emit' }], apply() {} }, 'p', 'events'],
    ['a config that is not a zod schema', { name: 'p', config: { parse() {} }, apply() {} }, 'p', 'config'],
  ])('%s is refused', (_label, spec, plugin, field) => {
    const error = invalidPlugin(spec)
    expect(error.plugin).toBe(plugin)
    expect(error.field).toBe(field)
  })

  test('a nameless plugin class is refused when composed', () => {
    const nameless = (() =>
      class {
        apply(): void {}
      })()
    expect(nameless.name).toBe('')
    const error = thrownBy(() => describeHarness({ plugins: [nameless] }))
    expect(InvalidPluginError.is(error)).toBe(true)
    expect((error as InvalidPluginError).code).toBe('INVALID_PLUGIN')
    expect((error as InvalidPluginError).field).toBe('name')
  })
})

describe('class form', () => {
  test('the constructor runs once with (ctx, undefined), then apply; the entry id is the kebab-cased class name', async () => {
    const constructed: [Context, unknown][] = []
    const applied: Context[] = []
    class ExamplePlugin {
      static inject = ['test/a']
      constructor(ctx: Context, config: unknown) {
        constructed.push([ctx, config])
      }
      apply(ctx: Context): void {
        applied.push(ctx)
        expect(ctx.get(A)).toBe('provided')
      }
    }
    const provider = definePlugin({
      name: 'provider',
      provides: [A],
      apply(ctx) {
        ctx.provide(A, 'provided')
      },
    })
    const harness = await createHarness({ plugins: [ExamplePlugin, provider], logger: recordingLogger() })
    expect(constructed).toHaveLength(1)
    const [ctx, config] = constructed[0]!
    expect(config).toBeUndefined()
    expect(ctx.path).toBe('harness/example-plugin')
    expect(ctx.owner).toBe('example-plugin')
    expect(applied).toEqual([ctx])
    const entry = harness.describe().entries.find((item) => item.name === 'ExamplePlugin')
    expect(entry).toMatchObject({ id: 'example-plugin', inject: ['test/a'], startIndex: 9 })
    expect(harness.inspect().plugins.find((plugin) => plugin.id === 'example-plugin')).toEqual({
      id: 'example-plugin',
      name: 'ExamplePlugin',
      state: 'active',
      startIndex: 9,
      provides: [],
      missing: [],
    })
    await harness.close()
  })

  test('static pluginName overrides the class name; statics name the keys', () => {
    class Whatever {
      static pluginName = 'BillingLedger'
      static provides = [A]
      static optional = ['test/b']
      apply(): void {}
    }
    const { entries } = describeHarness({ plugins: [Whatever] })
    expect(entries.at(-1)).toEqual({
      id: 'billing-ledger',
      name: 'BillingLedger',
      source: 'plugins[0]',
      patchedBy: [],
      disabled: false,
      inject: [],
      optional: ['test/b'],
      provides: ['test/a'],
      startIndex: 8,
    })
  })
})

describe('seed pattern', () => {
  test('apply returning ctx.effect(() => ctx.on(…)) is listed under its plugin and removed once at close', async () => {
    const K = defineService<{ readonly statuses: unknown[] }>('test/k')
    const received: unknown[] = []
    const onStatus = (payload: unknown): void => {
      received.push(payload)
    }
    let returned: Disposer | undefined
    class ExamplePlugin {
      static events = [testEvents]
      static provides = [K]
      apply(ctx: Context): Disposer {
        ctx.provide(K, { statuses: received })
        returned = ctx.effect(() => ctx.on('test/status', onStatus))
        return returned
      }
    }
    const logger = recordingLogger()
    const harness = await createHarness({ plugins: [ExamplePlugin], logger })
    const pluginNode = nodeOf(harness.inspect().effects, 'plugin:example-plugin')
    expect(pluginNode.kind).toBe('plugin')
    expect(pluginNode.children.map((node) => node.label)).toEqual([
      'service:test/k',
      'listener:test/status',
      'effect',
      'apply',
    ])
    expect(harness.inspect().events).toContainEqual({ name: 'test/status', mode: 'emit', listeners: 1 })
    harness.ctx.emit('test/status', 'running')
    expect(received).toEqual(['running'])
    expect(harness.ctx.get(K).statuses).toBe(received)

    await expect(harness.close()).resolves.toBeUndefined()
    expect(returned?.disposed).toBe(true)
    expect(logger.at('error')).toEqual([])
    expect(harness.inspect().events).toEqual([])
    expect(received).toEqual(['running'])
  })
})

describe('seed pattern teardown', () => {
  test('the listener is gone when the plugin context is disposed; the doubled disposer reports no error', async () => {
    const onStatus = vi.fn()
    class ExamplePlugin {
      static events = [testEvents]
      apply(ctx: Context): Disposer {
        return ctx.effect(() => ctx.on('test/status', onStatus))
      }
    }
    const logger = recordingLogger()
    const harness = await createHarness({ plugins: [ExamplePlugin], logger })
    const kernelErrors: unknown[] = []
    harness.on('kernel/error', (event) => {
      kernelErrors.push(event)
    })
    const countAtDisposed: (number | undefined)[] = []
    harness.on('kernel/plugin-state', (event) => {
      if (event.id === 'example-plugin' && event.state === 'disposed') {
        countAtDisposed.push(harness.inspect().events.find((item) => item.name === 'test/status')?.listeners)
        harness.ctx.emit('test/status', 'after-dispose')
      }
    })
    harness.ctx.emit('test/status', 'running')
    await expect(harness.close()).resolves.toBeUndefined()
    expect(countAtDisposed).toEqual([0])
    expect(onStatus.mock.calls).toEqual([['running']])
    expect(kernelErrors).toEqual([])
    expect(logger.at('error')).toEqual([])
  })
})

describe('lifecycle events', () => {
  test('kernel/plugin-state goes loading, active, disposing, disposed; the apply cleanup runs first', async () => {
    const recorder = stateRecorder()
    const order: string[] = []
    const target = definePlugin({
      name: 'target',
      apply(ctx) {
        ctx.effect(
          () => () => {
            order.push('first-effect')
          },
          'first-effect',
        )
        ctx.effect(
          () => () => {
            order.push('second-effect')
          },
          'second-effect',
        )
        return () => {
          order.push('apply')
        }
      },
    })
    const harness = await createHarness({
      plugins: [recorder.plugin, target],
      patches: disableDefaults,
      logger: recordingLogger(),
    })
    expect(nodeOf(harness.inspect().effects, 'plugin:target').children.map((node) => node.label)).toEqual([
      'first-effect',
      'second-effect',
      'apply',
    ])
    expect(recorder.states).toEqual(['recorder:loading>active', 'target:pending>loading', 'target:loading>active'])
    await harness.close()
    expect(order).toEqual(['apply', 'second-effect', 'first-effect'])
    expect(recorder.states.filter((state) => state.startsWith('target:'))).toEqual([
      'target:pending>loading',
      'target:loading>active',
      'target:active>disposing',
      'target:disposing>disposed',
    ])
  })

  test('the payload names the entry id and the plugin name', async () => {
    const seen: { id: string; name: string; state: PluginState }[] = []
    const recorder = definePlugin({
      name: 'recorder',
      apply(ctx) {
        requireContext(ctx.parent).on('kernel/plugin-state', (event) => {
          seen.push({ id: event.id, name: event.name, state: event.state })
        })
      },
    })
    const named = definePlugin({ name: 'NamedPlugin', apply() {} })
    const harness = await createHarness({
      plugins: [recorder, { id: 'custom-id', plugin: named }],
      patches: disableDefaults,
      logger: recordingLogger(),
    })
    expect(seen).toEqual([
      { id: 'recorder', name: 'recorder', state: 'active' },
      { id: 'custom-id', name: 'NamedPlugin', state: 'loading' },
      { id: 'custom-id', name: 'NamedPlugin', state: 'active' },
    ])
    await harness.close()
  })
})

interface Registry {
  readonly items: Set<string>
  register(item: string): Disposer
}

/** A registry whose facade registers each item as an effect of the context it is bound to. */
function ownerBoundRegistry(): { service: Registry; owners: Context[] } {
  const items = new Set<string>()
  const owners: Context[] = []
  const service: Registry = {
    items,
    register() {
      throw new Error('use the owner-bound facade')
    },
  }
  Object.defineProperty(service, bindOwner, {
    value: (owner: Context): Registry => {
      owners.push(owner)
      return {
        items,
        register: (item) =>
          owner.effect(() => {
            items.add(item)
            return () => {
              items.delete(item)
            }
          }, `register:${item}`),
      }
    },
  })
  return { service, owners }
}

describe('owner-bound facades', () => {
  test('ctx.get returns one cached facade per context; its registrations are undone with that context', async () => {
    const K = defineService<Registry>('test/registry')
    const registry = ownerBoundRegistry()
    const provider = definePlugin({
      name: 'registry',
      provides: [K],
      apply(ctx) {
        ctx.provide(K, registry.service)
      },
    })
    let captured: Context | undefined
    let facades: Registry[] = []
    const user = definePlugin({
      name: 'p',
      inject: [K],
      apply(ctx) {
        captured = ctx
        facades = [ctx.get(K), ctx.get(K)]
        facades[0]?.register('x')
      },
    })
    const harness = await createHarness({
      plugins: [provider, user],
      patches: disableDefaults,
      logger: recordingLogger(),
    })
    const ctx = requireContext(captured)
    expect(facades[0]).toBe(facades[1])
    expect(facades[0]).not.toBe(registry.service)
    expect(ctx.getOptional(K)).toBe(facades[0])
    expect(registry.owners).toEqual([ctx])
    expect([...registry.service.items]).toEqual(['x'])
    expect(nodeOf(harness.inspect().effects, 'plugin:p').children.map((node) => node.label)).toEqual(['register:x'])

    const rootFacade = harness.ctx.get(K)
    expect(rootFacade).not.toBe(facades[0])
    expect(registry.owners).toEqual([ctx, harness.ctx])

    await ctx.dispose()
    expect([...registry.service.items]).toEqual([])
    expect(harness.inspect().plugins.find((plugin) => plugin.id === 'p')?.state).toBe('disposed')
    expect(harness.inspect().services).toContainEqual({ key: 'test/registry', owner: 'registry' })
    await harness.close()
  })

  test('ctx.tools is ctx.get(services.tools) inside a plugin', async () => {
    const registry = ownerBoundRegistry()
    const tools = definePlugin({
      name: 'tool-registry',
      provides: [services.tools],
      apply(ctx) {
        ctx.provide(services.tools, registry.service as unknown as ToolRegistry)
      },
    })
    const reads: unknown[] = []
    const reader = definePlugin({
      name: 'p',
      inject: [services.tools],
      apply(ctx) {
        reads.push(ctx.tools, ctx.get(services.tools), ctx.tools)
      },
    })
    const harness = await createHarness({
      plugins: [tools, reader],
      patches: disableDefaults,
      logger: recordingLogger(),
    })
    expect(reads).toHaveLength(3)
    expect(reads[0]).toBe(reads[1])
    expect(reads[2]).toBe(reads[0])
    expect(reads[0]).not.toBe(registry.service)
    expect(harness.ctx.tools).toBe(harness.ctx.get(services.tools))
    expect(harness.ctx.tools).not.toBe(reads[0])
    await harness.close()
  })

  test('a plain (not bindable) value is returned as is', () => {
    const root = createRootContext({ logger: recordingLogger() })
    // Any plain object stands in for the engine here: the kernel never calls into it.
    const value = { plain: true } as unknown as CompactionEngine
    root.provide(services.compaction, value)
    expect(root.compaction).toBe(value)
    expect(root.child('c').get(services.compaction)).toBe(value)
  })
})

describe('context getters on a bare root', () => {
  test.each([
    ['sessions', 'sessions', (root: Context) => root.sessions],
    ['persistence', 'persistence', (root: Context) => root.persistence],
    ['models', 'models', (root: Context) => root.models],
    ['tools', 'tools', (root: Context) => root.tools],
    ['systemPrompt', 'system-prompt', (root: Context) => root.systemPrompt],
    ['agents', 'agents', (root: Context) => root.agents],
    ['compaction', 'compaction', (root: Context) => root.compaction],
  ])('root.%s throws SERVICE_MISSING for key %s', (_getter, key, read) => {
    const root = createRootContext({ logger: recordingLogger() })
    const error = thrownBy(() => read(root))
    expect(ServiceMissingError.is(error)).toBe(true)
    const typed = error as ServiceMissingError
    expect(typed.code).toBe('SERVICE_MISSING')
    expect(typed.key).toBe(key)
    expect(typed.requestedBy).toBe('harness')
    expect(typed.owner).toBe('harness')
  })

  test('root.agent is undefined, also under a scope that is not an agent', () => {
    const root = createRootContext({ logger: recordingLogger() })
    expect(root.agent).toBeUndefined()
    expect(root.child('scoped', { scope: {} }).agent).toBeUndefined()
  })

  test('the getters read the value provided later', () => {
    const root = createRootContext({ logger: recordingLogger() })
    const tools = { kind: 'tools' }
    const read = vi.fn(() => root.tools)
    expect(() => read()).toThrow()
    root.provide(services.tools, tools as unknown as ToolRegistry)
    expect(read()).toBe(tools)
  })
})
