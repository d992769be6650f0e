import { afterEach, describe, expect, test } from 'vitest'
import type { Agent, Harness, ModelRequest, SessionEvent } from 'yoke'
import { fail, text } from 'yoke/testing'
import {
  CHK,
  compactionEvents,
  completeTurns,
  prompt,
  replies,
  reply,
  seqOf,
  setup,
  stub,
  texts,
  typesWithoutChunks,
} from './compaction-helpers.js'

let harness: Harness | undefined

afterEach(async () => {
  await harness?.close()
  harness = undefined
})

function turnEvents(events: readonly SessionEvent[], turn: number): SessionEvent[] {
  const start = events.findIndex(
    (event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === turn,
  )
  const end = events.findIndex((event) => event.type === 'turn/end' && (event.data as { turn: number }).turn === turn)
  return events.slice(start, end + 1)
}

function conversation(requests: readonly ModelRequest[]): ModelRequest[] {
  return requests.filter((request) => request.metadata.purpose === 'conversation')
}

/** Two turns, then an overflow in turn 3 that compacts and retries. */
async function overflowInTurn3(): Promise<{
  readonly made: Awaited<ReturnType<typeof setup>>
  readonly events: readonly SessionEvent[]
}> {
  const made = await setup({
    script: [text(reply(1)), text(reply(2)), fail('CONTEXT_WINDOW_EXCEEDED'), text('S'), text(reply(3))],
    model: { info: { contextWindow: 100000 } },
  })
  harness = made.harness
  const agent = await harness.createAgent()
  await completeTurns(agent, 3)
  return { made, events: agent.session.events }
}

/** Three turns, then turn 4 overflows three times (two recoveries, the cap). */
async function cappedOverflows(): Promise<{ readonly made: Awaited<ReturnType<typeof setup>>; readonly agent: Agent }> {
  const overflow = () => fail('CONTEXT_WINDOW_EXCEEDED')
  const made = await setup({
    script: [...replies(3), overflow(), text('s1'), overflow(), text('s2'), overflow()],
    model: { info: { contextWindow: 100000 } },
  })
  harness = made.harness
  const agent = await harness.createAgent()
  await completeTurns(agent, 3)
  return { made, agent }
}

describe('context-overflow recovery', () => {
  test('an overflow compacts inside the step and the retry succeeds', async () => {
    const { made, events } = await overflowInTurn3()
    const turn3 = turnEvents(events, 3)
    const types = typesWithoutChunks(turn3)
    const from = types.indexOf('step/start')
    expect(types.slice(from)).toEqual([
      'step/start',
      'user/message',
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const failedChunks = turn3.findIndex((event) => event.type === 'assistant/chunk')
    const start = turn3.find((event) => event.type === 'compaction/start') as SessionEvent
    expect(failedChunks).toBeGreaterThan(-1)
    expect(turn3[failedChunks]?.seq).toBeLessThan(start.seq)
    expect(start.data).toEqual({ compactionId: 'c1', trigger: 'context-overflow', turn: 3, step: 1 })
    expect(turn3.find((event) => event.type === 'compaction/summary')?.data).toMatchObject({
      shadowedSeqs: [seqOf(events, prompt(1)), seqOf(events, reply(1))],
    })
    expect(turn3.at(-1)?.data).toEqual({ turn: 3, reason: { kind: 'completed' } })
    expect(turn3.filter((event) => event.type === 'step/start')).toHaveLength(1)
    const turn3Requests = made.model.requests.slice(2)
    expect(conversation(turn3Requests)).toHaveLength(2)
    expect(turn3Requests.filter((request) => request.metadata.purpose === 'compaction')).toHaveLength(1)
    expect(texts(turn3Requests[2]?.messages ?? [])).toEqual([CHK('S'), prompt(2), reply(2), prompt(3)])
    made.model.assertComplete()
  })

  test('the overflow cap — two recoveries, then the failure stands', async () => {
    const { made, agent } = await cappedOverflows()
    const events = agent.session.events
    const [q1, a1, q2, a2, q3, a3] = [1, 2, 3].flatMap((k) => [seqOf(events, prompt(k)), seqOf(events, reply(k))])
    const result = await agent.run(prompt(4))
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } })
    const turn4 = turnEvents(agent.session.events, 4)
    const summaries = turn4.filter((event) => event.type === 'compaction/summary')
    expect(summaries.map((event) => (event.data as { shadowedSeqs: number[] }).shadowedSeqs)).toEqual([
      [q1, a1, q2, a2],
      [
        agent.session.events.find(
          (event) => event.type === 'user/message' && (event.data as { id: string }).id === 'compaction:c1',
        )?.seq,
        q3,
        a3,
      ],
    ])
    expect(
      compactionEvents(turn4)
        .filter((event) => event.type === 'compaction/end')
        .map((event) => event.data),
    ).toEqual([{ compactionId: 'c1' }, { compactionId: 'c2' }])
    expect(turn4.at(-1)?.data).toMatchObject({
      turn: 4,
      reason: { kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } },
    })
    expect(conversation(made.model.requests.slice(3))).toHaveLength(3)
    expect(texts(agent.session.deriveMessages())).toEqual([CHK('s2'), prompt(4)])
    made.model.assertComplete()
  })

  test('maxOverflowRetries 1 stops after one recovery even when another cut is usable', async () => {
    const overflow = () => fail('CONTEXT_WINDOW_EXCEEDED')
    const made = await setup({
      script: [...replies(3), overflow(), text('s1'), overflow()],
      compaction: { maxOverflowRetries: 1 },
      model: { info: { contextWindow: 100000 } },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    await expect(agent.run(prompt(4))).resolves.toMatchObject({
      reason: { kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } },
    })
    expect(compactionEvents(agent.session.events).filter((event) => event.type === 'compaction/start')).toHaveLength(1)
    expect(conversation(made.model.requests.slice(3))).toHaveLength(2)
    made.model.assertComplete()
  })

  test('an overflow with nothing to compact lets the failure stand; the session stays usable', async () => {
    const made = await setup({
      script: [fail('CONTEXT_WINDOW_EXCEEDED'), text('fine')],
      compaction: { summarizer: stub('S') },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    const result = await agent.run('first')
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } })
    expect(agent.session.events.at(-1)?.data).toMatchObject({
      turn: 1,
      reason: { kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } },
    })
    expect(compactionEvents(agent.session.events)).toEqual([])
    expect(made.compactionLive).toEqual([{ outcome: 'skipped', reason: 'nothing-to-compact' }])
    agent.followup('again')
    await agent.whenIdle()
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 2, reason: { kind: 'completed' } })
  })

  test('another failure is delegated; maxOverflowRetries 0 disables recovery', async () => {
    const auth = await setup({
      script: [...replies(2), fail('AUTH')],
      compaction: { summarizer: stub('S') },
      model: { info: { contextWindow: 100000 } },
    })
    harness = auth.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 2)
    await expect(agent.run(prompt(3))).resolves.toMatchObject({ reason: { kind: 'error', error: { code: 'AUTH' } } })
    expect(compactionEvents(agent.session.events)).toEqual([])
    await harness.close()
    const capped = await setup({
      script: [...replies(2), fail('CONTEXT_WINDOW_EXCEEDED')],
      compaction: { summarizer: stub('S'), maxOverflowRetries: 0 },
      model: { info: { contextWindow: 100000 } },
    })
    harness = capped.harness
    const second = await harness.createAgent()
    await completeTurns(second, 2)
    await expect(second.run(prompt(3))).resolves.toMatchObject({
      reason: { kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } },
    })
    expect(compactionEvents(second.session.events)).toEqual([])
    expect(capped.compactionLive).toEqual([])
  })

  test('a failing summary during overflow leaves the failure standing and reports it', async () => {
    const summarizer = async () => {
      throw new Error('summarizer down')
    }
    const made = await setup({
      script: [...replies(2), fail('CONTEXT_WINDOW_EXCEEDED'), text('never')],
      compaction: { summarizer },
      model: { info: { contextWindow: 100000 } },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 2)
    const messages = agent.session.deriveMessages()
    await expect(agent.run(prompt(3))).resolves.toMatchObject({
      reason: { kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } },
    })
    const compaction = compactionEvents(agent.session.events)
    expect(compaction.map((event) => event.type)).toEqual(['compaction/start', 'compaction/end'])
    expect(made.compactionLive).toEqual([{ outcome: 'failed', code: 'SUMMARY_FAILED' }])
    expect(texts(agent.session.deriveMessages())).toEqual([...texts(messages), prompt(3)])
    expect(made.model.remaining).toBe(1)
  })
})

describe('overflow recovery in one step and up to the cap, exact logs', () => {
  test('failed chunks, bracket, then the retry chunks and a3 in the one step', async () => {
    const { made, events } = await overflowInTurn3()
    const [q1, a1] = [seqOf(events, prompt(1)), seqOf(events, reply(1))]
    const turn3 = turnEvents(events, 3)
    const types = turn3.map((event) => event.type)
    const startAt = types.indexOf('compaction/start')
    const endAt = types.indexOf('compaction/end')
    expect(types.slice(0, 3)).toEqual(['turn/start', 'agent/inbox/spliced', 'step/start'])
    expect(turn3[2]?.data).toEqual({ turn: 3, step: 1 })
    expect(types[3]).toBe('user/message')
    expect(texts([turn3[3]?.data as never])).toEqual([prompt(3)])
    expect(types.slice(4, startAt).length).toBeGreaterThan(0)
    expect(types.slice(4, startAt).every((type) => type === 'assistant/chunk')).toBe(true)
    const [start, summary, replacement, end] = turn3.slice(startAt, endAt + 1)
    expect(endAt - startAt).toBe(3)
    expect(summary?.data).toMatchObject({
      compactionId: 'c1',
      summary: 'S',
      shadowedRange: { start: q1, end: a1 },
      shadowedSeqs: [q1, a1],
      attempts: 1,
    })
    expect(replacement?.data).toMatchObject({ id: 'compaction:c1', content: [{ type: 'text', text: CHK('S') }] })
    expect(replacement?.surfaceOp).toEqual({ op: 'replace', start: q1, end: a1 })
    expect(replacement?.sourceEventSeqs).toEqual([start?.seq, summary?.seq, q1, a1])
    expect(end?.data).toEqual({ compactionId: 'c1' })
    const after = types.slice(endAt + 1)
    expect(after.slice(-3)).toEqual(['assistant/message', 'step/end', 'turn/end'])
    expect(after.slice(0, -3).length).toBeGreaterThan(0)
    expect(after.slice(0, -3).every((type) => type === 'assistant/chunk')).toBe(true)
    expect(texts([((turn3.at(-3) as SessionEvent).data as { message: never }).message])).toEqual([reply(3)])
    expect(made.model.requests.slice(2).map((request) => request.metadata.purpose)).toEqual([
      'conversation',
      'compaction',
      'conversation',
    ])
    expect(texts(made.model.requests[3]?.messages ?? []).slice(0, -1)).toEqual([prompt(1), reply(1)])
    expect(made.compactionLive).toEqual([])
  })

  test('both recoveries bracket in turn 4 step 1; the second uses the open-step cut; no prune; one step', async () => {
    const { made, agent } = await cappedOverflows()
    const before = agent.session.events
    const [q1, a2, a3] = [seqOf(before, prompt(1)), seqOf(before, reply(2)), seqOf(before, reply(3))]
    await agent.run(prompt(4))
    const events = agent.session.events
    const turn4 = turnEvents(events, 4)
    const starts = turn4.filter((event) => event.type === 'compaction/start')
    expect(starts.map((event) => event.data)).toEqual([
      { compactionId: 'c1', trigger: 'context-overflow', turn: 4, step: 1 },
      { compactionId: 'c2', trigger: 'context-overflow', turn: 4, step: 1 },
    ])
    const checkpoint = events.find((event) => (event.data as { id?: string }).id === 'compaction:c1')?.seq as number
    const summaries = turn4.filter((event) => event.type === 'compaction/summary')
    expect(summaries.map((event) => (event.data as { shadowedRange: unknown }).shadowedRange)).toEqual([
      { start: q1, end: a2 },
      { start: checkpoint, end: a3 },
    ])
    expect(summaries.map((event) => (event.data as { summary: string }).summary)).toEqual(['s1', 's2'])
    expect(turn4.some((event) => event.type === 'compaction/prune')).toBe(false)
    expect(turn4.filter((event) => event.type === 'step/start')).toHaveLength(1)
    expect(turn4.filter((event) => event.type === 'step/end')).toHaveLength(1)
    expect(made.model.requests.slice(3).map((request) => request.metadata.purpose)).toEqual([
      'conversation',
      'compaction',
      'conversation',
      'compaction',
      'conversation',
    ])
    expect(texts(made.model.requests[5]?.messages ?? []).slice(0, -1)).toEqual([CHK('s1'), prompt(3), reply(3)])
    expect(texts(made.model.requests[7]?.messages ?? [])).toEqual([CHK('s2'), prompt(4)])
    expect(turn4.at(-1)?.data).toMatchObject({
      turn: 4,
      reason: { kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } },
    })
  })
})
