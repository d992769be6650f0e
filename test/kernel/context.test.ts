import { describe, expect, test } from 'vitest'
import {
  ContextDisposedError,
  defineEvents,
  definePlugin,
  defineService,
  InvalidArgumentError,
  InvalidOptionsError,
  ServiceMissingError,
  services,
  type ToolRegistry,
} from 'yoke'
import { Context, createRootContext, type EffectNode, inspectContext } from '../../src/kernel/index.js'
import { fakeClock, fakeIds } from 'yoke/testing'
import { findNode, rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testRoot } from '../helpers/root.js'

const A = defineService<string>('test/a')

function childLabels(ctx: Context): string[] {
  return inspectContext(ctx).effects.children.map((node) => node.label)
}

describe('root context', () => {
  test('a bare root is labelled harness, has no parent, is owned by harness and is active', () => {
    const root = createRootContext({ logger: recordingLogger() })
    expect(root.label).toBe('harness')
    expect(root.path).toBe('harness')
    expect(root.parent).toBeUndefined()
    expect(root.owner).toBe('harness')
    expect(root.state).toBe('active')
    expect(root.scope).toBeUndefined()
    expect(root.signal.aborted).toBe(false)
  })

  test('the root carries the injected host services and the kernel catalog', () => {
    const logger = recordingLogger()
    const clock = fakeClock({ now: 5 })
    const ids = fakeIds()
    const root = createRootContext({ logger, clock, ids })
    expect(root.get(services.clock)).toBe(clock)
    expect(root.get(services.ids)).toBe(ids)
    expect(root.get(services.logger)).toBe(logger)
    expect(root.logger).toBe(logger)
    const inspection = inspectContext(root)
    expect(inspection.services).toEqual([
      { key: 'clock', owner: 'harness' },
      { key: 'ids', owner: 'harness' },
      { key: 'logger', owner: 'harness' },
    ])
    expect(inspection.events).toEqual([
      { name: 'kernel/error', mode: 'emit', listeners: 0 },
      { name: 'kernel/plugin-state', mode: 'emit', listeners: 0 },
      { name: 'kernel/service', mode: 'emit', listeners: 0 },
    ])
    expect(inspection.effects).toEqual({
      label: 'harness',
      kind: 'context',
      children: [
        { label: 'events', kind: 'events', children: [] },
        { label: 'service:clock', kind: 'service', children: [] },
        { label: 'service:ids', kind: 'service', children: [] },
        { label: 'service:logger', kind: 'service', children: [] },
      ],
    })
  })

  test('without options the root still provides a working clock and id source', async () => {
    const root = createRootContext({ logger: recordingLogger() })
    expect(typeof root.get(services.clock).now()).toBe('number')
    const first = root.get(services.ids)('session')
    const second = root.get(services.ids)('session')
    expect(typeof first).toBe('string')
    expect(first).not.toBe(second)
    await root.dispose()
  })

  test('two roots share no state', () => {
    const first = createRootContext({ logger: recordingLogger() })
    const second = createRootContext({ logger: recordingLogger() })
    first.provide(A, 'one')
    expect(second.getOptional(A)).toBeUndefined()
    expect(second.scopes).not.toBe(first.scopes)
  })
})

describe('createRootContext options', () => {
  test.each([
    [null, ''],
    [5, ''],
    [{ clok: fakeClock() }, 'clok'],
    [{ clock: { now: () => 0 } }, 'clock'],
    [{ ids: 'uuid' }, 'ids'],
    [{ logger: console.log }, 'logger'],
  ])('%o → InvalidOptionsError at %j', (options, field) => {
    const error = thrownBy(() => createRootContext(options as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field })
  })
})

describe('child contexts', () => {
  test('a child has its label, a path under its parent, the parent and the parent owner', () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const nested = worker.child('inner')
    expect(worker.label).toBe('worker')
    expect(worker.path).toBe('harness/worker')
    expect(worker.parent).toBe(root)
    expect(worker.owner).toBe('harness')
    expect(worker.state).toBe('active')
    expect(nested.path).toBe('harness/worker/inner')
    expect(nested.parent).toBe(worker)
  })

  test('a child is an effect of its parent labelled context:<label>, holding its own effects', () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    worker.effect(() => {}, 'job')
    expect(findNode(inspectContext(root).effects, 'context:worker')).toEqual({
      label: 'context:worker',
      kind: 'context',
      children: [{ label: 'job', kind: 'effect', children: [] }],
    })
  })

  test('siblings with the same label get #2, #3 appended in path only', () => {
    const { root } = testRoot()
    const first = root.child('agent')
    const second = root.child('agent')
    const third = root.child('agent')
    const other = root.child('other')
    expect([first.path, second.path, third.path, other.path]).toEqual([
      'harness/agent',
      'harness/agent#2',
      'harness/agent#3',
      'harness/other',
    ])
    expect([first.label, second.label, third.label]).toEqual(['agent', 'agent', 'agent'])
    expect(childLabels(root).filter((label) => label.startsWith('context:'))).toEqual([
      'context:agent',
      'context:agent',
      'context:agent',
      'context:other',
    ])
  })

  test('a label that looks numbered never takes a live sibling path, and no live sibling takes its path', async () => {
    const { root } = testRoot()
    const first = root.child('x')
    const second = root.child('x')
    const explicit = root.child('x#2')
    const third = root.child('x')
    const early = root.child('y#2')
    const y1 = root.child('y')
    const y2 = root.child('y')
    expect([first.path, second.path, explicit.path, third.path]).toEqual([
      'harness/x',
      'harness/x#2',
      'harness/x#2#2',
      'harness/x#3',
    ])
    expect([early.path, y1.path, y2.path]).toEqual(['harness/y#2', 'harness/y', 'harness/y#3'])
    // Once a child is disposed its path segment may be given again.
    await explicit.dispose()
    expect(root.child('x#2#2').path).toBe('harness/x#2#2')
  })

  test('sibling numbering is per parent', () => {
    const { root } = testRoot()
    const left = root.child('left')
    const right = root.child('right')
    expect(left.child('agent').path).toBe('harness/left/agent')
    expect(right.child('agent').path).toBe('harness/right/agent')
    expect(left.child('agent').path).toBe('harness/left/agent#2')
  })

  test('labels of 1 and 256 characters are accepted', () => {
    const { root } = testRoot()
    expect(root.child('a').path).toBe('harness/a')
    const longest = 'x'.repeat(256)
    expect(root.child(longest).label).toBe(longest)
  })

  test.each([
    ['an empty label', ''],
    ['a label with a slash', 'a/b'],
    ['a label of 257 characters', 'x'.repeat(257)],
    ['a label that is only a slash', '/'],
  ])('%s throws InvalidArgumentError for argument label', (_name, label) => {
    const { root } = testRoot()
    const before = childLabels(root)
    const error = thrownBy(() => root.child(label))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'label', value: label })
    expect(childLabels(root)).toEqual(before)
  })

  test.each([
    ['child with isolate not an array', 'isolate', (root: Context) => root.child('x', { isolate: 'a' as never })],
    ['get(undefined)', 'key', (root: Context) => root.get(undefined as never)],
    ['getOptional of a plain object', 'key', (root: Context) => root.getOptional({ name: 'test/a' } as never)],
    ['scopes.chain(1)', 'scope', (root: Context) => root.scopes.chain(1 as never)],
    [
      'emit with a string scope',
      'scope',
      (root: Context) => root.emit('kernel/error' as never, {} as never, { scope: 's' as never }),
    ],
  ])('%s throws InvalidArgumentError naming %s, not a TypeError', (_name, argument, call) => {
    const { root } = testRoot()
    const error = thrownBy(() => call(root))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument })
  })

  test('a non-string label throws InvalidArgumentError for argument label', () => {
    const { root } = testRoot()
    const error = thrownBy(() => root.child(42 as unknown as string))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'label', value: 42 })
  })

  test.each([
    ['null options', null, 'options'],
    ['a string', 'agent', 'options'],
    ['an array', [], 'options'],
    ['an unknown key', { isolated: [] }, 'options.isolated'],
  ])('%s: options %o throw InvalidArgumentError for argument %s and create no child', (_case, options, argument) => {
    const { root } = testRoot()
    const before = childLabels(root)
    const error = thrownBy(() => root.child('x', options as never))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument })
    expect(childLabels(root)).toEqual(before)
  })

  test('a scope that is not an object throws InvalidArgumentError for argument scope', () => {
    const { root } = testRoot()
    const error = thrownBy(() => root.child('tagged', { scope: 'agent' as unknown as object }))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'scope' })
  })
})

describe('dispose', () => {
  test('every call returns the same promise', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const first = worker.dispose()
    expect(worker.dispose()).toBe(first)
    await first
    expect(worker.dispose()).toBe(first)
  })

  test('state moves active → disposing (synchronously) → disposed', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const seen: string[] = []
    worker.effect(() => () => {
      seen.push(worker.state)
    })
    expect(worker.state).toBe('active')
    const disposal = worker.dispose()
    expect(worker.state).toBe('disposing')
    await disposal
    expect(worker.state).toBe('disposed')
    expect(seen).toEqual(['disposing'])
  })

  test('a context with nothing to tear down is still disposing until dispose() has returned', async () => {
    const { root } = testRoot()
    const idle = root.child('idle')
    const disposal = idle.dispose()
    expect(idle.state).toBe('disposing')
    await disposal
    expect(idle.state).toBe('disposed')
  })

  test('signal is aborted when disposal starts, with a ContextDisposedError reason', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const abortedDuringCleanup: boolean[] = []
    let abortEvents = 0
    worker.signal.addEventListener('abort', () => {
      abortEvents++
    })
    worker.effect(() => () => {
      abortedDuringCleanup.push(worker.signal.aborted)
    })
    expect(worker.signal.aborted).toBe(false)
    const disposal = worker.dispose()
    expect(worker.signal.aborted).toBe(true)
    expect(abortEvents).toBe(1)
    const reason: unknown = worker.signal.reason
    expect(ContextDisposedError.is(reason)).toBe(true)
    expect(reason).toMatchObject({ code: 'CONTEXT_DISPOSED', context: 'harness/worker', operation: 'dispose' })
    await disposal
    expect(abortedDuringCleanup).toEqual([true])
    void worker.dispose()
    expect(abortEvents).toBe(1)
  })

  test('disposing a parent aborts and disposes its descendants', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const nested = worker.child('nested')
    await root.dispose()
    expect(worker.state).toBe('disposed')
    expect(nested.state).toBe('disposed')
    expect(nested.signal.aborted).toBe(true)
    expect(nested.signal.reason).toMatchObject({ context: 'harness/worker/nested' })
  })

  test('a disposed child leaves its parent and is not torn down again', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    let cleanups = 0
    worker.effect(() => () => {
      cleanups++
    })
    expect(childLabels(root)).toContain('context:worker')
    await worker.dispose()
    expect(childLabels(root)).not.toContain('context:worker')
    const report = await root.dispose()
    expect(report.errors).toEqual([])
    expect(cleanups).toBe(1)
  })

  test('it resolves with an empty report when nothing failed', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    worker.effect(() => () => {})
    await expect(worker.dispose()).resolves.toEqual({ errors: [] })
  })

  test('it never rejects: a failing cleanup goes into the report', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const boom = new Error('boom')
    worker.effect(
      () => () => {
        throw boom
      },
      'failing',
    )
    await expect(worker.dispose()).resolves.toEqual({ errors: [{ label: 'failing', error: boom }] })
  })
})

describe('registration after disposal', () => {
  async function disposedChild(): Promise<{ root: Context; worker: Context }> {
    const { root } = testRoot()
    const worker = root.child('k')
    await worker.dispose()
    return { root, worker }
  }

  test.each([
    ['effect', (ctx: Context) => ctx.effect(() => {})],
    ['provide', (ctx: Context) => ctx.provide(A, 'v')],
    ['on', (ctx: Context) => ctx.on('kernel/service', () => {})],
    ['once', (ctx: Context) => ctx.once('kernel/service', () => {})],
    ['child', (ctx: Context) => ctx.child('c')],
    ['registerEvents', (ctx: Context) => ctx.registerEvents(defineEvents({ 'late/event': 'emit' }))],
    ['bindParent', (ctx: Context) => ctx.scopes.bindParent({}, {})],
  ])('%s throws ContextDisposedError naming the context and the operation', async (operation, register) => {
    const { root, worker } = await disposedChild()
    const before = childLabels(root)
    const error = thrownBy(() => register(worker))
    expect(ContextDisposedError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'CONTEXT_DISPOSED', context: 'harness/k', operation })
    expect(childLabels(root)).toEqual(before)
  })

  test('plugin rejects with ContextDisposedError', async () => {
    const { worker } = await disposedChild()
    let applied = false
    const late = definePlugin({
      name: 'late',
      apply() {
        applied = true
      },
    })
    const error = await rejectionOf(worker.plugin(late))
    expect(ContextDisposedError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'CONTEXT_DISPOSED', context: 'harness/k', operation: 'plugin' })
    expect(applied).toBe(false)
  })

  test('a failed provide on a disposed context leaves no provider', async () => {
    const { root, worker } = await disposedChild()
    thrownBy(() => worker.provide(A, 'v'))
    expect(root.getOptional(A)).toBeUndefined()
  })

  test('registration refuses already while disposing', async () => {
    const { root } = testRoot()
    const worker = root.child('k')
    const refused: unknown[] = []
    worker.effect(() => () => {
      refused.push(thrownBy(() => worker.on('test/e', () => {})))
      refused.push(thrownBy(() => worker.child('late')))
    })
    await worker.dispose()
    expect(refused).toHaveLength(2)
    expect(refused.every((error) => ContextDisposedError.is(error))).toBe(true)
    expect(refused).toMatchObject([
      { context: 'harness/k', operation: 'on' },
      { context: 'harness/k', operation: 'child' },
    ])
  })
})

describe('Context.is', () => {
  test('recognises contexts and nothing else', () => {
    const { root } = testRoot()
    expect(Context.is(root)).toBe(true)
    expect(Context.is(root.child('worker'))).toBe(true)
    expect(Context.is({})).toBe(false)
    expect(Context.is(null)).toBe(false)
    expect(Context.is(undefined)).toBe(false)
    expect(Context.is('harness')).toBe(false)
    expect(Context.is({ label: 'harness', path: 'harness' })).toBe(false)
  })

  test('recognises a context of another loaded copy through the Symbol.for brand', () => {
    const foreign = { [Symbol.for('yoke.context')]: true }
    expect(Context.is(foreign)).toBe(true)
  })
})

describe('core getters', () => {
  test.each([
    ['sessions', 'sessions'],
    ['persistence', 'persistence'],
    ['models', 'models'],
    ['tools', 'tools'],
    ['systemPrompt', 'system-prompt'],
    ['agents', 'agents'],
    ['compaction', 'compaction'],
  ] as const)('ctx.%s throws ServiceMissingError for key %s on a bare root', (getter, key) => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const error = thrownBy(() => worker[getter])
    expect(ServiceMissingError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SERVICE_MISSING', key, requestedBy: 'harness/worker', owner: 'harness' })
  })

  test('a getter returns the provided core service', () => {
    const { root } = testRoot()
    const registry = { name: 'tool registry' }
    root.provide(services.tools, registry as unknown as ToolRegistry)
    expect(root.child('worker').tools).toBe(registry)
  })

  test('ctx.agent is undefined on a bare root and under a scope that is not an agent', () => {
    const { root } = testRoot()
    expect(root.agent).toBeUndefined()
    expect(root.child('scoped', { scope: { id: 'plain' } }).agent).toBeUndefined()
  })
})

describe('effect tree', () => {
  test('nodes carry the effect labels and kinds in registration order; disposed ones are absent', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    worker.effect(() => {})
    const labelled = worker.effect(() => {}, 'custom')
    worker.provide(A, 'v')
    worker.on('test/e', () => {})
    worker.registerEvents(defineEvents({ 'extra/event': 'emit' }))
    worker.scopes.bindParent({}, {})
    worker.child('nested')
    const expected: EffectNode[] = [
      { label: 'effect', kind: 'effect', children: [] },
      { label: 'custom', kind: 'effect', children: [] },
      { label: 'service:test/a', kind: 'service', children: [] },
      { label: 'listener:test/e', kind: 'listener', children: [] },
      { label: 'events', kind: 'events', children: [] },
      { label: 'scope-link', kind: 'scope-link', children: [] },
      { label: 'context:nested', kind: 'context', children: [] },
    ]
    expect(findNode(inspectContext(root).effects, 'context:worker')?.children).toEqual(expected)
    await labelled()
    expect(findNode(inspectContext(root).effects, 'context:worker')?.children).toEqual(
      expected.filter((node) => node.label !== 'custom'),
    )
  })
})
