import { describe, expect, test } from 'vitest'
import {
  type Context,
  createHarness,
  definePlugin,
  defineService,
  describeHarness,
  type Disposer,
  type HarnessOptions,
  PluginConfigError,
  PluginStartError,
} from 'yoke'
import { type EffectNode, inspectContext, summarizeError } from '../../src/kernel/index.js'
import { defaultIds, disableDefaults } from '../helpers/no-defaults.js'
import { nodeOf, requireContext } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testRoot } from '../helpers/root.js'
import { testEvents } from '../helpers/test-events.js'

const A = defineService<string>('test/a')

function labels(node: EffectNode): string[] {
  return node.children.map((child) => child.label)
}

function describedConfig(config: unknown): unknown {
  const plugin = definePlugin({ name: 'configured', apply() {} })
  return describeHarness({ plugins: [{ plugin, config }] }).entries.at(-1)?.config
}

describe('JSON-safe description', () => {
  test('functions, instances, dates, bigints and secrets are rendered as strings', async () => {
    class Client {}
    const config = { apiKey: 'sk-1', onEvent() {}, client: new Client(), when: new Date(0), n: 10n }
    const plugin = definePlugin({ name: 'configured', apply() {} })
    const options: HarnessOptions = { plugins: [{ plugin, config }], logger: recordingLogger() }
    const expected = {
      apiKey: '[redacted]',
      onEvent: '[function onEvent]',
      client: '[instance Client]',
      when: '1970-01-01T00:00:00.000Z',
      n: '10n',
    }
    const description = describeHarness(options)
    expect(description.entries.at(-1)?.config).toStrictEqual(expected)
    const harness = await createHarness(options)
    expect(harness.describe()).toEqual(describeHarness(options))
    expect(harness.describe().entries.at(-1)?.config).toStrictEqual(expected)
    expect(JSON.parse(JSON.stringify(harness.describe()))).toEqual(harness.describe())
    await harness.close()
    expect(config.apiKey).toBe('sk-1')
  })

  test('symbols, cycles and non-finite numbers are rendered; -0 becomes 0', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' }
    cyclic['self'] = cyclic
    const config = {
      tag: Symbol('mark'),
      cyclic,
      infinite: Number.POSITIVE_INFINITY,
      negative: Number.NEGATIVE_INFINITY,
      missing: Number.NaN,
      zero: -0,
      arrow: () => {},
      list: [1, undefined, () => {}],
      badDate: new Date(Number.NaN),
    }
    const described = describedConfig(config)
    expect(described).toStrictEqual({
      tag: '[symbol mark]',
      cyclic: { name: 'loop', self: '[circular]' },
      infinite: '[number Infinity]',
      negative: '[number -Infinity]',
      missing: '[number NaN]',
      zero: 0,
      arrow: '[function arrow]',
      list: [1, null, '[function anonymous]'],
      badDate: '[invalid date]',
    })
    expect(JSON.parse(JSON.stringify(described))).toStrictEqual(described)
  })

  test('a shared (not circular) object is rendered each time it appears', () => {
    const shared = { value: 1 }
    expect(describedConfig({ left: shared, right: shared })).toStrictEqual({ left: { value: 1 }, right: { value: 1 } })
  })

  test.each([
    ['apiKey'],
    ['API_KEY'],
    ['clientSecret'],
    ['accessToken'],
    ['password'],
    ['Authorization'],
    ['credentials'],
  ])('a value under %s is redacted, at any depth', (key) => {
    expect(describedConfig({ nested: { [key]: { deep: 'value' } }, keyboard: 'kept' })).toStrictEqual({
      nested: { [key]: '[redacted]' },
      keyboard: 'kept',
    })
  })

  test('an entry without a config has none in its description; plain values are kept', () => {
    const { entries } = describeHarness({ plugins: [definePlugin({ name: 'bare', apply() {} })] })
    expect(entries.at(-1)).not.toHaveProperty('config')
    expect(describedConfig({ text: 'x', flag: false, count: 3, none: null, gone: undefined })).toStrictEqual({
      text: 'x',
      flag: false,
      count: 3,
      none: null,
    })
    expect(describedConfig('just a string')).toBe('just a string')
  })
})

describe('harness.inspect()', () => {
  const p = definePlugin({
    name: 'p',
    provides: [A],
    events: [testEvents],
    apply(ctx) {
      ctx.provide(A, 'a')
      ctx.on('test/e', () => {})
    },
  })

  test('lists plugins, services with owners, events with listener counts and the effect tree', async () => {
    const harness = await createHarness({ plugins: [p], logger: recordingLogger() })
    const inspection = harness.inspect()
    expect(inspection.plugins.map((plugin) => [plugin.id, plugin.state, plugin.startIndex])).toEqual([
      ...defaultIds.map((id, index) => [id, 'active', index]),
      ['p', 'active', 8],
    ])
    expect(inspection.plugins.at(-1)).toEqual({
      id: 'p',
      name: 'p',
      state: 'active',
      startIndex: 8,
      provides: ['test/a'],
      missing: [],
    })
    expect(inspection.services).toContainEqual({ key: 'test/a', owner: 'p' })
    expect(inspection.services).toContainEqual({ key: 'clock', owner: 'harness' })
    expect(inspection.events).toContainEqual({ name: 'test/e', mode: 'emit', listeners: 1 })
    expect(inspection.events).toContainEqual({ name: 'test/p', mode: 'parallel', listeners: 0 })
    expect(inspection.effects.label).toBe('harness')
    expect(inspection.effects.kind).toBe('context')
    expect(labels(inspection.effects).filter((label) => label.startsWith('plugin:'))).toEqual([
      ...defaultIds.map((id) => `plugin:${id}`),
      'plugin:p',
    ])
    expect(nodeOf(inspection.effects, 'plugin:p')).toEqual({
      label: 'plugin:p',
      kind: 'plugin',
      children: [
        { label: 'service:test/a', kind: 'service', children: [] },
        { label: 'listener:test/e', kind: 'listener', children: [] },
      ],
    })
    expect(JSON.parse(JSON.stringify(inspection))).toEqual(inspection)
    await harness.close()
  })

  test('without the defaults, the lists are exactly the host services, the catalogs and p', async () => {
    const harness = await createHarness({ plugins: [p], patches: disableDefaults, logger: recordingLogger() })
    const inspection = harness.inspect()
    expect(inspection.plugins).toEqual([
      { id: 'p', name: 'p', state: 'active', startIndex: 0, provides: ['test/a'], missing: [] },
    ])
    expect(inspection.services).toEqual([
      { key: 'clock', owner: 'harness' },
      { key: 'ids', owner: 'harness' },
      { key: 'logger', owner: 'harness' },
      { key: 'presets', owner: 'harness' },
      { key: 'test/a', owner: 'p' },
    ])
    expect(inspection.events.map((event) => [event.name, event.mode, event.listeners])).toEqual([
      ['kernel/error', 'emit', 0],
      ['kernel/plugin-state', 'emit', 0],
      ['kernel/service', 'emit', 0],
      ['test/e', 'emit', 1],
      ['test/p', 'parallel', 0],
      ['test/s', 'serial', 0],
      ['test/w', 'waterfall', 0],
      ['test/status', 'emit', 0],
      ['test/inner', 'emit', 0],
      ['test/other', 'emit', 0],
    ])
    expect(inspection.effects.children.map((node) => [node.label, node.kind])).toEqual([
      ['events', 'events'],
      ['service:clock', 'service'],
      ['service:ids', 'service'],
      ['service:logger', 'service'],
      ['service:presets', 'service'],
      ['context:listeners', 'context'],
      ['events', 'events'],
      ['plugin:p', 'plugin'],
    ])
    await harness.close()
  })

  test('missing lists required keys not provided right now', async () => {
    let withdraw: Disposer | undefined
    const provider = definePlugin({
      name: 'provider',
      provides: [A],
      apply(ctx) {
        withdraw = ctx.provide(A, 'a')
      },
    })
    const consumer = definePlugin({ name: 'consumer', inject: [A], apply() {} })
    const harness = await createHarness({
      plugins: [provider, consumer],
      patches: disableDefaults,
      logger: recordingLogger(),
    })
    expect(harness.inspect().plugins.map((plugin) => [plugin.id, plugin.missing])).toEqual([
      ['provider', []],
      ['consumer', []],
    ])
    await withdraw?.()
    expect(harness.inspect().plugins.map((plugin) => [plugin.id, plugin.missing])).toEqual([
      ['provider', []],
      ['consumer', ['test/a']],
    ])
    expect(harness.inspect().services.map((service) => service.key)).toEqual(['clock', 'ids', 'logger', 'presets'])
    await harness.close()
  })

  test('labels: child contexts, scope links, unlabelled and labelled effects; disposed effects are absent', async () => {
    let captured: Context | undefined
    let temporary: Disposer | undefined
    const p = definePlugin({
      name: 'p',
      apply(ctx) {
        captured = ctx
        const worker = ctx.child('worker')
        worker.effect(() => {})
        ctx.effect(() => {})
        temporary = ctx.effect(() => () => {}, 'temporary')
        ctx.scopes.bindParent({}, {})
      },
    })
    const harness = await createHarness({ plugins: [p], patches: disableDefaults, logger: recordingLogger() })
    expect(nodeOf(harness.inspect().effects, 'plugin:p').children).toEqual([
      { label: 'context:worker', kind: 'context', children: [{ label: 'effect', kind: 'effect', children: [] }] },
      { label: 'effect', kind: 'effect', children: [] },
      { label: 'temporary', kind: 'effect', children: [] },
      { label: 'scope-link', kind: 'scope-link', children: [] },
    ])
    await temporary?.()
    const ctx = requireContext(captured)
    ctx.child('second')
    expect(labels(nodeOf(harness.inspect().effects, 'plugin:p'))).toEqual([
      'context:worker',
      'effect',
      'scope-link',
      'context:second',
    ])
    await harness.close()
    expect(harness.inspect().effects.children).toEqual([])
  })

  test('inspectContext from any context of the tree sees the whole harness', async () => {
    let captured: Context | undefined
    const p = definePlugin({
      name: 'p',
      apply(ctx) {
        captured = ctx.child('deep').child('deeper')
      },
    })
    const harness = await createHarness({ plugins: [p], logger: recordingLogger() })
    expect(inspectContext(requireContext(captured))).toEqual(harness.inspect())
    await harness.close()
  })

  test('a bare root shows its host services and the kernel catalog', async () => {
    const { root } = testRoot()
    const inspection = inspectContext(root)
    expect(inspection.plugins).toEqual([])
    expect(inspection.services).toEqual([
      { key: 'clock', owner: 'harness' },
      { key: 'ids', owner: 'harness' },
      { key: 'logger', owner: 'harness' },
    ])
    expect(inspection.events.slice(0, 3)).toEqual([
      { name: 'kernel/error', mode: 'emit', listeners: 0 },
      { name: 'kernel/plugin-state', mode: 'emit', listeners: 0 },
      { name: 'kernel/service', mode: 'emit', listeners: 0 },
    ])
    expect(labels(inspection.effects)).toEqual(['events', 'service:clock', 'service:ids', 'service:logger', 'events'])
    await root.dispose()
  })
})

describe('summarizeError (ErrorSummary)', () => {
  test('summarizes name, code, message and the cause chain', () => {
    const cause = new PluginConfigError({ plugin: 'n', issues: [{ path: ['size'], message: 'bad' }] })
    const error = new PluginStartError({
      plugin: 'n',
      pluginName: 'n',
      cause,
      rollbackErrors: [],
      inspection: undefined,
    })
    expect(summarizeError(error)).toEqual({
      name: 'PluginStartError',
      code: 'PLUGIN_START_FAILED',
      message: 'plugin "n" failed to start: config of plugin "n" is invalid: size: bad',
      cause: {
        name: 'PluginConfigError',
        code: 'PLUGIN_CONFIG_INVALID',
        message: 'config of plugin "n" is invalid: size: bad',
      },
    })
  })

  test('summarizes values that are not errors', () => {
    expect(summarizeError('plain')).toEqual({ name: 'Error', code: 'UNKNOWN', message: 'plain' })
    expect(summarizeError(new TypeError('typed'))).toEqual({ name: 'TypeError', code: 'UNKNOWN', message: 'typed' })
  })

  test('stops a cause chain after eight levels', () => {
    let error = new Error('level 0')
    for (let level = 1; level <= 12; level++) error = new Error(`level ${level}`, { cause: error })
    let depth = 0
    for (let summary = summarizeError(error).cause; summary !== undefined; summary = summary.cause) depth++
    expect(depth).toBe(8)
  })
})
