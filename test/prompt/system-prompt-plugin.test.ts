import { describe, expect, test } from 'vitest'
import {
  defineTool,
  definePlugin,
  InvalidOptionsError,
  PluginConfigError,
  PluginStartError,
  PromptAssemblyError,
  type ScopeKey,
  ServiceMissingError,
  services,
  type SystemPromptChangePayload,
} from 'yoke'
import { HarnessSystemPrompt } from '../../src/prompt/index.js'
import type { ToolSchema } from '../../src/session/index.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'
import { names, P, promptWorld, render } from './system-prompt-helpers.js'

const schema = (name: string): ToolSchema => ({ name, description: `The ${name} tool`, parameters: { type: 'object' } })

function tool(name: string) {
  return defineTool({ name, description: `The ${name} tool`, input: { type: 'object' }, execute: () => name })
}

describe('the system-prompt entry', () => {
  test('provides services.systemPrompt (a SystemPrompt, bound per context) and registers its events', async () => {
    const { harness, root } = await promptWorld()
    expect(root.get(services.systemPrompt)).toBeInstanceOf(HarnessSystemPrompt)
    expect(root.systemPrompt).toBe(root.get(services.systemPrompt))
    const described = harness.describe().entries.find((entry) => entry.id === 'system-prompt')
    expect(described).toBeDefined()
    const events = harness.inspect().events.map((event) => event.name)
    expect(events).toEqual(expect.arrayContaining(['system-prompt/change', 'system-prompt/assemble']))
  })

  test('disabled, it provides nothing', async () => {
    const { root } = await promptWorld({
      patches: [
        { id: 'system-prompt', disabled: true },
        { id: 'agent-loop', disabled: true },
        { id: 'compaction', disabled: true },
      ],
    })
    expectError(
      thrownBy(() => root.get(services.systemPrompt)),
      ServiceMissingError,
      'SERVICE_MISSING',
      { key: 'system-prompt' },
    )
  })

  test('instructions as sections: order defaults to 0, ties keep the given order', async () => {
    const { asm } = await promptWorld({
      instructions: [
        { name: 'late', order: 5, text: 'Late.' },
        { name: 'persona', text: 'Persona.' },
        { name: 'style', text: 'Style.' },
        { name: 'early', order: -1, text: 'Early.' },
      ],
    })
    const assembly = await asm()
    expect(assembly.sections).toEqual([
      { name: 'early', order: -1, text: 'Early.' },
      { name: 'persona', order: 0, text: 'Persona.' },
      { name: 'style', order: 0, text: 'Style.' },
      { name: 'late', order: 5, text: 'Late.' },
    ])
    expect(render(assembly)).toBe('Early.\n\nPersona.\n\nStyle.\n\nLate.')
  })

  test('the instructions and the registry provider are effects of the entry: its disposal removes them in reverse order', async () => {
    const { harness, asm } = await promptWorld({ instructions: 'You are helpful.' })
    const changes: SystemPromptChangePayload[] = []
    harness.on('system-prompt/change', (payload) => {
      changes.push(payload)
    })
    expect(render(await asm())).toBe('You are helpful.')
    await harness.close()
    expect(changes).toEqual([
      { change: 'remove', kind: 'tools' },
      { change: 'remove', kind: 'section', name: 'instructions' },
    ])
  })

  test.each([
    ['a number', 5, ['instructions']],
    ['a section without text', [{ name: 'a' }], ['instructions', 0, 'text']],
    ['a name with whitespace', [{ name: 'my persona', text: 'x' }], ['instructions', 0, 'name']],
    ['an infinite order', [{ name: 'a', order: Number.POSITIVE_INFINITY, text: 'x' }], ['instructions', 0, 'order']],
    ['an unknown section field', [{ name: 'a', text: 'x', complete: true }], ['instructions', 0, 'complete']],
    [
      'a repeated name',
      [
        { name: 'a', text: 'x' },
        { name: 'a', text: 'y' },
      ],
      ['instructions', 1, 'name'],
    ],
  ])('instructions as %s → InvalidOptionsError at %j, nothing started', async (_case, instructions, path) => {
    const error = expectError(
      await rejectionOf(promptWorld({ instructions: instructions as never })),
      InvalidOptionsError,
      'INVALID_OPTIONS',
    )
    expect(error.issues.map((issue) => issue.path)).toContainEqual(path)
  })
})

describe('tool order', () => {
  async function threeTools(toolOrder?: readonly string[]) {
    const world = await promptWorld(
      toolOrder === undefined ? {} : { patches: [{ id: 'system-prompt', config: { toolOrder } }] },
    )
    for (const name of ['zeta', 'alpha', 'mid']) P(world.root).tools(() => ({ schemas: [schema(name)] }))
    return world
  }

  test('without toolOrder: by name, registration order never matters', async () => {
    const { keyA, asm } = await threeTools()
    expect(names((await asm(keyA)).tools)).toEqual(['alpha', 'mid', 'zeta'])
  })

  test("toolOrder ['zeta', '*'] puts zeta first, the rest by name", async () => {
    const { keyA, asm } = await threeTools(['zeta', '*'])
    expect(names((await asm(keyA)).tools)).toEqual(['zeta', 'alpha', 'mid'])
  })

  test("toolOrder ['mid', '*', 'alpha']: listed names keep their positions around the marker", async () => {
    const { keyA, asm } = await threeTools(['mid', '*', 'alpha'])
    expect(names((await asm(keyA)).tools)).toEqual(['mid', 'zeta', 'alpha'])
  })

  test("toolOrder ['ghost', '*'] rejects UNKNOWN_TOOL_ORDER_ENTRY with the sorted known names", async () => {
    const { keyA, asm } = await threeTools(['ghost', '*'])
    const error = expectError(await rejectionOf(asm(keyA)), PromptAssemblyError, 'UNKNOWN_TOOL_ORDER_ENTRY', {
      name: 'ghost',
      known: ['alpha', 'mid', 'zeta'],
    })
    expect(error.message).toBe('toolOrder lists "ghost", which is not a known tool (known: alpha, mid, zeta)')
  })

  test('a known name without a visible schema is simply absent', async () => {
    const { root, keyA, asm } = await threeTools(['hidden', 'zeta', '*'])
    P(root).tools(() => ({ schemas: [], knownNames: ['hidden'] }))
    expect(names((await asm(keyA)).tools)).toEqual(['zeta', 'alpha', 'mid'])
  })

  test.each([
    ['without the marker', ['zeta']],
    ['with the marker twice', ['*', 'a', '*']],
    ['with a duplicate name', ['a', '*', 'a']],
    ['not an array', 'zeta,*'],
  ])('toolOrder %s → PluginStartError caused by PluginConfigError at [toolOrder]', async (_case, toolOrder) => {
    const error = expectError(
      await rejectionOf(promptWorld({ patches: [{ id: 'system-prompt', config: { toolOrder } }] })),
      PluginStartError,
      'PLUGIN_START_FAILED',
      {
        plugin: 'system-prompt',
      },
    )
    const cause = expectError(error.cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID', { plugin: 'system-prompt' })
    expect(cause.issues.map((issue) => issue.path)).toContainEqual(['toolOrder'])
  })

  test('an unknown config key fails the config too', async () => {
    const error = expectError(
      await rejectionOf(promptWorld({ patches: [{ id: 'system-prompt', config: { order: [] } }] })),
      PluginStartError,
      'PLUGIN_START_FAILED',
    )
    expectError(error.cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID', { plugin: 'system-prompt' })
  })

  test('a merge patch keeps the instructions and adds the tool order', async () => {
    const { root, asm } = await promptWorld({
      instructions: 'Hi.',
      patches: [{ id: 'system-prompt', merge: { toolOrder: ['b', '*'] } }],
    })
    P(root).tools(() => ({ schemas: [schema('a'), schema('b')] }))
    const assembly = await asm()
    expect(render(assembly)).toBe('Hi.')
    expect(names(assembly.tools)).toEqual(['b', 'a'])
  })
})

describe('the tool registry’s schemas', () => {
  test('registered tools reach the assembly for their scope; scoped tools only for that scope', async () => {
    const { root, A, keyA, keyB, asm } = await promptWorld()
    root.tools.register([tool('write'), tool('read')])
    A.tools.register(tool('capture'))
    expect((await asm()).tools).toEqual([
      { name: 'read', description: 'The read tool', parameters: { type: 'object' } },
      { name: 'write', description: 'The write tool', parameters: { type: 'object' } },
    ])
    expect(names((await asm(keyA)).tools)).toEqual(['capture', 'read', 'write'])
    expect(names((await asm(keyB)).tools)).toEqual(['read', 'write'])
  })

  test('a restricted tool is not visible to the restricted scope', async () => {
    const { root, A, keyA, keyB, asm } = await promptWorld()
    root.tools.register([tool('read'), tool('bash')])
    A.tools.restrict(keyA, { deny: ['bash'] })
    expect(names((await asm(keyA)).tools)).toEqual(['read'])
    expect(names((await asm(keyB)).tools)).toEqual(['bash', 'read'])
  })

  test('the registry’s schemas are copied, never handed out', async () => {
    const { root, asm } = await promptWorld()
    root.tools.register(tool('read'))
    const [registered] = root.tools.schemas()
    const [assembled] = (await asm()).tools
    expect(assembled).toEqual(registered)
    expect(assembled).not.toBe(registered)
    expect(assembled?.parameters).not.toBe(registered?.parameters)
  })

  test('a registry offering knownNames makes restricted names known, so toolOrder may list them', async () => {
    const known: (ScopeKey | undefined)[] = []
    const registry = {
      schemas: () => [schema('read')],
      list: () => [{ name: 'read' }],
      knownNames(scope?: ScopeKey) {
        known.push(scope)
        return ['bash']
      },
    }
    const fakeTools = definePlugin({
      name: 'tools',
      provides: [services.tools],
      apply(ctx) {
        ctx.provide(services.tools, registry as never)
      },
    })
    const { keyA, asm } = await promptWorld({
      patches: [
        { id: 'tools', plugin: fakeTools },
        { id: 'system-prompt', config: { toolOrder: ['bash', '*'] } },
      ],
    })
    expect(names((await asm(keyA)).tools)).toEqual(['read'])
    expect(known).toEqual([keyA])
  })

  test('without the tools entry, only the prompt’s own providers contribute', async () => {
    const { root, asm } = await promptWorld({ patches: [{ id: 'tools', disabled: true }] })
    P(root).tools(() => ({ schemas: [schema('own')] }))
    expect(names((await asm()).tools)).toEqual(['own'])
  })
})
