import { describe, expect, test } from 'vitest'
import { defineService, InvalidArgumentError, ServiceConflictError, ServiceMissingError, services } from 'yoke'
import { createRootContext, inspectContext, isServiceKey, type ServiceEvent } from '../../src/kernel/index.js'
import { kernelOf } from '../../src/kernel/context.js'
import { thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testRoot } from '../helpers/root.js'

const A = defineService<string>('test/a')
const B = defineService<string>('test/b')

describe('service keys', () => {
  test('defineService returns a frozen key with its name and description', () => {
    const key = defineService<number>('acme-billing/ledger', 'the billing ledger')
    expect(Object.isFrozen(key)).toBe(true)
    expect(key.name).toBe('acme-billing/ledger')
    expect(key.description).toBe('the billing ledger')
    expect(isServiceKey(key)).toBe(true)
    expect(defineService<number>('acme-billing/other').description).toBeUndefined()
  })

  test('defining a key registers nothing', () => {
    const { root } = testRoot()
    const before = inspectContext(root).services
    defineService<string>('test/unregistered')
    expect(inspectContext(root).services).toEqual(before)
    expect(root.getOptional(defineService<string>('test/unregistered'))).toBeUndefined()
  })

  test('isServiceKey rejects look-alikes', () => {
    expect(isServiceKey({ name: 'test/a', description: undefined })).toBe(false)
    expect(isServiceKey('test/a')).toBe(false)
    expect(isServiceKey(null)).toBe(false)
  })

  test.each(['tools', '@scope/name', 'a.b_c-d/e', '0x', 'a'.repeat(128)])('accepts the name %s', (name) => {
    expect(defineService<string>(name).name).toBe(name)
  })

  test.each([
    ['an empty name', ''],
    ['an upper-case name', 'Tools'],
    ['a name starting with a dash', '-tools'],
    ['a name starting with a slash', '/tools'],
    ['a name with a space', 'acme ledger'],
    ['a name of 129 characters', 'a'.repeat(129)],
  ])('%s throws InvalidArgumentError for argument name', (_case, name) => {
    const error = thrownBy(() => defineService<string>(name))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'name', value: name })
  })

  test.each([
    ['a number', 7],
    ['null', null],
    ['an object', { text: 'the ledger' }],
  ])('a description that is %s throws InvalidArgumentError for argument description', (_case, description) => {
    const error = thrownBy(() => defineService<string>('acme/ledger', description as never))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'description', value: description })
  })

  test('the core keys are frozen and named in kebab case', () => {
    expect(Object.isFrozen(services)).toBe(true)
    expect(Object.values(services).map((key) => key.name)).toEqual([
      'clock',
      'ids',
      'logger',
      'sessions',
      'persistence',
      'models',
      'tools',
      'system-prompt',
      'agents',
      'compaction',
      'presets',
    ])
  })
})

describe('provide, get, withdraw', () => {
  test('a key defined separately with the same name reads the provider; withdrawal makes get throw', async () => {
    const { root } = testRoot()
    const events: ServiceEvent[] = []
    root.on('kernel/service', (event) => {
      events.push(event)
    })
    const disposer = root.provide(A, 'v')
    const A2 = defineService<string>('test/a')
    expect(root.child('x').get(A2)).toBe('v')

    const first = disposer()
    expect(disposer.disposed).toBe(true)
    expect(disposer()).toBe(first)
    await first

    const error = thrownBy(() => root.child('y').get(A))
    expect(ServiceMissingError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SERVICE_MISSING', key: 'test/a', requestedBy: 'harness/y', owner: 'harness' })
    expect((error as Error).message).toBe('service "test/a" is not provided (requested by "harness/y")')
    expect(events).toEqual([
      { key: 'test/a', kind: 'provided', owner: 'harness' },
      { key: 'test/a', kind: 'withdrawn', owner: 'harness' },
    ])
  })

  test('the provider disposer is labelled service:<name> and is in the effect tree until withdrawn', async () => {
    const { root } = testRoot()
    const disposer = root.provide(A, 'v')
    expect(disposer.label).toBe('service:test/a')
    expect(disposer.disposed).toBe(false)
    const labels = (): string[] => inspectContext(root).effects.children.map((node) => node.label)
    expect(labels()).toContain('service:test/a')
    expect(inspectContext(root).services).toContainEqual({ key: 'test/a', owner: 'harness' })
    await disposer()
    expect(labels()).not.toContain('service:test/a')
    expect(inspectContext(root).services).not.toContainEqual({ key: 'test/a', owner: 'harness' })
  })

  test('a withdrawn key can be provided again, and nothing restarts', async () => {
    const { root } = testRoot()
    const reader = root.child('reader')
    const disposer = reader.provide(A, 'first')
    await disposer()
    expect(reader.getOptional(A)).toBeUndefined()
    reader.provide(A, 'second')
    expect(root.get(A)).toBe('second')
  })

  test('disposing the providing context withdraws the service', async () => {
    const { root } = testRoot()
    const provider = root.child('provider')
    provider.provide(A, 'v')
    expect(root.get(A)).toBe('v')
    await provider.dispose()
    expect(root.getOptional(A)).toBeUndefined()
  })

  test('kernel/service fires after the store changed', async () => {
    const { root } = testRoot()
    const seen: (string | undefined)[] = []
    root.on('kernel/service', (event) => {
      if (event.key === 'test/a') seen.push(`${event.kind}:${root.getOptional(A) ?? 'none'}`)
    })
    const disposer = root.provide(A, 'v')
    await disposer()
    expect(seen).toEqual(['provided:v', 'withdrawn:none'])
  })

  test('kernel/service carries the owner of the providing context', async () => {
    const { root } = testRoot()
    const events: ServiceEvent[] = []
    root.on('kernel/service', (event) => {
      events.push(event)
    })
    const provider = root.child('provider')
    provider.provide(B, 'b')
    await provider.dispose()
    expect(events).toEqual([
      { key: 'test/b', kind: 'provided', owner: provider.owner },
      { key: 'test/b', kind: 'withdrawn', owner: provider.owner },
    ])
    expect(provider.owner).toBe('harness')
  })
})

describe('provide failures', () => {
  test('a conflict in one realm names both providers and leaves the first in place', () => {
    const { root } = testRoot()
    const p1 = root.child('p1')
    const p2 = root.child('p2')
    const events: ServiceEvent[] = []
    root.on('kernel/service', (event) => {
      events.push(event)
    })
    p1.provide(A, '1')
    const error = thrownBy(() => p2.provide(A, '2'))
    expect(ServiceConflictError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'SERVICE_CONFLICT',
      key: 'test/a',
      existingProvider: 'harness/p1',
      attemptedProvider: 'harness/p2',
    })
    expect(root.get(A)).toBe('1')
    expect(events).toEqual([{ key: 'test/a', kind: 'provided', owner: 'harness' }])
    expect(inspectContext(root).effects.children.find((node) => node.label === 'context:p2')?.children).toEqual([])
  })

  test('providing the same key twice through one context conflicts too', () => {
    const { root } = testRoot()
    root.provide(A, '1')
    const error = thrownBy(() => root.provide(A, '2'))
    expect(ServiceConflictError.is(error)).toBe(true)
    expect(error).toMatchObject({ existingProvider: 'harness', attemptedProvider: 'harness' })
  })

  test('a host key cannot be provided again', () => {
    const { root } = testRoot()
    const error = thrownBy(() =>
      root.child('plugin').provide(services.clock, { now: () => 0, setTimer: () => () => {} }),
    )
    expect(ServiceConflictError.is(error)).toBe(true)
    expect(error).toMatchObject({ key: 'clock', existingProvider: 'harness', attemptedProvider: 'harness/plugin' })
  })

  test('an undefined value throws InvalidArgumentError and registers nothing', () => {
    const { root } = testRoot()
    const events: ServiceEvent[] = []
    root.on('kernel/service', (event) => {
      events.push(event)
    })
    const Optional = defineService<string | undefined>('test/optional')
    const error = thrownBy(() => root.provide(Optional, undefined))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'value' })
    expect(root.getOptional(Optional)).toBeUndefined()
    expect(events).toEqual([])
  })

  test.each([null, 0, '', false])('a falsy value %j other than undefined is a valid service', (value) => {
    const { root } = testRoot()
    const Falsy = defineService<typeof value>('test/falsy')
    root.provide(Falsy, value)
    expect(root.get(Falsy)).toBe(value)
  })

  test('a key that is not a service key throws InvalidArgumentError for argument key', () => {
    const { root } = testRoot()
    const error = thrownBy(() => root.provide({ name: 'test/a' } as unknown as typeof A, 'v'))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'key' })
  })
})

describe('get and getOptional', () => {
  test('get names the requesting context and its owner', () => {
    const { root } = testRoot()
    const error = thrownBy(() => root.child('a').child('b').get(B))
    expect(ServiceMissingError.is(error)).toBe(true)
    expect(error).toMatchObject({ key: 'test/b', requestedBy: 'harness/a/b', owner: 'harness' })
  })

  test('getOptional returns undefined for a missing key and the value otherwise', () => {
    const { root } = testRoot()
    expect(root.getOptional(A)).toBeUndefined()
    root.provide(A, 'v')
    expect(root.getOptional(A)).toBe('v')
  })

  test('any context of a realm reads any provider, whatever the scope tags', () => {
    const { root } = testRoot()
    const provider = root.child('provider', { scope: { id: 'left' } })
    const reader = root.child('reader', { scope: { id: 'right' } }).child('deep')
    provider.child('nested').provide(A, 'from nested')
    expect(reader.get(A)).toBe('from nested')
    expect(root.get(A)).toBe('from nested')
  })
})

describe('isolation and optional reads', () => {
  test('an isolated child opens a new realm for the key only', () => {
    const { root } = testRoot()
    root.provide(A, 'root')
    const iso = root.child('iso', { isolate: [A] })

    const error = thrownBy(() => iso.child('g').get(A))
    expect(ServiceMissingError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SERVICE_MISSING', key: 'test/a', requestedBy: 'harness/iso/g' })
    expect(iso.child('g').getOptional(A)).toBeUndefined()

    iso.provide(A, 'iso')
    expect(iso.child('g2').get(A)).toBe('iso')
    expect(root.get(A)).toBe('root')
    expect(root.child('outside').get(A)).toBe('root')
  })

  test('other keys are unaffected: they resolve and conflict in the parent realm', () => {
    const { root } = testRoot()
    root.provide(B, 'root b')
    const iso = root.child('iso', { isolate: [A] })
    expect(iso.get(B)).toBe('root b')
    expect(iso.get(services.clock)).toBe(root.get(services.clock))
    const error = thrownBy(() => iso.child('h').provide(B, 'iso b'))
    expect(ServiceConflictError.is(error)).toBe(true)
    expect(error).toMatchObject({ key: 'test/b', existingProvider: 'harness', attemptedProvider: 'harness/iso/h' })
  })

  test('a provide in the isolated realm is visible to the whole isolated subtree, not outside', () => {
    const { root } = testRoot()
    const iso = root.child('iso', { isolate: [A] })
    iso.child('deep').child('deeper').provide(A, 'inner')
    expect(iso.get(A)).toBe('inner')
    expect(iso.child('sibling').get(A)).toBe('inner')
    expect(root.getOptional(A)).toBeUndefined()
  })

  test('a nested isolation isolates from the outer isolated realm as well', () => {
    const { root } = testRoot()
    root.provide(A, 'root')
    const outer = root.child('outer', { isolate: [A] })
    outer.provide(A, 'outer')
    const inner = outer.child('inner', { isolate: [A, B] })
    expect(inner.getOptional(A)).toBeUndefined()
    inner.provide(A, 'inner')
    inner.provide(B, 'inner b')
    expect(inner.get(A)).toBe('inner')
    expect(outer.get(A)).toBe('outer')
    expect(outer.getOptional(B)).toBeUndefined()
  })

  test('disposing the isolated subtree withdraws only its provider', async () => {
    const { root } = testRoot()
    root.provide(A, 'root')
    const iso = root.child('iso', { isolate: [A] })
    iso.provide(A, 'iso')
    await iso.dispose()
    expect(root.get(A)).toBe('root')
  })
})

describe('host services', () => {
  test('clock, ids and logger are provided on the root by harness', () => {
    const logger = recordingLogger()
    const root = createRootContext({ logger })
    const child = root.child('plugin')
    expect(child.get(services.logger)).toBe(logger)
    const cancel = child.get(services.clock).setTimer(() => {}, 1_000)
    expect(typeof cancel).toBe('function')
    cancel()
    expect(
      inspectContext(root)
        .services.filter((service) => service.owner === 'harness')
        .map((service) => service.key),
    ).toEqual(['clock', 'ids', 'logger'])
  })
})

describe('isolated realms are released with their context', () => {
  test('an isolated child adds a realm while it lives and removes it when disposed', async () => {
    const root = createRootContext({ logger: recordingLogger() })
    const Isolated = defineService<string>('test/isolated')
    const realms = kernelOf(root).realms
    const before = realms.size
    const child = root.child('iso', { isolate: [Isolated] })
    child.provide(Isolated, 'inside')
    expect(realms.size).toBe(before + 1)
    expect(inspectContext(root).services.map((service) => service.key)).toContain('test/isolated')
    await child.dispose()
    expect(realms.size).toBe(before)
    await root.dispose()
  })
})
