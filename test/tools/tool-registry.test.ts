import { describe, expect, test, vi } from 'vitest'
import { z } from 'zod'
import {
  ContextDisposedError,
  defineTool,
  InvalidArgumentError,
  ToolConflictError,
  type ToolDefinition,
  type ToolGuard,
} from 'yoke'
import type { ToolCallInfo } from '../../src/tools/index.js'
import { recordKernelErrors, thrownBy } from '../helpers/outcomes.js'
import { agentOf, namesOf, recordChanges, tool, toolsHarness } from './registry-helpers.js'
import { block, schedulerWorld, toolLog } from './scheduler/scheduler-helpers.js'

function conflictOf(action: () => unknown): ToolConflictError {
  const error = thrownBy(action)
  if (!ToolConflictError.is(error)) throw new Error(`expected ToolConflictError, got ${String(error)}`)
  return error
}

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen)
}

describe('registration', () => {
  test('registering read twice globally throws TOOL_CONFLICT naming agent.ctx.tools; the first stays', async () => {
    const { harness } = await toolsHarness()
    const first = tool('read')
    harness.tools.register(first)
    const error = conflictOf(() => harness.tools.register(tool('read')))
    expect(error.code).toBe('TOOL_CONFLICT')
    expect(error.toolName).toBe('read')
    expect(error.scope).toBeUndefined()
    expect(error.message).toContain('agent.ctx.tools')
    expect(harness.tools.get('read')).toBe(first)
  })

  test('a batch [x, y] where y conflicts throws and registers nothing, with no tools/change', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(tool('y'))
    const changes = recordChanges(harness.ctx)
    const error = conflictOf(() => harness.tools.register([tool('x'), tool('y')]))
    expect(error.toolName).toBe('y')
    expect(harness.tools.get('x')).toBeUndefined()
    expect(namesOf(harness.tools.list())).toEqual(['y'])
    expect(changes).toEqual([])
  })

  test('a name repeated within one batch is a conflict; nothing is registered', async () => {
    const { harness } = await toolsHarness()
    const error = conflictOf(() => harness.tools.register([tool('a'), tool('b'), tool('a')]))
    expect(error).toMatchObject({ code: 'TOOL_CONFLICT', toolName: 'a', scope: undefined })
    expect(error.message).toContain('twice in one registration batch')
    expect(harness.tools.list()).toEqual([])
  })

  test('a batch [a, b] emits one register change; its disposer removes both and emits one unregister', async () => {
    const { harness } = await toolsHarness()
    const changes = recordChanges(harness.ctx)
    const dispose = harness.tools.register([tool('b'), tool('a')])
    expect(changes).toEqual([{ scope: undefined, kind: 'register', names: ['a', 'b'] }])
    expect(namesOf(harness.tools.list())).toEqual(['a', 'b'])
    await dispose()
    await dispose()
    expect(harness.tools.list()).toEqual([])
    expect(changes).toEqual([
      { scope: undefined, kind: 'register', names: ['a', 'b'] },
      { scope: undefined, kind: 'unregister', names: ['a', 'b'] },
    ])
    expect(Object.isFrozen(changes[0])).toBe(true)
    expect(Object.isFrozen(changes[0]?.names)).toBe(true)
  })

  test('a throwing tools/change listener is contained and leaves the registration in place', async () => {
    const { harness } = await toolsHarness()
    const errors = recordKernelErrors(harness.ctx)
    harness.on('tools/change', () => {
      throw new Error('listener exploded')
    })
    const after = vi.fn()
    harness.on('tools/change', after)
    const read = tool('read')
    const dispose = harness.tools.register(read)
    expect(harness.tools.get('read')).toBe(read)
    expect(after).toHaveBeenCalledTimes(1)
    expect(errors).toHaveLength(1)
    expect(errors[0]?.error).toMatchObject({ message: 'listener exploded' })
    await dispose()
    expect(harness.tools.get('read')).toBeUndefined()
    expect(after).toHaveBeenCalledTimes(2)
  })

  test('disposing the owning context unregisters, with one unregister change', async () => {
    const { harness } = await toolsHarness()
    const changes = recordChanges(harness.ctx)
    const plugin = harness.ctx.child('plugin')
    plugin.tools.register([tool('read'), tool('grep')])
    const agent = agentOf(harness.ctx, 'agent-a')
    agent.ctx.tools.register(tool('capture'))
    expect(namesOf(harness.tools.list())).toEqual(['grep', 'read'])
    expect(namesOf(agent.ctx.tools.list())).toEqual(['capture', 'grep', 'read'])
    await plugin.dispose()
    await agent.ctx.dispose()
    expect(harness.tools.list()).toEqual([])
    expect(harness.tools.list(agent.key)).toEqual([])
    expect(changes.map(({ kind, names }) => `${kind}:${names.join(',')}`)).toEqual([
      'register:grep,read',
      'register:capture',
      'unregister:grep,read',
      'unregister:capture',
    ])
  })

  test('registering through a disposed context throws ContextDisposedError and registers nothing', async () => {
    const { harness } = await toolsHarness()
    const agent = agentOf(harness.ctx, 'agent-a')
    const view = agent.ctx.tools
    await agent.ctx.dispose()
    const changes = recordChanges(harness.ctx)
    const error = thrownBy(() => view.register(tool('late')))
    expect(ContextDisposedError.is(error)).toBe(true)
    expect(thrownBy(() => agent.ctx.tools.guard(() => undefined))).toSatisfy((value: unknown) =>
      ContextDisposedError.is(value),
    )
    expect(harness.tools.get('late', agent.key)).toBeUndefined()
    expect(changes).toEqual([])
  })

  test.each([
    ['an object that is not a definition', { name: 'y', description: 'd' }],
    ['an unfrozen copy of a definition', { ...tool('y') }],
    ['a function', () => 'y'],
    ['null', null],
  ])('%s in a batch throws InvalidArgumentError naming its index; nothing is registered', async (_label, bad) => {
    const { harness } = await toolsHarness()
    const error = thrownBy(() => harness.tools.register([tool('x'), bad as ToolDefinition]))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'tools[1]', value: bad })
    expect(harness.tools.get('x')).toBeUndefined()
  })

  test('a single invalid value throws with argument "tool"; a non-object option or scope throws too', async () => {
    const { harness } = await toolsHarness()
    expect(thrownBy(() => harness.tools.register('read' as unknown as ToolDefinition))).toMatchObject({
      argument: 'tool',
    })
    expect(thrownBy(() => harness.tools.register(tool('a'), 'global' as never))).toMatchObject({ argument: 'options' })
    expect(thrownBy(() => harness.tools.register(tool('a'), { scope: 'agent' as never }))).toMatchObject({
      argument: 'scope',
    })
    expect(thrownBy(() => harness.tools.get('a', 7 as never))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      argument: 'scope',
    })
    expect(harness.tools.list()).toEqual([])
  })

  test('an empty batch registers nothing and emits nothing', async () => {
    const { harness } = await toolsHarness()
    const changes = recordChanges(harness.ctx)
    const dispose = harness.tools.register([])
    await dispose()
    expect(changes).toEqual([])
  })

  test('the same name twice in one scope layer conflicts with that scope and no agent.ctx.tools hint', async () => {
    const { harness } = await toolsHarness()
    const agent = agentOf(harness.ctx, 'agent-a')
    harness.tools.register(tool('read'))
    agent.ctx.tools.register(tool('read'))
    const error = conflictOf(() => agent.ctx.tools.register(tool('read')))
    expect(error.scope).toBe(agent.key)
    expect(error.message).not.toContain('agent.ctx.tools')
    expect(conflictOf(() => harness.tools.register(tool('read'), { scope: agent.key })).scope).toBe(agent.key)
  })

  test('a view registers in its context scope by default, or in the layer given by scope', async () => {
    const { harness } = await toolsHarness()
    const agent = agentOf(harness.ctx, 'agent-a')
    const other = agentOf(harness.ctx, 'agent-b')
    const local = tool('local')
    const placed = tool('placed')
    agent.ctx.tools.register(local)
    agent.ctx.tools.register(placed, { scope: other.key })
    harness.tools.register(tool('shared'), { scope: agent.ctx })
    expect(namesOf(harness.tools.list())).toEqual([])
    expect(namesOf(agent.ctx.tools.list())).toEqual(['local', 'shared'])
    expect(namesOf(other.ctx.tools.list())).toEqual(['placed'])
    // Owned by the agent's context: gone with it, whichever layer.
    await agent.ctx.dispose()
    expect(other.ctx.tools.list()).toEqual([])
  })
})

describe('scoped shadowing', () => {
  test('agent A sees its own read, agent B the global one; A-only capture is invisible to B', async () => {
    const { harness } = await toolsHarness()
    const globalRead = tool('read', { description: 'global read' })
    harness.tools.register([tool('bash'), globalRead])
    const a = agentOf(harness.ctx, 'agent-a')
    const b = agentOf(harness.ctx, 'agent-b')
    const localRead = tool('read', { description: 'A read' })
    const capture = tool('capture')
    a.ctx.tools.register([localRead, capture])

    expect(a.ctx.tools.get('read')).toBe(localRead)
    expect(a.ctx.tools.schemas().filter((schema) => schema.name === 'read')).toEqual([
      { name: 'read', description: 'A read', parameters: { type: 'object' } },
    ])
    expect(namesOf(a.ctx.tools.schemas())).toEqual(['bash', 'capture', 'read'])
    expect(b.ctx.tools.get('read')).toBe(globalRead)
    expect(namesOf(b.ctx.tools.list())).toEqual(['bash', 'read'])
    expect(b.ctx.tools.get('capture')).toBeUndefined()
    expect(b.ctx.tools.resolve('capture')).toBeUndefined()
    expect(a.ctx.tools.resolve('capture')).toEqual({ definition: capture })
    expect(harness.tools.get('capture', a.key)).toBe(capture)
    expect(harness.tools.get('read')).toBe(globalRead)
    expect(await b.ctx.tools.executionMode({ name: 'capture', arguments: '{}' })).toBe('exclusive')
  })

  test('through the scheduler, agent B calling A’s local capture gets UNKNOWN_TOOL; B’s read runs the global one', async () => {
    const world = await schedulerWorld()
    world.harness.tools.register([tool('bash'), tool('read', { execute: () => 'global read' })])
    const a = agentOf(world.harness.ctx, 'agent-a')
    a.ctx.tools.register([tool('read', { execute: () => 'A read' }), tool('capture')])
    await world.run([block('c1', 'capture'), block('c2', 'read')])
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1 UNKNOWN_TOOL',
      'tool/call c2',
      'tool/result c2',
    ])
    const contents = world.live.results.map(({ result }) => result.content)
    expect(contents).toEqual([
      [{ type: 'text', text: 'Tool error (UNKNOWN_TOOL): no tool named "capture" is available' }],
      [{ type: 'text', text: 'global read' }],
    ])
  })

  test('resolution walks the scope chain nearest first, then the global layer', async () => {
    const { harness } = await toolsHarness()
    const parent = agentOf(harness.ctx, 'parent')
    const child = agentOf(harness.ctx, 'child')
    harness.ctx.scopes.bindParent(child.key, parent.key)
    const globalRead = tool('read', { description: 'g' })
    const parentRead = tool('read', { description: 'p' })
    const childRead = tool('read', { description: 'c' })
    harness.tools.register([globalRead, tool('bash')])
    const parentOwn = parent.ctx.tools.register([parentRead, tool('plan')])
    const childOwn = child.ctx.tools.register(childRead)
    expect(child.ctx.tools.get('read')).toBe(childRead)
    expect(namesOf(child.ctx.tools.list())).toEqual(['bash', 'plan', 'read'])
    await childOwn()
    expect(child.ctx.tools.get('read')).toBe(parentRead)
    await parentOwn()
    expect(child.ctx.tools.get('read')).toBe(globalRead)
    expect(namesOf(child.ctx.tools.list())).toEqual(['bash', 'read'])
  })

  test('a scoped change is dispatched with its scope: tagged listeners of that chain hear it, others not', async () => {
    const { harness } = await toolsHarness()
    const a = agentOf(harness.ctx, 'agent-a')
    const b = agentOf(harness.ctx, 'agent-b')
    const everything = recordChanges(harness.ctx)
    const heardByA = recordChanges(a.ctx)
    const heardByB = recordChanges(b.ctx)
    a.ctx.tools.register(tool('capture'))
    harness.tools.register(tool('bash'))
    expect(everything).toEqual([
      { scope: a.key, kind: 'register', names: ['capture'] },
      { scope: undefined, kind: 'register', names: ['bash'] },
    ])
    expect(heardByA).toEqual([{ scope: a.key, kind: 'register', names: ['capture'] }])
    expect(heardByB).toEqual([])
  })
})

describe('schemas (performance)', () => {
  test('a zod tool gives exactly { name, description, parameters } with the draft-07 input schema', async () => {
    const { harness } = await toolsHarness()
    const input = z.object({ path: z.string(), depth: z.number().int().optional() })
    const read = defineTool({
      name: 'read',
      description: 'Read a file',
      input,
      timeoutMs: 5,
      isConcurrencySafe: () => true,
      execute: () => 'x',
    })
    harness.tools.register(read)
    const { $schema: _dialect, ...parameters } = z.toJSONSchema(input, { target: 'draft-07', io: 'input' })
    const schemas = harness.tools.schemas()
    expect(schemas).toEqual([{ name: 'read', description: 'Read a file', parameters }])
    expect(Object.keys(schemas[0] ?? {})).toEqual(['name', 'description', 'parameters'])
    expect(isDeepFrozen(schemas)).toBe(true)
  })

  test('schemas are sorted by name in code-unit order, not locale order', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(['b', 'B', 'a', '_', 'Z', 'a-1', 'a_1'].map((name) => tool(name)))
    expect(namesOf(harness.tools.schemas())).toEqual(['B', 'Z', '_', 'a', 'a-1', 'a_1', 'b'])
    expect(namesOf(harness.tools.list())).toEqual(['B', 'Z', '_', 'a', 'a-1', 'a_1', 'b'])
  })

  test('a nested raw JSON Schema is handed out deep-frozen', async () => {
    const { harness } = await toolsHarness()
    const parameters = {
      type: 'object',
      properties: { path: { type: 'string', enum: ['a', 'b'] } },
      required: ['path'],
    }
    harness.tools.register(tool('read', { input: parameters }))
    const [schema] = harness.tools.schemas()
    expect(schema?.parameters).toEqual(parameters)
    expect(isDeepFrozen(schema)).toBe(true)
  })

  test('the same array while nothing changed; a new one after a change affecting the scope', async () => {
    const { harness } = await toolsHarness()
    const a = agentOf(harness.ctx, 'agent-a')
    const b = agentOf(harness.ctx, 'agent-b')
    harness.tools.register(tool('read'))
    const first = harness.tools.schemas()
    const firstOfA = a.ctx.tools.schemas()
    expect(harness.tools.schemas()).toBe(first)
    expect(a.ctx.tools.schemas()).toBe(firstOfA)
    expect(a.ctx.tools.list()).toBe(a.ctx.tools.list())

    b.ctx.tools.register(tool('capture'))
    expect(harness.tools.schemas()).toBe(first)
    expect(a.ctx.tools.schemas()).toBe(firstOfA)
    expect(namesOf(b.ctx.tools.schemas())).toEqual(['capture', 'read'])

    const dispose = a.ctx.tools.register(tool('note'))
    const second = a.ctx.tools.schemas()
    expect(second).not.toBe(firstOfA)
    expect(namesOf(second)).toEqual(['note', 'read'])
    expect(namesOf(firstOfA)).toEqual(['read'])
    expect(second[1]).toBe(firstOfA[0])
    await dispose()
    expect(namesOf(a.ctx.tools.schemas())).toEqual(['read'])
  })

  test('linking a scope to a parent changes what it sees, without any tools/change', async () => {
    const { harness } = await toolsHarness()
    const parent = agentOf(harness.ctx, 'parent')
    const child = agentOf(harness.ctx, 'child')
    parent.ctx.tools.register(tool('plan'))
    const before = child.ctx.tools.schemas()
    expect(before).toEqual([])
    const link = harness.ctx.scopes.bindParent(child.key, parent.key)
    expect(namesOf(child.ctx.tools.schemas())).toEqual(['plan'])
    await link()
    expect(child.ctx.tools.schemas()).toEqual([])
  })
})

describe('execution mode', () => {
  test.each([
    ['returns exactly true', () => true, 'parallel'],
    ['returns false', () => false, 'exclusive'],
    ['returns 1', () => 1, 'exclusive'],
    ['returns "true"', () => 'true', 'exclusive'],
    ['returns a promise of true', () => Promise.resolve(true), 'exclusive'],
    [
      'throws',
      () => {
        throw new Error('classifier exploded')
      },
      'exclusive',
    ],
  ])('a classifier that %s → %s', async (_label, classifier, mode) => {
    const { harness } = await toolsHarness()
    harness.tools.register(tool('t', { isConcurrencySafe: classifier as () => boolean }))
    expect(await harness.tools.executionMode({ name: 't', arguments: '{}' })).toBe(mode)
  })

  test('no classifier, an unknown tool and unparsable arguments are exclusive', async () => {
    const { harness } = await toolsHarness()
    const classifier = vi.fn(() => true)
    harness.tools.register([tool('plain'), tool('safe', { isConcurrencySafe: classifier })])
    expect(await harness.tools.executionMode({ name: 'plain', arguments: '{}' })).toBe('exclusive')
    expect(await harness.tools.executionMode({ name: 'nope', arguments: '{}' })).toBe('exclusive')
    expect(await harness.tools.executionMode({ name: 'safe', arguments: 'not json' })).toBe('exclusive')
    expect(await harness.tools.executionMode({ name: 'safe', arguments: '[1]' })).toBe('exclusive')
    expect(classifier).not.toHaveBeenCalled()
    expect(await harness.tools.executionMode({ name: 'safe', arguments: '' })).toBe('parallel')
    expect(classifier).toHaveBeenCalledWith({})
  })

  test('zod-invalid arguments are exclusive; the classifier receives the parsed, validated arguments', async () => {
    const { harness } = await toolsHarness()
    const seen: unknown[] = []
    const read = defineTool({
      name: 'read',
      description: 'Read a file',
      input: z.object({ path: z.string().transform((path) => path.toUpperCase()), depth: z.number().default(3) }),
      isConcurrencySafe: (args) => {
        seen.push(args)
        return true
      },
      execute: () => 'x',
    })
    harness.tools.register(read)
    expect(await harness.tools.executionMode({ name: 'read', arguments: '{}' })).toBe('exclusive')
    expect(await harness.tools.executionMode({ name: 'read', arguments: '{"path":1}' })).toBe('exclusive')
    expect(seen).toEqual([])
    expect(await harness.tools.executionMode({ name: 'read', arguments: '{"path":"a.txt"}' })).toBe('parallel')
    expect(seen).toEqual([{ path: 'A.TXT', depth: 3 }])
  })

  test('a raw JSON Schema tool classifies its parsed arguments unvalidated', async () => {
    const { harness } = await toolsHarness()
    const classifier = vi.fn((args: unknown) => (args as { fast?: unknown }).fast === true)
    harness.tools.register(tool('t', { input: { type: 'object', required: ['x'] }, isConcurrencySafe: classifier }))
    expect(await harness.tools.executionMode({ name: 't', arguments: '{"fast":true}' })).toBe('parallel')
    expect(await harness.tools.executionMode({ name: 't', arguments: '{"fast":false}' })).toBe('exclusive')
    expect(classifier.mock.calls).toEqual([[{ fast: true }], [{ fast: false }]])
  })

  test('the visible definition decides: a scope classifies its own tool, others see an unknown one', async () => {
    const { harness } = await toolsHarness()
    const a = agentOf(harness.ctx, 'agent-a')
    harness.tools.register(tool('read'))
    a.ctx.tools.register(tool('read', { isConcurrencySafe: () => true }))
    expect(await a.ctx.tools.executionMode({ name: 'read', arguments: '{}' })).toBe('parallel')
    expect(await harness.tools.executionMode({ name: 'read', arguments: '{}' })).toBe('exclusive')
    expect(await harness.tools.executionMode({ name: 'read', arguments: '{}' }, a.key)).toBe('parallel')
    a.ctx.tools.restrict(a.key, { deny: ['read'] })
    expect(await a.ctx.tools.executionMode({ name: 'read', arguments: '{}' })).toBe('parallel')
  })

  test('a malformed call is exclusive', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(tool('t', { isConcurrencySafe: () => true }))
    expect(await harness.tools.executionMode({ name: 't', arguments: {} as unknown as string })).toBe('exclusive')
    expect(await harness.tools.executionMode(null as never)).toBe('exclusive')
  })
})

describe('guards', () => {
  const named = (name: string): ToolGuard =>
    Object.defineProperty((_call: ToolCallInfo) => undefined, 'name', { value: name })

  test('guardsFor runs global guards first, then each chain scope from the farthest to the nearest, in registration order', async () => {
    const { harness } = await toolsHarness()
    const parent = agentOf(harness.ctx, 'parent')
    const child = agentOf(harness.ctx, 'child')
    harness.ctx.scopes.bindParent(child.key, parent.key)
    const [g1, g2, p1, p2, c1] = ['g1', 'g2', 'p1', 'p2', 'c1'].map(named) as [
      ToolGuard,
      ToolGuard,
      ToolGuard,
      ToolGuard,
      ToolGuard,
    ]
    child.ctx.tools.guard(c1)
    parent.ctx.tools.guard(p1)
    harness.tools.guard(g1)
    harness.tools.guard(p2, { scope: parent.key })
    harness.tools.guard(g2)
    expect(child.ctx.tools.guardsFor()).toEqual([g1, g2, p1, p2, c1])
    expect(harness.tools.guardsFor(child.key)).toEqual([g1, g2, p1, p2, c1])
    expect(parent.ctx.tools.guardsFor()).toEqual([g1, g2, p1, p2])
    expect(harness.tools.guardsFor()).toEqual([g1, g2])
    expect(Object.isFrozen(harness.tools.guardsFor())).toBe(true)
  })

  test('each registration is removed on its own, also when the same function is registered twice', async () => {
    const { harness } = await toolsHarness()
    const a = agentOf(harness.ctx, 'agent-a')
    const guard = named('g')
    const other = named('o')
    const first = harness.tools.guard(guard)
    harness.tools.guard(other)
    harness.tools.guard(guard)
    a.ctx.tools.guard(guard)
    expect(a.ctx.tools.guardsFor()).toEqual([guard, other, guard, guard])
    await first()
    expect(a.ctx.tools.guardsFor()).toEqual([other, guard, guard])
    await a.ctx.dispose()
    expect(harness.tools.guardsFor(a.key)).toEqual([other, guard])
  })

  test('a guard that is not a function throws InvalidArgumentError', async () => {
    const { harness } = await toolsHarness()
    expect(thrownBy(() => harness.tools.guard('deny' as unknown as ToolGuard))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      argument: 'guard',
    })
    expect(harness.tools.guardsFor()).toEqual([])
  })
})
