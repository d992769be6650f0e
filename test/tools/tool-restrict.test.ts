import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  ContextDisposedError,
  type Disposer,
  InvalidArgumentError,
  ToolConflictError,
  type ToolDefinition,
  ToolRestrictionError,
} from 'yoke'
import { createRootContext } from '../../src/kernel/index.js'
import { type ToolRestrictOptions, toolEvents, createToolRegistry } from '../../src/tools/index.js'
import { thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { agentOf, namesOf, recordChanges, tool, toolsHarness } from './registry-helpers.js'

function restrictionErrorOf(action: () => unknown): ToolRestrictionError {
  const error = thrownBy(action)
  if (!ToolRestrictionError.is(error)) throw new Error(`expected ToolRestrictionError, got ${String(error)}`)
  return error
}

/** Global `bash` and `read`, agent A with its own `capture`, agent B with nothing. */
async function scenario() {
  const { harness } = await toolsHarness()
  harness.tools.register([tool('bash'), tool('read')])
  const a = agentOf(harness.ctx, 'agent-a')
  const b = agentOf(harness.ctx, 'agent-b')
  a.ctx.tools.register(tool('capture'))
  return { harness, a, b }
}

describe('restrict', () => {
  test('allow [read] on A: A sees read and its own capture; the global view and B keep bash', async () => {
    const { harness, a, b } = await scenario()
    const changes = recordChanges(harness.ctx)
    const lift = harness.tools.restrict(a.ctx, { allow: ['read'] })
    expect(namesOf(a.ctx.tools.list())).toEqual(['capture', 'read'])
    expect(namesOf(a.ctx.tools.schemas())).toEqual(['capture', 'read'])
    expect(a.ctx.tools.get('bash')).toBeUndefined()
    expect(a.ctx.tools.resolve('bash')).toBeUndefined()
    expect(namesOf(harness.tools.list())).toEqual(['bash', 'read'])
    expect(namesOf(b.ctx.tools.list())).toEqual(['bash', 'read'])
    expect(changes).toEqual([{ scope: a.key, kind: 'restrict', names: ['read'] }])
    await lift()
    expect(namesOf(a.ctx.tools.list())).toEqual(['bash', 'capture', 'read'])
    expect(changes.at(-1)).toEqual({ scope: a.key, kind: 'unrestrict', names: ['read'] })
    expect(changes).toHaveLength(2)
  })

  test('a deny mask admits a tool registered later; an allow mask excludes it', async () => {
    const { harness, a, b } = await scenario()
    a.ctx.tools.restrict(a.key, { deny: ['bash'] })
    b.ctx.tools.restrict(b.key, { allow: ['read'] })
    harness.tools.register(tool('grep'))
    expect(namesOf(a.ctx.tools.list())).toEqual(['capture', 'grep', 'read'])
    expect(namesOf(b.ctx.tools.list())).toEqual(['read'])
  })

  test('allow [a, b] + deny [b] → [a]; lifting the allow → [a, c]', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(['a', 'b', 'c'].map((name) => tool(name)))
    const agent = agentOf(harness.ctx, 'agent')
    const liftAllow = agent.ctx.tools.restrict(agent.key, { allow: ['a', 'b'] })
    agent.ctx.tools.restrict(agent.key, { deny: ['b'] })
    expect(namesOf(agent.ctx.tools.list())).toEqual(['a'])
    await liftAllow()
    expect(namesOf(agent.ctx.tools.list())).toEqual(['a', 'c'])
  })

  test('restrictions intersect and each lifts on its own', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(['a', 'b', 'c', 'd'].map((name) => tool(name)))
    const agent = agentOf(harness.ctx, 'agent')
    const first = agent.ctx.tools.restrict(agent.key, { allow: ['a', 'b', 'c'] })
    const second = agent.ctx.tools.restrict(agent.key, { allow: ['b', 'c', 'd'] })
    const third = agent.ctx.tools.restrict(agent.key, { allow: ['a', 'b', 'c'], deny: ['c'] })
    expect(namesOf(agent.ctx.tools.list())).toEqual(['b'])
    await second()
    expect(namesOf(agent.ctx.tools.list())).toEqual(['a', 'b'])
    await third()
    expect(namesOf(agent.ctx.tools.list())).toEqual(['a', 'b', 'c'])
    await first()
    expect(namesOf(agent.ctx.tools.list())).toEqual(['a', 'b', 'c', 'd'])
  })

  test('a restriction on a parent scope hides the tool in the child; the child’s own tool is exempt', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register([tool('bash'), tool('read')])
    const parent = agentOf(harness.ctx, 'parent')
    const child = agentOf(harness.ctx, 'child')
    harness.ctx.scopes.bindParent(child.key, parent.key)
    parent.ctx.tools.register(tool('plan'))
    parent.ctx.tools.restrict(parent.key, { deny: ['bash'] })
    expect(namesOf(parent.ctx.tools.list())).toEqual(['plan', 'read'])
    expect(namesOf(child.ctx.tools.list())).toEqual(['plan', 'read'])
    expect(child.ctx.tools.get('bash')).toBeUndefined()
    const ownBash = tool('bash', { description: 'the child’s bash' })
    child.ctx.tools.register(ownBash)
    expect(child.ctx.tools.get('bash')).toBe(ownBash)
    expect(namesOf(child.ctx.tools.list())).toEqual(['bash', 'plan', 'read'])
    expect(parent.ctx.tools.get('bash')).toBeUndefined()
  })

  test('a restriction filters inherited tools only: an ancestor’s tools yes, the scope’s own layer no', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(tool('read'))
    const parent = agentOf(harness.ctx, 'parent')
    const child = agentOf(harness.ctx, 'child')
    harness.ctx.scopes.bindParent(child.key, parent.key)
    parent.ctx.tools.register(tool('plan'))
    child.ctx.tools.register(tool('note'))
    child.ctx.tools.restrict(child.key, { allow: ['read'] })
    expect(namesOf(child.ctx.tools.list())).toEqual(['note', 'read'])
    expect(namesOf(parent.ctx.tools.list())).toEqual(['plan', 'read'])
  })

  test('a restriction applies up to, not including, the resolving layer', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(tool('read', { description: 'global' }))
    const parent = agentOf(harness.ctx, 'parent')
    const child = agentOf(harness.ctx, 'child')
    harness.ctx.scopes.bindParent(child.key, parent.key)
    const parentRead = tool('read', { description: 'parent' })
    parent.ctx.tools.register(parentRead)
    // The parent's deny only filters what the parent inherits; the child resolves the parent's own read.
    parent.ctx.tools.restrict(parent.key, { deny: ['read'] })
    expect(parent.ctx.tools.get('read')).toBe(parentRead)
    expect(child.ctx.tools.get('read')).toBe(parentRead)
  })

  test('a hidden name does not fall back to a farther layer', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(tool('read', { description: 'global' }))
    const parent = agentOf(harness.ctx, 'parent')
    const child = agentOf(harness.ctx, 'child')
    harness.ctx.scopes.bindParent(child.key, parent.key)
    parent.ctx.tools.register(tool('read', { description: 'parent' }))
    child.ctx.tools.restrict(child.key, { deny: ['read'] })
    expect(child.ctx.tools.get('read')).toBeUndefined()
    expect(child.ctx.tools.list()).toEqual([])
    expect(await child.ctx.tools.executionMode({ name: 'read', arguments: '{}' })).toBe('exclusive')
  })

  test('the filters are copied when the restriction is made', async () => {
    const { a } = await scenario()
    const allow = ['read']
    a.ctx.tools.restrict(a.key, { allow })
    allow.push('bash')
    expect(namesOf(a.ctx.tools.list())).toEqual(['capture', 'read'])
  })

  test('disposing the owning context lifts the restriction', async () => {
    const { harness, a } = await scenario()
    const policy = harness.ctx.child('policy')
    const changes = recordChanges(harness.ctx)
    policy.tools.restrict(a.key, { deny: ['bash', 'read'] })
    expect(namesOf(a.ctx.tools.list())).toEqual(['capture'])
    await policy.dispose()
    expect(namesOf(a.ctx.tools.list())).toEqual(['bash', 'capture', 'read'])
    expect(changes).toEqual([
      { scope: a.key, kind: 'restrict', names: ['bash', 'read'] },
      { scope: a.key, kind: 'unrestrict', names: ['bash', 'read'] },
    ])
  })

  test('a restriction through a disposed context throws ContextDisposedError and restricts nothing', async () => {
    const { harness, a } = await scenario()
    const policy = harness.ctx.child('policy')
    const view = policy.tools
    await policy.dispose()
    expect(ContextDisposedError.is(thrownBy(() => view.restrict(a.key, { deny: ['bash'] })))).toBe(true)
    expect(namesOf(a.ctx.tools.list())).toEqual(['bash', 'capture', 'read'])
  })
})

describe('restriction errors', () => {
  test.each([
    ['the harness root', (root: unknown) => root],
    ['undefined', () => undefined],
  ])('restricting %s is unscoped', async (_label, scopeOf) => {
    const { harness } = await scenario()
    const changes = recordChanges(harness.ctx)
    const error = restrictionErrorOf(() => harness.tools.restrict(scopeOf(harness.ctx) as object, { allow: ['read'] }))
    expect(error).toMatchObject({
      code: 'INVALID_RESTRICTION',
      problem: 'unscoped',
      names: undefined,
      known: undefined,
    })
    expect(namesOf(harness.tools.list())).toEqual(['bash', 'read'])
    expect(changes).toEqual([])
  })

  test.each<[string, ToolRestrictOptions]>([
    ['{}', {}],
    ['an empty allow', { allow: [] }],
    ['empty allow and deny', { allow: [], deny: [] }],
  ])('%s is empty', async (_label, options) => {
    const { a } = await scenario()
    expect(restrictionErrorOf(() => a.ctx.tools.restrict(a.key, options)).problem).toBe('empty')
    expect(namesOf(a.ctx.tools.list())).toEqual(['bash', 'capture', 'read'])
  })

  test.each([
    ['A’s own capture', { allow: ['capture'] }, ['capture']],
    ['an unknown name', { deny: ['nope'] }, ['nope']],
    ['several, in listed order', { allow: ['zeta', 'read'], deny: ['capture'] }, ['zeta', 'capture']],
  ])('%s is unknown-name with the known names sorted', async (_label, options, names) => {
    const { harness, a } = await scenario()
    const changes = recordChanges(harness.ctx)
    const error = restrictionErrorOf(() => a.ctx.tools.restrict(a.key, options))
    expect(error).toMatchObject({
      code: 'INVALID_RESTRICTION',
      problem: 'unknown-name',
      names,
      known: ['bash', 'read'],
    })
    expect(error.message).toContain('(inherited: bash, read)')
    expect(namesOf(a.ctx.tools.list())).toEqual(['bash', 'capture', 'read'])
    expect(changes).toEqual([])
  })

  test('with no inherited tools the message says (none)', async () => {
    const { harness } = await toolsHarness()
    const agent = agentOf(harness.ctx, 'agent')
    agent.ctx.tools.register(tool('capture'))
    const error = restrictionErrorOf(() => agent.ctx.tools.restrict(agent.key, { allow: ['capture'] }))
    expect(error.problem).toBe('unknown-name')
    expect(error.known).toEqual([])
    expect(error.message).toContain('(none)')
  })

  test('an ancestor’s tools are inherited; a sibling’s are not', async () => {
    const { harness } = await toolsHarness()
    const parent = agentOf(harness.ctx, 'parent')
    const child = agentOf(harness.ctx, 'child')
    const sibling = agentOf(harness.ctx, 'sibling')
    harness.ctx.scopes.bindParent(child.key, parent.key)
    parent.ctx.tools.register(tool('plan'))
    sibling.ctx.tools.register(tool('other'))
    child.ctx.tools.restrict(child.key, { deny: ['plan'] })
    expect(child.ctx.tools.list()).toEqual([])
    const error = restrictionErrorOf(() => child.ctx.tools.restrict(child.key, { deny: ['other'] }))
    expect(error).toMatchObject({ problem: 'unknown-name', names: ['other'], known: ['plan'] })
  })

  test.each([
    ['a non-object', 'read', 'options'],
    ['an allow that is not an array', { allow: 'read' }, 'allow'],
    ['a deny listing a number', { deny: [1] }, 'deny'],
    ['an unknown field', { only: ['read'] }, 'options'],
  ])('%s throws InvalidArgumentError', async (_label, options, argument) => {
    const { a } = await scenario()
    const error = thrownBy(() => a.ctx.tools.restrict(a.key, options as ToolRestrictOptions))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument })
  })
})

// ---------------------------------------------------------------------------------------------
// Property: random register / dispose / restrict / lift sequences over a random scope tree always
// resolve each name to the nearest live, admitted registration (compared with a naive model).
// ---------------------------------------------------------------------------------------------

const NAMES = ['a', 'b', 'c', 'd'] as const

type Operation =
  | { readonly kind: 'register'; readonly layer: number; readonly names: readonly string[] }
  | { readonly kind: 'dispose'; readonly pick: number }
  | {
      readonly kind: 'restrict'
      readonly scope: number
      /** Picks among the names the scope inherits when the step runs (so most restrictions are valid). */
      readonly allow: readonly number[] | undefined
      readonly deny: readonly number[] | undefined
      /** A name added to `deny` as is: `undefined`, or one that may not be inherited. */
      readonly stray: string | undefined
    }
  | { readonly kind: 'lift'; readonly pick: number }

interface ModelRegistration {
  readonly layer: number
  readonly definitions: ReadonlyMap<string, ToolDefinition>
  readonly dispose: Disposer
}

interface ModelRestriction {
  readonly scope: number
  readonly allow: ReadonlySet<string> | undefined
  readonly deny: ReadonlySet<string> | undefined
  readonly lift: Disposer
}

const GLOBAL = -1
const picks = fc.array(fc.nat(), { maxLength: 3 })
const operation = (scopes: number): fc.Arbitrary<Operation> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('register' as const),
        layer: fc.integer({ min: GLOBAL, max: scopes - 1 }),
        names: fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('dispose' as const), pick: fc.nat() }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('restrict' as const),
        scope: fc.integer({ min: 0, max: scopes - 1 }),
        allow: fc.option(picks, { nil: undefined }),
        deny: fc.option(picks, { nil: undefined }),
        stray: fc.oneof(
          { weight: 6, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.constantFrom(...NAMES, 'zz') },
        ),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('lift' as const), pick: fc.nat() }) },
  )

const world = fc.integer({ min: 1, max: 5 }).chain((scopes) =>
  fc.record({
    parents: fc.tuple(...Array.from({ length: scopes }, (_, index) => fc.integer({ min: -1, max: index - 1 }))),
    operations: fc.array(operation(scopes), { minLength: 10, maxLength: 40 }),
  }),
)

class NaiveTools {
  readonly registrations: ModelRegistration[] = []
  readonly restrictions: ModelRestriction[] = []
  constructor(readonly parents: readonly number[]) {}

  chain(scope: number): number[] {
    const chain: number[] = []
    for (let current = scope; current !== GLOBAL; current = this.parents[current] as number) chain.push(current)
    return chain
  }

  layerNames(layer: number): Set<string> {
    return new Set(
      this.registrations
        .filter((registration) => registration.layer === layer)
        .flatMap((registration) => [...registration.definitions.keys()]),
    )
  }

  find(layer: number, name: string): ToolDefinition | undefined {
    for (const registration of this.registrations)
      if (registration.layer === layer && registration.definitions.has(name)) return registration.definitions.get(name)
    return undefined
  }

  admits(scope: number, name: string): boolean {
    return this.restrictions.every(
      (restriction) =>
        restriction.scope !== scope ||
        ((restriction.allow === undefined || restriction.allow.has(name)) && restriction.deny?.has(name) !== true),
    )
  }

  resolve(name: string, scope: number | undefined): ToolDefinition | undefined {
    const layers = [...(scope === undefined ? [] : this.chain(scope)), GLOBAL]
    for (const [depth, layer] of layers.entries()) {
      const definition = this.find(layer, name)
      if (definition === undefined) continue
      return layers.slice(0, depth).every((nearer) => this.admits(nearer, name)) ? definition : undefined
    }
    return undefined
  }

  inherited(scope: number): string[] {
    const inherited = new Set(this.layerNames(GLOBAL))
    for (const ancestor of this.chain(scope).slice(1)) for (const name of this.layerNames(ancestor)) inherited.add(name)
    return [...inherited].sort()
  }
}

describe('resolution property', () => {
  test('every name resolves to the nearest live, admitted registration, and list() agrees', async () => {
    await fc.assert(
      fc.asyncProperty(world, async ({ parents, operations }) => {
        const root = createRootContext({ logger: recordingLogger() })
        root.registerEvents(toolEvents)
        const registry = createToolRegistry(root)
        const keys = parents.map((_, index) => ({ scope: index }))
        parents.forEach((parent, index) => {
          if (parent !== GLOBAL) root.scopes.bindParent(keys[index] as object, keys[parent] as object)
        })
        const model = new NaiveTools(parents)
        const keyOf = (layer: number): object | undefined => (layer === GLOBAL ? undefined : keys[layer])
        let serial = 0
        const check = (): void => {
          for (const scope of [undefined, ...keys.keys()]) {
            const key = scope === undefined ? undefined : keys[scope]
            const expected = NAMES.flatMap((name) => {
              const definition = model.resolve(name, scope)
              return definition === undefined ? [] : [definition]
            })
            for (const name of NAMES) expect(registry.get(name, key)).toBe(model.resolve(name, scope))
            expect(registry.list(key)).toEqual(expected)
            expect(namesOf(registry.schemas(key))).toEqual(namesOf(expected))
          }
        }
        for (const step of operations) {
          if (step.kind === 'register') {
            const batch = step.names.map((name) => tool(name, { description: `registration ${serial++}` }))
            const taken = model.layerNames(step.layer)
            const clash = step.names.some((name, index) => taken.has(name) || step.names.indexOf(name) !== index)
            if (clash) {
              expect(
                ToolConflictError.is(thrownBy(() => registry.register(batch, { scope: keyOf(step.layer) as object }))),
              ).toBe(true)
            } else {
              const dispose = registry.register(
                batch,
                step.layer === GLOBAL ? {} : { scope: keyOf(step.layer) as object },
              )
              model.registrations.push({
                layer: step.layer,
                definitions: new Map(batch.map((definition) => [definition.name, definition])),
                dispose,
              })
            }
          } else if (step.kind === 'dispose' || step.kind === 'lift') {
            const list: { dispose?: Disposer; lift?: Disposer }[] =
              step.kind === 'dispose' ? model.registrations : model.restrictions
            if (list.length === 0) continue
            const [picked] = list.splice(step.pick % list.length, 1)
            await (picked?.dispose ?? picked?.lift)?.()
          } else {
            const known = model.inherited(step.scope)
            const pick = (list: readonly number[]): string[] =>
              list.map((index) => known[index % known.length] ?? NAMES[index % NAMES.length] ?? 'a')
            const listedAllow = step.allow === undefined ? undefined : pick(step.allow)
            const listedDeny =
              step.deny === undefined && step.stray === undefined
                ? undefined
                : [...pick(step.deny ?? []), ...(step.stray === undefined ? [] : [step.stray])]
            const allow = listedAllow !== undefined && listedAllow.length > 0 ? new Set(listedAllow) : undefined
            const deny = listedDeny !== undefined && listedDeny.length > 0 ? new Set(listedDeny) : undefined
            const options = {
              ...(listedAllow === undefined ? {} : { allow: listedAllow }),
              ...(listedDeny === undefined ? {} : { deny: listedDeny }),
            }
            const unknown = [...new Set([...(allow ?? []), ...(deny ?? [])])].filter((name) => !known.includes(name))
            if (allow === undefined && deny === undefined) {
              expect(restrictionErrorOf(() => registry.restrict(keys[step.scope], options)).problem).toBe('empty')
            } else if (unknown.length > 0) {
              expect(restrictionErrorOf(() => registry.restrict(keys[step.scope], options))).toMatchObject({
                problem: 'unknown-name',
                names: unknown,
                known,
              })
            } else {
              const lift = registry.restrict(keys[step.scope], options)
              model.restrictions.push({ scope: step.scope, allow, deny, lift })
            }
          }
          check()
        }
        await root.dispose()
        for (const scope of [undefined, ...keys]) expect(registry.list(scope)).toEqual([])
      }),
      { numRuns: 150 },
    )
  })
})
