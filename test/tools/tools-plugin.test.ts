import { describe, expect, test } from 'vitest'
import { createHarness, definePlugin, PluginConfigError, PluginStartError, ServiceMissingError, services } from 'yoke'
import { toolEvents, toolsPlugin, HarnessToolRegistry } from '../../src/tools/index.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { agentOf, namesOf, recordChanges, tool, toolsHarness } from './registry-helpers.js'

describe('the tools entry', () => {
  test('provides services.tools, a ToolRegistry, after the session entry it optionally uses', async () => {
    const { harness } = await toolsHarness()
    expect(harness.ctx.get(services.tools)).toBeInstanceOf(HarnessToolRegistry)
    expect(harness.describe().entries.find((entry) => entry.id === 'tools')).toMatchObject({
      id: 'tools',
      name: 'tools',
      source: 'default',
      disabled: false,
      inject: [],
      optional: ['sessions'],
      provides: ['tools'],
    })
    expect(harness.inspect().plugins.find((plugin) => plugin.id === 'tools')?.state).toBe('active')
    expect(toolsPlugin().name).toBe('tools')
  })

  test('registers every tool event and the durable approval event types', async () => {
    const { harness } = await toolsHarness()
    for (const name of Object.keys(toolEvents.modes))
      expect(() => harness.on(name as 'tools/change', () => {})).not.toThrow()
    expect(harness.sessions.eventTypes()).toEqual(expect.arrayContaining(['approval/asked', 'approval/decided']))
  })

  test('harness.tools is the root view: stable, ctx.tools, registering in the global layer', async () => {
    const { harness } = await toolsHarness()
    expect(harness.tools).toBe(harness.tools)
    expect(harness.tools).toBe(harness.ctx.tools)
    expect(harness.tools).toBe(harness.ctx.get(services.tools))
    const agent = agentOf(harness.ctx, 'agent-a')
    expect(agent.ctx.tools).not.toBe(harness.tools)
    expect(agent.ctx.tools).toBe(agent.ctx.get(services.tools))
    harness.tools.register(tool('read'))
    expect(namesOf(agent.ctx.tools.list())).toEqual(['read'])
    expect(namesOf(harness.tools.list())).toEqual(['read'])
  })

  test('a plugin’s registrations are effects of its context: stopping it unregisters them', async () => {
    const { harness } = await toolsHarness()
    const changes = recordChanges(harness.ctx)
    const handle = await harness.ctx.plugin(
      definePlugin({
        name: 'extra-tools',
        inject: [services.tools],
        apply(ctx) {
          ctx.tools.register([tool('grep'), tool('glob')])
        },
      }),
    )
    expect(namesOf(harness.tools.list())).toEqual(['glob', 'grep'])
    await handle.dispose()
    expect(harness.tools.list()).toEqual([])
    expect(changes.map((change) => change.kind)).toEqual(['register', 'unregister'])
  })

  test('closing the harness unregisters what harness.tools registered, while the entry still runs', async () => {
    const harness = await createHarness({ logger: recordingLogger() })
    const kinds: string[] = []
    harness.on('tools/change', (change) => {
      kinds.push(`${change.kind}:${change.names.join(',')}`)
    })
    harness.tools.register(tool('read'))
    await harness.close()
    expect(kinds).toEqual(['register:read', 'unregister:read'])
  })

  test('the config tools are registered globally, as an effect of the entry', async () => {
    const read = tool('read')
    const bash = tool('bash')
    const { harness } = await toolsHarness({ patches: [{ id: 'tools', merge: { tools: [read, bash] } }] })
    expect(harness.tools.list()).toEqual([bash, read])
    expect(thrownBy(() => harness.tools.register(tool('read')))).toMatchObject({
      code: 'TOOL_CONFLICT',
      toolName: 'read',
    })
  })

  test.each([
    [
      'a repeated name',
      () => [tool('read'), tool('read')],
      [{ path: ['tools', 1, 'name'], message: 'repeats the tool name "read"' }],
    ],
    [
      'a value that is not a definition',
      () => [tool('read'), { name: 'x' }],
      [{ path: ['tools', 1], message: 'must be a tool definition made by defineTool()' }],
    ],
  ])('%s in the config fails the start with PluginConfigError', async (_label, tools, issues) => {
    const error = await rejectionOf(
      createHarness({ logger: recordingLogger(), patches: [{ id: 'tools', config: { tools: tools() } }] }),
    )
    expect(PluginStartError.is(error)).toBe(true)
    const cause = (error as PluginStartError).cause
    expect(PluginConfigError.is(cause)).toBe(true)
    expect((cause as PluginConfigError).issues).toEqual(issues)
  })

  test('disabled, it provides no tools service: harness.tools throws ServiceMissingError', async () => {
    const { harness } = await toolsHarness({ patches: [{ id: 'tools', disabled: true }] })
    expect(ServiceMissingError.is(thrownBy(() => harness.tools))).toBe(true)
    expect(harness.ctx.getOptional(services.tools)).toBeUndefined()
  })

  test('without the session entry it still starts, with no approval event types to register', async () => {
    const { harness } = await toolsHarness({
      patches: [
        { id: 'session', disabled: true },
        { id: 'persistence', disabled: true },
        { id: 'retry', disabled: true },
        { id: 'agent-loop', disabled: true },
        { id: 'compaction', disabled: true },
      ],
    })
    harness.tools.register(tool('read'))
    expect(namesOf(harness.tools.list())).toEqual(['read'])
  })

  test('two harnesses share no registry', async () => {
    const { harness: first } = await toolsHarness()
    const { harness: second } = await toolsHarness()
    first.tools.register(tool('read'))
    expect(second.tools.list()).toEqual([])
    second.tools.register(tool('read'))
    expect(first.tools.get('read')).not.toBe(second.tools.get('read'))
  })
})
