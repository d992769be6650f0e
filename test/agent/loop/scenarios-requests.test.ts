/**
 * Requests end to end (request construction, freezing, header logging, the
 * rebuild helper and `verifyReconstruction`), end to end over the memory and the JSONL adapter.
 */
import { describe, expect, test } from 'vitest'
import { type ModelRequest, ReconstructionError, RequestNotFoundError, rebuildRequest } from 'yoke'
import { call, fail, hang, text } from 'yoke/testing'
import { adapterKinds, dataOf, echo, lines, ofType, untilType, useScenarios } from './scenario-harness.js'
import { driveFakeClock } from '../../helpers/drive-fake-clock.js'

function withoutSignal(request: ModelRequest | undefined): Omit<ModelRequest, 'signal'> {
  const { signal: _signal, ...body } = request as ModelRequest
  return body
}

describe.each(adapterKinds)('agent loop scenarios: requests (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test('a 3-step tool turn — prefix extension, deep freezing, a live signal, one initial header', async () => {
    const { harness, model, agent } = await scenarios.agent({
      tools: [echo],
      script: [call('c1', 'echo', '{"text":"a"}'), call('c2', 'echo', '{"text":"b"}'), text('done'), hang()],
    })
    agent.followup('go')
    await agent.whenIdle()
    const requests = model.requests
    expect(requests).toHaveLength(3)
    for (let index = 0; index < 2; index++) {
      const shorter = requests[index]?.messages ?? []
      const longer = requests[index + 1]?.messages ?? []
      expect(longer.length).toBeGreaterThan(shorter.length)
      shorter.forEach((message, position) => {
        expect(longer[position]).toBe(message)
      })
    }
    for (const request of requests) {
      expect(harness.agents.isLoopRequest(request)).toBe(true)
      expect(Object.isFrozen(request)).toBe(true)
      expect(Object.isFrozen(request.messages)).toBe(true)
      for (const message of request.messages) {
        expect(Object.isFrozen(message)).toBe(true)
        expect(Object.isFrozen(message.content)).toBe(true)
      }
      expect(Object.isFrozen(request.metadata)).toBe(true)
      expect(Object.isFrozen(request.signal)).toBe(false)
      expect(() => {
        ;(request.messages as ModelRequest['messages'][number][]).push(
          request.messages[0] as ModelRequest['messages'][number],
        )
      }).toThrow(TypeError)
    }
    const headers = dataOf(agent.session.events, 'request/header')
    expect(headers).toHaveLength(1)
    expect(headers[0]).toMatchObject({ reason: 'initial' })

    const streaming = untilType(harness, 'assistant/chunk')
    agent.followup('hang')
    await streaming
    const live = requests[3]
    expect(live?.signal.aborted).toBe(false)
    agent.cancel()
    expect(live?.signal.aborted).toBe(true)
    expect(live?.signal.reason).toEqual({ kind: 'user' })
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'request/header')).toHaveLength(1)
  })

  test('mutating the seed throws TypeError (turn error); a model switch is logged and persists; an unchanged seed logs no header', async () => {
    const { harness, model, agent, errors } = await scenarios.agent({ script: [text('one'), text('two')] })
    const seeds: Record<string, unknown>[] = []
    let mode: 'mutate' | 'switch' | 'same' = 'mutate'
    harness.on('agent/request', (payload) => {
      seeds.push({ ...payload.config })
      if (mode === 'mutate') (payload.config as { model: string }).model = 'hacked'
      if (mode === 'switch') return { ...payload.config, model: 'other-model' }
      return payload.config
    })
    agent.followup('first')
    await agent.whenIdle()
    const [first] = dataOf<{ reason: { kind: string; error: { code: string; message: string } } }>(
      agent.session.events,
      'turn/end',
    )
    expect(first?.reason.kind).toBe('error')
    expect(first?.reason.error.code).toBe('UNKNOWN')
    expect(errors[0]?.error).toBeInstanceOf(TypeError)
    expect(model.requests).toHaveLength(0)
    expect(seeds[0]).toMatchObject({ provider: 'mock', model: 'mock' })

    mode = 'switch'
    agent.followup('second')
    await agent.whenIdle()
    expect(model.requests[0]?.model).toBe('other-model')
    const headers = dataOf<{ header: { config: { model: string } }; reason: string }>(
      agent.session.events,
      'request/header',
    )
    expect(headers).toHaveLength(1)
    expect(headers[0]?.header.config.model).toBe('other-model')
    expect(headers[0]?.reason).toBe('initial')

    mode = 'same'
    agent.followup('third')
    await agent.whenIdle()
    expect(seeds[2]).toMatchObject({ provider: 'mock', model: 'other-model' })
    expect(model.requests[1]?.model).toBe('other-model')
    expect(dataOf(agent.session.events, 'request/header')).toHaveLength(1)
    expect(dataOf(agent.session.events, 'turn/end').map((end) => (end['reason'] as { kind: string }).kind)).toEqual([
      'error',
      'completed',
      'completed',
    ])
  })

  test('identical renders log one header; a section added before turn 3 logs a change and extends the history', async () => {
    const { model, agent } = await scenarios.agent({
      instructions: 'You are helpful.',
      script: [text('one'), text('two'), text('three')],
    })
    agent.followup('first')
    await agent.whenIdle()
    agent.followup('second')
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'request/header')).toHaveLength(1)
    agent.ctx.systemPrompt.section({ name: 'rules', order: 10, text: 'Rule A.' })
    agent.followup('third')
    await agent.whenIdle()
    const headers = dataOf<{ header: { system?: string }; reason: string }>(agent.session.events, 'request/header')
    expect(headers.map((header) => [header.reason, header.header.system])).toEqual([
      ['initial', 'You are helpful.'],
      ['change', 'You are helpful.\n\nRule A.'],
    ])
    expect(model.requests.map((request) => request.system)).toEqual([
      'You are helpful.',
      'You are helpful.',
      'You are helpful.\n\nRule A.',
    ])
    const second = model.requests[1]?.messages ?? []
    const third = model.requests[2]?.messages ?? []
    expect(third.length).toBe(second.length + 2)
    second.forEach((message, position) => {
      expect(third[position]).toBe(message)
    })
    expect(lines(model.requests[2])).toEqual([
      'user: first',
      'assistant: one',
      'user: second',
      'assistant: two',
      'user: third',
    ])
  })

  test('rebuildRequest deep-equals every recorded attempt (retries and a tool turn); attempt 4 is REQUEST_NOT_FOUND', async () => {
    const { model, agent, clock } = await scenarios.agent({
      tools: [echo],
      patches: [{ id: 'retry', merge: { jitter: 0 } }],
      script: [
        fail('RATE_LIMIT', 'slow'),
        fail('SERVER', 'down'),
        text('recovered'),
        call('c1', 'echo', '{"text":"x"}'),
        text('done'),
      ],
    })
    agent.followup('go')
    await driveFakeClock(clock, () => agent.status !== 'running')
    await agent.whenIdle()
    expect(ofType(agent.session.events, 'llm/retry')).toHaveLength(2)
    agent.followup('tool turn')
    await agent.whenIdle()
    const coordinates = [
      { turn: 1, step: 1, attempt: 1 },
      { turn: 1, step: 1, attempt: 2 },
      { turn: 1, step: 1, attempt: 3 },
      { turn: 2, step: 1, attempt: 1 },
      { turn: 2, step: 2 },
    ]
    expect(model.requests).toHaveLength(coordinates.length)
    coordinates.forEach((at, index) => {
      const rebuilt = rebuildRequest(agent.session, at)
      const recorded = withoutSignal(model.requests[index])
      expect(rebuilt).toEqual(recorded)
      expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(recorded))
      expect(Object.isFrozen(rebuilt)).toBe(true)
      expect('signal' in rebuilt).toBe(false)
    })
    let missing: unknown
    try {
      rebuildRequest(agent.session, { turn: 1, step: 1, attempt: 4 })
    } catch (error) {
      missing = error
    }
    expect(missing).toBeInstanceOf(RequestNotFoundError)
    expect(missing).toMatchObject({ code: 'REQUEST_NOT_FOUND', turn: 1, step: 1, attempt: 4 })
    expect(() => rebuildRequest(agent.session, { turn: 3, step: 1 })).toThrow(RequestNotFoundError)
  })

  test('verification and rebuild agree with adapter defaults, call options, a system prompt, runtime context and a model switch', async () => {
    const { harness, model, agent, errors } = await scenarios.agent({
      tools: [echo],
      instructions: 'Be brief.',
      modelOptions: {
        info: {
          contextWindow: 8000,
          defaultMaxTokens: 64,
          reasoningEfforts: ['low', 'high'],
          defaultReasoningEffort: 'low',
        },
      },
      options: { temperature: 0.5, stop: ['STOP'] },
      script: [call('c1', 'echo', '{"text":"a"}'), text('one'), text('two')],
    })
    agent.ctx.systemPrompt.context({ name: 'where', order: 0, text: 'cwd is /w' })
    agent.followup('first')
    await agent.whenIdle()
    harness.on('agent/request', (payload) => ({ ...payload.config, model: 'bigger', reasoningEffort: 'high' }))
    agent.followup('second')
    await agent.whenIdle()
    expect(errors).toEqual([])
    expect(model.requests).toHaveLength(3)
    expect(model.requests[0]).toMatchObject({
      temperature: 0.5,
      stop: ['STOP'],
      maxTokens: 64,
      reasoningEffort: 'low',
      system: 'Be brief.',
    })
    expect(model.requests[2]).toMatchObject({ model: 'bigger', reasoningEffort: 'high', maxTokens: 64 })
    const headers = dataOf<{ header: { adapterDefaults?: Record<string, boolean> }; reason: string }>(
      agent.session.events,
      'request/header',
    )
    expect(headers.map((header) => header.reason)).toEqual(['initial', 'change'])
    expect(headers[0]?.header.adapterDefaults).toEqual({ maxTokens: true, reasoningEffort: true })
    expect(JSON.stringify(model.requests[0]?.messages)).toContain('cwd is /w')
    const at = [
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
      { turn: 2, step: 1 },
    ]
    at.forEach((coordinates, index) => {
      expect(rebuildRequest(agent.session, coordinates)).toEqual(withoutSignal(model.requests[index]))
    })
  })

  test('an llm/stream middleware replacing the request fails verification at $; without it 3 tool steps complete', async () => {
    const { harness, model, agent, errors } = await scenarios.agent({
      tools: [echo],
      script: [call('c1', 'echo', '{"text":"a"}'), call('c2', 'echo', '{"text":"b"}'), text('done')],
    })
    expect(agent.options.verifyReconstruction).toBe(true)
    const stop = harness.on('llm/stream', (payload, next) => next({ ...payload, request: { ...payload.request } }))
    agent.followup('tampered')
    await agent.whenIdle()
    const [end] = dataOf<{ reason: { kind: string; error: { code: string } } }>(agent.session.events, 'turn/end')
    expect(end?.reason.kind).toBe('error')
    expect(end?.reason.error.code).toBe('RECONSTRUCTION_MISMATCH')
    expect(errors).toHaveLength(1)
    expect(errors[0]?.error).toBeInstanceOf(ReconstructionError)
    expect(errors[0]?.error).toMatchObject({ code: 'RECONSTRUCTION_MISMATCH', path: '$' })
    expect(model.requests).toHaveLength(0)
    expect(ofType(agent.session.events, 'assistant/chunk')).toHaveLength(0)

    stop()
    expect(model.remaining).toBe(3)
    agent.followup('clean')
    await agent.whenIdle()
    const ends = dataOf<{ turn: number; reason: { kind: string } }>(agent.session.events, 'turn/end')
    expect(ends[1]).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(dataOf(agent.session.events, 'step/start').filter((data) => data['turn'] === 2)).toHaveLength(3)
    expect(errors).toHaveLength(1)
    expect(model.requests).toHaveLength(3)
    model.assertComplete()
  })
})
