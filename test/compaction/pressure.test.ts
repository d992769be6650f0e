import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { basicCompaction, createHarness, defineTool, type Harness, type SessionEvent } from 'yoke'
import { DEFAULT_SUMMARY_INSTRUCTION } from '../../src/compaction/index.js'
import { fail, fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import {
  CHK,
  compactionEvents,
  completeTurns,
  gate,
  gatedStub,
  prompt,
  replies,
  reply,
  seqOf,
  setup,
  stub,
  texts,
  tokensOf,
  typesWithoutChunks,
} from './compaction-helpers.js'
import { driveFakeClock } from '../helpers/drive-fake-clock.js'

let harness: Harness | undefined

afterEach(async () => {
  await harness?.close()
  harness = undefined
})

/** A pressure script: a1, a2 with usage, the summary 'S', a3. */
function calibratedScript() {
  return [text(reply(1)), text(reply(2), { usage: { inputTokens: 700, outputTokens: 50 } }), text('S'), text(reply(3))]
}

function turnEvents(events: readonly SessionEvent[], turn: number): SessionEvent[] {
  const start = events.findIndex(
    (event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === turn,
  )
  const end = events.findIndex((event) => event.type === 'turn/end' && (event.data as { turn: number }).turn === turn)
  return events.slice(start, end + 1)
}

describe('pressure trigger', () => {
  test('below the limit nothing is appended or emitted', async () => {
    const made = await setup({
      script: replies(2),
      model: { info: { contextWindow: 10000 } },
      compaction: { summarizer: stub('S') },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 2)
    expect(compactionEvents(agent.session.events)).toEqual([])
    expect(made.compactionLive).toEqual([])
    expect(harness.agents.get(agent.id)).toBe(agent)
    const engine = agent.ctx.compaction as import('yoke').CompactionEngine
    expect(engine.estimate({ agent })).toBeGreaterThanOrEqual(4 * 104)
  })

  test('calibrated pressure compacts before step/start, with the default summarizer', async () => {
    const made = await setup({ script: calibratedScript() })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 2)
    expect(compactionEvents(agent.session.events)).toEqual([])
    const engine = agent.ctx.compaction as import('yoke').CompactionEngine
    const q3 = {
      id: 'q3',
      role: 'user' as const,
      content: [{ type: 'text' as const, text: prompt(3) }],
      source: { kind: 'user' as const },
    }
    expect(engine.estimate({ agent, pending: [q3] })).toBe(700 + 50 + 104)
    await completeTurns(agent, 1, 3)
    const events = agent.session.events
    const turn3 = turnEvents(events, 3)
    expect(typesWithoutChunks(turn3).slice(0, 9)).toEqual([
      'turn/start',
      'agent/inbox/spliced',
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'step/start',
      'user/message',
      'assistant/message',
    ])
    expect(turn3[2]?.data).toEqual({ compactionId: 'c1', trigger: 'pressure', turn: 3, step: null })
    expect(turn3[3]?.data).toMatchObject({
      shadowedSeqs: [seqOf(events, prompt(1)), seqOf(events, reply(1))],
      summary: 'S',
      attempts: 1,
    })
    expect(turn3[6]?.data).toEqual({ turn: 3, step: 1 })
    const summaryRequest = made.model.requests[2]
    expect(summaryRequest?.metadata).toEqual({ sessionId: agent.id, purpose: 'compaction' })
    expect(texts(summaryRequest?.messages ?? [])).toEqual([
      prompt(1),
      reply(1),
      (await import('../../src/compaction/index.js')).DEFAULT_SUMMARY_INSTRUCTION,
    ])
    expect(texts(made.model.requests[3]?.messages ?? [])).toEqual([CHK('S'), prompt(2), reply(2), prompt(3)])
    expect(made.compactionLive).toEqual([])
    made.model.assertComplete()
  })

  test('no context window emits one skipped event per agent and compacts nothing', async () => {
    const made = await setup({ script: replies(3), model: { info: {} }, compaction: { summarizer: stub('S') } })
    harness = made.harness
    const agent = await harness.createAgent()
    for (let k = 1; k <= 3; k++) await agent.run(`p${k}`.padEnd(4000, '!'))
    expect(made.compactionLive).toEqual([{ outcome: 'skipped', reason: 'no-context-window' }])
    expect(compactionEvents(agent.session.events)).toEqual([])
  })

  test('a failing summarizer reports failed then unrelieved, and the turn completes', async () => {
    const summarizer = async () => {
      throw new Error('summarizer down')
    }
    const made = await setup({
      script: [text(reply(1)), text(reply(2), { usage: { inputTokens: 700, outputTokens: 50 } }), text(reply(3))],
      compaction: { summarizer },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const compaction = compactionEvents(agent.session.events)
    expect(compaction.map((event) => event.type)).toEqual(['compaction/start', 'compaction/end'])
    expect(compaction[1]?.data).toMatchObject({ compactionId: 'c1', error: { code: 'SUMMARY_FAILED' } })
    expect(made.compactionLive).toEqual([{ outcome: 'failed', code: 'SUMMARY_FAILED' }, { outcome: 'unrelieved' }])
    const turn3 = turnEvents(agent.session.events, 3)
    expect(turn3.at(-1)?.data).toEqual({ turn: 3, reason: { kind: 'completed' } })
    expect(texts(agent.session.deriveMessages())).toEqual([
      prompt(1),
      reply(1),
      prompt(2),
      reply(2),
      prompt(3),
      reply(3),
    ])
  })

  test('nothing to summarize falls back to pruning the large tool result', async () => {
    const dump = defineTool({
      name: 'dump',
      description: 'dumps',
      input: z.object({}),
      execute: () => 'x'.repeat(20000),
    })
    const made = await setup({
      script: [{ toolCalls: [{ id: 'k1', name: 'dump', arguments: {} }] }, text('done')],
      compaction: { summarizer: stub('S') },
      tools: [dump],
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await agent.run('q1')
    const events = agent.session.events
    const result = events.find((event) => event.type === 'tool/result' && event.surfaceOp === 'append') as SessionEvent
    const prune = events.find((event) => event.type === 'compaction/prune') as SessionEvent
    const replacement = events[prune.seq + 1] as SessionEvent
    const step2 = events.findIndex(
      (event) => event.type === 'step/start' && (event.data as { step: number }).step === 2,
    )
    expect(prune.seq).toBeLessThan(step2)
    expect(prune.data).toEqual({ trigger: 'pressure', targetSeq: result.seq, originalChars: 20000, keptChars: 0 })
    expect(replacement.type).toBe('tool/result')
    expect(replacement.surfaceOp).toEqual({ op: 'replace', start: result.seq, end: result.seq })
    expect(replacement.sourceEventSeqs).toEqual([prune.seq, result.seq])
    const placeholder = '[Tool output removed to save context: 20000 characters. Run the tool again if you need it.]'
    const original = result.data as { message: { id: string; content: [{ toolCallId: string }] } }
    expect(replacement.data).toMatchObject({
      message: {
        id: original.message.id,
        content: [{ toolCallId: 'k1', content: [{ type: 'text', text: placeholder }] }],
      },
    })
    expect(events.some((event) => event.type === 'compaction/start')).toBe(false)
    expect(texts(made.model.requests[1]?.messages ?? []).at(-1)).toBe(placeholder)
    expect(made.compactionLive).toEqual([])
  })

  test('auto false installs no trigger listener and compact() still works', async () => {
    const made = await setup({
      script: [...calibratedScript().filter((_, index) => index !== 2), text('S')],
      compaction: { auto: false },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    expect(compactionEvents(agent.session.events)).toEqual([])
    const plugin = harness.inspect().effects.children.find((node) => node.label === 'plugin:compaction')
    expect(plugin).toBeDefined()
    const labels: string[] = []
    const walk = (node: {
      label: string
      children: readonly { label: string; children: readonly unknown[] }[]
    }): void => {
      labels.push(node.label)
      for (const child of node.children) walk(child as typeof node)
    }
    walk(plugin as Parameters<typeof walk>[0])
    expect(labels).not.toContain('listener:agent/pre-step')
    expect(labels).not.toContain('listener:agent/request-error')
    await expect(agent.compact()).resolves.toMatchObject({ kind: 'summary', trigger: 'manual' })
  })

  test('auto true shows the two trigger listeners under the compaction plugin', async () => {
    const made = await setup({ script: [] })
    harness = made.harness
    const labels: string[] = []
    const walk = (node: { label: string; children: readonly unknown[] }): void => {
      labels.push(node.label)
      for (const child of node.children) walk(child as typeof node)
    }
    walk(
      harness.inspect().effects.children.find((node) => node.label === 'plugin:compaction') as Parameters<
        typeof walk
      >[0],
    )
    expect(
      labels.filter((label) => label === 'listener:agent/pre-step' || label === 'listener:agent/request-error').sort(),
    ).toEqual(['listener:agent/pre-step', 'listener:agent/request-error'])
  })

  test('cancel during a pressure summary closes COMPACTION_ABORTED and the turn ends aborted', async () => {
    const hold = gate()
    const made = await setup({
      script: [text(reply(1)), text(reply(2), { usage: { inputTokens: 700, outputTokens: 50 } })],
      compaction: { summarizer: gatedStub('S', hold) },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 2)
    agent.followup(prompt(3))
    await hold.entered
    agent.cancel()
    await agent.whenIdle()
    const turn3 = turnEvents(agent.session.events, 3)
    const compaction = compactionEvents(turn3)
    expect(compaction.map((event) => event.type)).toEqual(['compaction/start', 'compaction/end'])
    expect(compaction[1]?.data).toMatchObject({ error: { code: 'COMPACTION_ABORTED' } })
    expect(turn3.some((event) => event.type === 'step/start')).toBe(false)
    expect(turn3.at(-1)?.data).toEqual({ turn: 3, reason: { kind: 'aborted', reason: { kind: 'user' } } })
    expect(made.compactionLive).toEqual([{ outcome: 'failed', code: 'COMPACTION_ABORTED' }])
    hold.open()
  })

  test('the default summarizer retries RATE_LIMIT on the harness clock; no llm/retry is logged', async () => {
    const made = await setup({
      script: [
        text(reply(1)),
        text(reply(2), { usage: { inputTokens: 700, outputTokens: 50 } }),
        fail('RATE_LIMIT'),
        text('S'),
        text(reply(3)),
      ],
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 2)
    const pending = agent.run(prompt(3))
    await driveFakeClock(made.clock, () => made.model.requests.length >= 5)
    await expect(pending).resolves.toMatchObject({ reason: { kind: 'completed' } })
    const compaction = compactionEvents(agent.session.events)
    expect(compaction.map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary', 'compaction/end'])
    expect(compaction[1]?.data).toMatchObject({ attempts: 2, summary: 'S' })
    expect(agent.session.events.some((event) => event.type === 'llm/retry')).toBe(false)
  })
})

describe('the pressure trigger and a model without info, exact logs', () => {
  test('the bracket, its replacement, the claimed q3 and the summary request are exactly as stated', async () => {
    const made = await setup({ script: calibratedScript() })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const events = agent.session.events
    const [q1, a1] = [seqOf(events, prompt(1)), seqOf(events, reply(1))]
    const turn3 = turnEvents(events, 3)
    expect(compactionEvents(events).every((event) => event.seq > (turn3[0]?.seq as number))).toBe(true)
    const [turnStart, splice, start, summary, replacement, end, stepStart, claimed] = turn3
    expect(turnStart?.type).toBe('turn/start')
    expect(splice?.type).toBe('agent/inbox/spliced')
    expect(start?.data).toEqual({ compactionId: 'c1', trigger: 'pressure', turn: 3, step: null })
    expect(summary?.type).toBe('compaction/summary')
    expect(summary?.data).toMatchObject({
      compactionId: 'c1',
      summary: 'S',
      shadowedRange: { start: q1, end: a1 },
      shadowedSeqs: [q1, a1],
      shadowedTokens: tokensOf(prompt(1)) + tokensOf(reply(1)),
      summaryTokens: tokensOf(CHK('S')),
      provider: 'mock',
      model: 'mock',
      attempts: 1,
    })
    expect(replacement?.type).toBe('user/message')
    expect(replacement?.data).toEqual({
      id: 'compaction:c1',
      role: 'user',
      content: [{ type: 'text', text: CHK('S') }],
      source: { kind: 'plugin', plugin: 'yoke/compaction', form: 'summary' },
    })
    expect(replacement?.surfaceOp).toEqual({ op: 'replace', start: q1, end: a1 })
    expect(replacement?.sourceEventSeqs).toEqual([start?.seq, summary?.seq, q1, a1])
    expect(end?.data).toEqual({ compactionId: 'c1' })
    expect(stepStart?.data).toEqual({ turn: 3, step: 1 })
    expect(claimed?.type).toBe('user/message')
    expect(claimed?.surfaceOp).toBe('append')
    expect(texts([claimed?.data as never])).toEqual([prompt(3)])
    const summaryRequest = made.model.requests[2]
    expect(summaryRequest).toMatchObject({
      provider: 'mock',
      model: 'mock',
      maxTokens: 8192,
      metadata: { sessionId: agent.id, purpose: 'compaction' },
    })
    expect(summaryRequest?.messages.slice(0, 2)).toEqual(made.model.requests[1]?.messages.slice(0, 2))
    expect(summaryRequest?.messages[2]).toEqual({
      id: 'compaction-instruction',
      role: 'user',
      content: [{ type: 'text', text: DEFAULT_SUMMARY_INSTRUCTION }],
      source: { kind: 'plugin', plugin: 'yoke/compaction' },
    })
    expect(summaryRequest?.messages).toHaveLength(3)
    expect(summaryRequest?.system).toEqual(made.model.requests[1]?.system)
    expect(summaryRequest?.tools).toEqual(made.model.requests[1]?.tools)
    expect(events.some((event) => (event.data as { id?: string }).id === 'compaction-instruction')).toBe(false)
    expect(texts(made.model.requests[3]?.messages ?? [])).toEqual([CHK('S'), prompt(2), reply(2), prompt(3)])
    expect(made.model.requests[3]?.metadata).toMatchObject({ purpose: 'conversation' })
    expect(turn3.at(-1)?.data).toEqual({ turn: 3, reason: { kind: 'completed' } })
    expect(harness.sessions.create({ seed: events }).deriveMessages()).toEqual(agent.session.deriveMessages())
  })

  test('a model without info gives exactly one no-context-window skip per agent and no compaction/* event', async () => {
    const live: { readonly agent: string; readonly outcome: string; readonly reason?: string }[] = []
    harness = await createHarness({
      model: scriptedModel(replies(6)),
      clock: fakeClock(),
      ids: fakeIds(),
      patches: [basicCompaction({ summarizer: stub('S') })],
    })
    harness.on('agent/compaction', (payload) =>
      live.push({
        agent: payload.agent.id,
        outcome: payload.outcome,
        ...(payload.reason === undefined ? {} : { reason: payload.reason }),
      }),
    )
    const first = await harness.createAgent()
    const second = await harness.createAgent()
    for (let k = 1; k <= 3; k++) {
      await expect(first.run(`p${k}`.padEnd(4000, '!'))).resolves.toMatchObject({ reason: { kind: 'completed' } })
      await expect(second.run(`r${k}`.padEnd(4000, '!'))).resolves.toMatchObject({ reason: { kind: 'completed' } })
    }
    expect(live).toEqual([
      { agent: first.id, outcome: 'skipped', reason: 'no-context-window' },
      { agent: second.id, outcome: 'skipped', reason: 'no-context-window' },
    ])
    expect(compactionEvents(first.session.events)).toEqual([])
    expect(compactionEvents(second.session.events)).toEqual([])
  })
})
