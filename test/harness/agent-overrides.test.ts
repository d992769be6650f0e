/**
 * `createAgent` / `resumeAgent` overrides: a missing model, atomic creation, plus the
 * per-agent model route, option layering (harness < preset < caller) and failure atomicity.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  AgentCreationAbortedError,
  AgentExistsError,
  createHarness,
  definePreset,
  defineTool,
  type Harness,
  InvalidOptionsError,
  PersistenceError,
  UnknownPresetError,
} from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'

let dir: string
let ids: ReturnType<typeof fakeIds>
const harnesses: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-overrides-'))
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

const secret = defineTool({ name: 'secret', description: 'A secret tool', input: z.object({}), execute: () => 'shh' })

function toolNames(request: { readonly tools?: readonly { readonly name: string }[] } | undefined): string[] {
  return (request?.tools ?? []).map((tool) => tool.name)
}

describe('no model anywhere', () => {
  test('the agent is created; its turn ends error MISSING_MODEL; an agent with its own model completes', async () => {
    const harness = await open()
    const bare = await harness.createAgent()
    const result = await bare.run('hi')
    expect(result.reason.kind).toBe('error')
    expect((result.reason as { readonly error: { readonly code: string } }).error.code).toBe('MISSING_MODEL')
    const model = scriptedModel([text('hello')])
    const equipped = await harness.createAgent({ model })
    expect(await equipped.run('hi')).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'hello' })
    expect(model.requests).toHaveLength(1)
    expect(model.requests[0]).toMatchObject({ provider: 'mock', model: 'mock' })
    // Routed in the agent's layer only: the harness (global layer) has no provider.
    expect(harness.ctx.models.providers()).toEqual([])
    expect(harness.ctx.models.providers(equipped)).toEqual(['mock'])
  })
})

describe('agent-only tools and instructions', () => {
  test('a1 sees secret and its instructions, a2 neither; after a1.dispose no request lists secret', async () => {
    const model = scriptedModel([text('a'), text('b'), text('c')])
    const harness = await open({ model })
    const a1 = await harness.createAgent({ tools: [secret], instructions: 'You are A.' })
    const a2 = await harness.createAgent()
    await a1.run('one')
    await a2.run('two')
    expect(toolNames(model.requests[0])).toEqual(['secret'])
    expect(model.requests[0]?.system).toContain('You are A.')
    expect(toolNames(model.requests[1])).toEqual([])
    expect(model.requests[1]?.system).toBeUndefined()
    await a1.dispose()
    expect(harness.tools.list().map((tool) => tool.name)).toEqual([])
    expect(harness.tools.list(a1).map((tool) => tool.name)).toEqual([])
    await a2.run('three')
    expect(toolNames(model.requests[2])).toEqual([])
  })

  test('array instructions register each section; a same-named section shadows the harness one for this agent only', async () => {
    const model = scriptedModel([text('a'), text('b')])
    const harness = await open({ model, instructions: 'Global.' })
    const own = await harness.createAgent({
      instructions: [
        { name: 'instructions', text: 'Mine.' },
        { name: 'extra', order: 5, text: 'Extra.' },
      ],
    })
    const plain = await harness.createAgent()
    await own.run('x')
    await plain.run('y')
    expect(model.requests[0]?.system).toBe('Mine.\n\nExtra.')
    expect(model.requests[1]?.system).toBe('Global.')
  })

  test('bad instructions or tools reject InvalidOptionsError before anything is created', async () => {
    const harness = await open()
    const badInstructions = await rejectionOf(
      harness.createAgent({ sessionId: 'x', instructions: [{ name: 'has space', text: 't' }] }),
    )
    expect(InvalidOptionsError.is(badInstructions)).toBe(true)
    expect((badInstructions as InvalidOptionsError).issues[0]?.path).toEqual(['instructions', 0, 'name'])
    const badTools = await rejectionOf(harness.createAgent({ sessionId: 'x', tools: [{ name: 'fake' } as never] }))
    expect(badTools).toMatchObject({ code: 'INVALID_ARGUMENT' })
    // Agent options belong under `options`: a top-level one is an unknown key, not silently ignored.
    const misplaced = await rejectionOf(harness.createAgent({ sessionId: 'x', approvalMode: 'manual' } as never))
    expect(misplaced).toMatchObject({
      code: 'INVALID_OPTIONS',
      field: 'approvalMode',
      issues: [{ path: ['approvalMode'], message: 'unknown option' }],
    })
    expect(await rejectionOf(harness.resumeAgent('x', { tool: [] } as never))).toMatchObject({
      code: 'INVALID_OPTIONS',
      field: 'tool',
    })
    expect(harness.sessions.get('x')).toBeUndefined()
    expect(harness.agents.list()).toEqual([])
    expect((await harness.createAgent({ sessionId: 'x' })).id).toBe('x')
  })
})

describe('create is atomic', () => {
  test('an unknown preset rejects UNKNOWN_PRESET, nothing is listed, and the id is reusable', async () => {
    const harness = await open({ persistence: { dir } })
    const error = await rejectionOf(harness.createAgent({ sessionId: 's', preset: 'missing' }))
    expect(UnknownPresetError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'UNKNOWN_PRESET', preset: 'missing', known: [] })
    expect(await harness.listSessions()).toEqual([])
    const agent = await harness.createAgent({ sessionId: 's' })
    expect(agent.id).toBe('s')
  })

  test('an aborted signal rejects AgentCreationAbortedError with its reason; a setup racing it is undone', async () => {
    const harness = await open()
    const controller = new AbortController()
    controller.abort('stop')
    const early = await rejectionOf(harness.createAgent({ sessionId: 'e', signal: controller.signal }))
    expect(AgentCreationAbortedError.is(early)).toBe(true)
    expect((early as AgentCreationAbortedError).reason).toBe('stop')

    let release: () => void = () => {}
    const late = new AbortController()
    const pending = harness.agents.create({
      id: 'l',
      signal: late.signal,
      setup: () => new Promise<void>((resolve) => (release = resolve)),
    })
    await Promise.resolve()
    await new Promise((resolve) => setImmediate(resolve))
    late.abort('later')
    const error = await rejectionOf(pending)
    expect(AgentCreationAbortedError.is(error)).toBe(true)
    expect((error as AgentCreationAbortedError).reason).toBe('later')
    release()
    expect(harness.sessions.get('l')).toBeUndefined()
    expect((await harness.createAgent({ sessionId: 'l' })).id).toBe('l')
  })

  test('bad agent options reject InvalidOptionsError; a bad model override names the model path', async () => {
    const harness = await open()
    const options = await rejectionOf(harness.createAgent({ options: { maxParallelToolCalls: 0 } }))
    expect(options).toMatchObject({ code: 'INVALID_OPTIONS', field: 'maxParallelToolCalls' })
    const model = await rejectionOf(harness.createAgent({ model: { stream: 'nope' } as never }))
    expect(InvalidOptionsError.is(model)).toBe(true)
    expect((model as InvalidOptionsError).issues[0]?.path).toEqual(['model'])
    expect(harness.sessions.list()).toEqual([])
  })
})

describe('existing id', () => {
  test('a live id rejects AGENT_EXISTS; from a new harness over the same directory SESSION_EXISTS', async () => {
    const first = await open({ persistence: { dir }, model: scriptedModel([text('one')]) })
    const agent = await first.createAgent({ sessionId: 's' })
    await agent.run('hi')
    const live = await rejectionOf(first.createAgent({ sessionId: 's' }))
    expect(AgentExistsError.is(live)).toBe(true)
    expect(live).toMatchObject({ code: 'AGENT_EXISTS' })
    await first.close()

    const second = await open({ persistence: { dir } })
    const stored = await rejectionOf(second.createAgent({ sessionId: 's' }))
    expect(PersistenceError.is(stored)).toBe(true)
    expect(stored).toMatchObject({ code: 'SESSION_EXISTS', sessionId: 's' })
    expect(second.sessions.get('s')).toBeUndefined()
    // The stored log is intact: it resumes with turn 2.
    expect((await second.resumeAgent('s')).session.turnState().nextTurn).toBe(2)
  })
})

describe('generated ids skip taken ones', () => {
  test('a deterministic generator restarting over a directory that holds s1 gives s2; a live id is skipped too', async () => {
    const first = await open({ persistence: { dir }, model: scriptedModel([text('one')]), ids: fakeIds() })
    const stored = await first.createAgent()
    expect(stored.id).toBe('s1')
    await stored.run('hi')
    await first.close()

    const second = await open({ persistence: { dir }, model: scriptedModel([text('two')]), ids: fakeIds() })
    const fresh = await second.createAgent()
    expect(fresh.id).toBe('s2')
    await second.createAgent({ sessionId: 's3' })
    expect((await second.createAgent()).id).toBe('s4')
    // The stored s1 is untouched and still resumes.
    expect((await second.resumeAgent('s1')).session.turnState().nextTurn).toBe(2)
    // A given id is still refused, not replaced.
    expect(await rejectionOf(second.createAgent({ sessionId: 's2' }))).toMatchObject({ code: 'AGENT_EXISTS' })
  })

  test('a generator that only repeats a taken id gives up with the error of that id', async () => {
    const messages = fakeIds()
    const same = (kind: string): string => (kind === 'session' ? 'same' : messages(kind as never))
    const first = await open({ persistence: { dir }, model: scriptedModel([text('one')]), ids: same })
    await (await first.createAgent()).run('hi')
    expect(await rejectionOf(first.createAgent())).toMatchObject({ code: 'AGENT_EXISTS', agentId: 'same' })
    await first.close()
    const second = await open({ persistence: { dir }, ids: same })
    const stored = await rejectionOf(second.createAgent())
    expect(PersistenceError.is(stored)).toBe(true)
    expect(stored).toMatchObject({ code: 'SESSION_EXISTS', sessionId: 'same' })
    expect(second.sessions.get('same')).toBeUndefined()
  })
})

describe('resume errors', () => {
  test("resumeAgent('nope') rejects SESSION_NOT_FOUND; resuming a live agent's id rejects AGENT_EXISTS", async () => {
    const harness = await open({ persistence: { dir } })
    const missing = await rejectionOf(harness.resumeAgent('nope'))
    expect(PersistenceError.is(missing)).toBe(true)
    expect(missing).toMatchObject({ code: 'SESSION_NOT_FOUND' })
    const agent = await harness.createAgent({ sessionId: 'live' })
    const exists = await rejectionOf(harness.resumeAgent(agent.id))
    expect(AgentExistsError.is(exists)).toBe(true)
    expect(exists).toMatchObject({ code: 'AGENT_EXISTS', agentId: 'live' })
  })
})

describe('option layering (harness maxParallelToolCalls < preset < caller)', () => {
  test('each field comes from the nearest layer that sets it', async () => {
    const preset = definePreset({ name: 'p', options: { maxParallelToolCalls: 3, toolAbortGraceMs: 5, model: 'm2' } })
    const harness = await open({ model: scriptedModel([]), maxParallelToolCalls: 7, presets: [preset] })
    expect((await harness.createAgent()).options).toEqual({ maxParallelToolCalls: 7, provider: 'mock', model: 'mock' })
    const bound = await harness.createAgent({ preset: 'p', options: { toolAbortGraceMs: 9 } })
    expect(bound.options).toEqual({ maxParallelToolCalls: 3, provider: 'mock', model: 'm2', toolAbortGraceMs: 9 })
    expect(Object.isFrozen(bound.options)).toBe(true)
  })

  test("a model override's route fields replace the harness route's; the caller's options still win", async () => {
    const harnessModel = scriptedModel([])
    const agentModel = scriptedModel([text('own')], { provider: 'other', model: 'x1' })
    const harness = await open({ model: { adapter: harnessModel, temperature: 0.5 } })
    const agent = await harness.createAgent({ model: { adapter: agentModel, maxTokens: 64 }, options: { model: 'x2' } })
    expect(agent.options).toEqual({ provider: 'other', model: 'x2', maxTokens: 64 })
    await agent.run('hi')
    expect(agentModel.requests[0]).toMatchObject({ provider: 'other', model: 'x2', maxTokens: 64 })
    expect(agentModel.requests[0]?.temperature).toBeUndefined()
    expect(harnessModel.requests).toHaveLength(0)
  })
})
