/**
 * Input end to end (routing, the inbox,
 * staged input, rejects and a failing append), end to end over the memory and the JSONL adapter.
 */
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { type Agent, defineTool, type PreStepDecision, SessionVetoError, type TextBlock, type UserMessage } from 'yoke'
import { call, text } from 'yoke/testing'
import { adapterKinds, dataOf, line, lines, ofType, types, useScenarios, userTexts } from './scenario-harness.js'

/** A gate the test opens: `wait` resolves once `open` was called. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => {}
  const wait = new Promise<void>((resolve) => {
    open = resolve
  })
  return { wait, open }
}

function textOf(message: UserMessage): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : block.type)).join('')
}

describe.each(adapterKinds)('agent loop scenarios: inbox (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test('three followups in one tick — turns 1–3, one user/message each, S = [running, idle]', async () => {
    const { model, agent, statuses } = await scenarios.agent({ script: [text('a'), text('b'), text('c')] })
    agent.followup('one')
    agent.followup('two')
    agent.followup('three')
    await agent.whenIdle()
    const events = agent.session.events
    expect(dataOf(events, 'turn/start')).toEqual([{ turn: 1 }, { turn: 2 }, { turn: 3 }])
    expect(userTexts(events)).toEqual(['one', 'two', 'three'])
    expect(dataOf(events, 'turn/end').map((data) => data['reason'])).toEqual([
      { kind: 'completed' },
      { kind: 'completed' },
      { kind: 'completed' },
    ])
    expect(statuses).toEqual(['running', 'idle'])
    expect(model.requests).toHaveLength(3)
  })

  test('an idle steer runs synchronously to its claim; a second steer enters step 2', async () => {
    const { model, agent } = await scenarios.agent({ script: [text('a'), text('b')] })
    agent.steer('A')
    expect(agent.status).toBe('running')
    expect(types(agent.session.events)).toEqual(['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced'])
    expect(agent.session.events[2]?.data).toMatchObject({ target: 'next-step', start: 0, removedCount: 1 })
    expect(agent.inbox.hasPending).toBe(false)
    agent.steer('B')
    await agent.whenIdle()
    expect(lines(model.requests[0])).toEqual(['user: A'])
    expect(lines(model.requests[1])).toEqual(['user: A', 'assistant: a', 'user: B'])
    expect(dataOf(agent.session.events, 'turn/start')).toEqual([{ turn: 1 }])
    expect(dataOf(agent.session.events, 'step/start')).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ])
  })

  test('inject while idle parks one next-step splice; the next followup carries it first', async () => {
    const { model, agent, statuses } = await scenarios.agent({ script: [text('ok')] })
    const injected = agent.inject('ctx')
    expect(types(agent.session.events)).toEqual(['agent/inbox/spliced'])
    expect(agent.session.events[0]?.data).toEqual({ target: 'next-step', start: 0, inserted: [injected] })
    expect(agent.status).toBe('idle')
    expect(statuses).toEqual([])
    await Promise.resolve()
    expect(model.requests).toHaveLength(0)
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests[0]?.messages.map((message) => ({ role: message.role, content: message.content }))).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'ctx' }] },
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
    ])
  })

  test('inject during a tool — both messages enter step 2 after the tool/result, in order, with their original texts', async () => {
    let agent: Agent | undefined
    const body = defineTool({
      name: 'body',
      description: 'injects',
      input: z.object({}),
      execute: () => {
        agent?.inject('A')
        const input: { content: TextBlock[] } = { content: [{ type: 'text', text: 'B' }] }
        agent?.inject(input)
        input.content[0] = { type: 'text', text: 'mutated' }
        input.content.push({ type: 'text', text: 'more' })
        return 'done'
      },
    })
    const opened = await scenarios.agent({ tools: [body], script: [call('c1', 'body', '{}'), text('after')] })
    agent = opened.agent
    agent.followup('go')
    await agent.whenIdle()
    const events = agent.session.events
    const result = ofType(events, 'tool/result')[0]?.seq ?? -1
    const stepStart2 = ofType(events, 'step/start')[1]
    expect(stepStart2?.data).toEqual({ turn: 1, step: 2 })
    const users = ofType(events, 'user/message')
    expect(users.map((event) => textOf(event.data as unknown as UserMessage))).toEqual(['go', 'A', 'B'])
    expect(users[1]?.seq).toBeGreaterThan(stepStart2?.seq ?? Number.POSITIVE_INFINITY)
    expect(users[1]?.seq).toBeGreaterThan(result)
    expect(users[2]?.seq).toBe((users[1]?.seq ?? 0) + 1)
    expect(lines(opened.model.requests[0])).toEqual(['user: go'])
    expect(lines(opened.model.requests[1])).toEqual([
      'user: go',
      'assistant: call c1',
      'user: result c1: done',
      'user: A',
      'user: B',
    ])
  })

  test('inserted [X, P], discarded [X] with a canceled splice, claimed [{P, turn 1}] after turn/start', async () => {
    const { model, agent } = await scenarios.agent({ script: [text('ok')] })
    const inserted: string[] = []
    const discarded: string[] = []
    const claimed: { id: string; turn: number; turnStarted: boolean }[] = []
    agent.ctx.on('agent/inbox/inserted', ({ message }) => {
      inserted.push(message.id)
    })
    agent.ctx.on('agent/inbox/discarded', ({ message }) => {
      discarded.push(message.id)
    })
    agent.ctx.on('agent/inbox/claimed', ({ message, turn }) => {
      claimed.push({ id: message.id, turn, turnStarted: ofType(agent.session.events, 'turn/start').length === 1 })
    })
    const x = agent.inject('X')
    expect(agent.inbox.remove(x.id)).toBe(true)
    expect(agent.inbox.remove(x.id)).toBe(false)
    const p = agent.followup('P')
    await agent.whenIdle()
    expect(inserted).toEqual([x.id, p.id])
    expect(discarded).toEqual([x.id])
    expect(claimed).toEqual([{ id: p.id, turn: 1, turnStarted: true }])
    const splices = dataOf(agent.session.events, 'agent/inbox/spliced')
    expect(splices[1]).toEqual({ target: 'next-step', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' })
    expect(splices).toHaveLength(4)
    expect(model.requests).toHaveLength(1)
  })

  test('input staged while the first pre-step is pending enters step 2 after the prompt', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [text('a'), text('b')] })
    const pending = gate()
    const entered = gate()
    harness.on('agent/pre-step', async (payload, next) => {
      if (payload.step === 1) {
        entered.open()
        await pending.wait
      }
      return next()
    })
    agent.followup('prompt')
    await entered.wait
    agent.inject('ctx')
    agent.steer('s')
    pending.open()
    await agent.whenIdle()
    expect(userTexts(agent.session.events)).toEqual(['prompt', 'ctx', 's'])
    expect(lines(model.requests[0])).toEqual(['user: prompt'])
    expect(lines(model.requests[1])).toEqual(['user: prompt', 'assistant: a', 'user: ctx', 'user: s'])
    expect(dataOf(agent.session.events, 'turn/start')).toEqual([{ turn: 1 }])
  })

  test('staged input after a reject — turn 1 blocked, turn 2 claims [ctx, s] and completes', async () => {
    const { harness, model, agent, statuses } = await scenarios.agent({ script: [text('b')] })
    const pending = gate()
    const entered = gate()
    harness.on('agent/pre-step', async (payload, next): Promise<PreStepDecision> => {
      if (payload.turn !== 1) return next()
      entered.open()
      await pending.wait
      return { kind: 'reject' }
    })
    const claimed: { text: string; turn: number }[] = []
    agent.ctx.on('agent/inbox/claimed', ({ message, turn }) => {
      claimed.push({ text: textOf(message), turn })
    })
    agent.followup('prompt')
    await entered.wait
    agent.inject('ctx')
    agent.steer('s')
    pending.open()
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'blocked' } },
      { turn: 2, reason: { kind: 'completed' } },
    ])
    expect(claimed).toEqual([
      { text: 'prompt', turn: 1 },
      { text: 'ctx', turn: 2 },
      { text: 's', turn: 2 },
    ])
    expect(model.requests).toHaveLength(1)
    expect(lines(model.requests[0])).toEqual(['user: ctx', 'user: s'])
    expect(statuses).toEqual(['running', 'idle'])
  })

  test('a queued prompt after a reject — turn 1 blocked, turn 2 completed, one request with "safe" only', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [text('ok')] })
    harness.on('agent/pre-step', (payload, next) =>
      payload.messages.some((message) => textOf(message).includes('secret')) ? { kind: 'reject' } : next(),
    )
    agent.followup('secret')
    agent.followup('safe')
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'blocked' } },
      { turn: 2, reason: { kind: 'completed' } },
    ])
    expect(model.requests).toHaveLength(1)
    expect(JSON.stringify(model.requests[0]?.messages)).toContain('safe')
    expect(JSON.stringify(model.requests[0]?.messages)).not.toContain('secret')
    expect(userTexts(agent.session.events)).toEqual(['safe'])
  })

  test('a throwing pre-step stops the driver; wake() runs [st, second]', async () => {
    const { harness, model, agent, statuses, errors } = await scenarios.agent({ script: [text('ok')] })
    let thrown = false
    harness.on('agent/pre-step', (payload, next) => {
      if (thrown) return next()
      thrown = true
      payload.agent.steer('st')
      throw new Error('prompt hook broke')
    })
    const claimed: { text: string; turn: number }[] = []
    agent.ctx.on('agent/inbox/claimed', ({ message, turn }) => {
      claimed.push({ text: textOf(message), turn })
    })
    agent.followup('first')
    agent.followup('second')
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'error', error: { message: 'prompt hook broke', code: 'UNKNOWN' } } },
    ])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({
      turn: 1,
      queued: { nextTurn: 1, nextStep: 1 },
      failure: { message: 'prompt hook broke', code: 'UNKNOWN' },
    })
    expect(errors[0]?.error).toEqual(new Error('prompt hook broke'))
    expect(statuses).toEqual(['running', 'idle'])
    expect(model.requests).toHaveLength(0)
    expect(agent.wake()).toBe(true)
    await agent.whenIdle()
    expect(claimed.filter((entry) => entry.turn === 2)).toEqual([
      { text: 'st', turn: 2 },
      { text: 'second', turn: 2 },
    ])
    expect(dataOf(agent.session.events, 'turn/end')[1]).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(lines(model.requests[0])).toEqual(['user: st', 'user: second'])
    expect(agent.inbox.hasPending).toBe(false)
  })

  test('an inbox append vetoed once — followup rethrows, the log stays empty, status idle', async () => {
    const { harness, model, agent, statuses } = await scenarios.agent({ script: [text('ok')] })
    const boom = new Error('disk on fire')
    let vetoes = 0
    harness.sessions.addCommitGuard(
      (event) => {
        if (event.type === 'agent/inbox/spliced' && vetoes === 0) {
          vetoes++
          throw boom
        }
      },
      { label: 'once' },
    )
    const inserted: UserMessage[] = []
    agent.ctx.on('agent/inbox/inserted', ({ message }) => {
      inserted.push(message)
    })
    let failure: unknown
    try {
      agent.followup('lost')
    } catch (error) {
      failure = error
    }
    expect(failure).toBeInstanceOf(SessionVetoError)
    expect(failure).toMatchObject({ code: 'APPEND_VETOED', guard: 'once', cause: boom })
    expect(agent.session.length).toBe(0)
    expect(agent.status).toBe('idle')
    expect(agent.inbox.hasPending).toBe(false)
    expect(inserted).toEqual([])
    expect(statuses).toEqual([])
    await Promise.resolve()
    expect(model.requests).toHaveLength(0)
    agent.followup('kept')
    await agent.whenIdle()
    expect(agent.session.deriveMessages().map(line)).toEqual(['user: kept', 'assistant: ok'])
    expect(statuses).toEqual(['running', 'idle'])
  })
})
