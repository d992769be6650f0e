/**
 * Model failures end to end (model failures, retries inside a step, middleware
 * failures, cancel beating a retry, a missing model), end to end over the memory and the JSONL
 * adapter.
 */
import { describe, expect, test } from 'vitest'
import { type LlmFailure, LlmError, MissingModelError, type StreamChunk } from 'yoke'
import { fail, text } from 'yoke/testing'
import { adapterKinds, dataOf, lines, ofType, types, useScenarios, withoutChunks } from './scenario-harness.js'
import { driveFakeClock } from '../../helpers/drive-fake-clock.js'

/**
 * The scenarios' own `agent/request-error` listeners are prepended, so they are outermost and
 * decide without calling `next()`: the default bundle's `retry` entry (which also defines the
 * event) never runs for them.
 */
const outermost = { prepend: true } as const

function finishFailures(chunks: readonly { chunk: StreamChunk }[]): LlmFailure[] {
  return chunks.flatMap(({ chunk }) => (chunk.type === 'finish' && chunk.failure !== undefined ? [chunk.failure] : []))
}

describe.each(adapterKinds)('agent loop scenarios: model (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test('a finish error ends the turn error with the failure verbatim and one agent/error', async () => {
    const { model, agent, errors, statuses } = await scenarios.agent({
      script: [fail('AUTH', 'provider 401', { failure: { code: 'AUTH', message: 'provider 401', status: 401 } })],
    })
    agent.followup('go')
    await agent.whenIdle()
    const events = agent.session.events
    const [logged] = finishFailures(dataOf<{ chunk: StreamChunk }>(events, 'assistant/chunk'))
    expect(logged).toMatchObject({ code: 'AUTH', message: 'provider 401', status: 401 })
    expect(dataOf(events, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'error', error: logged } }])
    expect(errors).toHaveLength(1)
    expect(errors[0]?.error).toBeInstanceOf(LlmError)
    expect(errors[0]?.error).toMatchObject({ failure: logged })
    expect(errors[0]).toMatchObject({ turn: 1, step: 1, failure: logged, queued: { nextTurn: 0, nextStep: 0 } })
    expect(types(events)).not.toContain('assistant/message')
    expect(withoutChunks(events).slice(-2)).toEqual(['step/end', 'turn/end'])
    expect(dataOf(events, 'step/end')).toEqual([{ turn: 1, step: 1 }])
    expect(model.requests).toHaveLength(1)
    expect(statuses).toEqual(['running', 'idle'])
  })

  test('an adapter finish aborted not caused by the turn signal ends error with code ABORTED', async () => {
    const upstream: LlmFailure = {
      code: 'UPSTREAM_GONE',
      message: 'upstream dropped us',
      retryable: false,
      phase: 'streaming',
    }
    const { agent, errors } = await scenarios.agent({
      script: [
        { chunks: [{ type: 'finish', reason: 'aborted', failure: upstream }] },
        { chunks: [{ type: 'finish', reason: 'aborted', failure: { ...upstream, code: 'ABORTED' } }] },
      ],
    })
    agent.followup('one')
    await agent.whenIdle()
    agent.followup('two')
    await agent.whenIdle()
    const ends = dataOf<{ reason: { kind: string; error?: LlmFailure } }>(agent.session.events, 'turn/end')
    expect(ends.map((end) => end.reason.kind)).toEqual(['error', 'error'])
    expect(ends[0]?.reason.error).toMatchObject({ code: 'ABORTED', message: 'upstream dropped us' })
    expect(ends[1]?.reason.error).toMatchObject({ code: 'ABORTED', message: 'upstream dropped us' })
    expect(errors.map((error) => error.failure.code)).toEqual(['ABORTED', 'ABORTED'])
    expect(types(agent.session.events)).not.toContain('assistant/message')
  })

  test('request-error retry stays inside the step — attempts 1 and 2 seen, one anchor citing attempt 3 only', async () => {
    const { harness, model, agent, statuses } = await scenarios.agent({
      script: [fail('RATE_LIMIT', 'slow'), fail('SERVER', 'down'), text('recovered')],
    })
    const seen: { turn: number; step: number; attempt: number; code: string }[] = []
    harness.on(
      'agent/request-error',
      (payload) => {
        seen.push({ turn: payload.turn, step: payload.step, attempt: payload.attempt, code: payload.failure.code })
        return { kind: 'retry' }
      },
      outermost,
    )
    agent.followup('go')
    await agent.whenIdle()
    expect(seen).toEqual([
      { turn: 1, step: 1, attempt: 1, code: 'RATE_LIMIT' },
      { turn: 1, step: 1, attempt: 2, code: 'SERVER' },
    ])
    const events = agent.session.events
    expect(ofType(events, 'step/start')).toHaveLength(1)
    expect(model.requests).toHaveLength(3)
    const chunks = ofType(events, 'assistant/chunk')
    const finishes = chunks
      .filter((event) => (event.data as unknown as { chunk: StreamChunk }).chunk.type === 'finish')
      .map((event) => event.seq)
    expect(finishes).toHaveLength(3)
    const attempt3 = chunks.filter((event) => event.seq > (finishes[1] ?? 0)).map((event) => event.seq)
    const anchors = ofType(events, 'assistant/message')
    expect(anchors).toHaveLength(1)
    expect(anchors[0]?.data).toMatchObject({ message: { content: [{ type: 'text', text: 'recovered' }] } })
    expect(anchors[0]?.sourceEventSeqs).toEqual(attempt3)
    expect(dataOf(events, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }])
    expect(statuses).toEqual(['running', 'idle'])
    expect(lines(model.requests[2])).toEqual(['user: go'])
  })

  test('the default retry entry retries on the fake clock with the same anchor rules', async () => {
    const { model, agent, clock } = await scenarios.agent({
      patches: [{ id: 'retry', merge: { jitter: 0 } }],
      script: [fail('RATE_LIMIT', 'slow'), fail('SERVER', 'down'), text('recovered')],
    })
    agent.followup('go')
    await driveFakeClock(clock, () => agent.status !== 'running')
    await agent.whenIdle()
    const events = agent.session.events
    expect(
      dataOf<{ attempt: number; delayMs: number }>(events, 'llm/retry').map((retry) => [retry.attempt, retry.delayMs]),
    ).toEqual([
      [1, 500],
      [2, 1000],
    ])
    expect(model.requests).toHaveLength(3)
    expect(ofType(events, 'assistant/message')).toHaveLength(1)
    expect(dataOf(events, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }])
  })

  test('a throwing agent/request middleware is not offered to request-error — 0 requests, turn error', async () => {
    const { harness, model, agent, errors } = await scenarios.agent({ script: [text('never')] })
    let offered = 0
    harness.on(
      'agent/request-error',
      () => {
        offered++
        return { kind: 'retry' }
      },
      outermost,
    )
    harness.on('agent/request', () => {
      throw new Error('config hook broke')
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(offered).toBe(0)
    expect(model.requests).toHaveLength(0)
    const events = agent.session.events
    expect(types(events)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'step/end',
      'turn/end',
    ])
    expect(events.at(-1)?.data).toEqual({
      turn: 1,
      reason: { kind: 'error', error: { message: 'config hook broke', code: 'UNKNOWN' } },
    })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ turn: 1, step: 1 })
  })

  test('cancel inside request-error beats its retry — 1 request, aborted {user}, no anchor', async () => {
    const { harness, model, agent, errors } = await scenarios.agent({ script: [fail('SERVER', 'down'), text('never')] })
    harness.on(
      'agent/request-error',
      () => {
        agent.cancel()
        return { kind: 'retry' }
      },
      outermost,
    )
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(1)
    const events = agent.session.events
    expect(types(events)).not.toContain('assistant/message')
    expect(withoutChunks(events).slice(-2)).toEqual(['step/end', 'turn/end'])
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } })
    expect(errors).toEqual([])
  })

  test('no provider or model — turn error MISSING_MODEL, 0 requests; an agent/request listener fixes it', async () => {
    const { harness, model } = await scenarios.world({
      wiring: 'registry',
      modelOptions: { provider: 'p', model: 'm' },
      script: [text('ok')],
    })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    expect(agent.options.provider).toBeUndefined()
    expect(agent.options.model).toBeUndefined()
    const errors: unknown[] = []
    agent.ctx.on('agent/error', (payload) => {
      errors.push(payload.error)
    })
    agent.followup('first')
    await agent.whenIdle()
    const [end] = dataOf<{ reason: { kind: string; error: LlmFailure } }>(agent.session.events, 'turn/end')
    expect(end?.reason.kind).toBe('error')
    expect(end?.reason.error.code).toBe('MISSING_MODEL')
    expect(end?.reason.error.message).toContain('provider')
    expect(end?.reason.error.message).toContain('agent/request')
    expect(errors[0]).toBeInstanceOf(MissingModelError)
    expect(errors[0]).toMatchObject({ code: 'MISSING_MODEL', missing: ['provider', 'model'] })
    expect(model.requests).toHaveLength(0)

    agent.ctx.on('agent/request', (payload) => ({ ...payload.config, provider: 'p', model: 'm' }))
    agent.followup('second')
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'turn/end')[1]).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(model.requests).toHaveLength(1)
    expect(model.requests[0]).toMatchObject({ provider: 'p', model: 'm' })
  })
})
