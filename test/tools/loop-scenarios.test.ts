/**
 * The tool scheduler through the loop (plus the
 * bad-input list: every logged `tool/call` gets exactly one `tool/result`): the scheduler driven by a
 * real agent turn (scripted model, `verifyReconstruction: true`), checked through the log, the
 * next request's messages and the turn's end reason. The scheduler-level halves are in
 * `test/tools/scheduler/`.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineTool, InvalidOptionsError, ToolTimeoutError, toolResult } from 'yoke'
import type { ToolsAbandonedPayload } from '../../src/tools/index.js'
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

describe('rolling cap through the loop', () => {
  test('cap 2, released in order: c3 is logged after tool/result c1; the next request answers c1..c4 in order', async () => {
    const gate = gates()
    const { agent, model } = await loopWorld([four, text('done')], {
      tools: [rawTool('s', { ...safe, execute: gate.body })],
      options: { maxParallelToolCalls: 2 },
    })
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
    const { agent, model } = await loopWorld([four, text('done')], {
      tools: [rawTool('s', { ...safe, execute: gate.body })],
      options: { maxParallelToolCalls: 2 },
    })
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
    expect(loopLog(agent, from)).toEqual([
      'tool/call c1',
      'tool/call c2',
      'tool/call c3',
      'tool/result c1',
      'tool/result c2',
      'tool/call c4',
    ])
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

  test.each([0, 1.5])(
    'maxParallelToolCalls %s at create rejects InvalidOptionsError at [maxParallelToolCalls]',
    async (value) => {
      const { harness } = await loopWorld([])
      const error = await rejectionOf(harness.createAgent({ options: { maxParallelToolCalls: value } }))
      expect(error).toBeInstanceOf(InvalidOptionsError)
      expect((error as InvalidOptionsError).code).toBe('INVALID_OPTIONS')
      expect((error as InvalidOptionsError).issues.map((issue) => issue.path)).toEqual([['maxParallelToolCalls']])
    },
  )
})

describe('abort during pre-execute through the loop', () => {
  test("c1's pre-execute cancels the turn and allows: no body runs, both calls end TOOL_ABORTED_BEFORE_DISPATCH, the turn ends aborted", async () => {
    let bodies = 0
    const { agent, model } = await loopWorld([calls(['c1', 't'], ['c2', 't']), text('after')], {
      tools: [rawTool('t', { execute: () => void bodies++ })],
    })
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

describe('abort with in-flight calls through the loop', () => {
  test('c1, c2 end TOOL_ABORTED, c3, c4 and x get synthetic pairs; ctx-c1, ctx-c2 park in next-step and enter the next waking turn', async () => {
    const gate = gates()
    let exclusiveRan = false
    const s = rawTool('s', {
      ...safe,
      execute: async (args, context) => {
        await gate.body(args, context)
        return toolResult({ content: 'ok', additionalContexts: [`ctx-${context.callId}`] })
      },
    })
    const x = rawTool('x', { execute: () => void (exclusiveRan = true) })
    const { agent, model } = await loopWorld(
      [calls(['c1', 's'], ['c2', 's'], ['c3', 's'], ['c4', 's'], ['x', 'x']), text('resumed')],
      {
        tools: [s, x],
        options: { maxParallelToolCalls: 2 },
      },
    )
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
    expect(agent.inbox.nextStep.map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'ctx-c1' }],
      [{ type: 'text', text: 'ctx-c2' }],
    ])
    expect(agent.inbox.nextStep.map((message) => message.source)).toEqual([
      { kind: 'plugin', plugin: 'tools', form: 'tool-context' },
      { kind: 'plugin', plugin: 'tools', form: 'tool-context' },
    ])
    expect(
      eventsOf(agent, 'user/message').map((event) => (event.data as { content: { text: string }[] }).content[0]?.text),
    ).toEqual(['go'])
    expect(model.requests).toHaveLength(1)
    // The next waking turn logs them (next-step first, then its prompt) and sends every call answered.
    const next = await agent.run('again')
    expect(next).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'resumed' })
    expect(
      eventsOf(agent, 'user/message').map((event) => (event.data as { content: { text: string }[] }).content[0]?.text),
    ).toEqual(['go', 'ctx-c1', 'ctx-c2', 'again'])
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

describe('scheduler failure through the loop', () => {
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
    expect(turnEnds(agent)).toEqual([
      { turn: 1, reason: { kind: 'error', error: { message: 'scheduler exploded', code: 'UNKNOWN' } } },
    ])
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

describe('abandonment through the loop', () => {
  test('grace 100, a body ignoring its signal, cancel at t=0: abandoned at t=100, then step/end, turn/end aborted, and idle', async () => {
    let started = false
    const { agent, clock, model } = await loopWorld([calls(['c1', 't']), text('after')], {
      tools: [
        rawTool('t', {
          execute: () => {
            started = true
            return new Promise((resolve) => {
              clock.setTimer(() => resolve(toolResult({ content: 'late', additionalContexts: ['never'] })), 500)
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
    const stored = eventsOf(agent, 'tool/result')[0]?.data as {
      meta?: unknown
      message: { content: { content: { text: string }[] }[] }
    }
    expect(stored.meta).toEqual({ 'yoke:abandoned': true })
    expect(stored.message.content[0]?.content).toEqual([
      { type: 'text', text: 'Tool error (TOOL_ABORTED): the call to "t" was cancelled while it was running' },
    ])
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

describe('malformed arguments, unknown and throwing tools through the loop (bad input)', () => {
  test('each bad call gets its own error result, every tool/call exactly one tool/result, and the loop continues', async () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap')
        },
        getPrototypeOf() {
          throw new Error('trap')
        },
      },
    )
    const thrower = (name: string, thrown: unknown) =>
      rawTool(name, {
        execute: () => {
          throw thrown
        },
      })
    const hugeInvalid = `{"blob":"${'x'.repeat(1_000_000)}`
    const hugeValid = JSON.stringify({ blob: 'y'.repeat(1_000_000) })
    // [callId, name, raw arguments, the code of its tool/result ('' for a success)]
    const script = [
      ['c1', 't', 'not json', ' INVALID_ARGUMENTS'],
      ['c2', 't', '', ''],
      ['c3', 't', '[1]', ' INVALID_ARGUMENTS'],
      ['c4', 'nope', '{}', ' UNKNOWN_TOOL'],
      ['c5', 'read', '{}', ' INVALID_ARGUMENTS'],
      ['c6', 'read', '{"path":"a"}', ''],
      ['c7', 'boom', '{}', ' TOOL_FAILED'],
      ['c8', 'hostile', '{}', ' TOOL_FAILED'],
      ['c9', 'harness', '{}', ' TOOL_FAILED'],
      ['c10', 'rejects', '{}', ' TOOL_FAILED'],
      ['c11', 'badmeta', '{}', ' TOOL_FAILED'],
      ['c12', 'len', hugeInvalid, ' INVALID_ARGUMENTS'],
      ['c13', 'len', hugeValid, ''],
    ] as const
    const { agent, model } = await loopWorld(
      [calls(...script.map(([callId, name, rawArguments]) => [callId, name, rawArguments] as const)), text('done')],
      {
        tools: [
          rawTool('t', { execute: (args) => `t got ${JSON.stringify(args)}` }),
          defineTool({
            name: 'read',
            description: 'Read a file',
            input: z.object({ path: z.string() }),
            execute: (args) => `read ${args.path}`,
          }),
          thrower('boom', new Error('exploded')),
          thrower('hostile', hostile),
          thrower('harness', new ToolTimeoutError({ toolName: 'x', message: 'harness message' })),
          rawTool('rejects', { execute: () => Promise.reject(new Error('rejected')) }),
          rawTool('badmeta', { execute: () => ({ content: 'x', meta: { n: 1n } }) }),
          rawTool('len', { execute: (args) => `len ${String((args as { blob: string }).blob.length)}` }),
        ],
      },
    )
    const result = await agent.run('go')
    expect(result).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'done' })
    expect(model.requests).toHaveLength(2)
    // tool/call records the raw argument text verbatim, huge or not.
    expect(eventsOf(agent, 'tool/call').map((event) => event.data)).toEqual(
      script.map(([callId, name, rawArguments]) => ({ turn: 1, step: 1, callId, name, arguments: rawArguments })),
    )
    const log = loopLog(agent, afterFirstAnchor(agent))
    expect(log.slice(0, 26)).toEqual(
      script.flatMap(([callId, , , code]) => [`tool/call ${callId}`, `tool/result ${callId}${code}`]),
    )
    expect(log.slice(26, 28)).toEqual(['step/end', 'step/start'])
    for (const [callId] of script) expect(log.filter((entry) => entry.split(' ')[1] === callId)).toHaveLength(2)
    expectPaired(model.requests[1]?.messages ?? [])
    const results = requestToolResults(model.requests[1])
    expect(results.slice(0, 4)).toEqual([
      'c1 error: Tool error (INVALID_ARGUMENTS): arguments for "t" are not a valid JSON object',
      'c2: t got {}',
      'c3 error: Tool error (INVALID_ARGUMENTS): arguments for "t" are not a valid JSON object',
      'c4 error: Tool error (UNKNOWN_TOOL): no tool named "nope" is available',
    ])
    expect(
      results[4]?.startsWith(
        'c5 error: Tool error (INVALID_ARGUMENTS): arguments for "read" do not match its input schema: path: ',
      ),
    ).toBe(true)
    expect(results.slice(5)).toEqual([
      'c6: read a',
      'c7 error: Tool error (TOOL_FAILED): exploded',
      'c8 error: Tool error (TOOL_FAILED): (unprintable thrown value)',
      'c9 error: Tool error (TOOL_FAILED): harness message',
      'c10 error: Tool error (TOOL_FAILED): rejected',
      'c11 error: Tool error (TOOL_FAILED): "badmeta" returned a value that is not JSON: meta.n is a bigint',
      'c12 error: Tool error (INVALID_ARGUMENTS): arguments for "len" are not a valid JSON object',
      'c13: len 1000000',
    ])
    const unknown = eventsOf(agent, 'tool/result')[3]?.data as { error?: unknown }
    expect(unknown.error).toEqual({ name: 'UnknownToolError', code: 'UNKNOWN_TOOL' })
  })
})

describe('deadline through the loop', () => {
  test('the agent toolTimeoutMs 30 applies to a tool without timeoutMs; a tool timeoutMs 50 wins over it', async () => {
    const abortedAt: Record<string, number> = {}
    const slow = (name: string, extra: { timeoutMs?: number } = {}) =>
      rawTool(name, {
        ...extra,
        isConcurrencySafe: () => true,
        execute: (_args, context) => {
          context.signal.addEventListener('abort', () => {
            abortedAt[context.callId] = clock.now()
          })
          return new Promise((resolve) => {
            clock.setTimer(() => resolve('too late'), 80)
          })
        },
      })
    const { agent, clock, model } = await loopWorld([calls(['c1', 'plain'], ['c2', 'own']), text('done')], {
      tools: [slow('plain'), slow('own', { timeoutMs: 50 })],
      options: { toolTimeoutMs: 30 },
    })
    const running = agent.run('go')
    await until(() => eventsOf(agent, 'tool/call').length === 2, 'both calls to start')
    await settle()
    await clock.advance(29)
    expect(abortedAt).toEqual({})
    await clock.advance(1)
    expect(abortedAt).toEqual({ c1: 30 })
    await clock.advance(20)
    expect(abortedAt).toEqual({ c1: 30, c2: 50 })
    expect(eventsOf(agent, 'tool/result')).toEqual([])
    await clock.advance(30)
    expect((await running).reason).toEqual({ kind: 'completed' })
    expect(requestToolResults(model.requests[1])).toEqual([
      'c1 error: Tool error (TOOL_TIMEOUT): "plain" did not finish within 30 ms',
      'c2 error: Tool error (TOOL_TIMEOUT): "own" did not finish within 50 ms',
    ])
    expect(eventsOf(agent, 'tool/result').map((event) => (event.data as { error?: unknown }).error)).toEqual([
      { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' },
      { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' },
    ])
  })
})
