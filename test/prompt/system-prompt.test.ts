import { describe, expect, test } from 'vitest'
import {
  type Agent,
  ContextDisposedError,
  type Context,
  type KernelErrorEvent,
  PromptRegistrationError,
  type SystemPromptChangePayload,
} from 'yoke'
import type { PromptAssembly } from '../../src/prompt/index.js'
import { scriptedModel, text } from 'yoke/testing'
import { recordKernelErrors, thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'
import { names, P, promptWorld, render } from './system-prompt-helpers.js'

/** Records every `system-prompt/change` heard through `ctx`, in order. */
function recordChanges(ctx: Context): SystemPromptChangePayload[] {
  const changes: SystemPromptChangePayload[] = []
  ctx.on('system-prompt/change', (payload) => {
    changes.push(payload)
  })
  return changes
}

describe('sections, variables and the instructions option', () => {
  test('the harness instructions, then rules and where, rendered with dir', async () => {
    const { root, keyA, asm } = await promptWorld({ instructions: 'You are helpful.' })
    P(root).section({ name: 'rules', order: 10, text: 'Rule A.' })
    P(root).section({ name: 'where', order: 20, text: 'Work in {{dir}}.' })
    P(root).variable('dir', '/w')
    const assembly = await asm(keyA)
    expect(names(assembly.sections)).toEqual(['instructions', 'rules', 'where'])
    expect(assembly.sections[0]).toEqual({ name: 'instructions', order: 0, text: 'You are helpful.' })
    expect(render(assembly)).toBe('You are helpful.\n\nRule A.\n\nWork in /w.')
  })

  test('without instructions and sections the rendered system prompt is empty', async () => {
    const { keyA, asm } = await promptWorld()
    const assembly = await asm(keyA)
    expect(assembly).toEqual({ sections: [], contexts: [], variables: {}, tools: [] })
    expect(render(assembly)).toBe('')
  })

  test('sections, contexts and variables are separate namespaces', async () => {
    const { root, asm } = await promptWorld()
    P(root).section({ name: 'mode', order: 0, text: 'Mode {{mode}}.' })
    P(root).context({ name: 'mode', order: 0, text: 'Now {{mode}}.' })
    P(root).variable('mode', 'plan')
    const assembly = await asm()
    expect(assembly.sections).toEqual([{ name: 'mode', order: 0, text: 'Mode {{mode}}.' }])
    expect(assembly.contexts).toEqual([{ name: 'mode', order: 0, text: 'Now {{mode}}.' }])
    expect({ ...assembly.variables }).toEqual({ mode: 'plan' })
  })
})

describe('registration rules', () => {
  test('a duplicate global section throws without scope; a scoped one shadows', async () => {
    const { root, A, keyA, asm } = await promptWorld({ instructions: 'You are helpful.' })
    P(root).section({ name: 'rules', order: 10, text: 'Rule A.' })
    const duplicate = expectError(
      thrownBy(() => P(root).section({ name: 'rules', order: 11, text: 'Rule B.' })),
      PromptRegistrationError,
      'DUPLICATE_PROMPT_CONTRIBUTION',
      { kind: 'section', name: 'rules' },
    )
    expect(Object.hasOwn(duplicate, 'scope')).toBe(false)
    expect(duplicate.message).toMatch(/agent or preset context/)
    expect((await asm(keyA)).sections.filter((section) => section.name === 'rules')).toEqual([
      { name: 'rules', order: 10, text: 'Rule A.' },
    ])
    expectError(
      thrownBy(() => P(root).section({ name: 'instructions', order: 0, text: 'Other.' })),
      PromptRegistrationError,
      'DUPLICATE_PROMPT_CONTRIBUTION',
      {
        kind: 'section',
        name: 'instructions',
      },
    )
    P(A).section({ name: 'instructions', order: 0, text: 'Scoped.' })
    expect(render(await asm(keyA))).toBe('Scoped.\n\nRule A.')
  })

  test('a duplicate in a scoped layer names the scope, per kind; two contexts of one scope share the layer', async () => {
    const { A, keyA } = await promptWorld()
    const nested = A.child('tool')
    P(A).variable('who', 'a')
    P(A).context({ name: 'c', order: 0, text: 'C' })
    expectError(
      thrownBy(() => P(nested).variable('who', 'b')),
      PromptRegistrationError,
      'DUPLICATE_PROMPT_CONTRIBUTION',
      { kind: 'variable', name: 'who', scope: keyA },
    )
    const context = expectError(
      thrownBy(() => P(A).context({ name: 'c', order: 1, text: 'D' })),
      PromptRegistrationError,
      'DUPLICATE_PROMPT_CONTRIBUTION',
      {
        kind: 'context',
        name: 'c',
        scope: keyA,
      },
    )
    expect(context.message).toBe('a context named "c" is already registered in this scope')
  })

  test('invalid contributions name the field, register nothing and emit nothing', async () => {
    const { root, asm } = await promptWorld()
    const changes = recordChanges(root)
    const order = expectError(
      thrownBy(() => P(root).section({ name: 'x', order: Number.NaN, text: 't' })),
      PromptRegistrationError,
      'INVALID_PROMPT_CONTRIBUTION',
      {
        kind: 'section',
        field: 'order',
      },
    )
    expect(order.value).toBeNaN()
    expectError(
      thrownBy(() => P(root).variable('Model', 'v')),
      PromptRegistrationError,
      'INVALID_PROMPT_CONTRIBUTION',
      { kind: 'variable', field: 'name', value: 'Model' },
    )
    expectError(
      thrownBy(() => P(root).context({ name: 'c', order: 1, text: 't', complete: true } as never)),
      PromptRegistrationError,
      'INVALID_PROMPT_CONTRIBUTION',
      { kind: 'context', field: 'complete', value: true },
    )
    expect(changes).toEqual([])
    expect(await asm()).toEqual({ sections: [], contexts: [], variables: {}, tools: [] })
  })

  test.each([
    ['a non-object definition', () => 'rules', 'definition', 'rules'],
    ['an empty name', () => ({ name: '', order: 0, text: 't' }), 'name', ''],
    ['a name with whitespace', () => ({ name: 'my rules', order: 0, text: 't' }), 'name', 'my rules'],
    ['a non-string name', () => ({ name: 7, order: 0, text: 't' }), 'name', 7],
    [
      'an infinite order',
      () => ({ name: 'x', order: Number.POSITIVE_INFINITY, text: 't' }),
      'order',
      Number.POSITIVE_INFINITY,
    ],
    ['a string order', () => ({ name: 'x', order: '1', text: 't' }), 'order', '1'],
    ['a numeric text', () => ({ name: 'x', order: 0, text: 5 }), 'text', 5],
    ['a non-boolean complete', () => ({ name: 'x', order: 0, text: 't', complete: 'yes' }), 'complete', 'yes'],
  ])('section with %s → field %s', async (_case, definition, field, value) => {
    const { root } = await promptWorld()
    const changes = recordChanges(root)
    expectError(
      thrownBy(() => P(root).section(definition() as never)),
      PromptRegistrationError,
      'INVALID_PROMPT_CONTRIBUTION',
      { kind: 'section', field, value },
    )
    expect(changes).toEqual([])
  })

  test.each([
    ['a name starting with a digit', '1st', 'v', 'name', '1st'],
    ['a name with a dash', 'my-var', 'v', 'name', 'my-var'],
    ['a numeric value', 'count', 3, 'value', 3],
    ['an undefined value', 'count', undefined, 'value', undefined],
  ])('variable with %s → field %s', async (_case, name, value, field, reported) => {
    const { root } = await promptWorld()
    expectError(
      thrownBy(() => P(root).variable(name, value as never)),
      PromptRegistrationError,
      'INVALID_PROMPT_CONTRIBUTION',
      { kind: 'variable', field, value: reported },
    )
  })

  test('a tool-schema provider must be a function', async () => {
    const { root } = await promptWorld()
    expectError(
      thrownBy(() => P(root).tools({ schemas: [] } as never)),
      PromptRegistrationError,
      'INVALID_PROMPT_CONTRIBUTION',
      { kind: 'tools', field: 'provider' },
    )
  })

  test('a disposing or disposed owner throws ContextDisposedError and registers nothing', async () => {
    const { root, A, keyA, asm } = await promptWorld()
    const changes = recordChanges(root)
    const prompt = P(A)
    const disposing = A.dispose()
    expectError(
      thrownBy(() => prompt.section({ name: 's', order: 0, text: 'S' })),
      ContextDisposedError,
      'CONTEXT_DISPOSED',
    )
    await disposing
    for (const register of [
      () => prompt.variable('v', 'x'),
      () => prompt.context({ name: 'c', order: 0, text: 'C' }),
      () => prompt.tools(() => ({ schemas: [] })),
      () => prompt.suppressRuntimeContext(),
    ]) {
      expectError(thrownBy(register), ContextDisposedError, 'CONTEXT_DISPOSED')
    }
    expect(changes).toEqual([])
    expect(await asm(keyA)).toEqual({ sections: [], contexts: [], variables: {}, tools: [] })
  })
})

describe('system-prompt/change', () => {
  test('a throwing listener is contained and never undoes the registration', async () => {
    const { root, keyA, asm } = await promptWorld()
    const heard: SystemPromptChangePayload[] = []
    root.on('system-prompt/change', (payload) => {
      heard.push(payload)
      throw new Error('listener boom')
    })
    const errors: KernelErrorEvent[] = recordKernelErrors(root)
    const dispose = P(root).section({ name: 's', order: 1, text: 'S' })
    expect(heard).toEqual([{ change: 'add', kind: 'section', name: 's' }])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ phase: 'listener', event: 'system-prompt/change' })
    expect(names((await asm(keyA)).sections)).toEqual(['s'])
    await dispose()
    expect(heard).toEqual([
      { change: 'add', kind: 'section', name: 's' },
      { change: 'remove', kind: 'section', name: 's' },
    ])
    await dispose()
    expect(heard).toHaveLength(2)
    expect(names((await asm(keyA)).sections)).toEqual([])
  })

  test('scoped changes carry the scope, reach only admitted listeners, and disposal removes in reverse order', async () => {
    const { root, A, B, keyA } = await promptWorld()
    const atRoot = recordChanges(root)
    const atB = recordChanges(B)
    const atA = recordChanges(A)
    P(A).section({ name: 's', order: 0, text: 'S' })
    P(A).variable('v', 'x')
    P(A).tools(() => ({ schemas: [] }))
    P(A).suppressRuntimeContext()
    const added = [
      { change: 'add', kind: 'section', name: 's', scope: keyA },
      { change: 'add', kind: 'variable', name: 'v', scope: keyA },
      { change: 'add', kind: 'tools', scope: keyA },
      { change: 'add', kind: 'suppressor', scope: keyA },
    ]
    expect(atA).toEqual(added)
    await A.dispose()
    const removed = [
      { change: 'remove', kind: 'suppressor', scope: keyA },
      { change: 'remove', kind: 'tools', scope: keyA },
      { change: 'remove', kind: 'variable', name: 'v', scope: keyA },
      { change: 'remove', kind: 'section', name: 's', scope: keyA },
    ]
    expect(atRoot).toEqual([...added, ...removed])
    expect(atB).toEqual([])
  })

  test('two providers or two suppressors in one layer are independent registrations', async () => {
    const { root, A, keyA, asm } = await promptWorld()
    P(root).context({ name: 'c', order: 0, text: 'C' })
    const first = P(A).suppressRuntimeContext()
    const second = P(A).suppressRuntimeContext()
    const provider = () => ({ schemas: [{ name: 'read', description: 'Read', parameters: { type: 'object' } }] })
    const toolsOne = P(root).tools(provider)
    P(root).tools(() => ({ schemas: [{ name: 'write', description: 'Write', parameters: { type: 'object' } }] }))
    await first()
    expect((await asm(keyA)).contexts).toEqual([])
    await second()
    expect(names((await asm(keyA)).contexts)).toEqual(['c'])
    expect(names((await asm(keyA)).tools)).toEqual(['read', 'write'])
    await toolsOne()
    expect(names((await asm(keyA)).tools)).toEqual(['write'])
  })
})

/**
 * Shadowing with A's registrations made through `scopeA` (a context tagged with A's scope, or A's
 * own `ctx`): A shadows the global instructions and variable, and the global provider is called
 * for B only.
 */
async function expectScenario7(
  root: Context,
  scopeA: Context,
  asmA: () => Promise<PromptAssembly>,
  asmB: () => Promise<PromptAssembly>,
): Promise<void> {
  let calls = 0
  P(root).section({
    name: 'instructions',
    order: 0,
    text: () => {
      calls++
      return 'Global.'
    },
  })
  P(scopeA).section({ name: 'instructions', order: 0, text: 'Scoped for A.' })
  P(root).variable('who', 'g')
  P(scopeA).variable('who', 'a')
  P(root).section({ name: 'hi', order: 1, text: 'Hi {{who}}.' })
  expect(render(await asmA())).toBe('Scoped for A.\n\nHi a.')
  expect(calls).toBe(0)
  expect(render(await asmB())).toBe('Global.\n\nHi g.')
  expect(calls).toBe(1)
}

describe('layers and shadowing', () => {
  test('A shadows the global instructions and variable; the global provider is not called for A', async () => {
    const { root, A, keyA, keyB, asm } = await promptWorld()
    await expectScenario7(
      root,
      A,
      () => asm(keyA),
      () => asm(keyB),
    )
  })

  test('a shadowing entry keeps the global entry’s merge position among equal orders', async () => {
    const { root, A, keyA, asm } = await promptWorld()
    P(root).section({ name: 'first', order: 0, text: 'g1' })
    P(root).section({ name: 'second', order: 0, text: 'g2' })
    P(A).section({ name: 'third', order: 0, text: 'a3' })
    P(A).section({ name: 'first', order: 0, text: 'a1' })
    expect((await asm(keyA)).sections).toEqual([
      { name: 'first', order: 0, text: 'a1' },
      { name: 'second', order: 0, text: 'g2' },
      { name: 'third', order: 0, text: 'a3' },
    ])
  })

  test('a parent scope’s layer sits between the global layer and the scope’s own', async () => {
    const { root, keyA, asm } = await promptWorld()
    const preset = { preset: 'p' }
    const presetCtx = root.child('preset:p', { scope: preset })
    const agent = root.child('agent-a2', { scope: keyA })
    agent.scopes.bindParent(keyA, preset)
    P(root).variable('who', 'global')
    P(root).section({ name: 'hi', order: 0, text: 'Hi {{who}}.' })
    P(presetCtx).variable('who', 'preset')
    P(presetCtx).section({ name: 'extra', order: 1, text: 'P.' })
    expect(render(await asm(keyA))).toBe('Hi preset.\n\nP.')
    P(agent).variable('who', 'agent')
    expect(render(await asm(keyA))).toBe('Hi agent.\n\nP.')
    expect(render(await asm(preset))).toBe('Hi preset.\n\nP.')
    await agent.dispose()
    expect(render(await asm(keyA))).toBe('Hi global.')
  })

  test('A’s suppressor empties A’s contexts without calling the provider; B keeps them', async () => {
    let calls = 0
    const { root, A, keyA, keyB, asm } = await promptWorld()
    P(root).context({
      name: 'mode',
      order: 1,
      text: () => {
        calls++
        return 'Mode: plan'
      },
    })
    const lift = P(A).suppressRuntimeContext()
    expect((await asm(keyA)).contexts).toEqual([])
    expect(calls).toBe(0)
    expect((await asm(keyB)).contexts).toEqual([{ name: 'mode', order: 1, text: 'Mode: plan' }])
    expect(calls).toBe(1)
    await lift()
    expect((await asm(keyA)).contexts).toEqual([{ name: 'mode', order: 1, text: 'Mode: plan' }])
    expect(calls).toBe(2)
  })

  test('a global suppressor applies to every scope', async () => {
    const { root, keyA, asm } = await promptWorld()
    P(root).context({ name: 'c', order: 0, text: 'C' })
    P(root).suppressRuntimeContext()
    expect((await asm(keyA)).contexts).toEqual([])
    expect((await asm()).contexts).toEqual([])
  })

  test('the facade is cached per context and registrations through it are effects of that context', async () => {
    const { root, A, keyA, asm } = await promptWorld()
    expect(P(A)).toBe(P(A))
    expect(A.systemPrompt).toBe(P(A))
    expect(P(A)).not.toBe(P(root))
    const child = A.child('plugin-like')
    P(child).section({ name: 'a', order: 0, text: 'A' })
    P(child).section({ name: 'b', order: 1, text: 'B' })
    expect(names((await asm(keyA)).sections)).toEqual(['a', 'b'])
    await child.dispose()
    expect((await asm(keyA)).sections).toEqual([])
  })
})

describe('the notation’s A and B as real agents', () => {
  test('without instructions and sections, render(asm(A)) is empty and A’s first request has no system key', async () => {
    const model = scriptedModel([text('ok')])
    const { harness, root, signal } = await promptWorld({ model })
    const a = await harness.createAgent()
    expect(render(await P(root).assemble({ agent: a, scope: a, signal }))).toBe('')
    a.followup('go')
    await a.whenIdle()
    expect(model.requests).toHaveLength(1)
    expect(Object.keys(model.requests[0] ?? {})).not.toContain('system')
  })

  test('registrations through A.ctx shadow the global ones for A only', async () => {
    let sectionCalls = 0
    let contextCalls = 0
    const { harness, root, signal } = await promptWorld({ instructions: 'You are helpful.' })
    const a = await harness.createAgent()
    const b = await harness.createAgent()
    const asm = (agent: Agent) => P(root).assemble({ agent, scope: agent, signal })
    // A second global `instructions` is a duplicate; through A.ctx it is accepted.
    expectError(
      thrownBy(() => P(root).section({ name: 'instructions', order: 0, text: 'Other.' })),
      PromptRegistrationError,
      'DUPLICATE_PROMPT_CONTRIBUTION',
      {
        kind: 'section',
        name: 'instructions',
      },
    )
    P(a.ctx).section({ name: 'instructions', order: 0, text: 'Scoped for A.' })
    // Shadowing (the call-count part is the next test); `hi` is evaluated once per assemble.
    P(root).section({
      name: 'hi',
      order: 1,
      text: () => {
        sectionCalls++
        return 'Hi {{who}}.'
      },
    })
    P(root).variable('who', 'g')
    P(a.ctx).variable('who', 'a')
    expect(render(await asm(a))).toBe('Scoped for A.\n\nHi a.')
    expect(render(await asm(b))).toBe('You are helpful.\n\nHi g.')
    expect(sectionCalls).toBe(2)
    // An assemble listener on A's context changes A's assembly only.
    a.ctx.on('system-prompt/assemble', (payload) => ({
      ...payload.assembly,
      sections: [...payload.assembly.sections, { name: 'only-a', order: 9, text: 'A only.' }],
    }))
    expect(names((await asm(a)).sections)).toEqual(['instructions', 'hi', 'only-a'])
    expect(names((await asm(b)).sections)).toEqual(['instructions', 'hi'])
    expect(names((await P(root).assemble({ signal })).sections)).toEqual(['instructions', 'hi'])
    // A context provider is evaluated once per assemble.
    P(root).context({
      name: 'mode',
      order: 1,
      text: () => {
        contextCalls++
        return 'Mode: plan'
      },
    })
    const lift = P(a.ctx).suppressRuntimeContext()
    expect((await asm(a)).contexts).toEqual([])
    expect(contextCalls).toBe(0)
    expect((await asm(b)).contexts).toEqual([{ name: 'mode', order: 1, text: 'Mode: plan' }])
    expect(contextCalls).toBe(1)
    await lift()
    expect((await asm(a)).contexts).toEqual([{ name: 'mode', order: 1, text: 'Mode: plan' }])
  })

  test('the shadowed global instructions provider is never called for A', async () => {
    const { harness, root, signal } = await promptWorld()
    const a = await harness.createAgent()
    const b = await harness.createAgent()
    await expectScenario7(
      root,
      a.ctx,
      () => P(root).assemble({ agent: a, scope: a, signal }),
      () => P(root).assemble({ agent: b, scope: b, signal }),
    )
  })
})
