import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { AgentExistsError, createHarness, defineTool, PersistenceError, type SessionEvent } from 'yoke'
import { call, fakeClock, fakeIds, hang, scriptedModel, text } from 'yoke/testing'

let dir: string
let crashDir: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-resume-'))
  crashDir = await mkdtemp(join(tmpdir(), 'yoke-resume-crash-'))
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
  await rm(crashDir, { recursive: true, force: true })
})

function types(events: readonly SessionEvent[]): string[] {
  return events.map((event) => event.type)
}

function withoutChunks(events: readonly SessionEvent[]): string[] {
  return types(events).filter((type) => type !== 'assistant/chunk')
}

/** A tool that never settles until its call is aborted. */
const stuck = defineTool({
  name: 'stuck',
  description: 'waits for the abort',
  input: z.object({}),
  execute: (_args, context) =>
    new Promise<string>((_resolve, reject) => {
      context.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })
    }),
})

describe('agents.resume / harness.resumeAgent', () => {
  test('a closed session resumes: turn 2, request/header resume, messages continue', async () => {
    const ids = fakeIds()
    const first = await createHarness({
      persistence: { dir },
      model: scriptedModel([text('hello')]),
      clock: fakeClock(),
      ids,
    })
    const agent = await first.createAgent({ options: { verifyReconstruction: true } })
    await agent.run('hi')
    const id = agent.id
    const before = agent.session.deriveMessages()
    const beforeLength = agent.session.length
    await first.close()

    const model = scriptedModel([text('welcome back')])
    const second = await createHarness({ persistence: { dir }, model, clock: fakeClock(), ids })
    const starts: string[] = []
    second.on('agent/session-start', (payload) => starts.push(`${payload.agent.id}:${payload.source}`))
    const resumed = await second.resumeAgent(id, { options: { verifyReconstruction: true } })
    expect(resumed.id).toBe(id)
    expect(second.agents.get(id)).toBe(resumed)
    expect(starts).toEqual([`${id}:resume`])
    expect(resumed.status).toBe('idle')
    expect(model.requests).toHaveLength(0)
    expect(resumed.session.length).toBe(beforeLength + 1)
    expect(resumed.session.at(beforeLength)?.type).toBe('session/end-seed')

    const result = await resumed.run('again')
    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'welcome back' })
    const turn2 = resumed.session.events.slice(beforeLength + 1)
    expect(withoutChunks(turn2)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    // Request/context only when it differs from the last one; the model did not change.
    expect(turn2.find((event) => event.type === 'turn/start')?.data).toEqual({ turn: 2 })
    expect(turn2.find((event) => event.type === 'request/header')?.data).toMatchObject({ reason: 'resume' })
    const after = resumed.session.deriveMessages()
    expect(after.slice(0, before.length)).toEqual(before)
    expect(after.slice(before.length).map((message) => message.role)).toEqual(['user', 'assistant'])
    expect(after).toHaveLength(before.length + 2)
    expect(model.requests[0]?.messages).toHaveLength(before.length + 1)
    await second.close()

    const stored = (await readFile(join(dir, `${id}.jsonl`), 'utf8')).trim().split('\n').slice(1)
    expect(stored.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(types(resumed.session.events))
  })

  test('a log cut mid-turn: resume commits the closers and the next request is valid', async () => {
    const ids = fakeIds()
    const first = await createHarness({
      persistence: { dir },
      model: scriptedModel([call('c1', 'stuck', '{}')]),
      clock: fakeClock(),
      ids,
      tools: [stuck],
    })
    const agent = await first.createAgent({ options: { verifyReconstruction: true } })
    const id = agent.id
    const called = new Promise<void>((resolve) => {
      first.on('session/event', ({ event }) => {
        if (event.type === 'tool/call') resolve()
      })
    })
    agent.followup('go')
    await called
    await first.sessions.flush(agent.session)
    // The "crash": the durable log as it is now, with turn 1 open after tool/call c1.
    await copyFile(join(dir, `${id}.jsonl`), join(crashDir, `${id}.jsonl`))
    await first.close()
    const cut = (await readFile(join(crashDir, `${id}.jsonl`), 'utf8')).trim().split('\n').slice(1)
    const cutTypes = cut.map((line) => (JSON.parse(line) as { type: string }).type)
    expect(cutTypes.at(-1)).toBe('tool/call')
    expect(cutTypes).not.toContain('turn/end')

    const model = scriptedModel([text('recovered')])
    const second = await createHarness({
      persistence: { dir: crashDir },
      model,
      clock: fakeClock(),
      ids,
      tools: [stuck],
    })
    const resumed = await second.resumeAgent(id, { options: { verifyReconstruction: true } })
    const closers = resumed.session.events.slice(cut.length)
    expect(types(closers)).toEqual(['tool/result', 'step/end', 'turn/end', 'session/end-seed'])
    const synthetic = closers[0]?.data as { message: { source: { callId: string } }; error: { code: string } }
    expect(synthetic.message.source.callId).toBe('c1')
    expect(synthetic.error.code).toBe('TOOL_OUTCOME_UNKNOWN')
    expect(closers[2]?.data).toMatchObject({ turn: 1, reason: { kind: 'interrupted' } })
    // Committed durably by prepare, before any turn ran.
    const repaired = (await readFile(join(crashDir, `${id}.jsonl`), 'utf8')).trim().split('\n').slice(1)
    expect(repaired.map((line) => (JSON.parse(line) as { type: string }).type).slice(cut.length)).toEqual([
      'tool/result',
      'step/end',
      'turn/end',
    ])

    const result = await resumed.run('next')
    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'recovered' })
    const request = model.requests[0]
    const callIds = (request?.messages ?? []).flatMap((message) =>
      message.role === 'assistant'
        ? message.content.flatMap((block) => (block.type === 'tool-call' ? [block.id] : []))
        : [],
    )
    const resultIds = (request?.messages ?? []).flatMap((message) =>
      message.content.flatMap((block) =>
        typeof block !== 'string' && block.type === 'tool-result' ? [block.toolCallId] : [],
      ),
    )
    expect(callIds).toEqual(['c1'])
    expect(resultIds).toEqual(['c1'])
    await second.close()
  })

  test('resuming a live agent rejects AgentExistsError; an unknown id PersistenceError', async () => {
    const harness = await createHarness({
      persistence: { dir },
      model: scriptedModel([text('a')]),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    await agent.run('hi')
    const live = await harness
      .resumeAgent(agent.id, { options: { verifyReconstruction: true } })
      .catch((error: unknown) => error)
    expect(live).toBeInstanceOf(AgentExistsError)
    expect(live).toMatchObject({ code: 'AGENT_EXISTS', agentId: agent.id })
    expect(harness.agents.get(agent.id)).toBe(agent)
    const missing = await harness
      .resumeAgent('nope', { options: { verifyReconstruction: true } })
      .catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(PersistenceError)
    expect(missing).toMatchObject({ code: 'SESSION_NOT_FOUND' })
    expect(harness.agents.get('nope')).toBeUndefined()
    await harness.close()
    const closed = await harness
      .resumeAgent(agent.id, { options: { verifyReconstruction: true } })
      .catch((error: unknown) => error)
    expect(closed).toMatchObject({ code: 'HARNESS_CLOSED' })
  })

  test('a failed resume publishes nothing and leaves the id resumable', async () => {
    const ids = fakeIds()
    const first = await createHarness({
      persistence: { dir },
      model: scriptedModel([text('a')]),
      clock: fakeClock(),
      ids,
    })
    const id = (await first.createAgent({ options: { verifyReconstruction: true } })).id
    await first.agents.get(id)?.run('hi')
    await first.close()

    const second = await createHarness({
      persistence: { dir },
      model: scriptedModel([text('b')]),
      clock: fakeClock(),
      ids,
    })
    const broken = new Error('setup broke')
    const setupFailure = await second.agents
      .resume(id, { setup: () => Promise.reject(broken) })
      .catch((error: unknown) => error)
    expect(setupFailure).toBe(broken)
    expect(second.agents.get(id)).toBeUndefined()
    expect(second.sessions.get(id)).toBeUndefined()

    const controller = new AbortController()
    controller.abort('stop')
    const aborted = await second
      .resumeAgent(id, { signal: controller.signal, options: { verifyReconstruction: true } })
      .catch((error: unknown) => error)
    expect(aborted).toMatchObject({ code: 'AGENT_CREATION_ABORTED', reason: 'stop' })

    // Prepended, so the veto comes before persistence binds: resume must release the preparation.
    const veto = second.on(
      'session/created',
      () => {
        throw new Error('no')
      },
      { prepend: true },
    )
    const vetoed = await second
      .resumeAgent(id, { options: { verifyReconstruction: true } })
      .catch((error: unknown) => error)
    expect(vetoed).toMatchObject({ code: 'CREATE_VETOED', sessionId: id })
    veto()

    const starts: string[] = []
    second.on('agent/session-start', (payload) => starts.push(payload.source))
    const resumed = await second.resumeAgent(id, { options: { maxParallelToolCalls: 2, verifyReconstruction: true } })
    expect(resumed.options.maxParallelToolCalls).toBe(2)
    expect(starts).toEqual(['resume'])
    expect((await resumed.run('again')).turn).toBe(2)
    await second.close()
  })

  test('a followup queued behind a busy turn survives close and resume', async () => {
    const ids = fakeIds()
    const first = await createHarness({ persistence: { dir }, model: scriptedModel([hang()]), clock: fakeClock(), ids })
    const agent = await first.createAgent({ options: { verifyReconstruction: true } })
    const requested = new Promise<void>((resolve) => {
      first.on('session/event', ({ event }) => {
        if (event.type === 'request/header') resolve()
      })
    })
    agent.followup('one')
    await requested
    agent.followup('two')
    expect(agent.inbox.nextTurn).toHaveLength(1)
    const id = agent.id
    await first.close()

    const model = scriptedModel([text('answered two'), text('answered three')])
    const second = await createHarness({ persistence: { dir }, model, clock: fakeClock(), ids })
    const resumed = await second.resumeAgent(id, { options: { verifyReconstruction: true } })
    expect(resumed.inbox.nextTurn.map((message) => message.content)).toEqual([[{ type: 'text', text: 'two' }]])
    const ended = resumed.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)
    expect(ended).toEqual([{ turn: 1, reason: { kind: 'aborted', reason: { kind: 'disposed' } } }])
    expect(resumed.status).toBe('idle')
    await Promise.resolve()
    expect(model.requests).toHaveLength(0)
    // `run` wakes the driver: the replayed 'two' runs first (turn 2), then 'three' (turn 3).
    const result = await resumed.run('three')
    expect(result).toMatchObject({ turn: 3, reason: { kind: 'completed' }, text: 'answered three' })
    const starts = resumed.session.events.filter((event) => event.type === 'turn/start').map((event) => event.data)
    expect(starts).toEqual([{ turn: 1 }, { turn: 2 }, { turn: 3 }])
    expect(model.requests).toHaveLength(2)
    expect(model.requests[0]?.messages.at(-1)?.content).toEqual([{ type: 'text', text: 'two' }])
    await second.close()
  })

  test('queued prompts survive resume and run only on wake()', async () => {
    const ids = fakeIds()
    const first = await createHarness({
      persistence: { dir },
      model: scriptedModel([text('a')]),
      clock: fakeClock(),
      ids,
    })
    const agent = await first.createAgent({ options: { verifyReconstruction: true } })
    await agent.run('hi')
    agent.inject('parked')
    expect(agent.status).toBe('idle')
    const id = agent.id
    await first.close()

    const model = scriptedModel([text('b')])
    const second = await createHarness({ persistence: { dir }, model, clock: fakeClock(), ids })
    const resumed = await second.resumeAgent(id, { options: { verifyReconstruction: true } })
    expect(resumed.inbox.nextStep.map((message) => message.content)).toEqual([[{ type: 'text', text: 'parked' }]])
    expect(resumed.status).toBe('idle')
    expect(model.requests).toHaveLength(0)
    expect(resumed.wake()).toBe(true)
    await resumed.whenIdle()
    expect(model.requests).toHaveLength(1)
    const users = resumed.session.deriveMessages().filter((message) => message.role === 'user')
    expect(users.at(-1)?.content).toEqual([{ type: 'text', text: 'parked' }])
    expect(resumed.session.events.filter((event) => event.type === 'turn/start').at(-1)?.data).toEqual({ turn: 2 })
    await second.close()
  })
})
