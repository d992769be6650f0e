/**
 * Cancellation end to end (cancellation windows, keepInbox, the wake latch, first
 * cause wins, dispose mid-turn, the kept cause), end to end over the memory and the JSONL adapter.
 */
import { describe, expect, test } from 'vitest'
import { AgentDisposedError, type CancelCause, type SessionEvent, type UserMessage } from 'yoke'
import { call, hang, text } from 'yoke/testing'
import {
  adapterKinds,
  dataOf,
  echo,
  echoRuns,
  line,
  lines,
  ofType,
  types,
  untilStreaming,
  useScenarios,
  userTexts,
  withoutChunks,
} from './scenario-harness.js'

const aborted = (reason: CancelCause): { kind: 'aborted'; reason: CancelCause } => ({ kind: 'aborted', reason })

function turnEnds(events: readonly SessionEvent[]): unknown[] {
  return dataOf(events, 'turn/end')
}

describe.each(adapterKinds)('agent loop scenarios: cancel (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test('an idle cancel arms nothing; a cancel right after a waking burst aborts turn 1 with zero steps', async () => {
    const { model, agent, statuses } = await scenarios.agent({ script: [text('ok')] })
    agent.cancel()
    expect(agent.session.length).toBe(0)
    expect(statuses).toEqual([])
    const a = agent.followup('a')
    const b = agent.followup('b')
    let settled = false
    const idle = agent.whenIdle().then(() => {
      settled = true
    })
    agent.cancel()
    await idle
    expect(settled).toBe(true)
    const events = agent.session.events
    expect(types(events)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'agent/inbox/spliced',
      'agent/inbox/spliced',
      'turn/end',
    ])
    expect(events.map((event) => event.data)).toEqual([
      { target: 'next-turn', start: 0, inserted: [a] },
      { turn: 1 },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [] },
      { target: 'next-turn', start: 0, inserted: [b] },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' },
      { turn: 1, reason: aborted({ kind: 'user' }) },
    ])
    expect(agent.status).toBe('idle')
    expect(agent.inbox.hasPending).toBe(false)
    expect(model.requests).toHaveLength(0)
    agent.followup('c')
    await agent.whenIdle()
    expect(turnEnds(agent.session.events)[1]).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(statuses).toEqual(['running', 'idle', 'running', 'idle'])
  })

  test('cancel mid-stream — interrupted anchor citing every chunk, step/end, turn/end aborted; the next turn sees "partial"', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [hang(), text('next')] })
    const streaming = untilStreaming(harness)
    agent.followup('go')
    await streaming
    agent.cancel()
    await agent.whenIdle()
    const events = agent.session.events
    const chunkSeqs = ofType(events, 'assistant/chunk').map((event) => event.seq)
    expect(chunkSeqs).toHaveLength(2)
    expect(withoutChunks(events).slice(-3)).toEqual(['assistant/message', 'step/end', 'turn/end'])
    const anchor = ofType(events, 'assistant/message')[0]
    expect(anchor?.data).toMatchObject({
      turn: 1,
      step: 1,
      interrupted: true,
      message: { role: 'assistant', content: [{ type: 'text', text: 'partial' }] },
    })
    expect(anchor?.sourceEventSeqs).toEqual(chunkSeqs)
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: aborted({ kind: 'user' }) })
    agent.followup('again')
    await agent.whenIdle()
    expect(lines(model.requests[1])).toEqual(['user: go', 'assistant: partial', 'user: again'])
    expect(turnEnds(agent.session.events)[1]).toEqual({ turn: 2, reason: { kind: 'completed' } })
  })

  test('cancel in an assistant/message observer — 0 runs, TOOL_ABORTED_BEFORE_DISPATCH pair, the next turn carries it', async () => {
    const before = echoRuns.count
    const { harness, model, agent } = await scenarios.agent({
      tools: [echo],
      script: [call('c1', 'echo', '{"text":"x"}'), text('recovered')],
    })
    let canceled = false
    harness.on('session/event', ({ event }) => {
      if (event.type === 'assistant/message' && !canceled) {
        canceled = true
        agent.cancel()
      }
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(echoRuns.count - before).toBe(0)
    const events = agent.session.events
    expect(withoutChunks(events).slice(-5)).toEqual([
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(dataOf(events, 'tool/call')[0]).toMatchObject({ callId: 'c1' })
    const result = dataOf<{
      message: { content: { toolCallId: string; isError: boolean }[] }
      error: { code: string }
    }>(events, 'tool/result')[0]
    expect(result?.message.content[0]).toMatchObject({ toolCallId: 'c1', isError: true })
    expect(result?.error.code).toBe('TOOL_ABORTED_BEFORE_DISPATCH')
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: aborted({ kind: 'user' }) })
    agent.followup('next')
    await agent.whenIdle()
    expect(model.requests[1]?.messages.map(line).slice(0, 3)).toEqual([
      'user: go',
      'assistant: call c1',
      expect.stringMatching(/^user: result c1: /),
    ])
    expect(turnEnds(agent.session.events)[1]).toEqual({ turn: 2, reason: { kind: 'completed' } })
  })

  test('with two parallel-safe calls both get aborted pairs', async () => {
    const before = echoRuns.count
    const twoCalls = {
      toolCalls: [
        { id: 'c1', name: 'echo', arguments: '{"text":"x"}' },
        { id: 'c2', name: 'echo', arguments: '{"text":"y"}' },
      ],
    }
    const { harness, agent } = await scenarios.agent({ tools: [echo], script: [twoCalls] })
    harness.on('session/event', ({ event }) => {
      if (event.type === 'assistant/message') agent.cancel()
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(echoRuns.count - before).toBe(0)
    const events = agent.session.events
    expect(dataOf<{ callId: string }>(events, 'tool/call').map((data) => data.callId)).toEqual(['c1', 'c2'])
    const results = dataOf<{
      message: { content: { toolCallId: string; isError: boolean }[] }
      error: { code: string }
    }>(events, 'tool/result')
    expect(
      results.map((data) => [data.message.content[0]?.toolCallId, data.message.content[0]?.isError, data.error.code]),
    ).toEqual([
      ['c1', true, 'TOOL_ABORTED_BEFORE_DISPATCH'],
      ['c2', true, 'TOOL_ABORTED_BEFORE_DISPATCH'],
    ])
    expect(withoutChunks(events).slice(-2)).toEqual(['step/end', 'turn/end'])
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: aborted({ kind: 'user' }) })
  })

  test('keepInbox keeps a prompt queued during the turn; it runs (turn 2) before the waking one (turn 3)', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [hang(), text('p'), text('w')] })
    const streaming = untilStreaming(harness)
    agent.followup('go')
    await streaming
    agent.followup('preserved')
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    await agent.whenIdle()
    expect(turnEnds(agent.session.events)).toEqual([{ turn: 1, reason: aborted({ kind: 'user' }) }])
    expect(agent.inbox.nextTurn.map((message) => line(message))).toEqual(['user: preserved'])
    expect(agent.status).toBe('idle')
    expect(model.requests).toHaveLength(1)
    agent.followup('wake it')
    await agent.whenIdle()
    expect(turnEnds(agent.session.events)).toEqual([
      { turn: 1, reason: aborted({ kind: 'user' }) },
      { turn: 2, reason: { kind: 'completed' } },
      { turn: 3, reason: { kind: 'completed' } },
    ])
    expect(userTexts(agent.session.events)).toEqual(['go', 'preserved', 'wake it'])
    expect(model.requests).toHaveLength(3)
  })

  test('a followup after a keepInbox cancel latches and runs as turn 2 by itself', async () => {
    const { harness, model, agent, statuses } = await scenarios.agent({ script: [hang(), text('b')] })
    const streaming = untilStreaming(harness)
    agent.followup('A')
    await streaming
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    agent.followup('B')
    await agent.whenIdle()
    expect(turnEnds(agent.session.events)).toEqual([
      { turn: 1, reason: aborted({ kind: 'user' }) },
      { turn: 2, reason: { kind: 'completed' } },
    ])
    expect(statuses).toEqual(['running', 'idle', 'running', 'idle'])
    expect(lines(model.requests[1]).at(-1)).toBe('user: B')
    expect(agent.inbox.hasPending).toBe(false)
  })

  test('a plain cancel after the latch drops B; a steer removed before convergence replays nothing', async () => {
    const { harness, model, agent, statuses } = await scenarios.agent({ script: [hang(), hang()] })
    let streaming = untilStreaming(harness)
    agent.followup('A')
    await streaming
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    const b = agent.followup('B')
    agent.cancel()
    await agent.whenIdle()
    expect(userTexts(agent.session.events)).toEqual(['A'])
    expect(
      dataOf<{ inserted: UserMessage[]; outcome?: string }>(agent.session.events, 'agent/inbox/spliced').at(-1),
    ).toEqual({
      target: 'next-turn',
      start: 0,
      removedCount: 1,
      inserted: [],
      outcome: 'canceled',
    })
    expect(agent.inbox.hasPending).toBe(false)
    expect(ofType(agent.session.events, 'turn/start')).toHaveLength(1)
    expect(statuses).toEqual(['running', 'idle'])
    expect(b.id).toBeTypeOf('string')

    streaming = untilStreaming(harness)
    agent.followup('C')
    await streaming
    agent.cancel()
    const steered = agent.steer('late')
    expect(agent.inbox.nextTurn.map((message) => message.id)).toEqual([steered.id])
    expect(agent.inbox.remove(steered.id)).toBe(true)
    await agent.whenIdle()
    await Promise.resolve()
    expect(ofType(agent.session.events, 'turn/start')).toHaveLength(2)
    expect(statuses).toEqual(['running', 'idle', 'running', 'idle'])
    expect(model.requests).toHaveLength(2)
    expect(agent.status).toBe('idle')
  })

  test('the running listener cancels — no turn/start; a followup it sends then runs B alone as turn 1', async () => {
    const first = await scenarios.agent({ script: [] })
    let once = true
    first.agent.ctx.on('agent/status', (payload) => {
      if (payload.status === 'running' && once) {
        once = false
        payload.agent.cancel()
      }
    })
    first.agent.followup('A')
    await first.agent.whenIdle()
    expect(types(first.agent.session.events)).toEqual(['agent/inbox/spliced', 'agent/inbox/spliced'])
    expect(first.agent.session.events[1]?.data).toMatchObject({ removedCount: 1, outcome: 'canceled' })
    expect(first.statuses).toEqual(['running', 'idle'])

    const second = await scenarios.agent({ script: [text('b')] })
    let armed = true
    second.agent.ctx.on('agent/status', (payload) => {
      if (payload.status === 'running' && armed) {
        armed = false
        payload.agent.cancel()
        payload.agent.followup('B')
      }
    })
    second.agent.followup('A')
    await second.agent.whenIdle()
    const events = second.agent.session.events
    expect(dataOf(events, 'turn/start')).toEqual([{ turn: 1 }])
    expect(second.model.requests).toHaveLength(1)
    expect(lines(second.model.requests[0])).toEqual(['user: B'])
    expect(userTexts(events)).toEqual(['B'])
    expect(turnEnds(events)).toEqual([{ turn: 1, reason: { kind: 'completed' } }])
    expect(second.statuses).toEqual(['running', 'idle', 'running', 'idle'])
  })

  test('the first cause wins — parent before user; a user cancel before dispose records user', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [hang(), hang()] })
    let streaming = untilStreaming(harness)
    agent.followup('one')
    await streaming
    const parent: CancelCause = { kind: 'parent' }
    agent.cancel(parent)
    agent.cancel({ kind: 'user' })
    expect(model.requests[0]?.signal.reason).toBe(parent)
    await agent.whenIdle()
    expect(turnEnds(agent.session.events)).toEqual([{ turn: 1, reason: aborted({ kind: 'parent' }) }])

    streaming = untilStreaming(harness)
    agent.followup('two')
    await streaming
    agent.cancel({ kind: 'user' })
    await agent.dispose()
    expect(turnEnds(agent.session.events)).toEqual([
      { turn: 1, reason: aborted({ kind: 'parent' }) },
      { turn: 2, reason: aborted({ kind: 'user' }) },
    ])
  })

  test('dispose mid-turn — aborted {disposed}, the queued tail kept for resume + wake; send afterwards throws', async () => {
    const { harness, model, agent, statuses } = await scenarios.agent({ script: [hang(), text('tail done')] })
    const streaming = untilStreaming(harness)
    agent.followup('go')
    await streaming
    const tail = agent.followup('tail')
    await agent.dispose()
    const events = agent.session.events
    expect(statuses).toEqual(['running', 'idle'])
    expect(ofType(events, 'turn/start')).toHaveLength(1)
    expect(turnEnds(events)).toEqual([{ turn: 1, reason: aborted({ kind: 'disposed' }) }])
    expect(dataOf(events, 'agent/inbox/spliced').filter((data) => data['outcome'] === 'canceled')).toEqual([])
    expect(userTexts(events)).toEqual(['go'])
    const length = agent.session.length
    let thrown: unknown
    try {
      agent.followup('x')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(AgentDisposedError)
    expect(thrown).toMatchObject({ code: 'AGENT_DISPOSED' })
    expect(agent.session.length).toBe(length)

    const resumed = await harness.resumeAgent(agent.id, { options: { verifyReconstruction: true } })
    expect(resumed.inbox.nextTurn.map((message) => message.id)).toEqual([tail.id])
    expect(resumed.status).toBe('idle')
    expect(resumed.wake()).toBe(true)
    await resumed.whenIdle()
    expect(userTexts(resumed.session.events)).toEqual(['go', 'tail'])
    expect(turnEnds(resumed.session.events).at(-1)).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(model.requests).toHaveLength(2)
  })

  test('a pre-step listener cancels then throws — aborted {user} with the cause kept, no agent/error; a plain cancel writes no cause', async () => {
    const { harness, agent, errors } = await scenarios.agent({ script: [] })
    let mode: 'throw' | 'plain' = 'throw'
    harness.on('agent/pre-step', (payload) => {
      payload.agent.cancel()
      if (mode === 'throw') throw new Error('late bug')
      return undefined
    })
    agent.followup('one')
    await agent.whenIdle()
    expect(turnEnds(agent.session.events)).toEqual([
      { turn: 1, reason: aborted({ kind: 'user' }), cause: { message: 'late bug', code: 'UNKNOWN' } },
    ])
    expect(errors).toEqual([])
    mode = 'plain'
    agent.followup('two')
    await agent.whenIdle()
    expect(turnEnds(agent.session.events)[1]).toEqual({ turn: 2, reason: aborted({ kind: 'user' }) })
    expect(errors).toEqual([])
  })
  test('a listener that ignores the turn signal cannot hold a cancel up: pre-step, agent/request, turn-stopping', async () => {
    for (const event of ['agent/pre-step', 'agent/request', 'agent/turn-stopping'] as const) {
      const { harness, agent } = await scenarios.agent({ script: [text('ok')] })
      let entered!: () => void
      const reached = new Promise<void>((resolve) => {
        entered = resolve
      })
      const stuck = (): Promise<never> => {
        entered()
        return new Promise<never>(() => {})
      }
      if (event === 'agent/pre-step') harness.on(event, stuck)
      else if (event === 'agent/request') harness.on(event, stuck)
      else harness.on(event, stuck)
      const run = agent.run('q')
      await reached
      agent.cancel()
      await expect(run).resolves.toMatchObject({ reason: aborted({ kind: 'user' }) })
      await agent.whenIdle()
      expect(agent.phase).toBe('idle')
      expect(turnEnds(agent.session.events)).toEqual([
        expect.objectContaining({ turn: 1, reason: aborted({ kind: 'user' }) }),
      ])
    }
  })
})
