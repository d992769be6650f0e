/**
 * `openAgent` on a live agent compares the given overrides with the ones the agent runs with:
 * the same ones (or none) return it, other ones reject `AgentOverridesMismatchError` naming each
 * differing field, over the memory and the JSONL adapters, for an agent created, resumed or opened,
 * and for a caller joining a pending open.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  AgentOverridesMismatchError,
  createHarness,
  definePreset,
  defineTool,
  type Harness,
  HarnessError,
  InvalidOptionsError,
  memoryPersistence,
  type ModelAdapter,
  type PersistenceAdapter,
  type ResumeOverrides,
} from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { createMemoryStore } from '../../src/persistence/index.js'
import { rejectionOf } from '../helpers/outcomes.js'

const harnesses: Harness[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up',
  input: z.object({ key: z.string() }),
  execute: ({ key }) => `value of ${key}`,
})
const erase = defineTool({
  name: 'erase',
  description: 'Erases a key',
  input: z.object({ key: z.string() }),
  execute: () => 'erased',
})
const otherModel = scriptedModel([])
const presets = [definePreset({ name: 'support' }), definePreset({ name: 'sales' })]

/** The overrides an agent of these tests is opened with, with a fresh model answering `replies`. */
function overrides(...replies: string[]): ResumeOverrides & { readonly model: ModelAdapter } {
  return {
    preset: 'support',
    model: scriptedModel(replies.map((reply) => text(reply))),
    options: { maxTokens: 100, temperature: 0.5 },
    tools: [lookup],
    instructions: 'Be brief.',
  }
}

async function freshPersistence(kind: 'memory' | 'jsonl'): Promise<() => PersistenceAdapter | { dir: string }> {
  if (kind === 'memory') {
    const store = createMemoryStore()
    return () => memoryPersistence({ store })
  }
  const dir = await mkdtemp(join(tmpdir(), 'yoke-open-overrides-'))
  dirs.push(dir)
  return () => ({ dir })
}

async function harnessOver(persistence: PersistenceAdapter | { dir: string }): Promise<Harness> {
  const harness = await createHarness({
    persistence,
    presets,
    maxParallelToolCalls: 4,
    clock: fakeClock(),
    ids: fakeIds(),
  })
  harnesses.push(harness)
  return harness
}

describe.each(['memory', 'jsonl'] as const)('over %s', (kind) => {
  test('the same overrides (or none, or a subset) return the live agent; each different one is named', async () => {
    const harness = await harnessOver((await freshPersistence(kind))())
    const base = overrides('one')
    const agent = await harness.openAgent('chat', base)
    expect(await harness.openAgent('chat', base)).toBe(agent)
    expect(await harness.openAgent('chat')).toBe(agent)
    expect(await harness.openAgent('chat', { options: { temperature: 0.5 } })).toBe(agent)
    // An option the agent got from the harness options matches too.
    expect(await harness.openAgent('chat', { options: { maxParallelToolCalls: 4 } })).toBe(agent)
    // Rebuilt but equal values match: a fresh options object, tools of the same names.
    const lookalike = defineTool({
      name: 'lookup',
      description: 'Another body',
      input: z.object({}),
      execute: () => '',
    })
    expect(await harness.openAgent('chat', { ...base, options: { ...base.options }, tools: [lookalike] })).toBe(agent)
    // signal and queued only matter while an agent is opened.
    expect(await harness.openAgent('chat', { signal: new AbortController().signal, queued: 'discard' })).toBe(agent)

    const cases: [ResumeOverrides, string[]][] = [
      [{ preset: 'sales' }, ['preset']],
      [{ model: otherModel }, ['model']],
      [{ options: { maxTokens: 50 } }, ['options.maxTokens']],
      [{ options: { maxTokens: 100, toolTimeoutMs: 5000 } }, ['options.toolTimeoutMs']],
      [{ tools: [lookup, erase] }, ['tools']],
      [{ tools: [] }, ['tools']],
      [{ instructions: 'Be thorough.' }, ['instructions']],
      [
        { ...base, preset: 'sales', options: { maxTokens: 1 }, instructions: [{ name: 'x', text: 'y' }] },
        ['preset', 'options.maxTokens', 'instructions'],
      ],
    ]
    for (const [overrides, fields] of cases) {
      const error = await rejectionOf(harness.openAgent('chat', overrides))
      expect(AgentOverridesMismatchError.is(error)).toBe(true)
      expect(HarnessError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'AGENT_OVERRIDES_MISMATCH', agentId: 'chat', fields })
      expect((error as Error).message).toContain(fields.join(', '))
    }
    // The refusal changed nothing: the agent is still the live one and runs with its own overrides.
    expect(harness.agents.get('chat')).toBe(agent)
    expect(agent.options).toMatchObject({ maxTokens: 100, temperature: 0.5 })
    expect((await agent.run('hi')).text).toBe('one')
  })

  test('invalid options for a live agent are InvalidOptionsError, not a mismatch', async () => {
    const harness = await harnessOver((await freshPersistence(kind))())
    await harness.createAgent({ sessionId: 'chat', options: { maxTokens: 100 } })
    const error = await rejectionOf(harness.openAgent('chat', { options: { maxTokens: -1 } }))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', issues: [{ path: ['maxTokens'] }] })
  })

  test('an agent created or resumed by the harness is compared with its own overrides; preset and options also for one made through agents', async () => {
    const persistence = await freshPersistence(kind)
    const first = await harnessOver(persistence())
    const base = overrides('stored')
    const created = await first.createAgent({ sessionId: 'created', ...base })
    await created.run('store me')
    expect(await first.openAgent('created', base)).toBe(created)
    expect(await rejectionOf(first.openAgent('created', { tools: [erase] }))).toMatchObject({ fields: ['tools'] })
    const direct = await first.agents.create({ id: 'direct', preset: 'support', options: { maxTokens: 7 } })
    expect(await first.openAgent('direct', { preset: 'support', options: { maxTokens: 7 } })).toBe(direct)
    expect(await rejectionOf(first.openAgent('direct', { model: base.model, tools: [lookup] }))).toMatchObject({
      fields: ['model', 'tools'],
    })
    await first.close()

    const second = await harnessOver(persistence())
    const resumed = await second.resumeAgent('created', { ...base, queued: 'keep' })
    expect(await second.openAgent('created', base)).toBe(resumed)
    expect(await rejectionOf(second.openAgent('created', { options: { maxTokens: 5 } }))).toMatchObject({
      fields: ['options.maxTokens'],
    })
  })

  test('a caller joining a pending open with other overrides is refused once the agent is open', async () => {
    const harness = await harnessOver((await freshPersistence(kind))())
    const base = overrides()
    const [opened, joined, joinedSame] = await Promise.allSettled([
      harness.openAgent('chat', base),
      harness.openAgent('chat', { options: { maxTokens: 1 } }),
      harness.openAgent('chat', { tools: [lookup] }),
    ])
    expect(opened.status).toBe('fulfilled')
    expect(joined).toMatchObject({
      status: 'rejected',
      reason: { code: 'AGENT_OVERRIDES_MISMATCH', fields: ['options.maxTokens'] },
    })
    expect(joinedSame).toEqual({ status: 'fulfilled', value: harness.agents.get('chat') })
  })
})
