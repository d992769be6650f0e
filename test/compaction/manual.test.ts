import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { AgentBusyError, CompactionError, defineTool, type Harness, LlmError, modelFailure } from 'yoke'
import { call, fail, text } from 'yoke/testing'
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
} from './compaction-helpers.js'

let harness: Harness | undefined

afterEach(async () => {
  await harness?.close()
  harness = undefined
})

describe('manual compaction', () => {
  test('the happy path appends one bracket and replaces q1…a2', async () => {
    const summarizer = stub('S')
    const made = await setup({ script: replies(3), compaction: { summarizer } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const session = agent.session
    const events = session.events
    const [q1, a1, q2, a2] = [
      seqOf(events, prompt(1)),
      seqOf(events, reply(1)),
      seqOf(events, prompt(2)),
      seqOf(events, reply(2)),
    ]
    const before = session.length
    const statuses: string[] = []
    harness.on('agent/status', (payload) => statuses.push(payload.status))
    const pending = agent.compact()
    expect(agent.status).toBe('idle')
    expect(agent.phase).toBe('maintenance')
    const action = await pending
    const appended = session.slice(before)
    expect(appended.map((event) => event.type)).toEqual([
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
    ])
    const [start, summary, replacement, end] = appended
    expect(start?.data).toEqual({ compactionId: 'c1', trigger: 'manual', turn: null, step: null })
    expect(summary?.data).toEqual({
      compactionId: 'c1',
      summary: 'S',
      shadowedRange: { start: q1, end: a2 },
      shadowedSeqs: [q1, a1, q2, a2],
      shadowedTokens: 416,
      summaryTokens: tokensOf(CHK('S')),
      provider: 'mock',
      model: 'mock',
      attempts: 1,
    })
    expect(replacement?.data).toEqual({
      id: 'compaction:c1',
      role: 'user',
      content: [{ type: 'text', text: CHK('S') }],
      source: { kind: 'plugin', plugin: 'yoke/compaction', form: 'summary' },
    })
    expect(replacement?.surfaceOp).toEqual({ op: 'replace', start: q1, end: a2 })
    expect(replacement?.sourceEventSeqs).toEqual([start?.seq, summary?.seq, q1, a1, q2, a2])
    expect(end?.data).toEqual({ compactionId: 'c1' })
    expect(action).toEqual({
      kind: 'summary',
      compactionId: 'c1',
      trigger: 'manual',
      startSeq: start?.seq,
      summarySeq: summary?.seq,
      replacementSeq: replacement?.seq,
      endSeq: end?.seq,
      shadowedSeqs: [q1, a1, q2, a2],
      shadowedTokens: 416,
      summaryTokens: tokensOf(CHK('S')),
    })
    expect(texts(session.deriveMessages())).toEqual([CHK('S'), prompt(3), reply(3)])
    expect(texts(summarizer.calls[0]?.messages ?? [])).toEqual([prompt(1), reply(1), prompt(2), reply(2)])
    expect(summarizer.calls[0]?.route).toEqual({ provider: 'mock', model: 'mock' })
    const seeded = harness.sessions.create({ seed: session.events })
    expect(seeded.deriveMessages()).toEqual(session.deriveMessages())
    expect(appended.some((event) => event.type === 'turn/start')).toBe(false)
    expect(statuses).toEqual([])
    expect(agent.status).toBe('idle')
    expect(agent.phase).toBe('idle')
  })

  test('nothing to compact resolves null and appends nothing', async () => {
    const made = await setup({ script: replies(1), compaction: { summarizer: stub('S') } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 1)
    const before = agent.session.length
    await expect(agent.compact()).resolves.toBeNull()
    expect(agent.session.length).toBe(before)
  })

  test('busy during a turn (AGENT_BUSY) and during a compaction (COMPACTION_BUSY)', async () => {
    const hold = gate()
    const made = await setup({
      script: [...replies(3), text(reply(4))],
      compaction: { summarizer: gatedStub('S', hold) },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const engine = agent.ctx.compaction as import('yoke').CompactionEngine
    const before = agent.session.length
    const pending = agent.compact()
    await hold.entered
    const events = agent.session.events
    const error = await engine
      .compactRange({
        agent,
        start: seqOf(events, prompt(1)),
        end: seqOf(events, reply(1)),
        signal: new AbortController().signal,
      })
      .catch((thrown: unknown) => thrown)
    expect(CompactionError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'COMPACTION_BUSY', sessionId: agent.id })
    expect(agent.session.length).toBe(before + 1)
    hold.open()
    await pending
    // A turn running: compact() rejects AGENT_BUSY and appends nothing.
    const turn = agent.run(prompt(4))
    const during = agent.session.length
    const busy = await agent.compact().catch((thrown: unknown) => thrown)
    expect(AgentBusyError.is(busy)).toBe(true)
    expect(busy).toMatchObject({ code: 'AGENT_BUSY' })
    expect(agent.session.length).toBe(during)
    await turn
  })

  test('a prompt sent during manual compaction runs after it and sees the checkpoint', async () => {
    const hold = gate()
    const made = await setup({
      script: [...replies(3), text(reply(4))],
      compaction: { summarizer: gatedStub('S', hold) },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const pending = agent.compact()
    await hold.entered
    agent.followup('next')
    expect(agent.status).toBe('idle')
    expect(
      agent.session.events.some((event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === 4),
    ).toBe(false)
    hold.open()
    await pending
    await agent.whenIdle()
    const events = agent.session.events
    const end = events.findIndex((event) => event.type === 'compaction/end')
    const start4 = events.findIndex(
      (event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === 4,
    )
    expect(end).toBeGreaterThan(-1)
    expect(end).toBeLessThan(start4)
    expect(texts(made.model.requests[3]?.messages ?? [])).toEqual([CHK('S'), prompt(3), reply(3), 'next'])
  })

  test('a summarizer failure closes the bracket with SUMMARY_FAILED and the session stays usable', async () => {
    const summarizer = async () => {
      throw new LlmError(modelFailure('AUTH', 'bad key', 'response', { status: 401 }))
    }
    const made = await setup({ script: [...replies(3), text('fine')], compaction: { summarizer } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const messages = agent.session.deriveMessages()
    const before = agent.session.length
    const error = await agent.compact().catch((thrown: unknown) => thrown)
    expect(CompactionError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SUMMARY_FAILED', compactionId: 'c1', cause: { failure: { code: 'AUTH' } } })
    const appended = agent.session.slice(before)
    expect(appended.map((event) => event.type)).toEqual(['compaction/start', 'compaction/end'])
    expect(appended[1]?.data).toEqual({
      compactionId: 'c1',
      error: { code: 'SUMMARY_FAILED', message: (error as Error).message },
    })
    expect(agent.session.deriveMessages()).toBe(messages)
    const result = await agent.run('x')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'fine' })
  })

  test('a summary not smaller than the span fails SUMMARY_NOT_SMALLER', async () => {
    const made = await setup({ script: replies(3), compaction: { summarizer: stub('y'.repeat(5000)) } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const messages = agent.session.deriveMessages()
    const error = await agent.compact().catch((thrown: unknown) => thrown)
    expect(error).toMatchObject({
      code: 'SUMMARY_NOT_SMALLER',
      shadowedTokens: 416,
      summaryTokens: tokensOf(CHK('y'.repeat(5000))),
    })
    const compaction = compactionEvents(agent.session.events)
    expect(compaction.map((event) => event.type)).toEqual(['compaction/start', 'compaction/end'])
    expect(compaction[1]?.data).toMatchObject({ error: { code: 'SUMMARY_NOT_SMALLER' } })
    expect(agent.session.deriveMessages()).toBe(messages)
  })

  test('a replace inside the span makes it stale; a log-only append does not', async () => {
    for (const variant of ['replace', 'note'] as const) {
      const hold = gate()
      const made = await setup({ script: replies(3), compaction: { summarizer: gatedStub('S', hold) } })
      harness = made.harness
      harness.sessions.registerEventType('test/note')
      const agent = await harness.createAgent()
      await completeTurns(agent, 3)
      const q2 = seqOf(agent.session.events, prompt(2))
      const pending = agent.compact().catch((thrown: unknown) => thrown)
      await hold.entered
      if (variant === 'replace') {
        agent.session.append(
          'user/message',
          {
            id: 'edit',
            role: 'user',
            content: [{ type: 'text', text: 'edited' }],
            source: { kind: 'plugin', plugin: 'test/edit' },
          },
          { surfaceOp: { op: 'replace', start: q2, end: q2 }, sourceEventSeqs: [q2] },
        )
      } else agent.session.append('test/note', { note: 1 })
      hold.open()
      const outcome = await pending
      const end = compactionEvents(agent.session.events)
        .filter((event) => event.type === 'compaction/end')
        .at(-1)
      if (variant === 'replace') {
        expect(outcome).toMatchObject({ code: 'COMPACTION_STALE' })
        expect(end?.data).toMatchObject({ error: { code: 'COMPACTION_STALE' } })
        expect(texts(agent.session.deriveMessages())[2]).toBe('edited')
      } else {
        expect(outcome).toMatchObject({ kind: 'summary', compactionId: 'c1' })
        expect(end?.data).toEqual({ compactionId: 'c1' })
      }
      await harness.close()
      harness = undefined
    }
  })

  test('a rejected replacement append closes with COMPACTION_COMMIT_FAILED; the summary is void', async () => {
    const made = await setup({ script: [...replies(3), text('after')], compaction: { summarizer: stub('S') } })
    harness = made.harness
    const veto = harness.sessions.addCommitGuard((event) => {
      if (event.type === 'user/message' && typeof event.surfaceOp === 'object') throw new Error('no replacements today')
    })
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const messages = agent.session.deriveMessages()
    const error = await agent.compact().catch((thrown: unknown) => thrown)
    expect(error).toMatchObject({ code: 'COMPACTION_COMMIT_FAILED', cause: { code: 'APPEND_VETOED' } })
    expect(compactionEvents(agent.session.events).map((event) => event.type)).toEqual([
      'compaction/start',
      'compaction/summary',
      'compaction/end',
    ])
    expect(agent.session.deriveMessages()).toBe(messages)
    await veto()
    expect(harness.sessions.create({ seed: agent.session.events }).deriveMessages()).toEqual(messages)
    await expect(agent.run('more')).resolves.toMatchObject({ text: 'after' })
    // The lock was released: the next compaction runs.
    await expect(agent.compact()).resolves.toMatchObject({ compactionId: 'c2' })
  })

  test('a failed close is reported to the logger and the action still fails', async () => {
    const made = await setup({ script: replies(3), compaction: { summarizer: stub('y'.repeat(5000)) } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const veto = harness.sessions.addCommitGuard((event) => {
      if (event.type === 'compaction/end') throw new Error('no close')
    })
    const error = await agent.compact().catch((thrown: unknown) => thrown)
    expect(error).toMatchObject({ code: 'SUMMARY_NOT_SMALLER' })
    expect(compactionEvents(agent.session.events).map((event) => event.type)).toEqual(['compaction/start'])
    expect(made.logger.at('error').map((record) => record.message)).toEqual([
      `compaction "c1" of session "${agent.id}": could not append compaction/end`,
    ])
    await veto()
  })

  test('a failed success close is attempted once, logged, and the action fails COMPACTION_COMMIT_FAILED', async () => {
    const made = await setup({ script: replies(3), compaction: { summarizer: stub('S') } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    let closes = 0
    const veto = harness.sessions.addCommitGuard((event) => {
      if (event.type === 'compaction/end') {
        closes++
        throw new Error('no close')
      }
    })
    const error = await agent.compact().catch((thrown: unknown) => thrown)
    expect(error).toMatchObject({ code: 'COMPACTION_COMMIT_FAILED', cause: { code: 'APPEND_VETOED' } })
    expect(closes).toBe(1)
    expect(compactionEvents(agent.session.events).map((event) => event.type)).toEqual([
      'compaction/start',
      'compaction/summary',
    ])
    expect(made.logger.at('error').map((record) => record.message)).toEqual([
      `compaction "c1" of session "${agent.id}": could not append compaction/end`,
    ])
    await veto()
  })

  test('an abort during the summary closes COMPACTION_ABORTED even if the summarizer ignores it', async () => {
    const never = gate()
    const made = await setup({ script: replies(3), compaction: { summarizer: gatedStub('S', never) } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const controller = new AbortController()
    const pending = agent.compact({ signal: controller.signal }).catch((thrown: unknown) => thrown)
    await never.entered
    controller.abort('stop now')
    const error = await pending
    expect(error).toMatchObject({ code: 'COMPACTION_ABORTED', cause: 'stop now' })
    expect(compactionEvents(agent.session.events).map((event) => event.type)).toEqual([
      'compaction/start',
      'compaction/end',
    ])
    expect(agent.phase).toBe('idle')
  })

  test('invalid ranges are refused with their reason and append nothing', async () => {
    const made = await setup({
      script: [{ toolCalls: [{ id: 'c1', name: 'echo', arguments: {} }] }, text(reply(1)), text(reply(2))],
      compaction: { summarizer: stub('S') },
      tools: [
        (await import('yoke')).defineTool({
          name: 'echo',
          description: 'echo',
          input: (await import('zod')).z.object({}),
          execute: () => 'ok',
        }),
      ],
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 2)
    const events = agent.session.events
    const q1 = seqOf(events, prompt(1))
    const q2 = seqOf(events, prompt(2))
    const assistant = events.find((event) => event.type === 'assistant/message')?.seq as number
    const engine = agent.ctx.compaction as import('yoke').CompactionEngine
    const signal = new AbortController().signal
    const before = agent.session.length
    const cases: [number, number, string][] = [
      [9999, q2, 'start-not-on-surface'],
      [q1, 9999, 'end-not-on-surface'],
      [q2, q1, 'reversed'],
      [q1, assistant, 'unbalanced'],
    ]
    for (const [start, end, reason] of cases) {
      const error = await engine.compactRange({ agent, start, end, signal }).catch((thrown: unknown) => thrown)
      expect(CompactionError.is(error), reason).toBe(true)
      expect(error).toMatchObject({ code: 'INVALID_RANGE', reason, start, end })
    }
    expect(agent.session.length).toBe(before)
    const result = events.find((event) => event.type === 'tool/result')?.seq as number
    await expect(engine.compactRange({ agent, start: q1, end: result, signal })).resolves.toMatchObject({
      trigger: 'range',
      shadowedSeqs: [q1, assistant, result],
    })
    expect(compactionEvents(agent.session.events)[0]?.data).toMatchObject({ trigger: 'range' })
  })

  test('a summary request that overflows retries once with the older half of the head', async () => {
    const made = await setup({
      script: [...replies(5), fail('CONTEXT_WINDOW_EXCEEDED'), text('S')],
      compaction: { auto: false },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 5)
    const events = agent.session.events
    const action = await agent.compact()
    const expected = [
      seqOf(events, prompt(1)),
      seqOf(events, reply(1)),
      seqOf(events, prompt(2)),
      seqOf(events, reply(2)),
    ]
    expect(action?.shadowedSeqs).toEqual(expected)
    const requests = made.model.requests.slice(5)
    expect(requests).toHaveLength(2)
    expect(texts(requests[0]?.messages ?? []).slice(0, -1)).toEqual([
      prompt(1),
      reply(1),
      prompt(2),
      reply(2),
      prompt(3),
      reply(3),
      prompt(4),
      reply(4),
    ])
    expect(texts(requests[1]?.messages ?? []).slice(0, -1)).toEqual([prompt(1), reply(1), prompt(2), reply(2)])
    expect(requests[1]?.messages.at(-1)).toMatchObject({
      id: 'compaction-instruction',
      role: 'user',
      source: { kind: 'plugin', plugin: 'yoke/compaction' },
    })
    const compaction = compactionEvents(agent.session.events)
    expect(compaction.map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary', 'compaction/end'])
    expect(compaction[1]?.data).toMatchObject({ shadowedSeqs: expected, summary: 'S' })
    expect(texts(agent.session.deriveMessages())).toEqual([
      CHK('S'),
      prompt(3),
      reply(3),
      prompt(4),
      reply(4),
      prompt(5),
      reply(5),
    ])
  })

  test('without services.compaction, compact() rejects ServiceMissingError', async () => {
    const made = await setup({ script: replies(1) })
    await made.harness.close()
    const { createHarness, ServiceMissingError } = await import('yoke')
    const { scriptedModel } = await import('yoke/testing')
    harness = await createHarness({ model: scriptedModel([]), patches: [{ id: 'compaction', disabled: true }] })
    const agent = await harness.createAgent()
    const error = await agent.compact().catch((thrown: unknown) => thrown)
    expect(ServiceMissingError.is(error)).toBe(true)
    expect(agent.phase).toBe('idle')
  })
})

describe('failure injected at every append of the bracket', () => {
  test.each([
    ['compaction/start', 'COMPACTION_COMMIT_FAILED', []],
    ['compaction/summary', 'COMPACTION_COMMIT_FAILED', ['compaction/start', 'compaction/end']],
    ['user/message', 'COMPACTION_COMMIT_FAILED', ['compaction/start', 'compaction/summary', 'compaction/end']],
    ['compaction/end', 'SUMMARY_NOT_SMALLER', ['compaction/start']],
  ])('a veto of %s fails %s and leaves a valid, usable session', async (vetoed, code, logged) => {
    const summary = vetoed === 'compaction/end' ? 'y'.repeat(5000) : 'S'
    const made = await setup({ script: [...replies(3), text('after')], compaction: { summarizer: stub(summary) } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const remove = harness.sessions.addCommitGuard((event) => {
      if (event.type === vetoed && (vetoed !== 'user/message' || typeof event.surfaceOp === 'object'))
        throw new Error(`no ${vetoed}`)
    })
    const messages = agent.session.deriveMessages()
    const error = await agent.compact().catch((thrown: unknown) => thrown)
    expect(CompactionError.is(error)).toBe(true)
    expect(error).toMatchObject({ code, compactionId: 'c1' })
    expect(compactionEvents(agent.session.events).map((event) => event.type)).toEqual(logged)
    expect(agent.session.deriveMessages()).toBe(messages)
    await remove()
    expect(harness.sessions.create({ seed: agent.session.events }).deriveMessages()).toEqual(messages)
    await expect(agent.run('more')).resolves.toMatchObject({ reason: { kind: 'completed' }, text: 'after' })
    expect(agent.phase).toBe('idle')
  })
})

describe('manual compaction while busy and after a failure, exact logs', () => {
  test('during a turn blocked in a tool, compact() rejects AGENT_BUSY and appends nothing', async () => {
    const hold = gate()
    const pause = defineTool({
      name: 'pause',
      description: 'waits',
      input: z.object({}),
      execute: async () => {
        hold.enter()
        await hold.promise
        return 'resumed'
      },
    })
    const summarizer = stub('S')
    const made = await setup({
      script: [...replies(3), call('kp', 'pause', '{}'), text('done')],
      compaction: { summarizer },
      tools: [pause],
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const turn = agent.run(prompt(4))
    await hold.entered
    const during = agent.session.length
    const busy = await agent.compact().catch((thrown: unknown) => thrown)
    expect(AgentBusyError.is(busy)).toBe(true)
    expect(busy).toMatchObject({ code: 'AGENT_BUSY' })
    expect(agent.session.length).toBe(during)
    expect(compactionEvents(agent.session.events)).toEqual([])
    expect(summarizer.calls).toHaveLength(0)
    hold.open()
    await expect(turn).resolves.toMatchObject({ reason: { kind: 'completed' }, text: 'done' })
    expect(compactionEvents(agent.session.events)).toEqual([])
  })

  test('after a SUMMARY_FAILED manual compaction, followup(x) completes a turn over the unchanged surface', async () => {
    const failure = new LlmError(modelFailure('AUTH', 'bad key', 'response', { status: 401 }))
    const summarizer = async () => {
      throw failure
    }
    const made = await setup({ script: [...replies(3), text('fine')], compaction: { summarizer } })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    const before = agent.session.length
    const error = await agent.compact().catch((thrown: unknown) => thrown)
    expect(CompactionError.is(error)).toBe(true)
    expect((error as CompactionError).cause).toBe(failure)
    const appended = agent.session.slice(before)
    expect(appended.map((event) => event.type)).toEqual(['compaction/start', 'compaction/end'])
    expect(appended[0]?.data).toEqual({ compactionId: 'c1', trigger: 'manual', turn: null, step: null })
    agent.followup('x')
    await agent.whenIdle()
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 4, reason: { kind: 'completed' } })
    expect(texts(made.model.requests[3]?.messages ?? [])).toEqual([
      prompt(1),
      reply(1),
      prompt(2),
      reply(2),
      prompt(3),
      reply(3),
      'x',
    ])
  })
})
