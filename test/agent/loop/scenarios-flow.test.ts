/**
 * Turn and step flow end to end (continuation, end reasons) and the order of durable and live
 * events through a whole turn, end to end over the
 * memory and the JSONL adapter.
 */
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { type Agent, defineTool, type Message, type PreStepDecision, toolResult, type UserMessage } from 'yoke'
import { agentEvents, agentLoopEvents } from '../../../src/agent/index.js'
import { modelEvents, requestErrorEvents } from '../../../src/model/index.js'
import { systemPromptEvents } from '../../../src/prompt/index.js'
import { call, cut, text } from 'yoke/testing'
import {
  adapterKinds,
  dataOf,
  echo,
  echoRuns,
  line,
  lines,
  ofType,
  types,
  useScenarios,
  userTexts,
  withoutChunks,
} from './scenario-harness.js'

describe.each(adapterKinds)('agent loop scenarios: flow (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test('simple turn — exact event order, usage anchor, statuses despite a throwing listener', async () => {
    const { harness, model, agent, statuses, errors } = await scenarios.agent({
      script: [text('hello', { usage: { inputTokens: 10, outputTokens: 11 } })],
    })
    harness.on('agent/status', () => {
      throw new Error('status listener broke')
    })
    agent.followup('hi')
    await agent.whenIdle()
    const events = agent.session.events
    const chunks = ofType(events, 'assistant/chunk')
    expect(chunks.map((event) => (event.data as { chunk: { type: string } }).chunk.type)).toEqual([
      'block-start',
      'text-delta',
      'block-end',
      'usage',
      'finish',
    ])
    const firstChunk = events.indexOf(chunks[0] as (typeof events)[number])
    expect(types(events)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      ...chunks.map(() => 'assistant/chunk'),
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(firstChunk).toBe(7)
    expect(dataOf(events, 'request/header')[0]).toMatchObject({ reason: 'initial' })
    const anchor = ofType(events, 'assistant/message')[0]
    expect(anchor?.data).toMatchObject({
      turn: 1,
      step: 1,
      usage: { inputTokens: 10, outputTokens: 11 },
      message: { content: [{ type: 'text', text: 'hello' }] },
    })
    expect(anchor?.sourceEventSeqs).toEqual(chunks.map((event) => event.seq))
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
    expect(agent.session.deriveMessages().map((message) => message.role)).toEqual(['user', 'assistant'])
    expect(statuses).toEqual(['running', 'idle'])
    expect(errors).toEqual([])
    expect(model.requests).toHaveLength(1)
  })

  test('every durable [D] and live event of a tool turn in order, each in its dispatch mode', async () => {
    expect(agentEvents.modes).toMatchObject({
      'agent/inbox/inserted': 'emit',
      'agent/inbox/discarded': 'emit',
      'agent/inbox/claimed': 'emit',
    })
    expect(agentLoopEvents.modes).toMatchObject({
      'agent/status': 'emit',
      'agent/pre-step': 'waterfall',
      'agent/request': 'waterfall',
      'agent/turn-stopping': 'serial',
      'agent/error': 'emit',
    })
    expect(requestErrorEvents.modes).toMatchObject({ 'agent/request-error': 'waterfall' })
    expect(modelEvents.modes).toMatchObject({ 'llm/stream': 'waterfall' })
    expect(systemPromptEvents.modes).toMatchObject({ 'system-prompt/assemble': 'waterfall' })
    const { harness, agent } = await scenarios.agent({
      tools: [echo],
      script: [call('c1', 'echo', '{"text":"ping"}'), text('done')],
    })
    const seen: string[] = []
    harness.on('session/event', ({ event }) => {
      if (event.type !== 'assistant/chunk' || seen.at(-1) !== 'D assistant/chunk') seen.push(`D ${event.type}`)
    })
    harness.on('agent/inbox/inserted', () => {
      seen.push('E inserted')
    })
    harness.on('agent/inbox/claimed', () => {
      seen.push('E claimed')
    })
    harness.on('agent/status', ({ status }) => {
      seen.push(`E status ${status}`)
    })
    harness.on('agent/error', () => {
      seen.push('E agent/error')
    })
    harness.on('system-prompt/assemble', (_payload, next) => {
      seen.push('W system-prompt/assemble')
      return next()
    })
    harness.on('agent/pre-step', (payload, next) => {
      seen.push(`W agent/pre-step ${payload.step}`)
      return next()
    })
    harness.on('agent/request', (payload, next) => {
      seen.push(`W agent/request ${payload.step}`)
      return next()
    })
    harness.on('llm/stream', (payload, next) => {
      seen.push('W llm/stream')
      return next(payload)
    })
    harness.on('agent/turn-stopping', () => {
      seen.push('S agent/turn-stopping')
      return undefined
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(seen).toEqual([
      'D agent/inbox/spliced',
      'E inserted',
      'E status running',
      'D turn/start',
      'D agent/inbox/spliced',
      'E claimed',
      'W system-prompt/assemble',
      'W agent/pre-step 1',
      'D step/start',
      'D user/message',
      'W agent/request 1',
      'D request/header',
      'D request/context',
      'W llm/stream',
      'D assistant/chunk',
      'D assistant/message',
      'D tool/call',
      'D tool/result',
      'D step/end',
      'W system-prompt/assemble',
      'W agent/pre-step 2',
      'D step/start',
      'W agent/request 2',
      'W llm/stream',
      'D assistant/chunk',
      'D assistant/message',
      'D step/end',
      'S agent/turn-stopping',
      'D turn/end',
      'E status idle',
    ])
  })

  test('tool round trip — 2 requests, 2 steps, 1 turn, the c1 result in R[2]', async () => {
    const before = echoRuns.count
    const { model, agent } = await scenarios.agent({
      tools: [echo],
      script: [call('c1', 'echo', '{"text":"ping"}'), text('done')],
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(2)
    expect(echoRuns.count - before).toBe(1)
    expect(model.requests[1]?.messages.at(-1)?.content).toEqual([
      { type: 'tool-result', toolCallId: 'c1', isError: false, content: [{ type: 'text', text: 'echo: ping' }] },
    ])
    const events = agent.session.events
    expect(dataOf(events, 'turn/start')).toEqual([{ turn: 1 }])
    expect(dataOf(events, 'step/start')).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ])
    const seqOf = (type: string): number => ofType(events, type)[0]?.seq ?? -1
    const stepEnd1 = ofType(events, 'step/end')[0]?.seq ?? -1
    expect(seqOf('step/start')).toBeLessThan(seqOf('tool/call'))
    expect(seqOf('tool/call')).toBeLessThan(seqOf('tool/result'))
    expect(seqOf('tool/result')).toBeLessThan(stepEnd1)
    expect(dataOf(events, 'tool/call')).toEqual([
      { turn: 1, step: 1, callId: 'c1', name: 'echo', arguments: '{"text":"ping"}' },
    ])
    expect(dataOf(events, 'tool/result')[0]).toMatchObject({ turn: 1, step: 1 })
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
  })

  test('pre-step sees {1,1} with one message, then {1,2} with none, each with a signal, never right after step/start', async () => {
    const { harness, agent } = await scenarios.agent({
      tools: [echo],
      script: [call('c1', 'echo', '{"text":"ping"}'), text('done')],
    })
    const seen: { turn: number; step: number; messages: number; signal: boolean; after: string | undefined }[] = []
    harness.on('agent/pre-step', (payload) => {
      seen.push({
        turn: payload.turn,
        step: payload.step,
        messages: payload.messages.length,
        signal: payload.signal instanceof AbortSignal && !payload.signal.aborted,
        after: payload.agent.session.events.at(-1)?.type,
      })
      return undefined
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(seen).toEqual([
      { turn: 1, step: 1, messages: 1, signal: true, after: 'agent/inbox/spliced' },
      { turn: 1, step: 2, messages: 0, signal: true, after: 'step/end' },
    ])
  })

  test('a turn-stopping listener steering while fewer than 3 steps ran — 3 steps, 3 requests, 1 turn', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [text('one'), text('two'), text('three')] })
    const reasons: string[] = []
    harness.on('agent/turn-stopping', (payload) => {
      reasons.push(payload.reason.kind)
      if (ofType(payload.agent.session.events, 'step/start').length < 3) payload.agent.steer(`more ${reasons.length}`)
      return undefined
    })
    agent.followup('go')
    await agent.whenIdle()
    const events = agent.session.events
    expect(dataOf(events, 'step/start')).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
      { turn: 1, step: 3 },
    ])
    expect(model.requests).toHaveLength(3)
    expect(dataOf(events, 'turn/start')).toEqual([{ turn: 1 }])
    expect(reasons).toEqual(['completed', 'completed', 'completed'])
    expect(lines(model.requests[2])).toEqual([
      'user: go',
      'assistant: one',
      'user: more 1',
      'assistant: two',
      'user: more 2',
    ])
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
  })

  test('a tool concluding the turn — 1 request, tool/result logged, completed', async () => {
    const conclude = defineTool({
      name: 'conclude',
      description: 'ends the turn',
      input: z.object({}),
      execute: () => toolResult({ content: 'ok', concludesTurn: true }),
    })
    const { model, agent } = await scenarios.agent({ tools: [conclude], script: [call('c1', 'conclude', '{}')] })
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(1)
    const events = agent.session.events
    expect(dataOf<{ message: Message }>(events, 'tool/result').map((data) => line(data.message))).toEqual([
      'user: result c1: ok',
    ])
    expect(withoutChunks(events).slice(-5)).toEqual([
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
  })

  test('steering arriving during the concluding tool opens step 2 with it', async () => {
    let agent: Agent | undefined
    const conclude = defineTool({
      name: 'conclude',
      description: 'ends the turn',
      input: z.object({}),
      execute: () => {
        agent?.steer('late steering')
        return toolResult({ content: 'ok', concludesTurn: true })
      },
    })
    const opened = await scenarios.agent({ tools: [conclude], script: [call('c1', 'conclude', '{}'), text('after')] })
    agent = opened.agent
    agent.followup('go')
    await agent.whenIdle()
    const { model } = opened
    expect(model.requests).toHaveLength(2)
    expect(dataOf(agent.session.events, 'step/start')).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ])
    expect(lines(model.requests[1]).at(-1)).toBe('user: late steering')
    expect(lines(model.requests[0])).not.toContain('user: late steering')
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
  })

  test('pre-step rewriting the claimed message — the log and R[1] hold REWRITTEN, not the original', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [text('ok')] })
    harness.on(
      'agent/pre-step',
      (payload): PreStepDecision => ({
        kind: 'enter',
        messages: payload.messages.map(
          (message): UserMessage => ({ ...message, content: [{ type: 'text', text: 'REWRITTEN' }] }),
        ),
      }),
    )
    agent.followup('original')
    await agent.whenIdle()
    expect(userTexts(agent.session.events)).toEqual(['REWRITTEN'])
    expect(lines(model.requests[0])).toEqual(['user: REWRITTEN'])
    expect(JSON.stringify(model.requests[0]?.messages)).not.toContain('original')
    expect(agent.session.deriveMessages().map(line)).toEqual(['user: REWRITTEN', 'assistant: ok'])
  })

  test('pre-step reject — only turn/end {blocked} after the claim, 0 requests', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [] })
    harness.on('agent/pre-step', () => ({ kind: 'reject' }))
    agent.followup('go')
    await agent.whenIdle()
    const events = agent.session.events
    expect(types(events)).toEqual(['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced', 'turn/end'])
    expect(events[2]?.data).toMatchObject({ target: 'next-turn', start: 0, removedCount: 1, inserted: [] })
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'blocked' } })
    expect(model.requests).toHaveLength(0)
  })

  test('an empty first enter — turn/start, claim, turn/end {turn 1, completed}, 0 requests', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [] })
    harness.on('agent/pre-step', () => ({ kind: 'enter', messages: [] }))
    agent.followup('go')
    await agent.whenIdle()
    const events = agent.session.events
    expect(types(events)).toEqual(['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced', 'turn/end'])
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
    expect(model.requests).toHaveLength(0)
  })

  test('a lone cut — 1 request, max-tokens', async () => {
    const { model, agent } = await scenarios.agent({ script: [cut('x')] })
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(1)
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'max-tokens' } })
  })

  test('sticky max-tokens across a steered step; the next turn ends completed', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [cut('first half'), text('ok'), text('fresh')] })
    let steered = false
    harness.on('agent/turn-stopping', (payload) => {
      if (steered) return undefined
      steered = true
      expect(payload.reason).toEqual({ kind: 'max-tokens' })
      payload.agent.steer('continue after truncation')
      return undefined
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(2)
    expect(lines(model.requests[1])).toEqual(['user: go', 'assistant: first half', 'user: continue after truncation'])
    expect(dataOf(agent.session.events, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'max-tokens' } }])
    agent.followup('next')
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'max-tokens' } },
      { turn: 2, reason: { kind: 'completed' } },
    ])
  })

  test('sticky max-tokens keeps an owed follow-up — 3 requests, R[3] holds c1, turn/end max-tokens', async () => {
    const before = echoRuns.count
    const { harness, model, agent } = await scenarios.agent({
      tools: [echo],
      script: [cut('a'), call('c1', 'echo', '{"text":"x"}'), text('done')],
    })
    const stopping: string[] = []
    harness.on('agent/turn-stopping', (payload) => {
      stopping.push(payload.reason.kind)
      if (stopping.length === 1) payload.agent.steer('go on')
      return undefined
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(3)
    expect(echoRuns.count - before).toBe(1)
    expect(lines(model.requests[2])).toEqual([
      'user: go',
      'assistant: a',
      'user: go on',
      'assistant: call c1',
      'user: result c1: echo: x',
    ])
    expect(stopping).toEqual(['max-tokens', 'max-tokens'])
    expect(dataOf(agent.session.events, 'step/start')).toHaveLength(3)
    expect(dataOf(agent.session.events, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'max-tokens' } }])
  })

  test('a closed tool-call block finishing max-tokens is dropped — no tool/call, 0 runs, empty anchor with usage', async () => {
    const before = echoRuns.count
    const usage = { inputTokens: 5, outputTokens: 7 }
    const { model, agent } = await scenarios.agent({
      tools: [echo],
      script: [call('c1', 'echo', '{"text":"x"}', { finish: 'max-tokens', usage })],
    })
    agent.followup('go')
    await agent.whenIdle()
    const events = agent.session.events
    const chunks = dataOf<{ chunk: { type: string; blockType?: string } }>(events, 'assistant/chunk').map(
      (data) => data.chunk.type,
    )
    expect(chunks).toEqual(['block-start', 'tool-call-delta', 'block-end', 'usage', 'finish'])
    expect(types(events)).not.toContain('tool/call')
    expect(echoRuns.count - before).toBe(0)
    const anchor = ofType(events, 'assistant/message')[0]
    expect(anchor?.data).toMatchObject({ turn: 1, step: 1, usage, message: { content: [] } })
    expect(agent.session.deriveMessages().map(line)).toEqual(['user: go'])
    expect(model.requests).toHaveLength(1)
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'max-tokens' } })
  })
})
