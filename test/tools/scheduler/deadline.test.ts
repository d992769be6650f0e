/**
 * Deadlines and abandonment on the harness's fake clock.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { type ToolReturn, ToolTimeoutError } from 'yoke'
import { block, resultData, resultText, schedulerWorld, settle, tool, toolLog } from './scheduler-helpers.js'

/** A body that ignores its signal and resolves `value` after `delayMs` on the world's clock. */
function lateBody(world: Awaited<ReturnType<typeof schedulerWorld>>, delayMs: number, value: ToolReturn = 'late') {
  return () =>
    new Promise<ToolReturn>((resolve) => {
      world.clock.setTimer(() => resolve(value), delayMs)
    })
}

describe('deadline', () => {
  test('timeoutMs 50, body resolving at 80 ms: TOOL_TIMEOUT, and the signal aborted at 50 ms with a ToolTimeoutError', async () => {
    const world = await schedulerWorld()
    let signal: AbortSignal | undefined
    const abortedAt: number[] = []
    world.tools.register(
      tool('t', {
        timeoutMs: 50,
        execute: (_args, context) => {
          signal = context.signal
          context.signal.addEventListener('abort', () => abortedAt.push(world.clock.now()))
          return new Promise((resolve) => {
            world.clock.setTimer(() => resolve({ content: 'too late', additionalContexts: ['dropped'] }), 80)
          })
        },
      }),
    )
    const running = world.run([block('c1', 't')])
    await settle()
    await world.clock.advance(49)
    expect(signal?.aborted).toBe(false)
    await world.clock.advance(1)
    expect(signal?.aborted).toBe(true)
    expect(abortedAt).toEqual([50])
    expect(ToolTimeoutError.is(signal?.reason)).toBe(true)
    const reason = signal?.reason as ToolTimeoutError
    expect(reason.message).toBe('"t" did not finish within 50 ms')
    expect(reason.callId).toBe('c1')
    expect(toolLog(world.session)).toEqual(['tool/call c1'])
    await world.clock.advance(30)
    await running
    expect(resultText(world.session, 'c1')).toBe('Tool error (TOOL_TIMEOUT): "t" did not finish within 50 ms')
    expect(resultData(world.session, 'c1').error).toEqual({ name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' })
    expect(world.contexts).toEqual([])
    expect(world.live.results[0]?.durationMs).toBe(80)
    expect(world.clock.pending().filter((timer) => timer.delayMs === 10_000)).toEqual([])
  })

  test('without a tool timeoutMs, the agent toolTimeoutMs applies; a body throwing on abort is still TOOL_TIMEOUT', async () => {
    const world = await schedulerWorld()
    world.tools.register(
      tool('t', {
        execute: (_args, context) =>
          new Promise((_resolve, reject) => {
            context.signal.addEventListener('abort', () => reject(context.signal.reason))
          }),
      }),
    )
    const running = world.run([block('c1', 't')], { options: { toolTimeoutMs: 30 } })
    await settle()
    await world.clock.advance(30)
    await running
    expect(resultText(world.session, 'c1')).toBe('Tool error (TOOL_TIMEOUT): "t" did not finish within 30 ms')
  })

  test('a body finishing before its deadline is a success and leaves no timer behind', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { timeoutMs: 50, execute: lateBody(world, 20, 'in time') }))
    const running = world.run([block('c1', 't')])
    await settle()
    await world.clock.advance(20)
    await running
    expect(resultText(world.session, 'c1')).toBe('in time')
    expect(world.clock.pending().filter((timer) => timer.delayMs === 50)).toEqual([])
  })

  test('a turn abort before the deadline decides TOOL_ABORTED; a deadline before the abort decides TOOL_TIMEOUT', async () => {
    const world = await schedulerWorld()
    world.tools.register([
      tool('first', { isConcurrencySafe: () => true, timeoutMs: 50, execute: lateBody(world, 70) }),
      tool('second', { isConcurrencySafe: () => true, timeoutMs: 10, execute: lateBody(world, 70) }),
    ])
    const running = world.run([block('c1', 'first'), block('c2', 'second')])
    await settle()
    await world.clock.advance(20)
    world.turn.abort({ kind: 'user' })
    await world.clock.advance(50)
    await running
    expect(resultText(world.session, 'c1')).toBe(
      'Tool error (TOOL_ABORTED): the call to "first" was cancelled while it was running',
    )
    expect(resultText(world.session, 'c2')).toBe('Tool error (TOOL_TIMEOUT): "second" did not finish within 10 ms')
  })
})

describe('abandonment', () => {
  test('grace 100, a body ignoring its signal, cancel at t=0: abandoned at t=100, tools/abandoned once, the late settlement ignored', async () => {
    const world = await schedulerWorld()
    world.tools.register(
      tool('t', { execute: lateBody(world, 500, { content: 'ignored', additionalContexts: ['never'] }) }),
    )
    let done = false
    const running = world.run([block('c1', 't')], { options: { toolAbortGraceMs: 100 } }).then((report) => {
      done = true
      return report
    })
    await settle()
    world.turn.abort({ kind: 'user' })
    await world.clock.advance(99)
    expect(done).toBe(false)
    await world.clock.advance(1)
    expect(await running).toEqual({ outcome: 'owed' })
    expect(world.clock.now()).toBe(100)
    expect(resultText(world.session, 'c1')).toBe(
      'Tool error (TOOL_ABORTED): the call to "t" was cancelled while it was running',
    )
    expect(resultData(world.session, 'c1').meta).toEqual({ 'yoke:abandoned': true })
    expect(world.live.abandoned).toEqual([{ agent: world.agent, callId: 'c1', name: 't' }])
    const length = world.session.length
    await world.clock.advance(400)
    await settle()
    expect(world.session.length).toBe(length)
    expect(world.live.abandoned).toHaveLength(1)
    expect(world.live.results).toHaveLength(1)
    expect(world.contexts).toEqual([])
  })

  test('a timed-out body past the grace is abandoned as TOOL_TIMEOUT, and its late rejection is swallowed', async () => {
    const world = await schedulerWorld()
    world.tools.register(
      tool('t', {
        timeoutMs: 10,
        execute: () =>
          new Promise((_resolve, reject) => {
            world.clock.setTimer(() => reject(new Error('late failure')), 500)
          }),
      }),
    )
    const running = world.run([block('c1', 't')], { options: { toolAbortGraceMs: 40 } })
    await settle()
    await world.clock.advance(50)
    await running
    expect(resultText(world.session, 'c1')).toBe('Tool error (TOOL_TIMEOUT): "t" did not finish within 10 ms')
    expect(resultData(world.session, 'c1').meta).toEqual({ 'yoke:abandoned': true })
    await world.clock.advance(500)
    await settle()
    expect(world.live.results).toHaveLength(1)
    expect(world.live.abandoned).toHaveLength(1)
  })

  test('toolAbortGraceMs 0 abandons an uncooperative body as soon as the clock fires', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: lateBody(world, 500) }))
    const running = world.run([block('c1', 't')], { options: { toolAbortGraceMs: 0 } })
    await settle()
    world.turn.abort({ kind: 'user' })
    await world.clock.advance(0)
    await running
    expect(world.clock.now()).toBe(0)
    expect(resultData(world.session, 'c1').meta).toEqual({ 'yoke:abandoned': true })
  })
})
