/**
 * The loop-side halves of 05-tools.md scenarios 10, 12, 13, 14 and 21: the scheduler driven by a
 * real agent turn (scripted model, `verifyReconstruction: true`), checked through the log, the
 * next request's messages and the turn's end reason. The scheduler-level halves are in
 * `test/tools/scheduler/`.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { InvalidOptionsError, type ToolsAbandonedPayload } from 'yoke'
import { injectSchedulerFault, text } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'
import { gates } from './scheduler/scheduler-helpers.js'
import {
  afterFirstAnchor,
  calls,
  eventsOf,
  expectPaired,
  loopLog,
  loopWorld,
  rawTool,
  requestToolResults,
  requestUserTexts,
  settle,
  turnEnds,
  until,
} from './loop-helpers.js'

const safe = { isConcurrencySafe: () => true }
const four = calls(['c1', 's'], ['c2', 's'], ['c3', 's'], ['c4', 's'])

describe('rolling cap through the loop (scenario 10)', () => {
  test('cap 2, released in order: c3 is logged after tool/result c1; the next request answers c1..c4 in order', async () => {
    const gate = gates()
    const { agent, model } = await loopWorld([four, text('done')], { tools: [rawTool('s', { ...safe, execute: gate.body })], options: { maxParallelToolCalls: 2 } })
    const running = agent.run('go')
    await until(() => gate.trace.length === 2, 'two bodies')
    await settle()
    expect(gate.trace).toEqual(['c1-start', 'c2-start'])
    for (const callId of ['c1', 'c2', 'c3', 'c4']) {
      gate.release(callId)
      await until(() => gate.trace.includes(`${callId}-end`), `${callId} to end`)
      await settle()
    }
    const result = await running
    expect(loopLog(agent, afterFirstAnchor(agent)).slice(0, 10)).toEqual([
      'tool/call c1',
      'tool/call c2',
      'tool/result c1',
      'tool/call c3',
      'tool/result c2',
      'tool/call c4',
      'tool/result c3',
      'tool/result c4',
      'step/end',
      'step/start',
    ])
    expect(gate.trace).toEqual(['c1-start', 'c2-start', 'c1-end', 'c3-start', 'c2-end', 'c4-start', 'c3-end', 'c4-end'])
    expect(model.requests).toHaveLength(2)
    expect(requestToolResults(model.requests[1])).toEqual(['c1: c1 done', 'c2: c2 done', 'c3: c3 done', 'c4: c4 done'])
    expect(result).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'done' })
    expect(turnEnds(agent)).toEqual([{ turn: 1, reason: { kind: 'completed' } }])
  })

  test('cap 2, c2 released first: tool/call c3 follows at once, before any tool/result', async () => {
    const gate = gates()
    const { agent, model } = await loopWorld([four, text('done')], { tools: [rawTool('s', { ...safe, execute: gate.body })], options: { maxParallelToolCalls: 2 } })
    const running = agent.run('go')
    await until(() => gate.trace.length === 2, 'two bodies')
    gate.release('c2')
    await until(() => gate.trace.includes('c3-start'), 'c3 to start')
    await settle()
    const from = afterFirstAnchor(agent)
    expect(loopLog(agent, from)).toEqual(['tool/call c1', 'tool/call c2', 'tool/call c3'])
    gate.release('c1')
    await until(() => gate.trace.includes('c4-start'), 'c4 to start')
    await settle()
    expect(loopLog(agent, from)).toEqual(['tool/call c1', 'tool/call c2', 'tool/call c3', 'tool/result c1', 'tool/result c2', 'tool/call c4'])
    gate.release('c4')
    await until(() => gate.trace.includes('c4-end'), 'c4 to end')
    await settle()
    expect(loopLog(agent, from)).toHaveLength(6)
    gate.release('c3')
    expect((await running).reason).toEqual({ kind: 'completed' })
    expect(loopLog(agent, from).slice(6, 9)).toEqual(['tool/result c3', 'tool/result c4', 'step/end'])
    expect(requestToolResults(model.requests[1])).toEqual(['c1: c1 done', 'c2: c2 done', 'c3: c3 done', 'c4: c4 done'])
  })

  test('cap 1 is fully serial: each tool/call follows the previous tool/result', async () => {
    const gate = gates()
    const { agent, model } = await loopWorld([calls(['c1', 's'], ['c2', 's'], ['c3', 's']), text('done')], {
      tools: [rawTool('s', { ...safe, execute: gate.body })],
      options: { maxParallelToolCalls: 1 },
    })
    const running = agent.run('go')
    for (const callId of ['c1', 'c2', 'c3']) {
      await until(() => gate.trace.includes(`${callId}-start`), `${callId} to start`)
      await settle()
      expect(gate.trace.filter((entry) => entry.endsWith('-start'))).toHaveLength(Number(callId.slice(1)))
      gate.release(callId)
    }
    expect((await running).reason).toEqual({ kind: 'completed' })
    expect(gate.trace).toEqual(['c1-start', 'c1-end', 'c2-start', 'c2-end', 'c3-start', 'c3-end'])
    expect(loopLog(agent, afterFirstAnchor(agent)).slice(0, 7)).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2',
      'tool/call c3',
      'tool/result c3',
      'step/end',
    ])
    expect(requestToolResults(model.requests[1])).toEqual(['c1: c1 done', 'c2: c2 done', 'c3: c3 done'])
  })

  test.each([0, 1.5])('maxParallelToolCalls %s at create rejects InvalidOptionsError at [maxParallelToolCalls]', async (value) => {
    const { harness } = await loopWorld([])
    const error = await rejectionOf(harness.createAgent({ options: { maxParallelToolCalls: value } }))
    expect(error).toBeInstanceOf(InvalidOptionsError)
    expect((error as InvalidOptionsError).code).toBe('INVALID_OPTIONS')
    expect((error as InvalidOptionsError).issues.map((issue) => issue.path)).toEqual([['maxParallelToolCalls']])
  })
})

describe('abort during pre-execute through the loop (scenario 12)', () => {
  test("c1's pre-execute cancels the turn and allows: no body runs, both calls end TOOL_ABORTED_BEFORE_DISPATCH, the turn ends aborted", async () => {
    let bodies = 0
    const { agent, model } = await loopWorld([calls(['c1', 't'], ['c2', 't']), text('after')], { tools: [rawTool('t', { execute: () => void bodies++ })] })
    agent.ctx.on('tools/pre-execute', ({ call }) => {
      if (call.callId === 'c1') agent.cancel()
      return { kind: 'allow' }
    })
    const result = await agent.run('go')
    expect(bodies).toBe(0)
    expect(result.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    expect(loopLog(agent, afterFirstAnchor(agent))).toEqual([
      'tool/call c1',
      'tool/result c1 TOOL_ABORTED_BEFORE_DISPATCH',
      'tool/call c2',
      'tool/result c2 TOOL_ABORTED_BEFORE_DISPATCH',
      'step/end',
      'turn/end',
    ])
    expect(turnEnds(agent)).toEqual([{ turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } }])
    expect(model.requests).toHaveLength(1)
    expect(agent.status).toBe('idle')
    // The next turn's request answers both calls (with the runtime's texts) before the new prompt.
    expect((await agent.run('again')).reason).toEqual({ kind: 'completed' })
    expect(requestToolResults(model.requests[1])).toEqual([
      'c1 error: Tool error (TOOL_ABORTED_BEFORE_DISPATCH): the call to "t" was cancelled before it started',
      'c2 error: Tool error (TOOL_ABORTED_BEFORE_DISPATCH): the call to "t" was cancelled before it started',
    ])
    expect(requestUserTexts(model.requests[1])).toEqual(['go', 'again'])
    expect(bodies).toBe(0)
  })
})

describe('abort with in-flight calls through the loop (scenario 13)', () => {
  test('c1, c2 end TOOL_ABORTED, c3, c4 and x get synthetic pairs; ctx-c1, ctx-c2 park in next-step and enter the next waking turn', async () => {
    const gate = gates()
    let exclusiveRan = false
    const s = rawTool('s', {
      ...safe,
      execute: async (args, context) => {
        await gate.body(args, context)
        return { content: 'ok', additionalContexts: [`ctx-${context.callId}`] }
      },
    })
    const x = rawTool('x', { execute: () => void (exclusiveRan = true) })
    const { agent, model } = await loopWorld([calls(['c1', 's'], ['c2', 's'], ['c3', 's'], ['c4', 's'], ['x', 'x']), text('resumed')], {
      tools: [s, x],
      options: { maxParallelToolCalls: 2 },
    })
    const running = agent.run('go')
    await until(() => gate.trace.length === 2, 'c1 and c2 to start')
    await settle()
    expect(gate.trace).toEqual(['c1-start', 'c2-start'])
    agent.cancel()
    expect(gate.signals.get('c1')?.aborted).toBe(true)
    await settle()
    const from = afterFirstAnchor(agent)
    expect(loopLog(agent, from)).toEqual(['tool/call c1', 'tool/call c2'])
    gate.release('c1')
    gate.release('c2')
    const result = await running
    expect(result.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    expect(exclusiveRan).toBe(false)
    expect(loopLog(agent, from)).toEqual([
      'tool/call c1',
      'tool/call c2',
      'tool/result c1 TOOL_ABORTED',
      'agent/inbox/spliced',
      'tool/result c2 TOOL_ABORTED',
      'agent/inbox/spliced',
      'tool/call c3',
      'tool/result c3 TOOL_ABORTED_BEFORE_DISPATCH',
      'tool/call c4',
      'tool/result c4 TOOL_ABORTED_BEFORE_DISPATCH',
      'tool/call x',
      'tool/result x TOOL_ABORTED_BEFORE_DISPATCH',
      'step/end',
      'turn/end',
    ])
    // The contexts accepted after the cancel park in next-step; none is logged as a user/message.
    expect(agent.inbox.nextStep.map((message) => message.content)).toEqual([[{ type: 'text', text: 'ctx-c1' }], [{ type: 'text', text: 'ctx-c2' }]])
    expect(agent.inbox.nextStep.map((message) => message.source)).toEqual([
      { kind: 'plugin', plugin: 'tools', form: 'tool-context' },
      { kind: 'plugin', plugin: 'tools', form: 'tool-context' },
    ])
    expect(eventsOf(agent, 'user/message').map((event) => (event.data as { content: { text: string }[] }).content[0]?.text)).toEqual(['go'])
    expect(model.requests).toHaveLength(1)
    // The next waking turn logs them (next-step first, then its prompt) and sends every call answered.
    const next = await agent.run('again')
    expect(next).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'resumed' })
    expect(eventsOf(agent, 'user/message').map((event) => (event.data as { content: { text: string }[] }).content[0]?.text)).toEqual([
      'go',
      'ctx-c1',
      'ctx-c2',
      'again',
    ])
    expect(agent.inbox.nextStep).toEqual([])
    expect(requestToolResults(model.requests[1])).toEqual([
      'c1 error: Tool error (TOOL_ABORTED): the call to "s" was cancelled while it was running',
      'c2 error: Tool error (TOOL_ABORTED): the call to "s" was cancelled while it was running',
      'c3 error: Tool error (TOOL_ABORTED_BEFORE_DISPATCH): the call to "s" was cancelled before it started',
      'c4 error: Tool error (TOOL_ABORTED_BEFORE_DISPATCH): the call to "s" was cancelled before it started',
      'x error: Tool error (TOOL_ABORTED_BEFORE_DISPATCH): the call to "x" was cancelled before it started',
    ])
    expect(requestUserTexts(model.requests[1])).toEqual(['go', 'ctx-c1', 'ctx-c2', 'again'])
  })
})

describe('scheduler failure through the loop (scenario 14)', () => {
  test("a fault at c2's start: c3 never starts, turn/end waits for c1, every call is closed, and the turn ends error", async () => {
    const gate = gates()
    const { agent, model } = await loopWorld([calls(['c1', 's'], ['c2', 's'], ['c3', 's']), text('next')], {
      tools: [rawTool('s', { ...safe, execute: gate.body })],
    })
    injectSchedulerFault(agent, { at: 'start', callId: 'c2', error: new Error('scheduler exploded') })
    const errors: unknown[] = []
    agent.ctx.on('agent/error', (payload) => {
      errors.push(payload.failure)
    })
    const running = agent.run('go')
    await until(() => gate.trace.includes('c1-start'), 'c1 to start')
    await settle()
    expect(eventsOf(agent, 'turn/end')).toEqual([])
    expect(agent.status).toBe('running')
    gate.release('c1')
    const result = await running
    expect(gate.trace).toEqual(['c1-start', 'c1-end'])
    expect(loopLog(agent, afterFirstAnchor(agent))).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2 TOOL_SCHEDULER_FAILED',
      'tool/call c3',
      'tool/result c3 TOOL_SCHEDULER_FAILED',
      'step/end',
      'turn/end',
    ])
    expect(turnEnds(agent)).toEqual([{ turn: 1, reason: { kind: 'error', error: { message: 'scheduler exploded', code: 'UNKNOWN' } } }])
    expect(result.reason).toEqual({ kind: 'error', error: { message: 'scheduler exploded', code: 'UNKNOWN' } })
    expect(errors).toEqual([{ message: 'scheduler exploded', code: 'UNKNOWN' }])
    expect(model.requests).toHaveLength(1)
    // The next request: every tool-call block has exactly one matching tool-result.
    expect((await agent.run('next')).reason).toEqual({ kind: 'completed' })
    expectPaired(model.requests[1]?.messages ?? [])
    expect(requestToolResults(model.requests[1])).toEqual([
      'c1: c1 done',
      'c2 error: Tool error (TOOL_SCHEDULER_FAILED): the call to "s" was not completed because the tool scheduler failed',
      'c3 error: Tool error (TOOL_SCHEDULER_FAILED): the call to "s" was not completed because the tool scheduler failed',
    ])
  })
})

describe('abandonment through the loop (scenario 21)', () => {
  test('grace 100, a body ignoring its signal, cancel at t=0: abandoned at t=100, then step/end, turn/end aborted, and idle', async () => {
    let started = false
    const { agent, clock, model } = await loopWorld([calls(['c1', 't']), text('after')], {
      tools: [
        rawTool('t', {
          execute: () => {
            started = true
            return new Promise((resolve) => {
              clock.setTimer(() => resolve({ content: 'late', additionalContexts: ['never'] }), 500)
            })
          },
        }),
      ],
      options: { toolAbortGraceMs: 100 },
    })
    const abandoned: ToolsAbandonedPayload[] = []
    agent.ctx.on('tools/abandoned', (payload) => {
      abandoned.push(payload)
    })
    const running = agent.run('go')
    await until(() => started, 'the body to start')
    expect(clock.now()).toBe(0)
    agent.cancel()
    await settle()
    await clock.advance(99)
    await settle()
    const from = afterFirstAnchor(agent)
    expect(loopLog(agent, from)).toEqual(['tool/call c1'])
    expect(agent.status).toBe('running')
    await clock.advance(1)
    const result = await running
    await agent.whenIdle()
    expect(clock.now()).toBe(100)
    expect(result.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    expect(loopLog(agent, from)).toEqual(['tool/call c1', 'tool/result c1 TOOL_ABORTED', 'step/end', 'turn/end'])
    const stored = eventsOf(agent, 'tool/result')[0]?.data as { meta?: unknown; message: { content: { content: { text: string }[] }[] } }
    expect(stored.meta).toEqual({ 'yoke:abandoned': true })
    expect(stored.message.content[0]?.content).toEqual([{ type: 'text', text: 'Tool error (TOOL_ABORTED): the call to "t" was cancelled while it was running' }])
    expect(abandoned).toEqual([{ agent, callId: 'c1', name: 't' }])
    expect(agent.status).toBe('idle')
    // The body resolving at t=500 changes nothing.
    const length = agent.session.length
    await clock.advance(400)
    await settle()
    expect(agent.session.length).toBe(length)
    expect(abandoned).toHaveLength(1)
    expect(agent.inbox.nextStep).toEqual([])
    expect(model.requests).toHaveLength(1)
  })
})
