/**
 * The turn driver end to end (the driver after an error, no wake gap,
 * bad input, publication order, resume), end to end over the memory and the JSONL adapter.
 */
import { describe, expect, test } from 'vitest'
import {
  type Agent,
  AgentBusyError,
  AgentExistsError,
  InvalidArgumentError,
  InvalidMessageError,
  InvalidOptionsError,
  type CancelCause,
  type UserMessageInput,
} from 'yoke'
import { fail, hang, text } from 'yoke/testing'
import { rejectionOf as rejection, thrownBy } from '../../helpers/outcomes.js'
import {
  adapterKinds,
  dataOf,
  lines,
  ofType,
  tick,
  untilStreaming,
  useScenarios,
  userTexts,
} from './scenario-harness.js'

describe.each(adapterKinds)('agent loop scenarios: driver (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test('an error turn stops the driver with b still queued; wake() runs it, then returns false', async () => {
    const { model, agent, statuses, errors } = await scenarios.agent({ script: [fail('AUTH', 'x'), text('ok')] })
    agent.followup('a')
    const b = agent.followup('b')
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'turn/end')).toHaveLength(1)
    expect(dataOf<{ reason: { kind: string } }>(agent.session.events, 'turn/end')[0]?.reason.kind).toBe('error')
    expect(errors).toHaveLength(1)
    expect(errors[0]?.queued).toEqual({ nextTurn: 1, nextStep: 0 })
    expect(statuses).toEqual(['running', 'idle'])
    expect(agent.status).toBe('idle')
    expect(agent.inbox.nextTurn.map((message) => message.id)).toEqual([b.id])
    expect(model.requests).toHaveLength(1)
    expect(agent.wake()).toBe(true)
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'turn/end')[1]).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(lines(model.requests[1]).at(-1)).toBe('user: b')
    expect(agent.wake()).toBe(false)
    expect(statuses).toEqual(['running', 'idle', 'running', 'idle'])
  })

  test('no wake gap — a followup k microtasks after turn/end (k = 0..20) is always claimed and completed', async () => {
    const { harness } = await scenarios.world({ script: Array.from({ length: 42 }, (_, index) => text(`r${index}`)) })
    for (let k = 0; k <= 20; k++) {
      const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
      let sent = false
      const stop = harness.on('session/event', ({ session, event }) => {
        if (session.id !== agent.id || event.type !== 'turn/end' || (event.data as { turn: number }).turn !== 1) return
        // The observer runs inside the commit, where an append is REENTRANT_APPEND:
        // "after k microtasks" counts from the first legal moment, one queueMicrotask away.
        let hops = k
        const later = (): void => {
          if (hops-- > 0) {
            queueMicrotask(later)
            return
          }
          agent.followup(`k${k}`)
          sent = true
        }
        queueMicrotask(later)
      })
      agent.followup('start')
      for (let round = 0; round < 10 && !sent; round++) {
        await agent.whenIdle()
        await tick()
      }
      await agent.whenIdle()
      stop()
      expect({ k, sent }).toEqual({ k, sent: true })
      expect({ k, pending: agent.inbox.hasPending, status: agent.status }).toEqual({
        k,
        pending: false,
        status: 'idle',
      })
      expect({ k, users: userTexts(agent.session.events) }).toEqual({ k, users: ['start', `k${k}`] })
      expect({ k, ends: dataOf(agent.session.events, 'turn/end') }).toEqual({
        k,
        ends: [
          { turn: 1, reason: { kind: 'completed' } },
          { turn: 2, reason: { kind: 'completed' } },
        ],
      })
    }
  })

  test('bad options, bad input, maintenance while running, a bogus cancel cause', async () => {
    const { harness, agent } = await scenarios.agent({ script: [hang()] })
    const zero = await rejection(harness.agents.create({ id: 'bad-1', options: { maxTokens: 0 } }))
    expect(zero).toBeInstanceOf(InvalidOptionsError)
    expect(zero).toMatchObject({ code: 'INVALID_OPTIONS' })
    expect((zero as InvalidOptionsError).issues[0]?.path).toEqual(['maxTokens'])
    const unknown = await rejection(harness.agents.create({ id: 'bad-2', options: { maxToken: 5 } as never }))
    expect(unknown).toBeInstanceOf(InvalidOptionsError)
    expect((unknown as InvalidOptionsError).issues[0]?.path).toEqual(['maxToken'])
    expect(harness.agents.get('bad-1')).toBeUndefined()
    expect(harness.agents.get('bad-2')).toBeUndefined()
    expect(harness.agents.list()).toEqual([agent])
    expect(harness.sessions.get('bad-1')).toBeUndefined()

    const badInput = { content: [{ type: 'text', text: 1n }] } as unknown as UserMessageInput
    const invalid = thrownBy(() => agent.followup(badInput))
    expect(invalid).toBeInstanceOf(InvalidMessageError)
    expect(invalid).toMatchObject({ code: 'INVALID_MESSAGE', field: 'content[0].text' })
    expect(agent.session.length).toBe(0)
    expect(agent.status).toBe('idle')

    const streaming = untilStreaming(harness)
    agent.followup('go')
    await streaming
    const busy = thrownBy(() => agent.runMaintenance(async () => 'never'))
    expect(busy).toBeInstanceOf(AgentBusyError)
    expect(busy).toMatchObject({ code: 'AGENT_BUSY' })
    const bogus = thrownBy(() => agent.cancel({ kind: 'bogus' } as unknown as CancelCause))
    expect(bogus).toBeInstanceOf(InvalidArgumentError)
    expect(bogus).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'cause' })
    expect(agent.status).toBe('running')
    agent.cancel()
    await agent.whenIdle()
    expect(dataOf(agent.session.events, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } },
    ])
  })

  test('publication order — setup, then session/created, agent/created, agent/session-start {create}', async () => {
    const { harness } = await scenarios.world({ script: [] })
    const record: string[] = []
    let during: Agent | undefined | 'unset' = 'unset'
    harness.on('session/created', ({ session }) => {
      if (session.id === 'published') record.push('session/created')
    })
    harness.on('agent/created', ({ agent }) => {
      if (agent.id === 'published') record.push('agent/created')
    })
    harness.on('agent/session-start', ({ agent, source }) => {
      if (agent.id === 'published') record.push(`agent/session-start ${source}`)
    })
    const agent = await harness.agents.create({
      id: 'published',
      options: { verifyReconstruction: true },
      setup: async () => {
        record.push('setup:start')
        during = harness.agents.get('published')
        await tick()
        record.push('setup:end')
      },
    })
    expect(record).toEqual([
      'setup:start',
      'setup:end',
      'session/created',
      'agent/created',
      'agent/session-start create',
    ])
    expect(during).toBeUndefined()
    expect(harness.agents.get('published')).toBe(agent)
  })

  test('resume — idle, no turn; the next turn is 2 with a resume header over the history, pending and next', async () => {
    const { harness, model, agent } = await scenarios.agent({ script: [text('hello'), text('again')] })
    agent.followup('hi')
    await agent.whenIdle()
    agent.inject('pending')
    const id = agent.id
    await agent.dispose()
    const resumed = await harness.resumeAgent(id, { options: { verifyReconstruction: true } })
    expect(resumed.id).toBe(id)
    expect(resumed.status).toBe('idle')
    await tick()
    expect(model.requests).toHaveLength(1)
    expect(ofType(resumed.session.events, 'turn/start')).toHaveLength(1)
    expect(resumed.inbox.nextStep.map((message) => lines({ messages: [message] } as never)[0])).toEqual([
      'user: pending',
    ])
    const live = await rejection(harness.resumeAgent(id))
    expect(live).toBeInstanceOf(AgentExistsError)
    expect(live).toMatchObject({ code: 'AGENT_EXISTS' })

    const before = resumed.session.length
    resumed.followup('next')
    await resumed.whenIdle()
    const events = resumed.session.events
    const fresh = events.slice(before)
    expect(dataOf(fresh, 'turn/start')).toEqual([{ turn: 2 }])
    const headers = dataOf<{ reason: string }>(events, 'request/header')
    expect(headers.map((header) => header.reason)).toEqual(['initial', 'resume'])
    expect(lines(model.requests[1])).toEqual(['user: hi', 'assistant: hello', 'user: pending', 'user: next'])
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index))
    expect(dataOf(events, 'turn/end').at(-1)).toEqual({ turn: 2, reason: { kind: 'completed' } })
  })
})
