import { describe, expect, test } from 'vitest'
import {
  type Agent,
  type AgentStatus,
  type Context,
  createHarness,
  defineTool,
  definePlugin,
  definePreset,
  type HarnessOptions,
  InvalidOptionsError,
  PluginStartError,
  type PresetDefinition,
  PresetSetupError,
  type PresetSpec,
  resolvePreset,
  ServiceConflictError,
  services,
  UnknownPresetError,
} from 'yoke'
import { inspectContext } from '../../src/kernel/index.js'
import type { Preset, PresetRegistry } from '../../src/scope/index.js'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { rejectionOf, requireContext, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testEvents } from '../helpers/test-events.js'

/** Deterministic host options plus `extra`. */
function hostOptions(extra: HarnessOptions = {}) {
  const clock = fakeClock({ now: 0 })
  const logger = recordingLogger()
  return { clock, logger, options: { clock, logger, ids: fakeIds(), ...extra } satisfies HarnessOptions }
}

/** A plugin that records its start and stop into `log` under `name`. */
function tracer(name: string, log: string[]) {
  return definePlugin({
    name,
    apply() {
      log.push(`start:${name}`)
      return () => {
        log.push(`stop:${name}`)
      }
    },
  })
}

function presetOf(ctx: Context, name: string): Preset {
  const preset = ctx.get(services.presets).get(name)
  if (preset === undefined) throw new Error(`no preset ${name}`)
  return preset
}

const signal = new AbortController().signal

describe('preset options and setup failures', () => {
  test('two presets named "p" reject InvalidOptionsError at ["presets", 1, "name"] and start nothing', async () => {
    const log: string[] = []
    const setup = (): void => {
      log.push('setup')
    }
    const { options } = hostOptions({
      plugins: [tracer('harness-plugin', log)],
      presets: [
        definePreset({ name: 'p', plugins: [tracer('preset-plugin', log)], setup }),
        definePreset({ name: 'p', setup }),
      ],
    })
    const error = await rejectionOf(createHarness(options))
    expect(InvalidOptionsError.is(error)).toBe(true)
    const typed = error as InvalidOptionsError
    expect(typed.code).toBe('INVALID_OPTIONS')
    expect(typed.issues).toEqual([
      { path: ['presets', 1, 'name'], message: 'repeats the preset name "p" of presets[0]' },
    ])
    expect(typed.field).toBe('presets[1].name')
    expect(typed.value).toBe('p')
    expect(typed.message).toBe('options.presets[1].name: repeats the preset name "p" of presets[0]')
    expect(log).toEqual([])
  })

  test('a setup that throws rejects PresetSetupError and leaves no plugin, listener or timer', async () => {
    const log: string[] = []
    const thrown = new Error('e')
    let root: Context | undefined
    let registry: PresetRegistry | undefined
    const capturing = definePlugin({
      name: 'capturing',
      apply(ctx) {
        root = ctx.parent
        registry = ctx.get(services.presets)
        ctx.on('test/e', () => {})
        ctx.effect(() => ctx.get(services.clock).setTimer(() => log.push('harness timer fired'), 1000), 'timer')
      },
    })
    const events = definePlugin({ name: 'events', events: [testEvents], apply() {} })
    const { options, clock } = hostOptions({
      plugins: [events, capturing, tracer('harness-plugin', log)],
      presets: [
        definePreset({
          name: 'p',
          plugins: [tracer('p-plugin', log)],
          setup: (ctx) => void ctx.on('test/e', () => {}),
        }),
        definePreset({
          name: 'q',
          plugins: [tracer('q-plugin', log)],
          setup(ctx) {
            ctx.on('test/e', () => {})
            ctx.effect(() => ctx.get(services.clock).setTimer(() => log.push('preset timer fired'), 500), 'timer')
            throw thrown
          },
        }),
      ],
    })
    const error = await rejectionOf(createHarness(options))
    expect(PresetSetupError.is(error)).toBe(true)
    const typed = error as PresetSetupError
    expect(typed.code).toBe('PRESET_SETUP_FAILED')
    expect(typed.preset).toBe('q')
    expect(typed.cause).toBe(thrown)
    expect(typed.message).toBe('preset "q" failed to set up: e')
    expect(log).toEqual([
      'start:harness-plugin',
      'start:p-plugin',
      'start:q-plugin',
      'stop:q-plugin',
      'stop:p-plugin',
      'stop:harness-plugin',
    ])
    const harnessRoot = requireContext(root)
    expect(harnessRoot.state).toBe('disposed')
    const inspection = inspectContext(harnessRoot)
    expect(inspection.effects.children).toEqual([])
    expect(inspection.events).toEqual([])
    expect(inspection.services).toEqual([])
    expect(inspection.plugins.every((plugin) => plugin.state === 'disposed')).toBe(true)
    expect(registry?.names()).toEqual([])
    expect(harnessRoot.getOptional(services.presets)).toBeUndefined()
    expect(clock.pending()).toEqual([])
    await clock.advance(5000)
    expect(log.filter((line) => line.endsWith('fired'))).toEqual([])
  })

  test('a failing preset plugin rejects PresetSetupError with the PluginStartError as cause; setup and later presets never run', async () => {
    const log: string[] = []
    const broken = definePlugin({
      name: 'broken',
      apply() {
        throw new Error('plugin failed')
      },
    })
    const { options } = hostOptions({
      plugins: [tracer('harness-plugin', log)],
      presets: [
        definePreset({
          name: 'first',
          plugins: [tracer('first-plugin', log), broken, tracer('never', log)],
          setup: () => void log.push('setup'),
        }),
        definePreset({ name: 'second', setup: () => void log.push('second setup') }),
      ],
    })
    const error = (await rejectionOf(createHarness(options))) as PresetSetupError
    expect(PresetSetupError.is(error)).toBe(true)
    expect(error.preset).toBe('first')
    expect(PluginStartError.is(error.cause)).toBe(true)
    expect((error.cause as PluginStartError).plugin).toBe('harness/broken')
    expect(((error.cause as PluginStartError).cause as Error).message).toBe('plugin failed')
    expect(log).toEqual(['start:harness-plugin', 'start:first-plugin', 'stop:first-plugin', 'stop:harness-plugin'])
  })

  test('an async setup that rejects is a PresetSetupError too', async () => {
    const thrown = new Error('late')
    const { options } = hostOptions({
      presets: [
        definePreset({
          name: 'slow',
          async setup() {
            await Promise.resolve()
            throw thrown
          },
        }),
      ],
    })
    const error = (await rejectionOf(createHarness(options))) as PresetSetupError
    expect([error.code, error.preset, error.cause]).toEqual(['PRESET_SETUP_FAILED', 'slow', thrown])
  })
})

describe('definePreset', () => {
  test('returns a frozen, inert definition with copied arrays', () => {
    const calls: string[] = []
    const plugins = [tracer('x', calls)]
    const sections = [{ name: 'a', text: 'A' }]
    const preset = definePreset({
      name: 'reviewer',
      instructions: sections,
      options: { model: 'm2' },
      plugins,
      setup: () => void calls.push('setup'),
    })
    expect(Object.isFrozen(preset)).toBe(true)
    expect(Object.isFrozen(preset.plugins)).toBe(true)
    expect(Object.isFrozen(preset.options)).toBe(true)
    expect(Object.isFrozen(preset.instructions)).toBe(true)
    expect(preset.plugins).not.toBe(plugins)
    expect(preset.instructions).toEqual([{ name: 'a', text: 'A' }])
    expect(preset.options).toEqual({ model: 'm2' })
    expect(Object.keys(definePreset({ name: 'bare' }))).toEqual(['name'])
    expect(calls).toEqual([])
  })

  test.each([
    ['a bad name', { name: 'Reviewer' }, 'preset.name', 'must match ^[a-z0-9][a-z0-9._-]{0,63}$'],
    ['a name too long', { name: 'a'.repeat(65) }, 'preset.name', 'must match ^[a-z0-9][a-z0-9._-]{0,63}$'],
    ['a name starting with a dot', { name: '.hidden' }, 'preset.name', 'must match ^[a-z0-9][a-z0-9._-]{0,63}$'],
    [
      'non-string instructions',
      { name: 'p', instructions: 5 },
      'preset.instructions',
      'must be a string or an array of sections { name, order?, text }',
    ],
    [
      'a repeated section name',
      {
        name: 'p',
        instructions: [
          { name: 'x', text: '1' },
          { name: 'x', text: '2' },
        ],
      },
      'preset.instructions',
      '[1].name: repeats the section name "x"',
    ],
    [
      'a non-plain options object',
      { name: 'p', options: [] },
      'preset.options',
      'must be a plain object of agent options',
    ],
    [
      'a plugin that is not one',
      { name: 'p', plugins: [{ apply: 1 }] },
      'preset.plugins',
      'must be an array of plugin definitions or classes',
    ],
    ['a non-function setup', { name: 'p', setup: 'go' }, 'preset.setup', 'must be a function'],
    ['an unknown field', { name: 'p', instruction: 'typo' }, 'preset.instruction', 'unknown preset field'],
    ['a non-object', 'p', 'preset', 'must be a preset definition { name, instructions?, options?, plugins?, setup? }'],
  ])(
    'is inert for %s: createHarness reports it as an InvalidOptionsError issue under presets',
    async (_label, spec, argument, reason) => {
      const definition = definePreset(spec as unknown as PresetSpec)
      const log: string[] = []
      const { options } = hostOptions({ plugins: [tracer('probe', log)] })
      const error = await rejectionOf(createHarness({ ...options, presets: [definition] }))
      expect(InvalidOptionsError.is(error)).toBe(true)
      const field = argument === 'preset' ? [] : [argument.slice('preset.'.length)]
      expect((error as InvalidOptionsError).issues).toEqual([{ path: ['presets', 0, ...field], message: reason }])
      expect(log).toEqual([])
    },
  )

  test('accepts the longest name and names with dots, dashes and underscores', () => {
    expect(definePreset({ name: `0${'a'.repeat(63)}` }).name).toHaveLength(64)
    expect(definePreset({ name: 'team.review_v2-beta' }).name).toBe('team.review_v2-beta')
  })
})

describe('the presets option schema', () => {
  test.each([
    ['a non-array', 'p', [{ path: ['presets'], message: 'must be an array of preset definitions' }]],
    [
      'a non-object entry',
      [definePreset({ name: 'ok' }), 7],
      [
        {
          path: ['presets', 1],
          message: 'must be a preset definition { name, instructions?, options?, plugins?, setup? }',
        },
      ],
    ],
    [
      'a hand-made entry with a bad name and setup',
      [{ name: 'Bad', setup: 1 }],
      [
        { path: ['presets', 0, 'name'], message: 'must match ^[a-z0-9][a-z0-9._-]{0,63}$' },
        { path: ['presets', 0, 'setup'], message: 'must be a function' },
      ],
    ],
    [
      'an unknown field',
      [{ name: 'p', plugin: [] }],
      [{ path: ['presets', 0, 'plugin'], message: 'unknown preset field' }],
    ],
    [
      'a third repeat',
      [{ name: 'a' }, { name: 'b' }, { name: 'a' }, { name: 'a' }],
      [
        { path: ['presets', 2, 'name'], message: 'repeats the preset name "a" of presets[0]' },
        { path: ['presets', 3, 'name'], message: 'repeats the preset name "a" of presets[0]' },
      ],
    ],
  ])('%s is an InvalidOptionsError issue under presets', async (_label, presets, issues) => {
    const log: string[] = []
    const { options } = hostOptions({ plugins: [tracer('probe', log)] })
    const error = await rejectionOf(
      createHarness({ ...options, presets: presets as unknown as readonly PresetDefinition[] }),
    )
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect((error as InvalidOptionsError).issues).toEqual(issues)
    expect(log).toEqual([])
  })
})

describe('composition', () => {
  test('setup runs once with the preset context, tagged with the frozen { name } handle', async () => {
    const seen: Context[] = []
    const { options } = hostOptions({
      presets: [definePreset({ name: 'reviewer', setup: (ctx) => void seen.push(ctx) })],
    })
    const harness = await createHarness(options)
    expect(seen).toHaveLength(1)
    const ctx = seen[0] as Context
    const preset = presetOf(harness.ctx, 'reviewer')
    expect(preset).toEqual({ name: 'reviewer' })
    expect(Object.isFrozen(preset)).toBe(true)
    expect(ctx.scope).toBe(preset)
    expect(ctx.label).toBe('preset:reviewer')
    expect(ctx.path).toBe('harness/preset:reviewer')
    expect(ctx.parent).toBe(harness.ctx)
    expect(ctx.scopes.chain(preset)).toEqual([preset])
    expect(harness.ctx.get(services.presets).context(preset)).toBe(ctx)
    await harness.close()
    expect(seen).toHaveLength(1)
    expect(ctx.state).toBe('disposed')
  })

  test('presets compose in declaration order after the entries; plugins start in order and stop in reverse, before the entries stop', async () => {
    const log: string[] = []
    const { options } = hostOptions({
      plugins: [tracer('harness-plugin', log)],
      presets: [
        definePreset({
          name: 'a',
          plugins: [tracer('a1', log), tracer('a2', log)],
          setup: () => void log.push('setup:a'),
        }),
        definePreset({ name: 'b', plugins: [tracer('b1', log)], setup: () => void log.push('setup:b') }),
      ],
    })
    const harness = await createHarness(options)
    expect(log).toEqual(['start:harness-plugin', 'start:a1', 'start:a2', 'setup:a', 'start:b1', 'setup:b'])
    const registry = harness.ctx.get(services.presets)
    expect(registry.names()).toEqual(['a', 'b'])
    log.length = 0
    await harness.close()
    expect(log).toEqual(['stop:b1', 'stop:a2', 'stop:a1', 'stop:harness-plugin'])
    expect(registry.names()).toEqual([])
  })

  test('preset listeners hear dispatches scoped to a child scope bound to the preset, never a sibling or unscoped one', async () => {
    const heard: string[] = []
    const listening = definePlugin({
      name: 'listening',
      apply(ctx) {
        ctx.on('test/e', (payload) => void heard.push(`plugin:${String(payload)}`))
      },
    })
    const events = definePlugin({ name: 'events', events: [testEvents], apply() {} })
    const { options } = hostOptions({
      plugins: [events],
      presets: [
        definePreset({
          name: 'reviewer',
          plugins: [listening],
          setup(ctx) {
            ctx.on('test/e', (payload) => void heard.push(`setup:${String(payload)}`))
          },
        }),
      ],
    })
    const harness = await createHarness(options)
    const preset = presetOf(harness.ctx, 'reviewer')
    const agentA = { agent: 'A' }
    const agentB = { agent: 'B' }
    const aCtx = harness.ctx.child('agent-a', { scope: agentA })
    const bCtx = harness.ctx.child('agent-b', { scope: agentB })
    aCtx.scopes.bindParent(agentA, preset)
    expect(aCtx.scopes.chain(agentA)).toEqual([agentA, preset])
    aCtx.emit('test/e', 'a', { scope: agentA })
    bCtx.emit('test/e', 'b', { scope: agentB })
    harness.ctx.emit('test/e', 'unscoped')
    expect(heard).toEqual(['plugin:a', 'setup:a'])
    await aCtx.dispose()
    expect(aCtx.scopes.chain(agentA)).toEqual([agentA])
    expect(presetOf(harness.ctx, 'reviewer')).toBe(preset)
    await harness.close()
  })

  test('a name of 64 characters gets a label cut to the 64 a context label may have', async () => {
    const name = `p${'x'.repeat(63)}`
    let label = ''
    const { options } = hostOptions({ presets: [definePreset({ name, setup: (ctx) => void (label = ctx.label) })] })
    const harness = await createHarness(options)
    expect(label).toBe(`preset:${name}`.slice(0, 64))
    expect(label).toHaveLength(64)
    expect(presetOf(harness.ctx, name).name).toBe(name)
    await harness.close()
  })

  test('services.presets is the harness’s own: an entry that provides it fails planning', async () => {
    const squatter = definePlugin({ name: 'squatter', provides: [services.presets], apply() {} })
    const { options } = hostOptions({ plugins: [squatter] })
    const error = await rejectionOf(createHarness(options))
    expect(ServiceConflictError.is(error)).toBe(true)
    expect((error as ServiceConflictError).key).toBe('presets')
    expect((error as ServiceConflictError).existingProvider).toBe('harness')
  })
})

describe('the preset registry', () => {
  test('get, names in declaration order, context, and resolvePreset with sorted known names', async () => {
    const { options } = hostOptions({ presets: [definePreset({ name: 'beta' }), definePreset({ name: 'alpha' })] })
    const harness = await createHarness(options)
    const registry = harness.ctx.get(services.presets)
    expect(registry.names()).toEqual(['beta', 'alpha'])
    expect(Object.isFrozen(registry.names())).toBe(true)
    expect(registry.get('gamma')).toBeUndefined()
    const alpha = resolvePreset(registry, 'alpha')
    expect(alpha).toBe(registry.get('alpha'))
    expect(registry.context(alpha).path).toBe('harness/preset:alpha')
    const unknown = thrownBy(() => resolvePreset(registry, 'nope'))
    expect(UnknownPresetError.is(unknown)).toBe(true)
    expect(unknown).toMatchObject({ code: 'UNKNOWN_PRESET', preset: 'nope', known: ['alpha', 'beta'] })
    expect((unknown as Error).message).toBe('no preset named "nope" (known: alpha, beta)')
    const foreign = thrownBy(() => registry.context(Object.freeze({ name: 'alpha' })))
    expect(foreign).toMatchObject({ code: 'UNKNOWN_PRESET', preset: 'alpha', known: ['alpha', 'beta'] })
    await harness.close()
  })

  test('a harness without presets has an empty registry', async () => {
    const { options } = hostOptions()
    const harness = await createHarness(options)
    const registry = harness.ctx.get(services.presets)
    expect(registry.names()).toEqual([])
    expect(thrownBy(() => resolvePreset(registry, 'reviewer'))).toMatchObject({
      code: 'UNKNOWN_PRESET',
      known: [],
      message: 'no preset named "reviewer" (known: none)',
    })
    await harness.close()
  })
})

describe('preset instructions', () => {
  test('land in the preset layer: a scope bound to the preset sees them over the harness instructions', async () => {
    const { options } = hostOptions({
      instructions: 'You are helpful.',
      presets: [
        definePreset({ name: 'reviewer', instructions: 'You review code.' }),
        definePreset({
          name: 'writer',
          instructions: [
            { name: 'style', text: 'Be brief.' },
            { name: 'tone', order: -1, text: 'Be kind.' },
          ],
        }),
      ],
    })
    const harness = await createHarness(options)
    const prompt = harness.ctx.get(services.systemPrompt)
    const reviewed = { agent: 'R' }
    const written = { agent: 'W' }
    const plain = { agent: 'A' }
    harness.ctx.scopes.bindParent(reviewed, presetOf(harness.ctx, 'reviewer'))
    harness.ctx.scopes.bindParent(written, presetOf(harness.ctx, 'writer'))
    expect((await prompt.assemble({ scope: reviewed, signal })).sections).toEqual([
      { name: 'instructions', order: 0, text: 'You review code.' },
    ])
    expect((await prompt.assemble({ scope: written, signal })).sections).toEqual([
      { name: 'tone', order: -1, text: 'Be kind.' },
      { name: 'instructions', order: 0, text: 'You are helpful.' },
      { name: 'style', order: 0, text: 'Be brief.' },
    ])
    expect((await prompt.assemble({ scope: plain, signal })).sections).toEqual([
      { name: 'instructions', order: 0, text: 'You are helpful.' },
    ])
    expect((await prompt.assemble({ signal })).sections).toEqual([
      { name: 'instructions', order: 0, text: 'You are helpful.' },
    ])
    await harness.close()
  })

  test('are skipped when the system-prompt entry is disabled; the rest of the preset still composes', async () => {
    let ran = false
    const { options } = hostOptions({
      patches: [
        { id: 'system-prompt', disabled: true },
        { id: 'agent-loop', disabled: true },
        { id: 'compaction', disabled: true },
      ],
      presets: [definePreset({ name: 'reviewer', instructions: 'You review code.', setup: () => void (ran = true) })],
    })
    const harness = await createHarness(options)
    expect(ran).toBe(true)
    expect(harness.ctx.getOptional(services.systemPrompt)).toBeUndefined()
    expect(harness.ctx.get(services.presets).names()).toEqual(['reviewer'])
    await harness.close()
  })
})

describe('one preset shared by two agents', () => {
  test('setup ran once; a listener on live r1.ctx hears r1 but never r2; disposing r1 leaves lint and r2’s chain', async () => {
    let setups = 0
    const lint = defineTool({
      name: 'lint',
      description: 'Lint the code',
      input: { type: 'object' },
      execute: () => 'clean',
    })
    const model = scriptedModel([text('one'), text('two'), text('three')])
    const { options } = hostOptions({
      model,
      presets: [
        definePreset({
          name: 'reviewer',
          instructions: 'You review code.',
          setup(ctx) {
            setups++
            ctx.tools.register(lint)
          },
        }),
      ],
    })
    const harness = await createHarness(options)
    expect(setups).toBe(1)
    const preset = presetOf(harness.ctx, 'reviewer')
    const r1 = await harness.createAgent({ preset: 'reviewer' })
    const r2 = await harness.createAgent({ preset: 'reviewer' })
    expect(setups).toBe(1)
    const r1Heard: string[] = []
    r1.ctx.on('agent/status', ({ agent, status }: { readonly agent: Agent; readonly status: AgentStatus }) => {
      r1Heard.push(`${agent.id}:${status}`)
    })
    await r2.run('while r1 is alive')
    expect(r1Heard).toEqual([])
    await r1.run('r1 itself')
    expect(r1Heard).toEqual([`${r1.id}:running`, `${r1.id}:idle`])
    await r1.dispose()
    expect(harness.ctx.scopes.chain(r2)).toEqual([r2, preset])
    expect(harness.tools.list(r2).map((definition) => definition.name)).toEqual(['lint'])
    await r2.run('after r1 is gone')
    expect(model.requests[2]?.tools?.map((schema) => schema.name)).toEqual(['lint'])
    expect(model.requests[2]?.system).toBe('You review code.')
    expect(setups).toBe(1)
    await harness.close()
  })
})
