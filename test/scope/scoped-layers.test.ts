import fc from 'fast-check'
import { describe, expect, test, vi } from 'vitest'
import {
  type Context,
  ContextDisposedError,
  createScopedLayers,
  InvalidArgumentError,
  InvalidOptionsError,
  type ScopedLayers,
  type ScopeKey,
} from 'yoke'
import { inspectContext } from '../../src/kernel/index.js'
import { recordKernelErrors, rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { testRoot } from '../helpers/root.js'

type Layer = Map<string, string>

function mapLayers(root: Context): ScopedLayers<Layer> {
  return createScopedLayers<Layer>({
    scopes: root.scopes,
    create: () => new Map(),
    isEmpty: (layer) => layer.size === 0,
  })
}

/** Registers `name = value` in the owner's layer; the undo deletes it. */
function put(layers: ScopedLayers<Layer>, owner: Context, name: string, value: string, notify?: () => void) {
  return layers.register(
    owner,
    (layer) => {
      layer.set(name, value)
      return () => {
        layer.delete(name)
      }
    },
    notify,
  )
}

const all = (layer: Layer): Layer => layer

describe('layers over an agent scope whose parent is a preset scope', () => {
  test('reads create nothing; merge resolves the nearest layer; disposing the agent reclaims its layer', async () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const p = { scope: 'preset p' }
    const a = { scope: 'agent a' }
    root.scopes.bindParent(a, p)
    const pCtx = root.child('preset-p', { scope: p })
    const aCtx = root.child('agent-a', { scope: a })

    expect(layers.chain(a)).toEqual([])
    expect(layers.peek(a)).toBeUndefined()
    expect(layers.merge(a, all)).toEqual(new Map())
    expect(layers.peek(a)).toBeUndefined()
    expect(layers.peek(p)).toBeUndefined()
    expect(layers.global).toEqual(new Map())

    put(layers, pCtx, 'x', 'P')
    put(layers, aCtx, 'x', 'A')
    put(layers, root, 'x', 'G')

    expect(layers.merge(a, all)).toEqual(new Map([['x', 'A']]))
    expect(layers.merge(p, all)).toEqual(new Map([['x', 'P']]))
    expect(layers.merge(undefined, all)).toEqual(new Map([['x', 'G']]))
    expect(layers.peek(a)).toEqual(new Map([['x', 'A']]))
    expect(layers.global).toEqual(new Map([['x', 'G']]))
    expect(layers.chain(a)).toEqual([new Map([['x', 'P']]), new Map([['x', 'A']])])
    expect(layers.chain(a)[1]).toBe(layers.peek(a))

    await aCtx.dispose()
    expect(layers.merge(a, all)).toEqual(new Map([['x', 'P']]))
    expect(layers.peek(a)).toBeUndefined()
    expect(layers.chain(a)).toEqual([new Map([['x', 'P']])])
  })
})

describe('chain and merge', () => {
  test('merge keeps the first insertion position of a name and takes the nearest value', () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const p = { id: 'p' }
    const a = { id: 'a' }
    root.scopes.bindParent(a, p)
    put(layers, root, 'x', 'G')
    put(layers, root, 'y', 'G')
    put(layers, root.child('p', { scope: p }), 'z', 'P')
    put(layers, root.child('p', { scope: p }), 'x', 'P')
    put(layers, root.child('a', { scope: a }), 'y', 'A')
    expect([...layers.merge(a, all)]).toEqual([
      ['x', 'P'],
      ['y', 'A'],
      ['z', 'P'],
    ])
    expect([...layers.merge(p, all)]).toEqual([
      ['x', 'P'],
      ['y', 'G'],
      ['z', 'P'],
    ])
    expect(layers.merge(undefined, all)).not.toBe(layers.merge(undefined, all))
  })

  test('the chain follows the scope graph: skipped ancestors without layers, rebinds and unlinks', () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const [top, middle, leaf, other] = [{ id: 'top' }, { id: 'middle' }, { id: 'leaf' }, { id: 'other' }]
    root.scopes.bindParent(middle, top)
    const link = root.scopes.bindParent(leaf, middle)
    put(layers, root.child('top', { scope: top }), 'n', 'top')
    put(layers, root.child('leaf', { scope: leaf }), 'n', 'leaf')
    put(layers, root.child('other', { scope: other }), 'n', 'other')
    expect(layers.chain(leaf).map((layer) => layer.get('n'))).toEqual(['top', 'leaf'])
    expect(layers.peek(middle)).toBeUndefined()
    link.rebind(other)
    expect(layers.chain(leaf).map((layer) => layer.get('n'))).toEqual(['other', 'leaf'])
    void link()
    expect(layers.chain(leaf).map((layer) => layer.get('n'))).toEqual(['leaf'])
    expect(layers.chain(undefined)).toEqual([])
  })
})

describe('register', () => {
  test('the undo is an effect of the owner: its disposer undoes once, and disposing the owner undoes the rest', async () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const a = { id: 'a' }
    const aCtx = root.child('agent', { scope: a })
    const first = put(layers, aCtx, 'x', '1')
    put(layers, aCtx, 'y', '2')
    expect(first.label).toBe('scoped-layer')
    expect(
      inspectContext(root)
        .effects.children.at(-1)
        ?.children.map((node) => node.label),
    ).toEqual(['scoped-layer', 'scoped-layer'])
    await first()
    await first()
    expect(first.disposed).toBe(true)
    expect(layers.peek(a)).toEqual(new Map([['y', '2']]))
    const kept = layers.peek(a)
    await aCtx.dispose()
    expect(layers.peek(a)).toBeUndefined()
    expect(kept).toEqual(new Map())
  })

  test('a layer is reclaimed only when its last undo empties it; a later registration gets a fresh layer', async () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const a = { id: 'a' }
    const aCtx = root.child('agent', { scope: a })
    const keep = layers.register(aCtx, (layer) => {
      layer.set('kept', 'k')
      return () => {}
    })
    const drop = put(layers, aCtx, 'x', '1')
    const original = layers.peek(a)
    await keep()
    await drop()
    expect(layers.peek(a)).toBe(original)
    original?.delete('kept')
    const again = put(layers, aCtx, 'z', '2')
    expect(layers.peek(a)).toBe(original)
    await again()
    expect(layers.peek(a)).toBeUndefined()
    put(layers, aCtx, 'w', '3')
    expect(layers.peek(a)).not.toBe(original)
    expect(layers.peek(a)).toEqual(new Map([['w', '3']]))
  })

  test('a layer that looks empty is kept while a registration in it is outstanding', async () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const a = { id: 'a' }
    const aCtx = root.child('agent', { scope: a })
    const invisible = layers.register(aCtx, () => () => {})
    const visible = put(layers, aCtx, 'x', '1')
    const layer = layers.peek(a)
    await visible()
    expect(layers.peek(a)).toBe(layer)
    put(layers, aCtx, 'y', '2')
    expect(layers.peek(a)).toBe(layer)
    await aCtx.dispose()
    expect(invisible.disposed).toBe(true)
    expect(layers.peek(a)).toBeUndefined()
  })

  test('an undo that throws rejects its disposer and still releases the layer', async () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const a = { id: 'a' }
    const failure = new Error('undo failed')
    const disposer = layers.register(root.child('agent', { scope: a }), (layer) => {
      layer.set('x', '1')
      return () => {
        layer.delete('x')
        throw failure
      }
    })
    expect(await rejectionOf(disposer())).toBe(failure)
    expect(layers.peek(a)).toBeUndefined()
  })

  test.each(['disposing', 'disposed'] as const)(
    'through a %s owner: ContextDisposedError, nothing runs, no layer',
    async (state) => {
      const { root } = testRoot()
      const layers = mapLayers(root)
      const a = { id: 'a' }
      const aCtx = root.child('agent', { scope: a })
      const calls: string[] = []
      let caught: unknown
      const attempt = (): void => {
        caught = thrownBy(() =>
          layers.register(
            aCtx,
            () => {
              calls.push('action')
              return () => {}
            },
            () => calls.push('notify'),
          ),
        )
      }
      if (state === 'disposing') {
        aCtx.effect(() => attempt)
        await aCtx.dispose()
      } else {
        await aCtx.dispose()
        attempt()
      }
      expect(ContextDisposedError.is(caught)).toBe(true)
      expect((caught as ContextDisposedError).context).toBe('harness/agent')
      expect(calls).toEqual([])
      expect(layers.peek(a)).toBeUndefined()
    },
  )

  test('an action that throws registers nothing, creates no layer and skips notify', () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const a = { id: 'a' }
    const aCtx = root.child('agent', { scope: a })
    const failure = new Error('duplicate')
    const notified: string[] = []
    const action = (): (() => void) => {
      throw failure
    }
    expect(thrownBy(() => layers.register(aCtx, action, () => notified.push('a')))).toBe(failure)
    expect(layers.peek(a)).toBeUndefined()
    put(layers, aCtx, 'x', '1')
    const existing = layers.peek(a)
    expect(thrownBy(() => layers.register(aCtx, action))).toBe(failure)
    expect(layers.peek(a)).toBe(existing)
    expect(thrownBy(() => layers.register(root, action))).toBe(failure)
    expect(notified).toEqual([])
    expect(
      inspectContext(aCtx)
        .effects.children.at(-1)
        ?.children.map((node) => node.label),
    ).toEqual(['scoped-layer'])
  })

  test('a non-function action, or an action returning no undo, is an InvalidArgumentError', () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const a = { id: 'a' }
    const aCtx = root.child('agent', { scope: a })
    const bad = thrownBy(() => layers.register(aCtx, 'nope' as unknown as () => () => void))
    expect(InvalidArgumentError.is(bad)).toBe(true)
    expect((bad as InvalidArgumentError).argument).toBe('action')
    const noUndo = thrownBy(() => layers.register(aCtx, (() => undefined) as unknown as () => () => void))
    expect((noUndo as InvalidArgumentError).argument).toBe('action result')
    expect(layers.peek(a)).toBeUndefined()
  })

  test('notify runs once the undo is installed; a throwing notify is reported and the registration stays', async () => {
    const { root, logger } = testRoot()
    const errors = recordKernelErrors(root)
    const layers = mapLayers(root)
    const a = { id: 'a' }
    const aCtx = root.child('agent', { scope: a })
    const seen: unknown[] = []
    const failure = new Error('notify failed')
    const disposer = put(layers, aCtx, 'x', '1', () => {
      seen.push(layers.peek(a)?.get('x'), inspectContext(aCtx).effects.children.at(-1)?.children.length)
      throw failure
    })
    expect(seen).toEqual(['1', 1])
    expect(errors).toEqual([
      { error: failure, phase: 'listener', label: 'scoped-layer:notify', context: 'harness/agent' },
    ])
    expect(logger.at('error').map((record) => record.message)).toEqual([
      'listener failed (scoped-layer:notify): notify failed',
    ])
    expect(layers.merge(a, all)).toEqual(new Map([['x', '1']]))
    await disposer()
    expect(layers.peek(a)).toBeUndefined()
  })

  test('the effect label is configurable', () => {
    const { root } = testRoot()
    const layers = createScopedLayers<Layer>({
      scopes: root.scopes,
      create: () => new Map(),
      isEmpty: (layer) => layer.size === 0,
      label: 'registry:entry',
    })
    expect(put(layers, root, 'x', '1').label).toBe('registry:entry')
  })
})

describe('bad options (options objects → InvalidOptionsError)', () => {
  const create = vi.fn(() => new Map<string, string>())
  const isEmpty = (layer: Layer) => layer.size === 0
  const { scopes } = testRoot().root

  test.each([
    ['that are null', null, [[]]],
    ['that are missing', undefined, [[]]],
    ['that are a number', 42, [[]]],
    ['that are empty', {}, [['scopes'], ['create'], ['isEmpty']]],
    ['whose scopes is not a scope graph', { scopes: {}, create, isEmpty }, [['scopes']]],
    ['whose isEmpty is not a function', { scopes, create, isEmpty: true }, [['isEmpty']]],
    ['whose label is not a string', { scopes, create, isEmpty, label: 5 }, [['label']]],
    ['with an unknown key', { scopes, create, isEmpty, lable: 'x' }, [['lable']]],
  ])('options %s are an InvalidOptionsError naming each path; no layer is created', (_name, options, paths) => {
    const error = thrownBy(() => createScopedLayers(options as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect((error as InvalidOptionsError).issues.map((issue) => issue.path)).toEqual(paths)
    expect(create).not.toHaveBeenCalled()
  })
})

/** One step of the property test. */
type Step =
  | { readonly kind: 'register'; readonly scope: number; readonly name: string; readonly value: number }
  | { readonly kind: 'dispose'; readonly pick: number }
  | { readonly kind: 'dispose-scope'; readonly scope: number }
  | { readonly kind: 'relink'; readonly scope: number; readonly parent: number }
  | { readonly kind: 'read'; readonly scope: number }

const scopeCount = 6
const names = ['a', 'b', 'c', 'd']
/** `-1` is the global layer (the root), `0..scopeCount-1` the scoped ones. */
const scopeIndex = fc.integer({ min: -1, max: scopeCount - 1 })
const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('register' as const),
    scope: scopeIndex,
    name: fc.constantFrom(...names),
    value: fc.nat(99),
  }),
  fc.record({ kind: fc.constant('dispose' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('dispose-scope' as const), scope: fc.nat(scopeCount - 1) }),
  fc.record({
    kind: fc.constant('relink' as const),
    scope: fc.integer({ min: 1, max: scopeCount - 1 }),
    parent: fc.integer({ min: -1, max: scopeCount - 2 }),
  }),
  fc.record({ kind: fc.constant('read' as const), scope: fc.nat(scopeCount - 1) }),
)
/** Initial parents: scope i may link to a lower index (acyclic), or `-1` for none. */
const treeArbitrary = fc.array(fc.integer({ min: -1, max: scopeCount - 2 }), {
  minLength: scopeCount,
  maxLength: scopeCount,
})

interface Registration {
  readonly scope: number
  readonly name: string
  readonly value: string
  readonly disposer: () => Promise<void>
  live: boolean
}

describe('property: random registrations and disposals over random scope trees', () => {
  test('merge(key) always resolves each name to the nearest live registration, and reads never create layers', async () => {
    await fc.assert(
      fc.asyncProperty(treeArbitrary, fc.array(stepArbitrary, { maxLength: 60 }), async (tree, steps) => {
        const { root } = testRoot()
        const layers = mapLayers(root)
        const keys: ScopeKey[] = Array.from({ length: scopeCount }, (_, index) => ({ scope: index }))
        const parents: number[] = tree.map((parent, index) => (parent < index ? parent : -1))
        const links = keys.map((key, index) => {
          const parent = parents[index] as number
          return parent === -1 ? undefined : root.scopes.bindParent(key, keys[parent] as ScopeKey)
        })
        const contexts = new Map<number, Context>()
        const contextOf = (scope: number): Context => {
          if (scope === -1) return root
          let ctx = contexts.get(scope)
          if (ctx === undefined) {
            ctx = root.child(`scope-${scope}`, { scope: keys[scope] as ScopeKey })
            contexts.set(scope, ctx)
          }
          return ctx
        }
        const registrations: Registration[] = []

        const naiveChain = (scope: number): number[] => {
          const chain: number[] = []
          for (let current = scope; current !== -1; current = parents[current] as number) chain.unshift(current)
          return [-1, ...chain]
        }
        const expected = (scope: number): [string, string][] => {
          const sequence: [string, string][] = []
          for (const layer of naiveChain(scope)) {
            for (const registration of registrations) {
              if (registration.live && registration.scope === layer)
                sequence.push([registration.name, registration.value])
            }
          }
          const order: string[] = []
          for (const [name] of sequence) if (!order.includes(name)) order.push(name)
          return order.map((name) => [name, sequence.filter(([other]) => other === name).at(-1)?.[1] as string])
        }
        const check = (): void => {
          for (let scope = 0; scope < scopeCount; scope++) {
            expect([...layers.merge(keys[scope], all)]).toEqual(expected(scope))
            const ownLive = registrations.some((registration) => registration.live && registration.scope === scope)
            expect(layers.peek(keys[scope] as ScopeKey) !== undefined).toBe(ownLive)
          }
          expect([...layers.merge(undefined, all)]).toEqual(expected(-1))
          expect([...layers.global]).toEqual(
            registrations.filter((item) => item.live && item.scope === -1).map((item) => [item.name, item.value]),
          )
        }

        for (const [index, step] of steps.entries()) {
          if (step.kind === 'register') {
            const value = `${step.value}@${index}`
            const owner = contextOf(step.scope)
            const duplicate = registrations.some(
              (item) => item.live && item.scope === step.scope && item.name === step.name,
            )
            const attempt = (): (() => Promise<void>) =>
              layers.register(owner, (layer) => {
                if (layer.has(step.name)) throw new Error(`duplicate ${step.name}`)
                layer.set(step.name, value)
                return () => {
                  layer.delete(step.name)
                }
              })
            if (duplicate) {
              expect((thrownBy(attempt) as Error).message).toBe(`duplicate ${step.name}`)
            } else {
              registrations.push({ scope: step.scope, name: step.name, value, disposer: attempt(), live: true })
            }
          } else if (step.kind === 'dispose') {
            if (registrations.length === 0) continue
            const registration = registrations[step.pick % registrations.length] as Registration
            await registration.disposer()
            registration.live = false
          } else if (step.kind === 'dispose-scope') {
            const ctx = contexts.get(step.scope)
            if (ctx === undefined) continue
            await ctx.dispose()
            contexts.delete(step.scope)
            for (const registration of registrations) if (registration.scope === step.scope) registration.live = false
          } else if (step.kind === 'relink') {
            const parent = step.parent < step.scope ? step.parent : -1
            await links[step.scope]?.()
            links[step.scope] =
              parent === -1 ? undefined : root.scopes.bindParent(keys[step.scope] as ScopeKey, keys[parent] as ScopeKey)
            parents[step.scope] = parent
          } else {
            const key = keys[step.scope] as ScopeKey
            const before = layers.peek(key)
            layers.chain(key)
            layers.merge(key, all)
            expect(layers.peek(key)).toBe(before)
          }
          check()
        }
        await root.dispose()
        for (const key of keys) expect(layers.peek(key)).toBeUndefined()
        expect(layers.global.size).toBe(0)
      }),
      { numRuns: 200 },
    )
  })
})

describe('attach and find: layers for a registry that owns its effects', () => {
  test('attach lands in the named layer without an effect; its undo reclaims the emptied layer', () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const parent = { scope: 'parent' }
    const key = { scope: 'child' }
    root.scopes.bindParent(key, parent)
    const effectsBefore = inspectContext(root).effects.children.length

    const undoGlobal = layers.attach(undefined, (layer) => {
      layer.set('x', 'G')
      return () => layer.delete('x')
    })
    const undoParent = layers.attach(parent, (layer) => {
      layer.set('x', 'P')
      return () => layer.delete('x')
    })
    expect(inspectContext(root).effects.children.length).toBe(effectsBefore)
    expect(layers.find(key, (layer) => layer.get('x'))).toBe('P')
    expect(layers.find(undefined, (layer) => layer.get('x'))).toBe('G')

    undoParent()
    expect(layers.peek(parent)).toBeUndefined()
    expect(layers.find(key, (layer) => layer.get('x'))).toBe('G')
    undoGlobal()
    expect(layers.find(key, (layer) => layer.get('x'))).toBeUndefined()
  })

  test('find walks nearest first and creates no layer', () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    const parent = { scope: 'parent' }
    const key = { scope: 'child' }
    root.scopes.bindParent(key, parent)
    layers.attach(key, (layer) => {
      layer.set('x', 'K')
      return () => layer.delete('x')
    })
    layers.attach(parent, (layer) => {
      layer.set('x', 'P')
      layer.set('y', 'P')
      return () => layer.clear()
    })
    const seen: string[] = []
    const pick = (layer: Layer): string | undefined => {
      seen.push([...layer.values()].join())
      return layer.get('y')
    }
    expect(layers.find(key, pick)).toBe('P')
    expect(seen).toEqual(['K', 'P,P'])
    expect(layers.find({ scope: 'other' }, (layer) => layer.get('x'))).toBeUndefined()
    expect(layers.peek({ scope: 'other' })).toBeUndefined()
  })

  test('attach rejects an action that is not a function and one that returns no undo', () => {
    const { root } = testRoot()
    const layers = mapLayers(root)
    expect(InvalidArgumentError.is(thrownBy(() => layers.attach(undefined, 'nope' as never)))).toBe(true)
    expect(InvalidArgumentError.is(thrownBy(() => layers.attach({ scope: 'k' }, () => 5 as never)))).toBe(true)
  })
})
