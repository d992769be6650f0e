import { describe, expect, test, vi } from 'vitest'
import { z } from 'zod'
import {
  type Context,
  ContextDisposedError,
  createHarness,
  definePlugin,
  defineService,
  type Harness,
  HarnessError,
  MissingServicesError,
  PluginConfigError,
  PluginStartError,
  UnknownEventError,
} from 'yoke'
import { disableDefaults } from '../helpers/no-defaults.js'
import { nodeOf, rejectionOf, requireContext } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testRoot } from '../helpers/root.js'
import { testEvents } from '../helpers/test-events.js'

const A = defineService<string>('test/a')
const B = defineService<string>('test/b')

/** A harness with one entry, `host`, whose context the test drives. */
async function hostHarness(): Promise<{ harness: Harness; host: Context; states: string[] }> {
  let captured: Context | undefined
  const host = definePlugin({
    name: 'host',
    apply(ctx) {
      captured = ctx
    },
  })
  const harness = await createHarness({ plugins: [host], patches: disableDefaults, logger: recordingLogger() })
  const states: string[] = []
  harness.on('kernel/plugin-state', (event) => {
    states.push(`${event.id}:${event.state}`)
  })
  return { harness, host: requireContext(captured), states }
}

describe('ctx.plugin', () => {
  test('missing keys reject at once; once provided the child starts inside its host and stops with it', async () => {
    const { harness, host, states } = await hostHarness()
    const childContexts: Context[] = []
    const child = definePlugin({
      name: 'child',
      inject: [B],
      apply(ctx, config) {
        childContexts.push(ctx)
        expect(config).toBeUndefined()
        expect(ctx.get(B)).toBe('b')
      },
    })

    const missing = await rejectionOf(host.plugin(child))
    expect(MissingServicesError.is(missing)).toBe(true)
    expect(HarnessError.is(missing)).toBe(true)
    const typed = missing as MissingServicesError
    expect(typed.code).toBe('SERVICES_MISSING')
    expect(typed.missing).toEqual([{ plugin: 'host/child', key: 'test/b' }])
    expect(childContexts).toEqual([])
    expect(states).toEqual([])
    expect(harness.inspect().plugins.map((plugin) => plugin.id)).toEqual(['host'])

    host.provide(B, 'b')
    const handle = await host.plugin(child)
    expect(handle.id).toBe('host/child')
    expect(handle.state).toBe('active')
    expect(Object.isFrozen(handle)).toBe(true)
    expect(childContexts).toHaveLength(1)
    const childContext = childContexts[0]!
    expect(childContext.path).toBe('harness/host/child')
    expect(childContext.owner).toBe('host/child')
    expect(childContext.parent).toBe(host)
    expect(states).toEqual(['host/child:loading', 'host/child:active'])

    const inspection = harness.inspect()
    expect(inspection.plugins.at(-1)).toEqual({
      id: 'host/child',
      name: 'child',
      state: 'active',
      startIndex: null,
      provides: [],
      missing: [],
    })
    expect(nodeOf(inspection.effects, 'plugin:host').children.map((node) => [node.label, node.kind])).toEqual([
      ['service:test/b', 'service'],
      ['plugin:host/child', 'plugin'],
    ])

    await host.dispose()
    expect(handle.state).toBe('disposed')
    expect(childContext.state).toBe('disposed')
    expect(states).toEqual([
      'host/child:loading',
      'host/child:active',
      'host:disposing',
      'host/child:disposing',
      'host/child:disposed',
      'host:disposed',
    ])
    await harness.close()
  })

  test('required keys are checked in the caller’s realm', async () => {
    const { harness, host } = await hostHarness()
    host.provide(B, 'outside')
    const isolated = host.child('iso', { isolate: [B] })
    const child = definePlugin({ name: 'child', inject: [B], apply() {} })
    const error = await rejectionOf(isolated.plugin(child))
    expect(MissingServicesError.is(error)).toBe(true)
    expect((error as MissingServicesError).missing).toEqual([{ plugin: 'host/child', key: 'test/b' }])
    isolated.provide(B, 'inside')
    const handle = await isolated.plugin(child)
    expect(handle.state).toBe('active')
    await harness.close()
  })

  test('a failing start rejects PluginStartError and leaves nothing registered', async () => {
    const { harness, host, states } = await hostHarness()
    const boom = new Error('boom')
    const cleaned: string[] = []
    const failing = definePlugin({
      name: 'failing',
      events: [testEvents],
      async apply(ctx) {
        ctx.provide(A, 'a')
        ctx.on('test/e', () => {})
        ctx.effect(() => () => {
          cleaned.push('effect')
        })
        await Promise.resolve()
        throw boom
      },
    })
    const error = await rejectionOf(host.plugin(failing))
    expect(PluginStartError.is(error)).toBe(true)
    const typed = error as PluginStartError
    expect(typed.code).toBe('PLUGIN_START_FAILED')
    expect(typed.plugin).toBe('host/failing')
    expect(typed.pluginName).toBe('failing')
    expect(typed.cause).toBe(boom)
    expect(typed.rollbackErrors).toEqual([])
    expect(cleaned).toEqual(['effect'])
    expect(states).toEqual(['host/failing:loading', 'host/failing:failed'])

    const inspection = harness.inspect()
    expect(inspection.plugins.map((plugin) => plugin.id)).toEqual(['host'])
    expect(inspection.services.map((service) => service.key)).toEqual(['clock', 'ids', 'logger', 'presets'])
    expect(inspection.events.map((event) => event.name)).not.toContain('test/e')
    expect(nodeOf(inspection.effects, 'plugin:host').children).toEqual([])

    const retry = definePlugin({ name: 'failing', apply() {} })
    expect((await host.plugin(retry)).id).toBe('host/failing')
    await harness.close()
  })

  test('a config is parsed by the plugin’s schema; an invalid one fails with a PluginConfigError cause', async () => {
    const { harness, host } = await hostHarness()
    const received: unknown[] = []
    const sized = definePlugin({
      name: 'sized',
      config: z.object({ size: z.number() }),
      apply(_ctx, config) {
        received.push(config)
      },
    })
    const error = await rejectionOf(host.plugin(sized, { size: 'big' }))
    expect(PluginStartError.is(error)).toBe(true)
    const cause = (error as PluginStartError).cause
    expect(PluginConfigError.is(cause)).toBe(true)
    expect((cause as PluginConfigError).code).toBe('PLUGIN_CONFIG_INVALID')
    expect((cause as PluginConfigError).plugin).toBe('host/sized')
    expect((cause as PluginConfigError).issues[0]?.path).toEqual(['size'])
    expect(received).toEqual([])
    await host.plugin(sized, { size: 2 })
    expect(received).toEqual([{ size: 2 }])
    await harness.close()
  })

  test('repeats get #n ids; handle.dispose() stops one and removes it from inspect()', async () => {
    const { harness, host, states } = await hostHarness()
    const apply = vi.fn()
    const worker = definePlugin({ name: 'Worker', apply })
    const first = await host.plugin(worker)
    const second = await host.plugin(worker)
    expect([first.id, second.id]).toEqual(['host/worker', 'host/worker#2'])
    expect(apply).toHaveBeenCalledTimes(2)
    await first.dispose()
    await first.dispose()
    expect(first.state).toBe('disposed')
    expect(second.state).toBe('active')
    expect(harness.inspect().plugins.map((plugin) => plugin.id)).toEqual(['host', 'host/worker#2'])
    expect(states.filter((state) => state.startsWith('host/worker:'))).toEqual([
      'host/worker:loading',
      'host/worker:active',
      'host/worker:disposing',
      'host/worker:disposed',
    ])
    await harness.close()
    expect(second.state).toBe('disposed')
  })

  test('a runtime plugin registers its own event catalogs on its context', async () => {
    const { harness, host } = await hostHarness()
    const heard: unknown[] = []
    const owner = definePlugin({
      name: 'owner',
      events: [testEvents],
      apply(ctx) {
        ctx.on('test/e', (payload) => {
          heard.push(payload)
        })
      },
    })
    const handle = await host.plugin(owner)
    harness.ctx.emit('test/e', 1)
    expect(heard).toEqual([1])
    expect(
      nodeOf(nodeOf(harness.inspect().effects, 'plugin:host'), 'plugin:host/owner').children.map((node) => node.label),
    ).toEqual(['events', 'listener:test/e'])
    await handle.dispose()
    let unknown: unknown
    try {
      harness.ctx.emit('test/e', 2)
    } catch (error) {
      unknown = error
    }
    expect(UnknownEventError.is(unknown)).toBe(true)
    expect((unknown as UnknownEventError).event).toBe('test/e')
    expect(heard).toEqual([1])
    await harness.close()
  })

  test('on a bare root the id is harness/<name>, and a disposed context rejects ContextDisposedError', async () => {
    const { root } = testRoot()
    const bare = definePlugin({ name: 'bare', apply() {} })
    const handle = await root.plugin(bare)
    expect(handle.id).toBe('harness/bare')
    const gone = root.child('gone')
    await gone.dispose()
    const error = await rejectionOf(gone.plugin(bare))
    expect(ContextDisposedError.is(error)).toBe(true)
    const typed = error as ContextDisposedError
    expect(typed.code).toBe('CONTEXT_DISPOSED')
    expect(typed.context).toBe('harness/gone')
    expect(typed.operation).toBe('plugin')
    await root.dispose()
    expect(handle.state).toBe('disposed')
  })
})
