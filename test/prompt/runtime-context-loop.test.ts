/**
 * The runtime-context projection through the agent loop:
 * snapshots are logged as `user/message`s right after the turn's prompt, only when they change;
 * the system prompt never changes because of contexts.
 */
import { afterEach, expect, test } from 'vitest'
import { createHarness, type Harness, type SessionEvent, type UserMessage } from 'yoke'
import { RUNTIME_CONTEXT_CLEARED, RUNTIME_CONTEXT_HEADER } from '../../src/prompt/index.js'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'

const HDR = RUNTIME_CONTEXT_HEADER
const CLEARED = RUNTIME_CONTEXT_CLEARED

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

function owned(event: SessionEvent): boolean {
  if (event.type !== 'user/message') return false
  const source = (event.data as unknown as UserMessage).source
  return source.kind === 'plugin' && source.plugin === 'yoke/runtime-context'
}

function textOf(event: SessionEvent | undefined): string | undefined {
  const [first] = (event?.data as unknown as UserMessage | undefined)?.content ?? []
  return first?.type === 'text' ? first.text : undefined
}

/** Per turn: the texts of the owned snapshots it logged, each checked to follow the turn's prompt. */
function snapshotsByTurn(events: readonly SessionEvent[]): string[][] {
  const turns: string[][] = []
  let current: string[] | undefined
  let previous: SessionEvent | undefined
  for (const event of events) {
    if (event.type === 'turn/start') turns.push((current = []))
    if (owned(event)) {
      expect(previous?.type).toBe('user/message')
      expect(owned(previous as SessionEvent)).toBe(false)
      current?.push(textOf(event) as string)
    }
    previous = event
  }
  return turns
}

async function world(turns: number) {
  const model = scriptedModel(Array.from({ length: turns }, (_, index) => text(`answer ${index + 1}`)))
  harness = await createHarness({ model, clock: fakeClock(), ids: fakeIds(), instructions: 'You are steady.' })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  return { model, agent, live: harness }
}

test('snapshots are logged in turns 1, 3 and 4 only; one header; the same system in every request', async () => {
  const { model, agent, live } = await world(5)
  expect(live.systemPrompt).toBe(live.systemPrompt)
  let mode = 'plan'
  live.systemPrompt.variable('mode', () => mode)
  const context = live.systemPrompt.context({ name: 'mode', order: 1, text: 'Mode: {{mode}}' })
  await agent.run('t1')
  await agent.run('t2')
  mode = 'build'
  await agent.run('t3')
  context()
  await agent.run('t4')
  await agent.run('t5')
  const events = agent.session.events
  expect(snapshotsByTurn(events)).toEqual([[`${HDR}\n\nMode: plan`], [], [`${HDR}\n\nMode: build`], [CLEARED], []])
  expect(model.requests).toHaveLength(5)
  expect(new Set(model.requests.map((request) => request.system)).size).toBe(1)
  expect(events.filter((event) => event.type === 'request/header')).toHaveLength(1)
})

test('a replace covering the snapshot suppresses turn 2 and brings a fresh one in turn 3', async () => {
  const { agent, live } = await world(3)
  live.systemPrompt.variable('mode', () => 'plan')
  live.systemPrompt.context({ name: 'mode', order: 1, text: 'Mode: {{mode}}' })
  await agent.run('t1')
  const k = agent.session.events.findIndex(owned)
  expect(k).toBeGreaterThan(0)
  let turn = 0
  agent.ctx.on('agent/pre-step', async (payload, next) => {
    if (payload.turn === 2 && payload.step === 1 && turn++ === 0) {
      agent.session.append(
        'user/message',
        { id: 'summary-1', role: 'user', content: [{ type: 'text', text: 'summary' }], source: { kind: 'user' } },
        { surfaceOp: { op: 'replace', start: k, end: k }, sourceEventSeqs: [k] },
      )
    }
    return next(payload)
  })
  await agent.run('t2')
  await agent.run('t3')
  expect(snapshotsByTurn(agent.session.events)).toEqual([[`${HDR}\n\nMode: plan`], [], [`${HDR}\n\nMode: plan`]])
})

test('a replace shadowing only the turn-1 prompt leaves the snapshot retained', async () => {
  const { agent, live } = await world(3)
  live.systemPrompt.variable('mode', () => 'plan')
  live.systemPrompt.context({ name: 'mode', order: 1, text: 'Mode: {{mode}}' })
  await agent.run('t1')
  const events = agent.session.events
  const snapshot = events.findIndex(owned)
  const prompt = snapshot - 1
  expect(textOf(events[prompt])).toBe('t1')
  let done = false
  agent.ctx.on('agent/pre-step', async (payload, next) => {
    if (!done) {
      done = true
      agent.session.append(
        'user/message',
        {
          id: 'summary-2',
          role: 'user',
          content: [{ type: 'text', text: 'prompt summary' }],
          source: { kind: 'user' },
        },
        { surfaceOp: { op: 'replace', start: prompt, end: prompt }, sourceEventSeqs: [prompt] },
      )
    }
    return next(payload)
  })
  await agent.run('t2')
  await agent.run('t3')
  expect(snapshotsByTurn(agent.session.events)).toEqual([[`${HDR}\n\nMode: plan`], [], []])
})

test('a candidate dropped by pre-step in turn 1 is logged in turn 2', async () => {
  const { agent, live } = await world(2)
  live.systemPrompt.variable('mode', () => 'plan')
  live.systemPrompt.context({ name: 'mode', order: 1, text: 'Mode: {{mode}}' })
  const seen: string[][] = []
  const claimedOnly = agent.ctx.on('agent/pre-step', async (payload) => {
    seen.push(payload.messages.map((message) => (message.content[0] as { text: string }).text))
    return { kind: 'enter', messages: payload.messages }
  })
  await agent.run('t1')
  claimedOnly()
  // The payload holds the claimed messages only; the default decision adds the candidate.
  expect(seen).toEqual([['t1']])
  await agent.run('t2')
  expect(snapshotsByTurn(agent.session.events)).toEqual([[], [`${HDR}\n\nMode: plan`]])
})
