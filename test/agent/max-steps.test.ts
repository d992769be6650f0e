/**
 * The step limit: `maxSteps` from the harness, the agent and the run; the last allowed request
 * keeps its tools but forbids calls; the turn ends `max-steps`; bad values are typed errors; the
 * limit is in the log, so rebuilt and resumed requests match, over memory and JSONL.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  type HarnessOptions,
  InvalidArgumentError,
  InvalidOptionsError,
  type ModelRequest,
  defineTool,
  rebuildRequest,
} from 'yoke'
import { fakeClock, fakeIds, hang, type ScriptEntry, scriptedModel, text, tool } from 'yoke/testing'
import { z } from 'zod'

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: z.object({ q: z.string() }),
  execute: (args) => `found ${args.q}`,
})

/** A model that asks for a lookup on every request it gets. */
function toolsForever(count: number): ScriptEntry[] {
  return Array.from({ length: count }, (_, index) => tool('lookup', { q: `w${index}` }))
}

function withoutSignal(request: ModelRequest | undefined): Omit<ModelRequest, 'signal'> {
  const { signal: _signal, ...rest } = request as ModelRequest
  return rest
}

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-max-steps-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const stores: readonly [string, () => Partial<HarnessOptions>][] = [
  ['memory', () => ({})],
  ['jsonl', () => ({ persistence: { dir } })],
]

describe.each(stores)('maxSteps over %s', (_name, store) => {
  async function setup(script: readonly ScriptEntry[], extra: Partial<HarnessOptions> = {}) {
    const model = scriptedModel(script)
    const harness = await createHarness({
      model,
      tools: [lookup],
      clock: fakeClock(),
      ids: fakeIds(),
      ...store(),
      ...extra,
    })
    return { model, harness }
  }

  test('a model that calls tools forever stops at the limit; the last request forbids calls but keeps the tools', async () => {
    const { model, harness } = await setup(toolsForever(10))
    const agent = await harness.createAgent({ options: { maxSteps: 3, verifyReconstruction: true } })
    const result = await agent.run('look everything up')
    expect(result.reason).toEqual({ kind: 'max-steps', limit: 3 })
    expect(model.requests).toHaveLength(3)
    expect(model.remaining).toBe(7)
    expect(model.requests.map((request) => request.toolChoice)).toEqual([undefined, undefined, 'none'])
    expect(model.requests[2]?.tools?.map((schema) => schema.name)).toEqual(['lookup'])
    // The third answer's call was dropped: two calls ran, none is left unanswered.
    const calls = agent.session.events.filter((event) => event.type === 'tool/call')
    const results = agent.session.events.filter((event) => event.type === 'tool/result')
    expect(calls).toHaveLength(2)
    expect(results).toHaveLength(2)
    expect(result.text).toBe('')
    const end = agent.session.events.at(-1)
    expect(end?.type).toBe('turn/end')
    expect(end?.data).toEqual({ turn: 1, reason: { kind: 'max-steps', limit: 3 } })
    await harness.close()
  })

  test('the last allowed step answers in text and run() resolves with that answer', async () => {
    const { model, harness } = await setup([...toolsForever(1), text('here is what I found')])
    const agent = await harness.createAgent({ options: { maxSteps: 2, verifyReconstruction: true } })
    const result = await agent.run('look it up')
    expect(result).toMatchObject({ reason: { kind: 'max-steps', limit: 2 }, text: 'here is what I found' })
    expect(model.requests.map((request) => request.toolChoice)).toEqual([undefined, 'none'])
    model.assertComplete()
    await harness.close()
  })

  test('agent/turn-stopping sees the max-steps reason, and work it queues waits for the next turn', async () => {
    const { model, harness } = await setup([...toolsForever(2), text('next turn')])
    const agent = await harness.createAgent({ options: { maxSteps: 2 } })
    const reasons: unknown[] = []
    harness.on('agent/turn-stopping', (payload) => {
      reasons.push(payload.reason)
      if (payload.turn === 1) payload.agent.steer('one more thing')
    })
    const result = await agent.run('go')
    expect(result.reason).toEqual({ kind: 'max-steps', limit: 2 })
    await agent.whenIdle()
    expect(reasons).toEqual([{ kind: 'max-steps', limit: 2 }, { kind: 'completed' }])
    const ends = agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)
    expect(ends).toEqual([
      { turn: 1, reason: { kind: 'max-steps', limit: 2 } },
      { turn: 2, reason: { kind: 'completed' } },
    ])
    expect(model.requests[2]?.messages.at(-1)?.content).toEqual([{ type: 'text', text: 'one more thing' }])
    await harness.close()
  })

  test('a turn that finishes before the limit ends completed and never forbids calls', async () => {
    const { model, harness } = await setup([...toolsForever(1), text('done')])
    const agent = await harness.createAgent({ options: { maxSteps: 3 } })
    const result = await agent.run('look it up')
    expect(result.reason).toEqual({ kind: 'completed' })
    expect(model.requests.every((request) => request.toolChoice === undefined)).toBe(true)
    await harness.close()
  })

  test('without tools, a one-step limit sends no toolChoice and the turn ends completed', async () => {
    const model = scriptedModel([text('hi there')])
    const harness = await createHarness({ model, clock: fakeClock(), ids: fakeIds(), ...store() })
    const agent = await harness.createAgent({ options: { maxSteps: 1, verifyReconstruction: true } })
    const result = await agent.run('hi')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'hi there' })
    expect(model.requests[0]).not.toHaveProperty('toolChoice')
    await harness.close()
  })

  test('the next turn asks with toolChoice auto again (a header change back)', async () => {
    const { model, harness } = await setup([...toolsForever(2), text('second turn')])
    const agent = await harness.createAgent({ options: { maxSteps: 2, verifyReconstruction: true } })
    await agent.run('first')
    const second = await agent.run('second', { maxSteps: 5 })
    expect(second.reason).toEqual({ kind: 'completed' })
    expect(model.requests.map((request) => request.toolChoice)).toEqual([undefined, 'none', undefined])
    const headers = agent.session.events.filter((event) => event.type === 'request/header')
    expect(headers.map((event) => (event.data as { reason: string }).reason)).toEqual(['initial', 'change', 'change'])
    await harness.close()
  })

  test('per-run maxSteps beats the agent option, which beats the harness option', async () => {
    const { model, harness } = await setup(toolsForever(20), { maxSteps: 4 })
    const fromHarness = await harness.createAgent()
    expect(fromHarness.options.maxSteps).toBe(4)
    expect((await fromHarness.run('a')).reason).toEqual({ kind: 'max-steps', limit: 4 })
    const fromAgent = await harness.createAgent({ options: { maxSteps: 3 } })
    expect((await fromAgent.run('b')).reason).toEqual({ kind: 'max-steps', limit: 3 })
    expect((await fromAgent.run('c', { maxSteps: 2 })).reason).toEqual({ kind: 'max-steps', limit: 2 })
    expect(model.requests).toHaveLength(4 + 3 + 2)
    await harness.close()
  })

  test('stream() takes maxSteps too and yields the turn up to its max-steps end', async () => {
    const { model, harness } = await setup(toolsForever(5))
    const agent = await harness.createAgent()
    const run = agent.stream('go', { maxSteps: 2 })
    const ends: unknown[] = []
    for await (const event of run) if (event.type === 'turn/end') ends.push(event.data)
    expect(ends).toEqual([{ turn: 1, reason: { kind: 'max-steps', limit: 2 } }])
    expect((await run.result).reason).toEqual({ kind: 'max-steps', limit: 2 })
    expect(model.requests).toHaveLength(2)
    await harness.close()
  })

  test('the default limit is 25 steps', async () => {
    const { model, harness } = await setup(toolsForever(30))
    const agent = await harness.createAgent()
    expect(agent.options.maxSteps).toBeUndefined()
    expect((await agent.run('go')).reason).toEqual({ kind: 'max-steps', limit: 25 })
    expect(model.requests).toHaveLength(25)
    expect(model.requests[24]?.toolChoice).toBe('none')
    await harness.close()
  })

  test('Infinity lifts the limit, for the agent and for one run', async () => {
    const { model, harness } = await setup([...toolsForever(30), text('finally'), ...toolsForever(30), text('again')], {
      maxSteps: 2,
    })
    const agent = await harness.createAgent({ options: { maxSteps: Number.POSITIVE_INFINITY } })
    const result = await agent.run('go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'finally' })
    expect(model.requests).toHaveLength(31)
    const limited = await harness.createAgent()
    const unlimited = await limited.run('go', { maxSteps: Number.POSITIVE_INFINITY })
    expect(unlimited).toMatchObject({ reason: { kind: 'completed' }, text: 'again' })
    expect(model.requests.every((request) => request.toolChoice === undefined)).toBe(true)
    const logged = limited.session.events.find((event) => event.type === 'agent/run-options')
    expect(logged?.data).toEqual({ messageId: unlimited.messages[0]?.id, maxSteps: null })
    await harness.close()
  })

  test('rebuildRequest and verifyReconstruction reproduce the toolChoice after a reopen', async () => {
    const { model, harness } = await setup(toolsForever(3))
    const agent = await harness.createAgent({ options: { maxSteps: 3, verifyReconstruction: true } })
    await agent.run('go')
    const id = agent.id
    const live = model.requests.map(withoutSignal)
    for (let step = 1; step <= 3; step++) {
      expect(rebuildRequest(agent.session, { turn: 1, step })).toStrictEqual(live[step - 1])
    }
    await harness.close()
    if (store().persistence === undefined) return
    const second = await createHarness({ model: scriptedModel([]), tools: [lookup], ...store(), ids: fakeIds() })
    const resumed = await second.resumeAgent(id)
    const rebuilt = rebuildRequest(resumed.session, { turn: 1, step: 3 })
    expect(rebuilt.toolChoice).toBe('none')
    expect(rebuilt).toStrictEqual(live[2])
    await second.close()
  })
})

describe('bad maxSteps values', () => {
  const bad: readonly [string, unknown][] = [
    ['zero', 0],
    ['negative', -1],
    ['non-integer', 2.5],
    ['NaN', Number.NaN],
    ['negative Infinity', Number.NEGATIVE_INFINITY],
    ['a string', '3'],
  ]

  test.each(bad)('run() refuses %s with InvalidArgumentError, nothing queued', async (_name, value) => {
    const harness = await createHarness({ model: scriptedModel([]), ids: fakeIds() })
    const agent = await harness.createAgent()
    const before = agent.session.length
    const error = await agent.run('hi', { maxSteps: value as number }).catch((caught: unknown) => caught)
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ argument: 'options.maxSteps', value })
    expect(() => agent.stream('hi', { maxSteps: value as number })).toThrow(InvalidArgumentError)
    expect(agent.session.length).toBe(before)
    expect(agent.inbox.hasPending).toBe(false)
    await harness.close()
  })

  test.each(bad)('createAgent refuses %s with InvalidOptionsError', async (_name, value) => {
    const harness = await createHarness({ model: scriptedModel([]) })
    const error = await harness
      .createAgent({ options: { maxSteps: value as number } })
      .catch((caught: unknown) => caught)
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect((error as InvalidOptionsError).issues[0]).toEqual({
      path: ['maxSteps'],
      message: 'must be a positive integer or Infinity',
    })
    expect(harness.agents.list()).toEqual([])
    await harness.close()
  })

  test.each(bad)('createHarness refuses %s with InvalidOptionsError', async (_name, value) => {
    const error = await createHarness({ maxSteps: value as number }).catch((caught: unknown) => caught)
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect((error as InvalidOptionsError).issues[0]?.path).toEqual(['maxSteps'])
  })
})

describe('a queued run keeps its limit across a restart', () => {
  test('the resumed turn runs under the logged per-run limit and rebuilds the same requests', async () => {
    const ids = fakeIds()
    const first = await createHarness({
      persistence: { dir },
      model: scriptedModel([hang()]),
      tools: [lookup],
      clock: fakeClock(),
      ids,
    })
    const agent = await first.createAgent()
    const requested = new Promise<void>((resolve) => {
      first.on('session/event', ({ event }) => {
        if (event.type === 'request/header') resolve()
      })
    })
    agent.followup('one')
    await requested
    const queued = agent.run('two', { maxSteps: 2 })
    const settled = queued.catch((error: unknown) => error)
    const id = agent.id
    await first.close()
    expect(await settled).toMatchObject({ reason: 'disposed' })

    const model = scriptedModel(toolsForever(5))
    const second = await createHarness({ persistence: { dir }, model, tools: [lookup], clock: fakeClock(), ids })
    const resumed = await second.resumeAgent(id, { options: { verifyReconstruction: true } })
    expect(resumed.wake()).toBe(true)
    await resumed.whenIdle()
    expect(model.requests.map((request) => request.toolChoice)).toEqual([undefined, 'none'])
    const end = resumed.session.events.filter((event) => event.type === 'turn/end').at(-1)
    expect(end?.data).toEqual({ turn: 2, reason: { kind: 'max-steps', limit: 2 } })
    expect(rebuildRequest(resumed.session, { turn: 2, step: 2 })).toStrictEqual(withoutSignal(model.requests[1]))
    await second.close()
  })
})
