/**
 * Presets bound to agents (binding, resume) and the per-agent prompt variables, through the
 * harness.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  type Agent,
  type AgentStatus,
  createHarness,
  definePreset,
  defineTool,
  type Harness,
  PresetMismatchError,
  type PresetDefinition,
  type SessionEvent,
  services,
  UnknownPresetError,
} from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text, tool } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'

let dir: string
let ids: ReturnType<typeof fakeIds>
const harnesses: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-preset-'))
  ids = fakeIds()
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  await rm(dir, { recursive: true, force: true })
})

async function open(options: Parameters<typeof createHarness>[0] = {}): Promise<Harness> {
  const harness = await createHarness({ clock: fakeClock(), ids, ...options })
  harnesses.push(harness)
  return harness
}

const lint = defineTool({ name: 'lint', description: 'Lint the code', input: z.object({}), execute: () => 'clean' })

/** A reviewer preset, with what its setup and listener saw. */
function reviewer(): {
  readonly definition: PresetDefinition
  readonly heard: string[]
  readonly setups: { count: number }
} {
  const heard: string[] = []
  const setups = { count: 0 }
  const definition = definePreset({
    name: 'reviewer',
    instructions: 'You review code.',
    options: { model: 'm2' },
    setup: (ctx) => {
      setups.count++
      ctx.tools.register(lint)
      ctx.on('agent/status', ({ agent, status }: { readonly agent: Agent; readonly status: AgentStatus }) => {
        heard.push(`${agent.id}:${status}`)
      })
    },
  })
  return { definition, heard, setups }
}

function presetOf(harness: Harness, name: string): object {
  const preset = harness.ctx.get(services.presets).get(name)
  if (preset === undefined) throw new Error(`no preset ${name}`)
  return preset
}

describe('binding', () => {
  test('the agent sees the preset layer; its header records it; preset listeners hear it, not the others', async () => {
    const { definition, heard } = reviewer()
    const model = scriptedModel([text('r'), text('a')])
    const harness = await open({ model, instructions: 'You are helpful.', presets: [definition] })
    const r = await harness.createAgent({ preset: 'reviewer' })
    r.followup('x')
    await r.whenIdle()
    expect(model.requests[0]).toMatchObject({ system: 'You review code.', model: 'm2', provider: 'mock' })
    expect(model.requests[0]?.tools?.map((schema) => schema.name)).toContain('lint')
    expect(r.session.header.agentPreset).toBe('reviewer')
    expect(r.ctx.scopes.chain(r)).toEqual([r, presetOf(harness, 'reviewer')])
    expect(heard).toEqual([`${r.id}:running`, `${r.id}:idle`])

    const a = await harness.createAgent()
    a.followup('y')
    await a.whenIdle()
    expect(model.requests[1]).toMatchObject({ system: 'You are helpful.', model: 'mock' })
    expect(model.requests[1]?.tools).toBeUndefined()
    expect(a.session.header.agentPreset).toBeUndefined()
    expect(heard).toHaveLength(2)

    const sessions = harness.sessions.list()
    const error = await rejectionOf(harness.createAgent({ preset: 'nope' }))
    expect(UnknownPresetError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'UNKNOWN_PRESET', preset: 'nope', known: ['reviewer'] })
    expect(harness.sessions.list()).toEqual(sessions)
  })

  test('agents.create({ preset }) binds the same way', async () => {
    const { definition } = reviewer()
    const harness = await open({ model: scriptedModel([]), presets: [definition] })
    const agent = await harness.agents.create({ preset: 'reviewer', id: 'direct' })
    expect(agent.options.model).toBe('m2')
    expect(agent.session.header.agentPreset).toBe('reviewer')
    expect(harness.ctx.scopes.chain(agent)).toEqual([agent, presetOf(harness, 'reviewer')])
  })
})

describe('shared preset', () => {
  test('setup ran once; disposing r1 leaves lint and the chain of r2; r1 listeners never hear r2', async () => {
    const { definition, setups } = reviewer()
    const model = scriptedModel([text('two')])
    const harness = await open({ model, presets: [definition] })
    expect(setups.count).toBe(1)
    const r1 = await harness.createAgent({ preset: 'reviewer' })
    const r2 = await harness.createAgent({ preset: 'reviewer' })
    expect(setups.count).toBe(1)
    const r1Heard: string[] = []
    r1.ctx.on('agent/status', ({ agent, status }: { readonly agent: Agent; readonly status: AgentStatus }) => {
      r1Heard.push(`${agent.id}:${status}`)
    })
    await r1.dispose()
    expect(harness.tools.list(r2).map((definition) => definition.name)).toEqual(['lint'])
    expect(harness.ctx.scopes.chain(r2)).toEqual([r2, presetOf(harness, 'reviewer')])
    expect(harness.ctx.scopes.chain(r1)).toEqual([r1])
    await r2.run('go')
    expect(model.requests[0]?.tools?.map((schema) => schema.name)).toEqual(['lint'])
    expect(r1Heard).toEqual([])
  })
})

describe('resume rebinds', () => {
  test('the recorded preset is rebound; another name is a mismatch; a harness without it rejects UNKNOWN_PRESET', async () => {
    const first = await open({
      persistence: { dir },
      model: scriptedModel([text('one')]),
      presets: [reviewer().definition],
    })
    const created = await first.createAgent({ preset: 'reviewer', sessionId: 'rv' })
    await created.run('a')
    await first.close()

    const model = scriptedModel([text('two')])
    const second = await open({
      persistence: { dir },
      model,
      presets: [reviewer().definition, definePreset({ name: 'other' })],
    })
    const mismatch = await rejectionOf(second.resumeAgent('rv', { preset: 'other' }))
    expect(PresetMismatchError.is(mismatch)).toBe(true)
    expect(mismatch).toMatchObject({ code: 'PRESET_MISMATCH', recorded: 'reviewer', requested: 'other' })
    expect(second.sessions.get('rv')).toBeUndefined()
    const resumed = await second.resumeAgent('rv')
    expect(second.ctx.scopes.chain(resumed)).toEqual([resumed, presetOf(second, 'reviewer')])
    expect(resumed.options.model).toBe('m2')
    await resumed.run('b')
    expect(model.requests[0]?.system).toBe('You review code.')
    await second.close()

    const third = await open({ persistence: { dir }, model: scriptedModel([]) })
    const unknown = await rejectionOf(third.resumeAgent('rv'))
    expect(UnknownPresetError.is(unknown)).toBe(true)
    expect(unknown).toMatchObject({ preset: 'reviewer', known: [] })
    expect(third.sessions.get('rv')).toBeUndefined()
    // Nothing was published, and the log is still resumable where the preset exists.
    const fourth = await open({ persistence: { dir }, model: scriptedModel([]), presets: [reviewer().definition] })
    expect((await fourth.resumeAgent('rv', { preset: 'reviewer' })).session.turnState().nextTurn).toBe(3)
  })

  test('a session recorded without a preset rejects any preset override', async () => {
    const first = await open({ persistence: { dir }, model: scriptedModel([text('one')]) })
    await (await first.createAgent({ sessionId: 'plain' })).run('a')
    await first.close()
    const second = await open({ persistence: { dir }, presets: [reviewer().definition] })
    expect(await rejectionOf(second.resumeAgent('plain', { preset: 'reviewer' }))).toMatchObject({
      code: 'PRESET_MISMATCH',
      requested: 'reviewer',
    })
    expect(second.ctx.scopes.chain(await second.resumeAgent('plain'))).toHaveLength(1)
  })
})

describe('per-agent variables', () => {
  test('an undefined cwd ends the turn error before any request; a listener supplying it rescues turn 2', async () => {
    const model = scriptedModel([text('ok')])
    const harness = await open({ model, instructions: 'In {{cwd}}.' })
    const a = await harness.createAgent()
    const errors: unknown[] = []
    harness.on('agent/error', (payload) => errors.push(payload.error))
    a.followup('go')
    await a.whenIdle()
    expect(model.requests).toHaveLength(0)
    const end = a.session.events.find((event) => event.type === 'turn/end') as SessionEvent
    expect(end.data).toEqual({
      turn: 1,
      reason: {
        kind: 'error',
        error: {
          code: 'PROMPT_VARIABLE_UNDEFINED',
          message: 'variable "{{cwd}}" has no value in this assembly (section "instructions")',
        },
      },
    })
    expect(errors).toHaveLength(1)

    harness.on('system-prompt/assemble', (payload, next) =>
      next({
        ...payload,
        assembly: { ...payload.assembly, variables: { ...payload.assembly.variables, cwd: '/rescued' } },
      }),
    )
    a.followup('again')
    await a.whenIdle()
    const ends = a.session.events.filter((event) => event.type === 'turn/end')
    expect(ends[1]?.data).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(model.requests[0]?.system).toBe('In /rescued.')
  })

  test('agent_id, provider, model and cwd are the agent’s own; cwd comes from the session header', async () => {
    const harness = await open({ persistence: { dir } })
    const prompt = harness.ctx.get(services.systemPrompt)
    const signal = new AbortController().signal
    const a = await harness.agents.create({ id: 'alpha', options: { provider: 'mock', model: 'big' } })
    const own = await prompt.assemble({ agent: a, scope: a, signal })
    expect({ ...own.variables }).toEqual({ agent_id: 'alpha', provider: 'mock', model: 'big', cwd: undefined })
    const global = await prompt.assemble({ signal })
    expect(Object.keys(global.variables)).toEqual([])

    const stored = harness.sessions.create({ id: 'beta', header: { cwd: '/srv' } })
    stored.append('turn/start', { turn: 1 })
    stored.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    await harness.sessions.dispose(stored)
    const b = await harness.resumeAgent('beta')
    expect((await prompt.assemble({ agent: b, scope: b, signal })).variables).toMatchObject({
      agent_id: 'beta',
      cwd: '/srv',
    })
    await b.dispose()
    // Disposed with the agent: its layer is gone.
    expect(Object.keys((await prompt.assemble({ agent: b, scope: b, signal })).variables)).toEqual([])
  })

  test('without options the model variables come from the last logged request/header', async () => {
    const harness = await open()
    harness.ctx.models.register(scriptedModel([text('one')], { provider: 'side', model: 'sm' }))
    const a = await harness.createAgent()
    expect(a.options.model).toBeUndefined()
    const prompt = harness.ctx.get(services.systemPrompt)
    const signal = new AbortController().signal
    expect((await prompt.assemble({ agent: a, scope: a, signal })).variables).toMatchObject({
      provider: undefined,
      model: undefined,
    })
    harness.on('agent/request', (payload, next) =>
      next({ ...payload, config: { ...payload.config, provider: 'side', model: 'sm' } }),
    )
    expect(await a.run('x')).toMatchObject({ reason: { kind: 'completed' } })
    expect((await prompt.assemble({ agent: a, scope: a, signal })).variables).toMatchObject({
      provider: 'side',
      model: 'sm',
    })
  })
})

describe('a child agent created in a parent tool', () => {
  test('C’s setup sees A, C’s tool sees C, and A’s tool sees A again after awaiting C', async () => {
    const seen: string[] = []
    let harness: Harness | undefined
    const current = (): string => harness?.agents.initiator.current()?.id ?? 'none'
    const probe = defineTool({
      name: 'probe',
      description: 'records the initiator',
      input: z.object({}),
      execute: () => {
        seen.push(`probe:${current()}`)
        return 'probed'
      },
    })
    const spawn = defineTool({
      name: 'spawn',
      description: 'runs a child agent',
      input: z.object({}),
      execute: async () => {
        const child = await harness?.agents.create({ id: 'C', setup: () => void seen.push(`setup:${current()}`) })
        child?.followup('c')
        await child?.whenIdle()
        seen.push(`after:${current()}`)
        return 'spawned'
      },
    })
    const model = scriptedModel([tool('spawn', {}), tool('probe', {}), text('c done'), text('a done')])
    harness = await open({ model, tools: [spawn, probe] })
    const a = await harness.createAgent({ sessionId: 'A' })
    expect(await a.run('go')).toMatchObject({ reason: { kind: 'completed' }, text: 'a done' })
    expect(seen).toEqual(['setup:A', 'probe:C', 'after:A'])
  })
})

describe('preset options are agent options', () => {
  test('an invalid preset option fails the schema at ["presets", i, "options"], defined or raw', async () => {
    const defined = await rejectionOf(
      createHarness({ presets: [definePreset({ name: 'bad', options: { maxParallelToolCalls: 0 } })] }),
    )
    expect(defined).toMatchObject({ code: 'INVALID_OPTIONS' })
    expect((defined as { readonly issues: readonly unknown[] }).issues).toEqual([
      { path: ['presets', 0, 'options'], message: 'maxParallelToolCalls: must be a positive integer' },
    ])
    const raw = { name: 'raw', options: { temperature: 3 } } as unknown as PresetDefinition
    const error = await rejectionOf(createHarness({ presets: [definePreset({ name: 'ok' }), raw] }))
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS' })
    expect(
      (error as { readonly issues: readonly { readonly path: readonly unknown[]; readonly message: string }[] }).issues,
    ).toEqual([{ path: ['presets', 1, 'options'], message: 'temperature: must be a finite number from 0 to 2' }])
  })
})
