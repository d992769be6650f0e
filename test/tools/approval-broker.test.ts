/**
 * The approval broker's routing and failure paths (05-tools.md §9): scoped `approval/request`
 * listeners, failed appends, bad ask options and ids, the bounded record of decided ids.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import { ApprovalNotPendingError, InvalidArgumentError, StructureError } from 'yoke'
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
    expect(await other.broker.ask(callOf(other.agent), { mode: 'auto' })).toEqual({ outcome: 'denied', by: 'default', reason: 'no approver answered' })
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
    expectError(thrownBy(() => broker.approve('a1', { kind: 'allow' })), StructureError, 'NO_OPEN_STEP')
    expectError(await rejectionOf(outcome), StructureError, 'NO_OPEN_STEP')
    expect(broker.approve('a1', { kind: 'allow' })).toBe('already-decided')
  })

  test.each([
    ['an unknown mode', { mode: 'sometimes' }, 'options.mode'],
    ['timeoutMs 0', { mode: 'manual', timeoutMs: 0 }, 'options.timeoutMs'],
    ['timeoutMs Infinity', { mode: 'manual', timeoutMs: Number.POSITIVE_INFINITY }, 'options.timeoutMs'],
  ])('ask rejects %s with InvalidArgumentError (its argument named) and logs nothing', async (_name, options, argument) => {
    const { agent, broker, session } = await setup()
    const error = await rejectionOf(broker.ask(callOf(agent), options as unknown as { mode: 'auto' }))
    expectError(error, InvalidArgumentError, 'INVALID_ARGUMENT', { argument })
    expect(approvalEvents(session)).toEqual([])
  })

  test('approve with a non-string id throws InvalidArgumentError argument approvalId', async () => {
    const { broker } = await setup()
    expectError(thrownBy(() => broker.approve(7 as unknown as string, { kind: 'allow' })), InvalidArgumentError, 'INVALID_ARGUMENT', {
      argument: 'approvalId',
    })
  })

  test('the record of decided ids is bounded: the 1024 latest answer already-decided, older ones throw', async () => {
    const { agent, broker } = await setup()
    for (let index = 1; index <= 1025; index++) await broker.ask(callOf(agent, { callId: `c${index}` }), { mode: 'auto' })
    expect(broker.approve('a2', { kind: 'allow' })).toBe('already-decided')
    expect(broker.approve('a1025', { kind: 'allow' })).toBe('already-decided')
    expectError(thrownBy(() => broker.approve('a1', { kind: 'allow' })), ApprovalNotPendingError, 'APPROVAL_NOT_PENDING')
  })
})
