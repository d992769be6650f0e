import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool } from 'yoke'
import { call, fail, fakeClock, fakeIds, hang, scriptedModel, text } from 'yoke/testing'
import { driveFakeClock } from '../../helpers/drive-fake-clock.js'

describe('agent loop: tools, retry, run, cancel', () => {
  test('a tool round trip runs two steps in one turn', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'echoes',
      input: z.object({ text: z.string() }),
      execute: (args) => `echo: ${args.text}`,
    })
    const model = scriptedModel([call('c1', 'echo', '{"text":"ping"}'), text('done')])
    const harness = await createHarness({ model, clock: fakeClock(), ids: fakeIds(), tools: [echo] })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const result = await agent.run('go')
    expect(model.requests).toHaveLength(2)
    expect(model.requests[1]?.messages.at(-1)?.content).toEqual([
      { type: 'tool-result', toolCallId: 'c1', isError: false, content: [{ type: 'text', text: 'echo: ping' }] },
    ])
    const events = agent.session.events
    const call1 = events.findIndex((event) => event.type === 'tool/call')
    const result1 = events.findIndex((event) => event.type === 'tool/result')
    const stepEnd1 = events.findIndex((event) => event.type === 'step/end')
    expect(call1).toBeLessThan(result1)
    expect(result1).toBeLessThan(stepEnd1)
    expect(events.filter((event) => event.type === 'step/start').map((event) => event.data)).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ])
    expect(result).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'done' })
    expect(JSON.parse(JSON.stringify(result))).toEqual(result)
    await harness.close()
  })

  test('the retry entry retries inside the step', async () => {
    const clock = fakeClock()
    const model = scriptedModel([fail('RATE_LIMIT'), fail('SERVER'), text('recovered')])
    const harness = await createHarness({
      model,
      clock,
      ids: fakeIds(),
      patches: [{ id: 'retry', merge: { jitter: 0 } }],
    })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const statuses: string[] = []
    harness.on('agent/status', (payload) => statuses.push(payload.status))
    const pending = agent.run('go')
    await driveFakeClock(clock, () => agent.status !== 'running')
    const result = await pending
    expect(result.reason).toEqual({ kind: 'completed' })
    const events = agent.session.events
    const retries = events
      .filter((event) => event.type === 'llm/retry')
      .map((event) => event.data as { attempt: number; delayMs: number })
    expect(retries.map((retry) => [retry.attempt, retry.delayMs])).toEqual([
      [1, 500],
      [2, 1000],
    ])
    expect(events.filter((event) => event.type === 'step/start')).toHaveLength(1)
    const anchors = events.filter((event) => event.type === 'assistant/message')
    expect(anchors).toHaveLength(1)
    const lastStarted = Math.max(
      ...events.filter((event) => event.type === 'llm/retry-started').map((event) => event.seq),
    )
    const attempt3 = events
      .filter((event) => event.type === 'assistant/chunk' && event.seq > lastStarted)
      .map((event) => event.seq)
    expect(anchors[0]?.sourceEventSeqs).toEqual(attempt3)
    expect(statuses).toEqual(['running', 'idle'])
    expect(model.requests).toHaveLength(3)
    await harness.close()
  })

  test('a finish error ends the turn error with one agent/error', async () => {
    const model = scriptedModel([
      fail('AUTH', 'provider 401', { failure: { code: 'AUTH', message: 'provider 401', status: 401 } }),
    ])
    const harness = await createHarness({ model, clock: fakeClock(), ids: fakeIds() })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const errors: { turn?: number; step?: number }[] = []
    harness.on('agent/error', (payload) =>
      errors.push({
        ...(payload.turn === undefined ? {} : { turn: payload.turn }),
        ...(payload.step === undefined ? {} : { step: payload.step }),
      }),
    )
    const result = await agent.run('go')
    expect(result.reason).toMatchObject({
      kind: 'error',
      error: { code: 'AUTH', message: 'provider 401', status: 401 },
    })
    expect(errors).toEqual([{ turn: 1, step: 1 }])
    const types = agent.session.events.map((event) => event.type)
    expect(types).not.toContain('assistant/message')
    expect(types).toContain('step/end')
    await harness.close()
  })

  test('cancel mid-stream writes the interrupted anchor and ends aborted', async () => {
    const model = scriptedModel([hang(), text('next')])
    const harness = await createHarness({ model, clock: fakeClock(), ids: fakeIds() })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const pending = agent.run('go')
    while (!agent.session.events.some((event) => event.type === 'assistant/chunk'))
      await new Promise((resolve) => setTimeout(resolve, 0))
    agent.cancel()
    const result = await pending
    expect(result.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    const events = agent.session.events
    const anchor = events.find((event) => event.type === 'assistant/message')
    expect(anchor?.data).toMatchObject({ interrupted: true, message: { content: [{ type: 'text', text: 'partial' }] } })
    expect(events.slice(-2).map((event) => event.type)).toEqual(['step/end', 'turn/end'])
    await agent.run('again')
    expect(model.requests[1]?.messages.some((message) => message.role === 'assistant')).toBe(true)
    await agent.dispose()
    expect(harness.agents.get(agent.id)).toBeUndefined()
    expect(() => agent.followup('x')).toThrow(expect.objectContaining({ code: 'AGENT_DISPOSED' }))
    await harness.close()
  })
})
