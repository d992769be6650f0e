/**
 * Internal failure: a failure of the scheduler's own machinery
 * stops new starts, dispatched calls are awaited and committed in model order until a commit
 * throws, then every call without a committed `tool/result` is closed `TOOL_SCHEDULER_FAILED`;
 * a closing append that throws stops the writing. Plus malformed `runToolCalls` arguments (a
 * rejection before anything is logged) and the `injectSchedulerFault` seam itself.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import {
  InvalidArgumentError,
  type JsonObject,
  type Message,
  runToolCalls,
  ServiceMissingError,
  services,
  toolResult,
} from 'yoke'
import type { ToolContextMessage } from '../../../src/tools/index.js'
import { injectSchedulerFault } from 'yoke/testing'
import { rejectionOf, thrownBy } from '../../helpers/outcomes.js'
import { AM, SE, SS } from '../../session/builders.js'
import { append, expectError } from '../../session/session-helpers.js'
import { block, describeEvents, gates, resultText, schedulerWorld, settle, tool, toolLog } from './scheduler-helpers.js'

const safe = { isConcurrencySafe: () => true }

/** Every tool-call block of the derived history has exactly one matching tool-result message. */
function expectPaired(messages: readonly Message[]): void {
  const calls = messages.flatMap((message) =>
    message.role === 'assistant' ? message.content.filter((entry) => entry.type === 'tool-call') : [],
  )
  expect(calls.length).toBeGreaterThan(0)
  for (const call of calls) {
    const answers = messages.filter((message) => message.source.kind === 'tool' && message.source.callId === call.id)
    expect(answers, call.id).toHaveLength(1)
  }
}

describe('scheduler failure closes every call', () => {
  test("a fault at c2's start: c3 never starts, the step waits for c1, and every call is closed in model order", async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register(tool('s', { ...safe, execute: gate.body }))
    const error = new Error('scheduler exploded')
    injectSchedulerFault(world.agent, { at: 'start', callId: 'c2', error })
    let done = false
    const start = world.session.length
    const running = world.run([block('c1', 's'), block('c2', 's'), block('c3', 's')]).then((report) => {
      done = true
      return report
    })
    await settle()
    expect(done).toBe(false)
    expect(gate.trace).toEqual(['c1-start'])
    gate.release('c1')
    const report = await running
    expect(report.failure).toBe(error)
    expect(report.outcome).toBe('owed')
    expect(gate.trace).toEqual(['c1-start', 'c1-end'])
    append(world.session, SE(1, 1))
    expect(describeEvents(world.session.events.slice(start + 1))).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2 TOOL_SCHEDULER_FAILED',
      'tool/call c3',
      'tool/result c3 TOOL_SCHEDULER_FAILED',
      'step/end',
    ])
    expect(resultText(world.session, 'c1')).toBe('c1 done')
    expect(resultText(world.session, 'c2')).toBe(
      'Tool error (TOOL_SCHEDULER_FAILED): the call to "s" was not completed because the tool scheduler failed',
    )
    const closer = world.session.events.find(
      (event) =>
        event.type === 'tool/result' &&
        (event.data as { message: { source: { callId: string } } }).message.source.callId === 'c3',
    )
    expect((closer?.data as { error?: unknown } | undefined)?.error).toEqual({
      name: 'ToolSchedulerError',
      code: 'TOOL_SCHEDULER_FAILED',
    })
    expectPaired(world.session.deriveMessages())
    expect(world.live.results.map((payload) => `${payload.call.callId} ${payload.result.error?.code}`)).toEqual([
      'c1 undefined',
      'c2 TOOL_SCHEDULER_FAILED',
      'c3 TOOL_SCHEDULER_FAILED',
    ])
  })

  test('the fault is one-shot: the next step with the same call id runs normally', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('s'))
    injectSchedulerFault(world.agent, { at: 'commit', callId: 'c1', error: new Error('once') })
    const first = await world.run([block('c1', 's')])
    expect((first.failure as Error).message).toBe('once')
    expect(Object.keys(world.agent)).toEqual(['id', 'session'])
    append(world.session, SE(1, 1))
    append(world.session, SS(1, 2))
    const second = await world.run([block('c1', 's')], { step: { step: 2 } })
    expect(second).toEqual({ outcome: 'owed' })
  })

  test("a fault at c1's commit: the dispatched c2 and c3 are awaited, then all three close TOOL_SCHEDULER_FAILED", async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register(tool('s', { ...safe, execute: gate.body }))
    injectSchedulerFault(world.agent, { at: 'commit', callId: 'c1', error: new Error('commit exploded') })
    let done = false
    const running = world.run([block('c1', 's'), block('c2', 's'), block('c3', 's')]).then((report) => {
      done = true
      return report
    })
    await settle()
    gate.release('c1')
    await settle()
    expect(done).toBe(false)
    gate.release('c3')
    await settle()
    expect(done).toBe(false)
    gate.release('c2')
    const report = await running
    expect((report.failure as Error).message).toBe('commit exploded')
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/call c2',
      'tool/call c3',
      'tool/result c1 TOOL_SCHEDULER_FAILED',
      'tool/result c2 TOOL_SCHEDULER_FAILED',
      'tool/result c3 TOOL_SCHEDULER_FAILED',
    ])
    expect(world.live.results.map((payload) => payload.call.callId)).toEqual(['c1', 'c3', 'c2'])
    append(world.session, SE(1, 1))
  })

  test('calls settled before the failing commit are committed normally, and no post-execute runs for the closers', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('s'))
    const postExecuted: string[] = []
    world.ctx.on('tools/post-execute', ({ call }) => void postExecuted.push(call.callId))
    injectSchedulerFault(world.agent, { at: 'commit', callId: 'c2', error: new Error('commit exploded') })
    await world.run([block('c1', 's'), block('c2', 's'), block('c3', 's')])
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2 TOOL_SCHEDULER_FAILED',
      'tool/call c3',
      'tool/result c3 TOOL_SCHEDULER_FAILED',
    ])
    expect(postExecuted).toEqual(['c1', 'c2'])
  })

  test('a closing append that throws stops the writing; the report keeps the first failure', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('s'))
    const first = new Error('first')
    injectSchedulerFault(world.agent, { at: 'start', callId: 'c2', error: first })
    injectSchedulerFault(world.agent, { at: 'commit', callId: 'c3', error: new Error('closing failed') })
    const report = await world.run([block('c1', 's'), block('c2', 's'), block('c3', 's'), block('c4', 's')])
    expect(report.failure).toBe(first)
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2 TOOL_SCHEDULER_FAILED',
      'tool/call c3',
    ])
    expect(world.session.turnState().pendingCallIds).toEqual(['c3', 'c4'])
  })

  test('an approval broker that rejects is a scheduler failure: the call, already logged, gets only its closing result', async () => {
    const world = await schedulerWorld()
    let ran = false
    world.tools.register(tool('t', { needsApproval: () => true, execute: () => void (ran = true) }))
    const error = new Error('approval store down')
    const report = await world.run([block('c1', 't'), block('c2', 't')], {
      step: {
        approvals: {
          pending: [],
          approve: () => 'decided',
          ask: () => Promise.reject(error),
        },
      },
    })
    expect(ran).toBe(false)
    expect(report.failure).toBe(error)
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1 TOOL_SCHEDULER_FAILED',
      'tool/call c2',
      'tool/result c2 TOOL_SCHEDULER_FAILED',
    ])
  })

  test('an insertContext that throws fails the step after the tool/result was logged', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: () => toolResult({ content: 'ok', additionalContexts: ['note'] }) }))
    const error = new Error('inbox closed')
    const report = await world.run([block('c1', 't'), block('c2', 't')], {
      step: {
        insertContext: (_message: ToolContextMessage) => {
          throw error
        },
      },
    })
    expect(report.failure).toBe(error)
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2 TOOL_SCHEDULER_FAILED',
    ])
  })

  test('a missing tool registry closes every call TOOL_SCHEDULER_FAILED', async () => {
    const world = await schedulerWorld()
    const bare = world.harness.ctx.child('bare', { isolate: [services.tools] })
    const report = await world.run([block('c1', 't'), block('c2', 't')], { step: { ctx: bare } })
    expect(ServiceMissingError.is(report.failure)).toBe(true)
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1 TOOL_SCHEDULER_FAILED',
      'tool/call c2',
      'tool/result c2 TOOL_SCHEDULER_FAILED',
    ])
  })
})

describe('runToolCalls refuses malformed arguments (a rejection, not a scheduler failure)', () => {
  /** A world whose tool `t` counts its runs. */
  async function countingWorld(): Promise<{ world: Awaited<ReturnType<typeof schedulerWorld>>; runs: () => number }> {
    const world = await schedulerWorld()
    let ran = 0
    world.tools.register(
      tool('t', {
        execute: () => {
          ran++
          return 'ran'
        },
      }),
    )
    return { world, runs: () => ran }
  }

  /** Nothing ran, nothing was logged past `length`, no live result, no checkpoint. */
  async function expectNothingHappened(
    world: Awaited<ReturnType<typeof schedulerWorld>>,
    runs: () => number,
    length: number,
  ): Promise<void> {
    await settle()
    expect(runs()).toBe(0)
    expect(world.session.length).toBe(length)
    expect(world.live.results).toEqual([])
    expect(world.checkpoints.count).toBe(0)
  }

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['one block', { type: 'tool-call', id: 'c1', name: 't', arguments: '{}' }],
    ['an array-like object', { length: 0 }],
  ])('calls that are %s: InvalidArgumentError argument calls; nothing is logged or run', async (_name, calls) => {
    const { world, runs } = await countingWorld()
    const length = world.session.length
    let promise: Promise<unknown> | undefined
    expect(() => {
      promise = runToolCalls(calls as never, world.stepContext())
    }).not.toThrow()
    const error = expectError(
      await rejectionOf(promise as Promise<unknown>),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'calls' },
    )
    expect(error.value).toBe(calls)
    await expectNothingHappened(world, runs, length)
  })

  test('a step that is not an object with a ctx: InvalidArgumentError argument step; nothing is logged or run', async () => {
    const { world, runs } = await countingWorld()
    const calls = [block('c1', 't')]
    append(world.session, AM(1, 1, ...(calls as unknown as JsonObject[])))
    const length = world.session.length
    const { ctx: _ctx, ...withoutCtx } = world.stepContext()
    for (const step of [
      undefined,
      null,
      'step',
      withoutCtx,
      { ...world.stepContext(), ctx: null },
      { ...world.stepContext(), ctx: 'agent' },
    ]) {
      const error = expectError(
        await rejectionOf(runToolCalls(calls, step as never)),
        InvalidArgumentError,
        'INVALID_ARGUMENT',
        { argument: 'step' },
      )
      expect(error.value).toBe(step)
    }
    await expectNothingHappened(world, runs, length)
    expect(await runToolCalls(calls, world.stepContext())).toEqual({ outcome: 'owed' })
    expect(runs()).toBe(1)
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/result c1'])
    expect(resultText(world.session, 'c1')).toBe('ran')
  })

  test('calls are checked before the step', async () => {
    expectError(
      await rejectionOf(runToolCalls(null as never, null as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'calls' },
    )
  })
})

describe('injectSchedulerFault', () => {
  test('stores the fault on the agent under a non-enumerable Symbol.for key', async () => {
    const world = await schedulerWorld()
    injectSchedulerFault(world.agent, { at: 'start', callId: 'c1', error: new Error('x') })
    const key = Symbol.for('yoke.schedulerFault')
    const descriptor = Object.getOwnPropertyDescriptor(world.agent, key)
    expect(descriptor?.enumerable).toBe(false)
    expect(Object.keys(world.agent)).toEqual(['id', 'session'])
    expect(JSON.stringify(Object.keys(world.agent))).not.toContain('fault')
  })

  test.each([
    ['a bad site', { at: 'middle', callId: 'c1', error: 1 }, 'options.at'],
    ['an empty call id', { at: 'start', callId: '', error: 1 }, 'options.callId'],
    ['null options', null, 'options'],
    ['missing options', undefined, 'options'],
    ['options that are a string', 'start', 'options'],
    ['an unknown key', { at: 'start', callId: 'c1', error: 1, bogus: 1 }, 'options.bogus'],
  ])('rejects %s with InvalidArgumentError', async (_label, options, argument) => {
    const world = await schedulerWorld()
    expectError(
      thrownBy(() => injectSchedulerFault(world.agent, options as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument },
    )
  })

  test('rejects a frozen agent', async () => {
    const world = await schedulerWorld()
    const frozen = Object.freeze({ id: world.session.id, session: world.session })
    expectError(
      thrownBy(() => injectSchedulerFault(frozen, { at: 'start', callId: 'c1', error: 1 })),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'agent' },
    )
  })
})
