import { describe, expect, test, vi } from 'vitest'
import {
  type Context,
  createHarness,
  defineEvents,
  definePlugin,
  defineService,
  describeHarness,
  type Emit,
  EventConflictError,
  HarnessError,
  type HarnessOptions,
  MissingServicesError,
  ServiceMissingError,
  services,
  type Serial,
  UnknownEventError,
} from 'yoke'
import type { PluginStateEvent } from '../../src/kernel/index.js'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { defaultIds, disableDefaults } from '../helpers/no-defaults.js'
import { cloneOptions, deepFreeze, rejectionOf, requireContext, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testEvents } from '../helpers/test-events.js'

const A = defineService<string>('test/a')
const B = defineService<string>('test/b')

describe('createHarness with the default bundle', () => {
  test('deep-frozen options start the eight reserved entries', async () => {
    const logger = recordingLogger()
    const options = Object.freeze({ logger, clock: fakeClock(), ids: fakeIds() })
    const harness = await createHarness(options)
    expect(
      harness.describe().entries.map(({ id, name, source, patchedBy, disabled, startIndex }) => ({
        id,
        name,
        source,
        patchedBy,
        disabled,
        startIndex,
      })),
    ).toEqual(
      defaultIds.map((id, index) => ({
        id,
        name: id,
        source: 'default',
        patchedBy: [],
        disabled: false,
        startIndex: index,
      })),
    )
    expect(
      harness.inspect().plugins.map(({ id, state, startIndex, missing }) => ({ id, state, startIndex, missing })),
    ).toEqual(defaultIds.map((id, index) => ({ id, state: 'active', startIndex: index, missing: [] })))
    expect(harness.ctx.label).toBe('harness')
    expect(harness.ctx.path).toBe('harness')
    expect(harness.ctx.owner).toBe('harness')
    expect(harness.ctx.parent).toBeUndefined()
    await harness.close()
    expect(logger.records).toEqual([])
  })

  test('each entry runs in its own context, child of the root, owned by its id', async () => {
    let captured: Context | undefined
    const probe = definePlugin({
      name: 'probe',
      apply(ctx) {
        captured = ctx
      },
    })
    const harness = await createHarness({ plugins: [probe], patches: disableDefaults, logger: recordingLogger() })
    const ctx = requireContext(captured)
    expect(ctx.label).toBe('probe')
    expect(ctx.path).toBe('harness/probe')
    expect(ctx.owner).toBe('probe')
    expect(ctx.parent).toBe(harness.ctx)
    expect(ctx.state).toBe('active')
    expect(harness.inspect().effects.children.map((node) => node.label)).toEqual([
      'events',
      'service:clock',
      'service:ids',
      'service:logger',
      'service:presets',
      'context:listeners',
      'plugin:probe',
    ])
    await harness.close()
  })
})

describe('a deep-frozen config: deepFreeze({ model: scripted })', () => {
  test('resolves; eight default entries in order, all active; the service members are stable getters', async () => {
    const model = scriptedModel([text('hello')])
    const clock = fakeClock()
    const ids = fakeIds()
    const options: HarnessOptions = deepFreeze(
      { model, clock, ids, logger: recordingLogger() },
      new Set<unknown>([model, clock, ids]),
    )
    const harness = await createHarness(options)
    expect(harness.describe().entries.map(({ id, source }) => ({ id, source }))).toEqual(
      defaultIds.map((id) => ({ id, source: 'default' })),
    )
    expect(harness.inspect().plugins.map(({ state }) => state)).toEqual(defaultIds.map(() => 'active'))
    expect(harness.tools).toBe(harness.tools)
    expect(harness.tools).toBe(harness.ctx.get(services.tools))
    expect(harness.sessions).toBe(harness.sessions)
    expect(harness.agents).toBe(harness.agents)
    expect(harness.systemPrompt).toBe(harness.systemPrompt)
    expect(harness.persistence).toBe(harness.persistence)
    // The frozen options drive a turn: the model is used by reference.
    const agent = await harness.createAgent()
    expect(await agent.run('hi')).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'hello' })
    expect(model.requests).toHaveLength(1)
    await harness.close()
    expect(Object.isFrozen(options)).toBe(true)
    expect(options.model).toBe(model)
  })

  test('a member whose entry a patch disabled throws ServiceMissingError when read', async () => {
    const harness = await createHarness({ patches: disableDefaults, logger: recordingLogger() })
    for (const read of [
      () => harness.tools,
      () => harness.sessions,
      () => harness.agents,
      () => harness.systemPrompt,
      () => harness.persistence,
    ]) {
      const error = thrownBy(read)
      expect(ServiceMissingError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'SERVICE_MISSING' })
    }
    await harness.close()
  })
})

describe('describe()', () => {
  test('harness.describe() deep-equals describeHarness(options)', async () => {
    const metrics = definePlugin({ name: 'metrics', inject: [A], apply() {} })
    const provider = definePlugin({
      name: 'ProviderOfA',
      provides: [A],
      apply(ctx) {
        ctx.provide(A, 'a')
      },
    })
    const options: HarnessOptions = {
      plugins: [metrics, { id: 'provider', plugin: provider, config: { region: 'eu', apiKey: 'sk-1' } }],
      patches: [
        { id: 'retry', disabled: true },
        { id: 'metrics', merge: { level: 2 } },
      ],
      logger: recordingLogger(),
    }
    const expected = describeHarness(options)
    const harness = await createHarness(options)
    expect(harness.describe()).toEqual(expected)
    const metricsEntry = expected.entries.find((entry) => entry.id === 'metrics')
    expect(metricsEntry).toEqual({
      id: 'metrics',
      name: 'metrics',
      source: 'plugins[0]',
      patchedBy: ['patches[1]'],
      disabled: false,
      config: { level: 2 },
      inject: ['test/a'],
      optional: [],
      provides: [],
      startIndex: 8,
    })
    expect(expected.entries.find((entry) => entry.id === 'provider')).toMatchObject({
      name: 'ProviderOfA',
      source: 'plugins[1]',
      config: { region: 'eu', apiKey: '[redacted]' },
      provides: ['test/a'],
      startIndex: 7,
    })
    expect(
      harness
        .inspect()
        .plugins.map((plugin) => plugin.id)
        .slice(-2),
    ).toEqual(['provider', 'metrics'])
    await harness.close()
    expect(harness.describe()).toEqual(expected)
  })

  test('describeHarness throws planning errors synchronously and runs no plugin code', () => {
    const apply = vi.fn()
    const lonely = definePlugin({ name: 'lonely', inject: [B], apply })
    const error = thrownBy(() => describeHarness({ plugins: [lonely] }))
    expect(MissingServicesError.is(error)).toBe(true)
    const typed = error as MissingServicesError
    expect(typed.code).toBe('SERVICES_MISSING')
    expect(typed.missing).toEqual([{ plugin: 'lonely', key: 'test/b' }])
    expect(apply).not.toHaveBeenCalled()
  })
})

describe('event catalogs of the entries', () => {
  test('are registered before any apply, so an earlier entry can listen to a later one’s events', async () => {
    const heard: unknown[] = []
    const listener = definePlugin({
      name: 'listener',
      apply(ctx) {
        ctx.on('test/status', (payload) => {
          heard.push(payload)
        })
      },
    })
    const owner = definePlugin({ name: 'owner', events: [testEvents], apply() {} })
    const harness = await createHarness({ plugins: [listener, owner], logger: recordingLogger() })
    harness.ctx.emit('test/status', 'ready')
    expect(heard).toEqual(['ready'])
    await harness.close()
  })

  test('a mode clash between two entries rejects EventConflictError before any apply', async () => {
    const apply = vi.fn()
    const serialCatalog = defineEvents<{ 'test/e': Serial<unknown, unknown> }>({ 'test/e': 'serial' })
    const emitting = definePlugin({ name: 'emitting', events: [testEvents], apply })
    const serial = definePlugin({ name: 'serial', events: [serialCatalog], apply })
    const logger = recordingLogger()
    const error = await rejectionOf(createHarness({ plugins: [emitting, serial], logger }))
    expect(EventConflictError.is(error)).toBe(true)
    const typed = error as EventConflictError
    expect(typed.code).toBe('EVENT_CONFLICT')
    expect(typed.event).toBe('test/e')
    expect(typed.existing).toBe('emit')
    expect(typed.attempted).toBe('serial')
    expect(apply).not.toHaveBeenCalled()
  })

  test('a disabled entry’s catalog is not registered', async () => {
    const serialCatalog = defineEvents<{ 'test/e': Serial<unknown, unknown> }>({ 'test/e': 'serial' })
    const emitting = definePlugin({ name: 'emitting', events: [testEvents], apply() {} })
    const serial = definePlugin({ name: 'serial', events: [serialCatalog], apply() {} })
    const harness = await createHarness({
      plugins: [emitting, { plugin: serial, disabled: true }],
      logger: recordingLogger(),
    })
    expect(harness.inspect().events).toContainEqual({ name: 'test/e', mode: 'emit', listeners: 0 })
    await harness.close()
  })
})

describe('harness.on', () => {
  test('registers an untagged listener on the root that hears every scope', async () => {
    const scopeKey = {}
    let captured: Context | undefined
    const scoped = definePlugin({
      name: 'scoped',
      events: [testEvents],
      apply(ctx) {
        captured = ctx.child('worker', { scope: scopeKey })
      },
    })
    const harness = await createHarness({ plugins: [scoped], logger: recordingLogger() })
    const heard: unknown[] = []
    harness.on('test/e', (payload) => {
      heard.push(payload)
    })
    const worker = requireContext(captured)
    worker.emit('test/e', 'scoped', { scope: scopeKey })
    worker.emit('test/e', 'unscoped')
    expect(heard).toEqual(['scoped', 'unscoped'])
    const tree = harness.inspect().effects.children
    const listeners = tree.find((node) => node.label === 'context:listeners')
    expect(listeners).toEqual({
      label: 'context:listeners',
      kind: 'context',
      children: [{ label: 'listener:test/e', kind: 'listener', children: [] }],
    })
    await harness.close()
  })

  test('harness.on listeners outlive every plugin at close and hear the shutdown', async () => {
    const plugin = definePlugin({ name: 'p', apply() {} })
    const harness = await createHarness({ plugins: [plugin], logger: recordingLogger() })
    const states: string[] = []
    harness.on('kernel/plugin-state', ({ id, state }) => {
      if (id === 'p' || id === 'session') states.push(`${id}:${state}`)
    })
    const disposed: string[] = []
    harness.on('session/disposed', ({ session }) => {
      disposed.push(session.id)
    })
    harness.ctx.sessions.create({ id: 'kept' })
    await harness.close()
    expect(states).toEqual(['p:disposing', 'p:disposed', 'session:disposing', 'session:disposed'])
    expect(disposed).toEqual(['kept'])
  })

  test('an undefined event throws UnknownEventError', async () => {
    const harness = await createHarness({ logger: recordingLogger() })
    const error = thrownBy(() => harness.on('test/e', () => {}))
    expect(UnknownEventError.is(error)).toBe(true)
    expect((error as UnknownEventError).code).toBe('UNKNOWN_EVENT')
    expect((error as UnknownEventError).event).toBe('test/e')
    await harness.close()
  })
})

describe('options are read, never mutated', () => {
  test('deep-frozen options work and stay deep-equal to a saved copy', async () => {
    const config = { nested: { size: 1 }, list: [1, 2] }
    const received: unknown[] = []
    const keeper = definePlugin<unknown>({
      name: 'keeper',
      apply(_ctx, given) {
        received.push(given)
      },
    })
    class Patched {
      apply(): void {}
    }
    const logger = recordingLogger()
    const options: HarnessOptions = deepFreeze(
      {
        plugins: [{ plugin: keeper, config }],
        patches: [
          { id: 'patched', plugin: Patched, before: 'keeper' },
          { id: 'patched', merge: { level: { deep: true } } },
          { id: 'retry', disabled: true },
        ],
        logger,
        maxParallelToolCalls: 3,
      },
      new Set([logger]),
    )
    const saved = cloneOptions(options)
    const harness = await createHarness(options)
    expect(received).toHaveLength(1)
    expect(received[0]).toBe(config)
    expect(
      harness
        .describe()
        .entries.map((entry) => entry.id)
        .slice(-2),
    ).toEqual(['patched', 'keeper'])
    await harness.close()
    expect(options).toStrictEqual(saved)
    expect(Object.isFrozen(config.nested)).toBe(true)
  })
})

describe('two harnesses in one process share nothing', () => {
  test('services, listeners, catalogs, scope links, ids and paths are per harness', async () => {
    const values: string[] = []
    const provider = definePlugin({
      name: 'provider',
      provides: [A],
      events: [testEvents],
      apply(ctx) {
        const id = ctx.get(services.ids)('session')
        values.push(id)
        ctx.provide(A, id)
      },
    })
    const h1 = await createHarness({ plugins: [provider], ids: fakeIds(), logger: recordingLogger() })
    const h2 = await createHarness({ plugins: [provider], ids: fakeIds(), logger: recordingLogger() })
    expect(values).toEqual(['s1', 's1'])
    expect(h1.ctx.get(A)).toBe('s1')
    expect(h2.ctx.get(A)).toBe('s1')

    h1.ctx.provide(B, 'one')
    h2.ctx.provide(B, 'two')
    expect(h1.ctx.get(B)).toBe('one')
    expect(h2.ctx.get(B)).toBe('two')

    const heard: string[] = []
    h1.on('test/e', (payload) => {
      heard.push(`h1:${String(payload)}`)
    })
    h2.on('test/e', (payload) => {
      heard.push(`h2:${String(payload)}`)
    })
    h2.ctx.emit('test/e', 'x')
    expect(heard).toEqual(['h2:x'])

    const key = {}
    const parent = {}
    h1.ctx.scopes.bindParent(key, parent)
    expect(h1.ctx.scopes.chain(key)).toEqual([key, parent])
    expect(h2.ctx.scopes.chain(key)).toEqual([key])
    const other = {}
    h2.ctx.scopes.bindParent(key, other)
    expect(h2.ctx.scopes.chain(key)).toEqual([key, other])

    expect(h1.ctx.child('worker').path).toBe('harness/worker')
    expect(h1.ctx.child('worker').path).toBe('harness/worker#2')
    expect(h2.ctx.child('worker').path).toBe('harness/worker')

    const child = definePlugin({ name: 'child', apply() {} })
    expect((await h1.ctx.plugin(child)).id).toBe('harness/child')
    expect((await h2.ctx.plugin(child)).id).toBe('harness/child')

    await h1.close()
    expect(h1.ctx.state).toBe('disposed')
    expect(h2.ctx.state).toBe('active')
    h2.ctx.emit('test/e', 'after')
    expect(heard).toEqual(['h2:x', 'h2:after'])
    expect(h2.ctx.get(A)).toBe('s1')
    expect((await h2.ctx.plugin(child)).id).toBe('harness/child#2')
    await h2.close()
  })

  test('an event catalog registered in one harness is unknown in the other', async () => {
    const catalog = defineEvents<{ 'test/other': Emit<unknown> }>({ 'test/other': 'emit' })
    const owner = definePlugin({ name: 'owner', events: [catalog], apply() {} })
    const h1 = await createHarness({ plugins: [owner], logger: recordingLogger() })
    const h2 = await createHarness({ logger: recordingLogger() })
    expect(h1.on('test/other', () => {}).label).toBe('listener:test/other')
    const error = thrownBy(() => h2.on('test/other', () => {}))
    expect(UnknownEventError.is(error)).toBe(true)
    expect(HarnessError.is(error)).toBe(true)
    expect((error as UnknownEventError).event).toBe('test/other')
    await h1.close()
    await h2.close()
  })

  test('plugin state events of one harness never reach the other', async () => {
    const h2 = await createHarness({ logger: recordingLogger() })
    const states: PluginStateEvent[] = []
    h2.on('kernel/plugin-state', (event) => {
      states.push(event)
    })
    const h1 = await createHarness({
      plugins: [definePlugin({ name: 'quiet', apply() {} })],
      logger: recordingLogger(),
    })
    await h1.close()
    expect(states).toEqual([])
    await h2.close()
  })
})
