/**
 * The approval broker's routing and failure paths: scoped `approval/request`
 * listeners, failed appends, bad broker options, bad ask options and ids, the bounded record of
 * decided ids.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import {
  ApprovalNotPendingError,
  createApprovalBroker,
  InvalidArgumentError,
  InvalidOptionsError,
  StructureError,
} from 'yoke'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { SE } from '../session/builders.js'
import { appendAll, expectError } from '../session/session-helpers.js'
import { agentOn, approvalEvents, callOf, closeHarnesses, flush, setup } from './approval-helpers.js'

afterEach(closeHarnesses)

describe('routing and failures', () => {
  test("an agent context's listener hears only that agent's requests; a harness listener hears both", async () => {
    const { agent, broker, ctx, harness } = await setup()
    const other = agentOn(harness, 'agent-2')
    const heard: string[] = []
    harness.on('approval/request', (payload, next) => {
      heard.push(`harness:${payload.agent.id}`)
      return next()
    })
    ctx.on('approval/request', (payload) => {
      heard.push(`agent-1:${payload.agent.id}`)
      return { kind: 'allow' }
    })
    expect(await other.broker.ask(callOf(other.agent), { mode: 'auto' })).toEqual({
      outcome: 'denied',
      by: 'default',
      reason: 'no approver answered',
    })
    expect(await broker.ask(callOf(agent), { mode: 'auto' })).toEqual({ outcome: 'allowed', by: 'listener' })
    expect(heard).toEqual([`harness:${other.agent.id}`, `harness:${agent.id}`, `agent-1:${agent.id}`])
  })

  test('a failed approval/asked append rejects the ask; nothing is pending', async () => {
    const { agent, broker, session } = await setup()
    appendAll(session, [SE(1, 1)])
    expectError(await rejectionOf(broker.ask(callOf(agent), { mode: 'manual' })), StructureError, 'NO_OPEN_STEP')
    expect(broker.pending).toEqual([])
    expect(approvalEvents(session)).toEqual([])
  })

  test('a failed approval/decided append rejects the ask and is rethrown by the approve() that caused it', async () => {
    const { agent, broker, session } = await setup()
    const outcome = broker.ask(callOf(agent), { mode: 'manual' })
    await flush()
    appendAll(session, [SE(1, 1)])
    expectError(
      thrownBy(() => broker.approve('a1', { kind: 'allow' })),
      StructureError,
      'NO_OPEN_STEP',
    )
    expectError(await rejectionOf(outcome), StructureError, 'NO_OPEN_STEP')
    expect(broker.approve('a1', { kind: 'allow' })).toBe('already-decided')
  })

  test.each([
    ['an unknown mode', { mode: 'sometimes' }, 'options.mode'],
    ['timeoutMs 0', { mode: 'manual', timeoutMs: 0 }, 'options.timeoutMs'],
    ['timeoutMs Infinity', { mode: 'manual', timeoutMs: Number.POSITIVE_INFINITY }, 'options.timeoutMs'],
  ])(
    'ask rejects %s with InvalidArgumentError (its argument named) and logs nothing',
    async (_name, options, argument) => {
      const { agent, broker, session } = await setup()
      const error = await rejectionOf(broker.ask(callOf(agent), options as unknown as { mode: 'auto' }))
      expectError(error, InvalidArgumentError, 'INVALID_ARGUMENT', { argument })
      expect(approvalEvents(session)).toEqual([])
    },
  )

  test('approve with a non-string id throws InvalidArgumentError argument approvalId', async () => {
    const { broker } = await setup()
    expectError(
      thrownBy(() => broker.approve(7 as unknown as string, { kind: 'allow' })),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'approvalId',
      },
    )
  })

  test('the record of decided ids is bounded: the 1024 latest answer already-decided, older ones throw', async () => {
    const { agent, broker } = await setup()
    for (let index = 1; index <= 1025; index++)
      await broker.ask(callOf(agent, { callId: `c${index}` }), { mode: 'auto' })
    expect(broker.approve('a2', { kind: 'allow' })).toBe('already-decided')
    expect(broker.approve('a1025', { kind: 'allow' })).toBe('already-decided')
    expectError(
      thrownBy(() => broker.approve('a1', { kind: 'allow' })),
      ApprovalNotPendingError,
      'APPROVAL_NOT_PENDING',
    )
  })
})

describe('createApprovalBroker options', () => {
  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'agent-1'],
    ['an array', []],
  ])('options that are %s: InvalidOptionsError with one root issue', (_name, options) => {
    const error = expectError(
      thrownBy(() => createApprovalBroker(options as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        field: '',
        issues: [{ path: [], message: 'must be an options object { ctx, agent }' }],
      },
    )
    expect(error.value).toBe(options)
  })

  test('the context passed in place of the options: its own keys are unknown, ctx and agent are required', async () => {
    const { ctx } = await setup()
    const error = expectError(
      thrownBy(() => createApprovalBroker(ctx as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
    )
    expect(error.issues.every((issue) => issue.path.length === 1)).toBe(true)
    expect(error.issues.slice(-2)).toEqual([
      { path: ['ctx'], message: 'is required' },
      { path: ['agent'], message: 'is required' },
    ])
  })

  test('a missing ctx or agent is required; both missing are both reported, in key order', async () => {
    const { agent, ctx } = await setup()
    expectError(
      thrownBy(() => createApprovalBroker({} as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        field: 'ctx',
        value: undefined,
        issues: [
          { path: ['ctx'], message: 'is required' },
          { path: ['agent'], message: 'is required' },
        ],
      },
    )
    expectError(
      thrownBy(() => createApprovalBroker({ ctx } as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        issues: [{ path: ['agent'], message: 'is required' }],
      },
    )
    expectError(
      thrownBy(() => createApprovalBroker({ ctx: undefined, agent } as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        issues: [{ path: ['ctx'], message: 'is required' }],
      },
    )
  })

  test('an unknown key is refused with its value', async () => {
    const { agent, ctx } = await setup()
    expectError(
      thrownBy(() => createApprovalBroker({ ctx, agent, mode: 'manual' } as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        field: 'mode',
        value: 'manual',
        issues: [{ path: ['mode'], message: 'unknown option' }],
      },
    )
  })

  test.each([
    ['a plain object', {}],
    ['an object with get but no waterfall', { get: () => undefined }],
    ['null', null],
    ['a string', 'agent-1'],
  ])('a ctx that is %s is not a Context', async (_name, bad) => {
    const { agent } = await setup()
    const error = expectError(
      thrownBy(() => createApprovalBroker({ ctx: bad, agent } as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        issues: [{ path: ['ctx'], message: 'must be the agent context (a Context)' }],
      },
    )
    expect(error.value).toBe(bad)
  })

  test.each([
    ['null', null],
    ['a session id', 'session-1'],
    ['a number', 1],
  ])('an agent that is %s is not the agent object', async (_name, bad) => {
    const { ctx } = await setup()
    expectError(
      thrownBy(() => createApprovalBroker({ ctx, agent: bad } as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        value: bad,
        issues: [{ path: ['agent'], message: 'must be the agent object' }],
      },
    )
  })

  test('a refused broker logs nothing; good options still give a working broker', async () => {
    const { agent, ctx, session } = await setup()
    thrownBy(() => createApprovalBroker({ ctx, agent: 'x' } as never))
    expect(approvalEvents(session)).toEqual([])
    const broker = createApprovalBroker(Object.freeze({ ctx, agent }))
    expect(await broker.ask(callOf(agent), { mode: 'auto' })).toEqual({
      outcome: 'denied',
      by: 'default',
      reason: 'no approver answered',
    })
    expect(approvalEvents(session).map((event) => event.type)).toEqual(['approval/asked', 'approval/decided'])
  })
})
