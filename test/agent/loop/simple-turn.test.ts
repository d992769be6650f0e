import { describe, expect, test } from 'vitest'
import { createHarness, type SessionEvent } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'

async function setup(script: Parameters<typeof scriptedModel>[0]) {
  const model = scriptedModel(script)
  const harness = await createHarness({ model, clock: fakeClock(), ids: fakeIds() })
  return { model, harness }
}

function types(events: readonly SessionEvent[]): string[] {
  return events.map((event) => event.type)
}

describe('agent loop: simple turn', () => {
  test('followup runs one turn with the exact durable event order', async () => {
    const { model, harness } = await setup([text('hello', { usage: { inputTokens: 10, outputTokens: 11 } })])
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    expect(agent.id).toBe(agent.session.id)
    expect(agent.ctx.agent).toBe(agent)
    const statuses: string[] = []
    const errors: unknown[] = []
    harness.on('agent/status', (payload) => {
      statuses.push(payload.status)
      throw new Error('status listener broke')
    })
    harness.on('agent/error', (payload) => errors.push(payload.error))
    agent.followup('hi')
    expect(agent.status).toBe('running')
    expect(types(agent.session.events).slice(0, 3)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
    ])
    await agent.whenIdle()
    const events = agent.session.events
    const chunkSeqs = events.filter((event) => event.type === 'assistant/chunk').map((event) => event.seq)
    expect(chunkSeqs.length).toBeGreaterThan(0)
    const withoutChunks = types(events).filter((type) => type !== 'assistant/chunk')
    expect(withoutChunks).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const header = events.find((event) => event.type === 'request/header')
    expect(header?.data).toMatchObject({ reason: 'initial' })
    const anchor = events.find((event) => event.type === 'assistant/message')
    expect(anchor?.sourceEventSeqs).toEqual(chunkSeqs)
    expect(anchor?.data).toMatchObject({ usage: { inputTokens: 10, outputTokens: 11 } })
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
    expect(agent.session.deriveMessages().map((message) => message.role)).toEqual(['user', 'assistant'])
    expect(statuses).toEqual(['running', 'idle'])
    expect(errors).toEqual([])
    expect(agent.status).toBe('idle')
    expect(model.requests).toHaveLength(1)
    expect(model.requests[0]?.metadata).toEqual({ sessionId: agent.id, purpose: 'conversation' })
    expect(harness.agents.isLoopRequest(model.requests[0])).toBe(true)
    expect(harness.agents.get(agent.id)).toBe(agent)
    await harness.close()
  })

  test('three followups in one tick run three turns with one running/idle pair', async () => {
    const { model, harness } = await setup([text('a'), text('b'), text('c')])
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const statuses: string[] = []
    harness.on('agent/status', (payload) => statuses.push(payload.status))
    agent.followup('one')
    agent.followup('two')
    agent.followup('three')
    await agent.whenIdle()
    const starts = agent.session.events.filter((event) => event.type === 'turn/start').map((event) => event.data)
    expect(starts).toEqual([{ turn: 1 }, { turn: 2 }, { turn: 3 }])
    expect(agent.session.events.filter((event) => event.type === 'user/message')).toHaveLength(3)
    expect(statuses).toEqual(['running', 'idle'])
    expect(model.requests).toHaveLength(3)
    await harness.close()
  })
})
