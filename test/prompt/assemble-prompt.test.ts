import { describe, expect, test } from 'vitest'
import { InvalidArgumentError, PromptAssemblyError, type SystemPromptAssemblePayload } from 'yoke'
import type { AssembleInput, PromptAssembly } from '../../src/prompt/index.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'
import { names, P, promptWorld } from './system-prompt-helpers.js'

const extra = { name: 'extra', order: 50, text: 'Extra.' }
const schema = (name: string) => ({
  name,
  description: `The ${name} tool`,
  parameters: { type: 'object', properties: {} },
})

describe('complete sections and the waterfall', () => {
  test('a complete section is the whole prompt, listener edits undone; two complete sections reject', async () => {
    const { root, keyA, asm } = await promptWorld()
    P(root).section({ name: 'exact', order: 5, text: 'Exact prompt.', complete: true })
    P(root).section({ name: 'other', order: 1, text: 'Other.' })
    let seen: readonly string[] = []
    root.on('system-prompt/assemble', (payload) => {
      seen = names(payload.assembly.sections)
      return { ...payload.assembly, sections: [...payload.assembly.sections, extra] }
    })
    expect((await asm(keyA)).sections).toEqual([{ name: 'exact', order: 5, text: 'Exact prompt.', complete: true }])
    expect(seen).toEqual(['other', 'exact'])
    P(root).section({ name: 'c2', order: 7, text: 'Second.', complete: true })
    expectError(await rejectionOf(asm(keyA)), PromptAssemblyError, 'MULTIPLE_COMPLETE_SECTIONS', {
      names: ['exact', 'c2'],
    })
  })

  test('MULTIPLE_COMPLETE_SECTIONS lists the names in section order, not alphabetically', async () => {
    const { root, asm } = await promptWorld()
    P(root).section({ name: 'zed', order: -1, text: 'Z', complete: true })
    P(root).section({ name: 'alpha', order: 3, text: 'A', complete: true })
    const error = expectError(await rejectionOf(asm()), PromptAssemblyError, 'MULTIPLE_COMPLETE_SECTIONS', {
      names: ['zed', 'alpha'],
    })
    expect(error.message).toBe('more than one complete section: zed, alpha')
  })

  test('complete: false is an ordinary section', async () => {
    const { root, asm } = await promptWorld()
    P(root).section({ name: 'a', order: 0, text: 'A', complete: false })
    expect((await asm()).sections).toEqual([{ name: 'a', order: 0, text: 'A' }])
  })

  test('a listener registered through A.ctx runs only for A’s assemblies', async () => {
    const { root, A, keyA, keyB, asm, signal } = await promptWorld()
    A.on('system-prompt/assemble', (payload) => ({
      ...payload.assembly,
      sections: [...payload.assembly.sections, { name: 'only-a', order: 9, text: 'A only.' }],
    }))
    expect(names((await asm(keyA)).sections)).toEqual(['only-a'])
    expect(names((await asm(keyB)).sections)).toEqual([])
    expect(names((await P(root).assemble({ signal })).sections)).toEqual([])
  })

  test('mutating the handed-in assembly throws TypeError; a replacement works until disposed', async () => {
    const { root, keyA, asm } = await promptWorld()
    const mutate = root.on('system-prompt/assemble', (payload) => {
      ;(payload.assembly.sections as unknown as unknown[]).push(extra)
      return payload.assembly
    })
    expect(await rejectionOf(asm(keyA))).toBeInstanceOf(TypeError)
    await mutate()
    const replace = root.on('system-prompt/assemble', (payload) => ({
      ...payload.assembly,
      sections: [...payload.assembly.sections, extra],
    }))
    expect((await asm(keyA)).sections).toEqual([extra])
    await replace()
    expect((await asm(keyA)).sections).toEqual([])
  })

  test('the handed-in assembly is deep-frozen, tool parameters included', async () => {
    const { root, asm } = await promptWorld()
    P(root).section({ name: 's', order: 0, text: 'S' })
    P(root).context({ name: 'c', order: 0, text: 'C' })
    P(root).variable('v', 'x')
    P(root).tools(() => ({
      schemas: [{ name: 't', description: 'T', parameters: { type: 'object', properties: { a: { type: 'string' } } } }],
    }))
    const attempts: string[] = []
    root.on('system-prompt/assemble', (payload) => {
      const assembly = payload.assembly as unknown as {
        sections: { text: string }[]
        contexts: { order: number }[]
        variables: Record<string, string>
        tools: { parameters: { properties: { a: { type: string } } } }[]
      }
      const tries: [string, () => void][] = [
        ['section text', () => (assembly.sections[0]!.text = 'changed')],
        ['context order', () => (assembly.contexts[0]!.order = 9)],
        ['variable', () => (assembly.variables['v'] = 'changed')],
        ['nested parameter', () => (assembly.tools[0]!.parameters.properties.a.type = 'number')],
        ['payload', () => ((payload as unknown as { scope: object }).scope = {})],
      ]
      for (const [what, attempt] of tries) {
        try {
          attempt()
        } catch (error) {
          if (error instanceof TypeError) attempts.push(what)
        }
      }
      return undefined
    })
    await asm()
    expect(attempts).toEqual(['section text', 'context order', 'variable', 'nested parameter', 'payload'])
  })

  test('next({ ...payload, assembly }) passes a replacement to the default', async () => {
    const { root, asm } = await promptWorld()
    root.on('system-prompt/assemble', (payload, next) =>
      next({
        ...payload,
        assembly: { ...payload.assembly, variables: { ...payload.assembly.variables, cwd: '/rescued' } },
      }),
    )
    const assembly = await asm()
    expect({ ...assembly.variables }).toEqual({ cwd: '/rescued' })
    expect(Object.getPrototypeOf(assembly.variables)).toBeNull()
    expect(Object.isFrozen(assembly.variables)).toBe(true)
  })

  test('the payload carries the scope, the agent and the signal; waterfall listeners receive ordered tools', async () => {
    const { root, A, keyA } = await promptWorld()
    const agent = { id: 'agent-1' }
    const signal = new AbortController().signal
    P(A).tools(() => ({ schemas: [schema('b'), schema('a')] }))
    const payloads: SystemPromptAssemblePayload[] = []
    root.on('system-prompt/assemble', (payload) => {
      payloads.push(payload)
      return undefined
    })
    await P(root).assemble({ agent, scope: keyA, signal })
    expect(payloads).toHaveLength(1)
    expect(payloads[0]?.agent).toBe(agent)
    expect(payloads[0]?.scope).toBe(keyA)
    expect(payloads[0]?.signal).toBe(signal)
    expect(names(payloads[0]?.assembly.tools ?? [])).toEqual(['a', 'b'])
  })

  test('a suppressed assembly has no contexts, whatever the listener returns', async () => {
    const { root, A, keyA, asm } = await promptWorld()
    P(root).context({ name: 'c', order: 0, text: 'C' })
    P(A).suppressRuntimeContext()
    root.on('system-prompt/assemble', (payload) => ({
      ...payload.assembly,
      contexts: [{ name: 'added', order: 0, text: 'Added.' }],
    }))
    expect((await asm(keyA)).contexts).toEqual([])
    expect((await asm()).contexts).toEqual([{ name: 'added', order: 0, text: 'Added.' }])
  })
})

describe('INVALID_ASSEMBLY: the listener’s result is checked', () => {
  test.each([
    ['null', () => null, ''],
    ['a string', () => 'prompt', ''],
    ['sections not an array', (assembly: PromptAssembly) => ({ ...assembly, sections: 'x' }), 'sections'],
    [
      'a string order',
      (assembly: PromptAssembly) => ({ ...assembly, sections: [{ name: 'x', order: '1', text: 't' }] }),
      'sections[0].order',
    ],
    [
      'a section without text',
      (assembly: PromptAssembly) => ({ ...assembly, sections: [extra, { name: 'y', order: 1 }] }),
      'sections[1].text',
    ],
    [
      'complete: false',
      (assembly: PromptAssembly) => ({ ...assembly, sections: [{ ...extra, complete: false }] }),
      'sections[0].complete',
    ],
    [
      'a context with complete',
      (assembly: PromptAssembly) => ({ ...assembly, contexts: [{ ...extra, complete: true }] }),
      'contexts[0].complete',
    ],
    [
      'contexts missing',
      (assembly: PromptAssembly) => ({
        sections: assembly.sections,
        variables: assembly.variables,
        tools: assembly.tools,
      }),
      'contexts',
    ],
    ['a numeric variable', (assembly: PromptAssembly) => ({ ...assembly, variables: { count: 1 } }), 'variables.count'],
    ['variables as an array', (assembly: PromptAssembly) => ({ ...assembly, variables: [] }), 'variables'],
    [
      'a tool without parameters',
      (assembly: PromptAssembly) => ({ ...assembly, tools: [{ name: 't', description: 'T' }] }),
      'tools[0].parameters',
    ],
    [
      'a repeated tool name',
      (assembly: PromptAssembly) => ({ ...assembly, tools: [schema('t'), schema('t')] }),
      'tools[1].name',
    ],
    ['an empty tool name', (assembly: PromptAssembly) => ({ ...assembly, tools: [schema('')] }), 'tools[0].name'],
  ])('%s → path %j', async (_case, replace, path) => {
    const { root, asm } = await promptWorld()
    root.on('system-prompt/assemble', (payload) => replace(payload.assembly) as never)
    const error = expectError(await rejectionOf(asm()), PromptAssemblyError, 'INVALID_ASSEMBLY', { path })
    expect(error.message).toContain('not a valid PromptAssembly')
  })

  test('a valid replacement is copied: extra fields dropped, listener objects not kept', async () => {
    const { root, asm } = await promptWorld()
    const parameters = { type: 'object', properties: {} }
    const section = { name: 's', order: 0, text: 'S', note: 'dropped' }
    root.on(
      'system-prompt/assemble',
      (payload) =>
        ({
          ...payload.assembly,
          sections: [section],
          tools: [{ name: 't', description: 'T', parameters, extra: 1 }],
        }) as never,
    )
    const assembly = await asm()
    expect(assembly.sections).toEqual([{ name: 's', order: 0, text: 'S' }])
    expect(assembly.sections[0]).not.toBe(section)
    expect(assembly.tools).toEqual([{ name: 't', description: 'T', parameters: { type: 'object', properties: {} } }])
    expect(assembly.tools[0]?.parameters).not.toBe(parameters)
    expect(Object.isFrozen(assembly.tools[0]?.parameters)).toBe(true)
    parameters.type = 'string'
    expect(assembly.tools[0]?.parameters).toEqual({ type: 'object', properties: {} })
  })
})

describe('provider failures', () => {
  test('INVALID_VARIABLE_VALUE names the variable and the value type', async () => {
    const { root, asm } = await promptWorld()
    const dispose = P(root).variable('count', () => 3 as never)
    const error = expectError(await rejectionOf(asm()), PromptAssemblyError, 'INVALID_VARIABLE_VALUE', {
      name: 'count',
      valueType: 'number',
    })
    expect(error.message).toBe(
      'variable "count" evaluated to number; a variable provider must return a string or undefined',
    )
    await dispose()
    P(root).variable('count', () => null as never)
    expectError(await rejectionOf(asm()), PromptAssemblyError, 'INVALID_VARIABLE_VALUE', {
      name: 'count',
      valueType: 'null',
    })
  })

  test('a variable provider returning undefined gives an own undefined value', async () => {
    const { root, asm } = await promptWorld()
    P(root).variable('cwd', () => undefined)
    const variables = (await asm()).variables
    expect(Object.hasOwn(variables, 'cwd')).toBe(true)
    expect(variables['cwd']).toBeUndefined()
  })

  test.each([
    ['section', 'rules'],
    ['context', 'mode'],
    ['variable', 'who'],
  ] as const)('CONTRIBUTION_FAILED for a throwing %s provider, with kind, name and cause', async (kind, name) => {
    const { root, asm } = await promptWorld()
    const cause = new Error(`${kind} boom`)
    const provider = () => {
      throw cause
    }
    if (kind === 'variable') P(root).variable(name, provider)
    else if (kind === 'section') P(root).section({ name, order: 0, text: provider })
    else P(root).context({ name, order: 0, text: provider })
    const error = expectError(await rejectionOf(asm()), PromptAssemblyError, 'CONTRIBUTION_FAILED', {
      kind,
      name,
      cause,
    })
    expect(error.message).toBe(`the ${kind} "${name}" failed: ${kind} boom`)
  })

  test('CONTRIBUTION_FAILED for a throwing tool provider has kind tools and no name', async () => {
    const { root, asm } = await promptWorld()
    const cause = new Error('tools boom')
    P(root).tools(() => {
      throw cause
    })
    const error = expectError(await rejectionOf(asm()), PromptAssemblyError, 'CONTRIBUTION_FAILED', {
      kind: 'tools',
      cause,
    })
    expect(error.name).toBe('PromptAssemblyError')
  })

  test.each([
    [
      'a text provider returning a number',
      (world: Awaited<ReturnType<typeof promptWorld>>) =>
        P(world.root).section({ name: 's', order: 0, text: () => 1 as never }),
      'section',
    ],
    [
      'a tool provider returning null',
      (world: Awaited<ReturnType<typeof promptWorld>>) => P(world.root).tools(() => null as never),
      'tools',
    ],
    [
      'a schema without a description',
      (world: Awaited<ReturnType<typeof promptWorld>>) =>
        P(world.root).tools(() => ({ schemas: [{ name: 'x', parameters: {} }] }) as never),
      'tools',
    ],
    [
      'knownNames that are not strings',
      (world: Awaited<ReturnType<typeof promptWorld>>) =>
        P(world.root).tools(() => ({ schemas: [], knownNames: [1] }) as never),
      'tools',
    ],
    [
      'uncloneable parameters',
      (world: Awaited<ReturnType<typeof promptWorld>>) =>
        P(world.root).tools(() => ({
          schemas: [{ name: 'x', description: 'X', parameters: { f: () => 1 } as never }],
        })),
      'tools',
    ],
  ])('%s → CONTRIBUTION_FAILED with a cause', async (_case, register, kind) => {
    const world = await promptWorld()
    register(world)
    const error = expectError(await rejectionOf(world.asm()), PromptAssemblyError, 'CONTRIBUTION_FAILED', { kind })
    expect(error.cause).toBeInstanceOf(Error)
  })

  test('the first failure rejects, in step order: variables before sections', async () => {
    const { root, asm } = await promptWorld()
    P(root).section({
      name: 's',
      order: 0,
      text: () => {
        throw new Error('section')
      },
    })
    P(root).variable('v', () => 1 as never)
    expectError(await rejectionOf(asm()), PromptAssemblyError, 'INVALID_VARIABLE_VALUE', { name: 'v' })
  })

  test('a listener’s throw rejects the assembly unchanged', async () => {
    const { root, asm } = await promptWorld()
    const failure = new Error('listener')
    root.on('system-prompt/assemble', () => {
      throw failure
    })
    expect(await rejectionOf(asm())).toBe(failure)
  })

  test('a malformed input rejects with InvalidArgumentError', async () => {
    const { root } = await promptWorld()
    expectError(await rejectionOf(P(root).assemble({} as never)), InvalidArgumentError, 'INVALID_ARGUMENT', {
      argument: 'signal',
    })
    expectError(await rejectionOf(P(root).assemble(undefined as never)), InvalidArgumentError, 'INVALID_ARGUMENT', {
      argument: 'input',
    })
    expectError(
      await rejectionOf(P(root).assemble({ scope: 'a' as never, signal: new AbortController().signal })),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'scope' },
    )
  })
})

describe('tools', () => {
  test('DUPLICATE_TOOL_SCHEMA for one name from two providers, also across layers', async () => {
    const { root, A, keyA, asm } = await promptWorld()
    P(root).tools(() => ({ schemas: [schema('read')] }))
    const scoped = P(A).tools(() => ({ schemas: [schema('read')] }))
    const error = expectError(await rejectionOf(asm(keyA)), PromptAssemblyError, 'DUPLICATE_TOOL_SCHEMA', {
      name: 'read',
    })
    expect(error.message).toBe('two tool schemas are named "read"')
    expect(names((await asm()).tools)).toEqual(['read'])
    await scoped()
    P(root).tools(() => ({ schemas: [schema('write'), schema('write')] }))
    expectError(await rejectionOf(asm()), PromptAssemblyError, 'DUPLICATE_TOOL_SCHEMA', { name: 'write' })
  })

  test('every layer of the chain contributes, global first; schemas are copies with only three fields', async () => {
    const { root, A, keyA, asm } = await promptWorld()
    const parameters = { type: 'object', properties: { path: { type: 'string' } } }
    const global = { name: 'read', description: 'Read', parameters, extra: 'dropped' }
    P(root).tools(() => ({ schemas: [global] }))
    P(A).tools(() => ({ schemas: [schema('capture')] }))
    const assembly = await asm(keyA)
    expect(assembly.tools).toEqual([
      schema('capture'),
      { name: 'read', description: 'Read', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
    ])
    expect(assembly.tools[1]).not.toBe(global)
    expect(assembly.tools[1]?.parameters).not.toBe(parameters)
    parameters.properties.path.type = 'number'
    expect(assembly.tools[1]?.parameters).toEqual({ type: 'object', properties: { path: { type: 'string' } } })
    expect(names((await asm()).tools)).toEqual(['read'])
  })

  test('sorted by name in code-unit order, whatever the registration order', async () => {
    const { root, asm } = await promptWorld()
    P(root).tools(() => ({ schemas: [schema('b'), schema('Z'), schema('a')] }))
    P(root).tools(() => ({ schemas: [schema('_x'), schema('é')] }))
    expect(names((await asm()).tools)).toEqual(['Z', '_x', 'a', 'b', 'é'])
  })
})

describe('no caching, fresh objects, the signal', () => {
  test('each assemble calls the providers again and builds fresh objects', async () => {
    const { root, asm } = await promptWorld()
    let calls = 0
    P(root).section({ name: 's', order: 0, text: () => `call ${++calls}` })
    P(root).tools(() => ({ schemas: [schema('t')] }))
    P(root).variable('v', 'x')
    const first = await asm()
    const second = await asm()
    expect(first.sections[0]?.text).toBe('call 1')
    expect(second.sections[0]?.text).toBe('call 2')
    expect(second).not.toBe(first)
    expect(second.sections).not.toBe(first.sections)
    expect(second.variables).not.toBe(first.variables)
    expect(second.tools).not.toBe(first.tools)
    expect(second.tools[0]).not.toBe(first.tools[0])
    expect(second.tools[0]?.parameters).not.toBe(first.tools[0]?.parameters)
    expect(Object.isFrozen(second)).toBe(true)
    expect(Object.isFrozen(second.sections)).toBe(true)
    expect(Object.isFrozen(second.sections[0])).toBe(true)
  })

  test('every provider receives the frozen input with the caller’s signal, scope and agent', async () => {
    const { root, A, keyA } = await promptWorld()
    const inputs: AssembleInput[] = []
    const record = (input: AssembleInput) => {
      inputs.push(input)
      return 'x'
    }
    P(root).section({ name: 's', order: 0, text: record })
    P(A).context({ name: 'c', order: 0, text: record })
    P(root).variable('v', record)
    P(A).tools((input) => {
      inputs.push(input)
      return { schemas: [] }
    })
    const controller = new AbortController()
    const agent = { id: 'agent' }
    await P(root).assemble({ agent, scope: keyA, signal: controller.signal })
    expect(inputs).toHaveLength(4)
    for (const input of inputs) {
      expect(input.signal).toBe(controller.signal)
      expect(input.scope).toBe(keyA)
      expect(input.agent).toBe(agent)
      expect(Object.isFrozen(input)).toBe(true)
    }
  })

  test('a provider honouring an aborted signal rejects the assembly with its reason as cause', async () => {
    const { root } = await promptWorld()
    P(root).section({
      name: 's',
      order: 0,
      text: ({ signal }) => {
        signal.throwIfAborted()
        return 'S'
      },
    })
    const controller = new AbortController()
    const reason = new Error('stop')
    controller.abort(reason)
    expectError(
      await rejectionOf(P(root).assemble({ signal: controller.signal })),
      PromptAssemblyError,
      'CONTRIBUTION_FAILED',
      { kind: 'section', name: 's', cause: reason },
    )
  })
})
