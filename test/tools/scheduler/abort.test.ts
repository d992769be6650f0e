/**
 * Abort: no new starts, pre-execute calls end
 * `TOOL_ABORTED_BEFORE_DISPATCH` unless a denial settled, in-flight calls are awaited and
 * committed (`TOOL_ABORTED` for a success, failures kept), unstarted calls get synthetic pairs,
 * and the scheduler returns normally.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { toolResult } from 'yoke'
import { toolErrorResult } from '../../../src/tools/index.js'
import { SE, TE } from '../../session/builders.js'
import { append } from '../../session/session-helpers.js'
import { block, gates, resultData, resultText, schedulerWorld, settle, tool, toolLog } from './scheduler-helpers.js'

const safe = { isConcurrencySafe: () => true }

describe('abort during pre-execute', () => {
  test('a pre-execute listener cancelling the turn: no body runs, both calls end TOOL_ABORTED_BEFORE_DISPATCH', async () => {
    const world = await schedulerWorld()
    let bodies = 0
    world.tools.register(tool('t', { execute: () => void bodies++ }))
    world.ctx.on('tools/pre-execute', ({ call }) => {
      if (call.callId === 'c1') world.turn.abort({ kind: 'user' })
      return { kind: 'allow' }
    })
    const report = await world.run([block('c1', 't'), block('c2', 't')])
    expect(report).toEqual({ outcome: 'owed' })
    expect(bodies).toBe(0)
    expect(world.checkpoints.count).toBe(1)
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1 TOOL_ABORTED_BEFORE_DISPATCH',
      'tool/call c2',
      'tool/result c2 TOOL_ABORTED_BEFORE_DISPATCH',
    ])
    expect(resultText(world.session, 'c1')).toBe(
      'Tool error (TOOL_ABORTED_BEFORE_DISPATCH): the call to "t" was cancelled before it started',
    )
    expect(resultData(world.session, 'c2').error).toEqual({
      name: 'ToolAbortedError',
      code: 'TOOL_ABORTED_BEFORE_DISPATCH',
    })
    // Every call is answered: the loop can close the step and the turn.
    append(world.session, SE(1, 1))
    append(world.session, TE(1, { kind: 'aborted', reason: { kind: 'user' } }))
    expect(world.session.turnState().openTurn).toBeNull()
  })

  test('an abort while an approval is pending decides it cancelled', async () => {
    const world = await schedulerWorld()
    let ran = false
    world.tools.register(tool('t', { needsApproval: () => true, execute: () => void (ran = true) }))
    const running = world.run([block('c1', 't'), block('c2', 't')], { options: { approvalMode: 'manual' } })
    await settle()
    expect(world.stepContext().approvals.pending.map((entry) => entry.callId)).toEqual(['c1'])
    world.turn.abort({ kind: 'user' })
    await running
    expect(ran).toBe(false)
    const decided = world.session.events.find((event) => event.type === 'approval/decided')
    expect(decided?.data).toMatchObject({ outcome: 'cancelled', by: 'cancel' })
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1 TOOL_ABORTED_BEFORE_DISPATCH',
      'tool/call c2',
      'tool/result c2 TOOL_ABORTED_BEFORE_DISPATCH',
    ])
    expect(world.session.events.filter((event) => event.type === 'approval/asked')).toHaveLength(1)
  })
})

describe('abort with in-flight calls', () => {
  test('cap 2: c1, c2 end TOOL_ABORTED keeping their contexts; c3, c4 and x get synthetic pairs; x never runs', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    let exclusiveRan = false
    world.tools.register([
      tool('s', {
        ...safe,
        execute: async (args, context) => {
          await gate.body(args, context)
          return toolResult({ content: 'ok', additionalContexts: [`ctx-${context.callId}`] })
        },
      }),
      tool('x', { execute: () => void (exclusiveRan = true) }),
    ])
    const running = world.run(
      [block('c1', 's'), block('c2', 's'), block('c3', 's'), block('c4', 's'), block('x', 'x')],
      {
        options: { maxParallelToolCalls: 2 },
      },
    )
    await settle()
    expect(gate.trace).toEqual(['c1-start', 'c2-start'])
    world.turn.abort({ kind: 'user' })
    expect(gate.signals.get('c1')?.aborted).toBe(true)
    expect(gate.signals.get('c1')?.reason).toEqual({ kind: 'user' })
    await settle()
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/call c2'])
    gate.release('c1')
    gate.release('c2')
    const report = await running
    expect(report).toEqual({ outcome: 'owed' })
    expect(exclusiveRan).toBe(false)
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/call c2',
      'tool/result c1 TOOL_ABORTED',
      'tool/result c2 TOOL_ABORTED',
      'tool/call c3',
      'tool/result c3 TOOL_ABORTED_BEFORE_DISPATCH',
      'tool/call c4',
      'tool/result c4 TOOL_ABORTED_BEFORE_DISPATCH',
      'tool/call x',
      'tool/result x TOOL_ABORTED_BEFORE_DISPATCH',
    ])
    expect(resultText(world.session, 'c1')).toBe(
      'Tool error (TOOL_ABORTED): the call to "s" was cancelled while it was running',
    )
    expect(world.contexts.map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'ctx-c1' }],
      [{ type: 'text', text: 'ctx-c2' }],
    ])
    expect(world.session.events.some((event) => event.type === 'user/message')).toBe(false)
    expect(world.live.results.map((payload) => `${payload.call.callId} ${payload.result.error?.code}`)).toEqual([
      'c1 TOOL_ABORTED',
      'c2 TOOL_ABORTED',
      'c3 TOOL_ABORTED_BEFORE_DISPATCH',
      'c4 TOOL_ABORTED_BEFORE_DISPATCH',
      'x TOOL_ABORTED_BEFORE_DISPATCH',
    ])
    append(world.session, SE(1, 1))
  })
})

describe('cancellation matrix', () => {
  test('an abort during pre-execute that then denies keeps the denial', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t'))
    world.ctx.on('tools/pre-execute', () => {
      world.turn.abort({ kind: 'user' })
      return { kind: 'deny', reason: 'no thanks' }
    })
    await world.run([block('c1', 't'), block('c2', 't')])
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1 TOOL_DENIED',
      'tool/call c2',
      'tool/result c2 TOOL_ABORTED_BEFORE_DISPATCH',
    ])
    expect(resultText(world.session, 'c1')).toBe('Tool error (TOOL_DENIED): no thanks')
  })

  test('a guard denying after the abort keeps the denial', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t'))
    world.tools.guard(() => {
      world.turn.abort({ kind: 'user' })
      return 'guarded'
    })
    await world.run([block('c1', 't')])
    expect(resultText(world.session, 'c1')).toBe('Tool error (TOOL_DENIED): guarded')
  })

  test('a tools/execute wrapper succeeding after the abort: TOOL_ABORTED with the contexts kept through post-execute', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t'))
    world.ctx.on('tools/execute', async (_payload, next) => {
      await next()
      world.turn.abort({ kind: 'user' })
      return {
        content: [{ type: 'text', text: 'wrapped' }],
        isError: false,
        concludesTurn: true,
        additionalContexts: ['kept'],
      }
    })
    const postExecuted: string[] = []
    world.ctx.on('tools/post-execute', ({ result }) => {
      postExecuted.push(String(result.error?.code))
      return undefined
    })
    const report = await world.run([block('c1', 't')])
    expect(report).toEqual({ outcome: 'owed' })
    expect(postExecuted).toEqual(['TOOL_ABORTED'])
    expect(resultText(world.session, 'c1')).toBe(
      'Tool error (TOOL_ABORTED): the call to "t" was cancelled while it was running',
    )
    expect(world.contexts.map((message) => message.content)).toEqual([[{ type: 'text', text: 'kept' }]])
  })

  test('a body failing after the abort keeps TOOL_FAILED; an error result and a denial from a wrapper are kept too', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register([
      tool('fails', { ...safe, execute: gate.body }),
      tool('errs', {
        ...safe,
        execute: async (args, context) => {
          await gate.body(args, context)
          return toolResult({ content: 'bad input', isError: true })
        },
      }),
      tool('denied', { ...safe, execute: gate.body }),
    ])
    world.ctx.on('tools/execute', async ({ call }, next) => {
      const result = await next()
      return call.name === 'denied' ? toolErrorResult('TOOL_DENIED', 'blocked late') : result
    })
    const running = world.run([block('c1', 'fails'), block('c2', 'errs'), block('c3', 'denied')])
    await settle()
    world.turn.abort({ kind: 'user' })
    gate.fail('c1', new Error('gave up'))
    gate.release('c2')
    gate.release('c3')
    await running
    expect(resultText(world.session, 'c1')).toBe('Tool error (TOOL_FAILED): gave up')
    expect(resultText(world.session, 'c2')).toBe('bad input')
    expect(resultData(world.session, 'c2').error).toEqual({ name: 'ToolFailedError', code: 'TOOL_FAILED' })
    expect(resultText(world.session, 'c3')).toBe('Tool error (TOOL_DENIED): blocked late')
  })

  test('an uncooperative body keeps the result pending until it settles within the grace, then TOOL_ABORTED', async () => {
    const world = await schedulerWorld()
    world.tools.register(
      tool('slow', {
        execute: () =>
          new Promise((resolve) => {
            world.clock.setTimer(() => resolve('finished anyway'), 50)
          }),
      }),
    )
    let done = false
    const running = world.run([block('c1', 'slow')], { options: { toolAbortGraceMs: 100 } }).then((report) => {
      done = true
      return report
    })
    await settle()
    world.turn.abort({ kind: 'user' })
    await world.clock.advance(49)
    await settle()
    expect(done).toBe(false)
    expect(toolLog(world.session)).toEqual(['tool/call c1'])
    await world.clock.advance(1)
    await running
    expect(world.clock.now()).toBe(50)
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/result c1 TOOL_ABORTED'])
    expect(resultData(world.session, 'c1').meta).toBeUndefined()
    expect(world.live.abandoned).toEqual([])
    expect(world.live.results[0]?.durationMs).toBe(50)
    expect(world.clock.pending().some((timer) => timer.delayMs === 100)).toBe(false)
  })

  test('a pre-aborted step runs pre-execute, execute, body and post-execute 0 times and fires tools/result once per call', async () => {
    const world = await schedulerWorld()
    const counts = { pre: 0, execute: 0, body: 0, post: 0, classify: 0 }
    world.tools.register(
      tool('t', {
        isConcurrencySafe: () => {
          counts.classify++
          return true
        },
        execute: () => void counts.body++,
      }),
    )
    world.ctx.on('tools/pre-execute', () => void counts.pre++)
    world.ctx.on('tools/execute', (_payload, next) => {
      counts.execute++
      return next()
    })
    world.ctx.on('tools/post-execute', () => void counts.post++)
    world.turn.abort({ kind: 'user' })
    const report = await world.run([block('c1', 't'), block('c2', 't')])
    expect(report).toEqual({ outcome: 'owed' })
    expect(counts).toEqual({ pre: 0, execute: 0, body: 0, post: 0, classify: 0 })
    expect(world.checkpoints.count).toBe(0)
    expect(world.live.results.map((payload) => [payload.call.callId, payload.durationMs])).toEqual([
      ['c1', 0],
      ['c2', 0],
    ])
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1 TOOL_ABORTED_BEFORE_DISPATCH',
      'tool/call c2',
      'tool/result c2 TOOL_ABORTED_BEFORE_DISPATCH',
    ])
  })
})
