/**
 * Approvals through the loop: `approval/asked` and
 * `approval/decided` in a real turn, `agent.pendingApprovals` and `agent.approve` in
 * `approvalMode: 'manual'`, `approvalTimeoutMs` on the harness clock, and cancellation while an
 * approval is pending, checked through the log, the next request and the turn's end reason.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { type AgentOptions, type ApprovalDecision, ApprovalNotPendingError, InvalidArgumentError } from 'yoke'
import { call, text } from 'yoke/testing'
import { thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'
import {
  afterFirstAnchor,
  eventsOf,
  type LoopWorld,
  loopLog,
  loopWorld,
  rawTool,
  requestToolResults,
  settle,
  turnEnds,
  until,
} from './loop-helpers.js'

/** A world whose tool `t` needs approval (by default) and counts its runs. */
async function approvalWorld(options: AgentOptions = {}, needsApproval: () => boolean | undefined = () => true) {
  const runs = { count: 0 }
  const t = rawTool('t', {
    needsApproval,
    execute: () => {
      runs.count++
      return 't ran'
    },
  })
  const world = await loopWorld([call('c1', 't', '{"path":"a"}'), text('done')], { tools: [t], options })
  return { ...world, runs }
}

/** The `approval/*` payloads, as `'<type> <json>'`. */
function approvalLog(world: LoopWorld): unknown[] {
  return world.agent.session.events
    .filter((event) => event.type.startsWith('approval/'))
    .map((event) => ({ type: event.type, ...(event.data as object) }))
}

describe("approval through the loop, 'auto' mode", () => {
  test('no listener: asked, then decided {denied, default}; the body does not run; the next request holds the TOOL_DENIED text', async () => {
    const world = await approvalWorld()
    const result = await world.agent.run('go')
    expect(result.reason).toEqual({ kind: 'completed' })
    expect(world.runs.count).toBe(0)
    const [asked] = approvalLog(world) as { approvalId: string }[]
    expect(approvalLog(world)).toEqual([
      {
        type: 'approval/asked',
        approvalId: asked?.approvalId,
        turn: 1,
        step: 1,
        callId: 'c1',
        toolName: 't',
        arguments: '{"path":"a"}',
      },
      {
        type: 'approval/decided',
        approvalId: asked?.approvalId,
        outcome: 'denied',
        by: 'default',
        reason: 'no approver answered',
      },
    ])
    expect(loopLog(world.agent, afterFirstAnchor(world.agent)).slice(0, 4)).toEqual([
      'tool/call c1',
      'approval/asked',
      'approval/decided',
      'tool/result c1 TOOL_DENIED',
    ])
    expect(requestToolResults(world.model.requests[1])).toEqual([
      'c1 error: Tool error (TOOL_DENIED): "t" was not approved: no approver answered',
    ])
  })

  test("a listener on agent.ctx returning {kind: 'allow'}: decided {allowed, listener}, the body runs", async () => {
    const world = await approvalWorld()
    const heard: unknown[] = []
    world.agent.ctx.on('approval/request', (payload) => {
      heard.push({ agent: payload.agent, callId: payload.call.callId, aborted: payload.signal.aborted })
      return { kind: 'allow' }
    })
    expect((await world.agent.run('go')).reason).toEqual({ kind: 'completed' })
    expect(heard).toEqual([{ agent: world.agent, callId: 'c1', aborted: false }])
    expect(world.runs.count).toBe(1)
    expect(approvalLog(world)[1]).toMatchObject({ type: 'approval/decided', outcome: 'allowed', by: 'listener' })
    expect(requestToolResults(world.model.requests[1])).toEqual(['c1: t ran'])
  })

  test('needsApproval returning undefined asks; returning false does not', async () => {
    const asks = await approvalWorld({}, () => undefined)
    await asks.agent.run('go')
    expect(eventsOf(asks.agent, 'approval/asked')).toHaveLength(1)
    expect(asks.runs.count).toBe(0)
    const skips = await approvalWorld({}, () => false)
    await skips.agent.run('go')
    expect(approvalLog(skips)).toEqual([])
    expect(skips.runs.count).toBe(1)
  })
})

describe("approval through the loop, 'manual' mode", () => {
  test("pendingApprovals lists the ask; approve(deny 'no') → 'decided' and TOOL_DENIED; a second approve → 'already-decided', nothing logged", async () => {
    const world = await approvalWorld({ approvalMode: 'manual' })
    const { agent } = world
    expect(agent.pendingApprovals).toEqual([])
    const running = agent.run('go')
    await until(() => agent.pendingApprovals.length > 0, 'the approval to be pending')
    await settle()
    const [pending] = agent.pendingApprovals
    expect(agent.pendingApprovals).toEqual([
      { approvalId: pending?.approvalId, callId: 'c1', toolName: 't', arguments: '{"path":"a"}' },
    ])
    const approvalId = pending?.approvalId as string
    expect(eventsOf(agent, 'approval/decided')).toEqual([])
    expect(agent.status).toBe('running')
    expectError(
      thrownBy(() => agent.approve('unknown', { kind: 'allow' })),
      ApprovalNotPendingError,
      'APPROVAL_NOT_PENDING',
      { approvalId: 'unknown' },
    )
    expectError(
      thrownBy(() => agent.approve(approvalId, { kind: 'maybe' } as unknown as ApprovalDecision)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'decision',
      },
    )
    expect(agent.pendingApprovals).toHaveLength(1)
    expect(agent.approve(approvalId, { kind: 'deny', reason: 'no' })).toBe('decided')
    expect((await running).reason).toEqual({ kind: 'completed' })
    expect(world.runs.count).toBe(0)
    expect(agent.pendingApprovals).toEqual([])
    expect(approvalLog(world)[1]).toEqual({
      type: 'approval/decided',
      approvalId,
      outcome: 'denied',
      by: 'host',
      reason: 'no',
    })
    expect(requestToolResults(world.model.requests[1])).toEqual([
      'c1 error: Tool error (TOOL_DENIED): "t" was not approved: no',
    ])
    const length = agent.session.length
    expect(agent.approve(approvalId, { kind: 'allow' })).toBe('already-decided')
    expect(agent.session.length).toBe(length)
    expect(eventsOf(agent, 'approval/decided')).toHaveLength(1)
  })

  test('approve(allow) → decided {allowed, host}: the body runs and the next request holds its result', async () => {
    const world = await approvalWorld({ approvalMode: 'manual' })
    const running = world.agent.run('go')
    await until(() => world.agent.pendingApprovals.length > 0, 'the approval to be pending')
    expect(world.agent.approve(world.agent.pendingApprovals[0]?.approvalId as string, { kind: 'allow' })).toBe(
      'decided',
    )
    expect((await running).reason).toEqual({ kind: 'completed' })
    expect(world.runs.count).toBe(1)
    expect(approvalLog(world)[1]).toMatchObject({ outcome: 'allowed', by: 'host' })
    expect(requestToolResults(world.model.requests[1])).toEqual(['c1: t ran'])
  })

  test('approvalTimeoutMs 50: denied by timeout exactly at 50 ms on the harness clock', async () => {
    const world = await approvalWorld({ approvalMode: 'manual', approvalTimeoutMs: 50 })
    const running = world.agent.run('go')
    await until(() => world.agent.pendingApprovals.length > 0, 'the approval to be pending')
    await world.clock.advance(49)
    await settle()
    expect(eventsOf(world.agent, 'approval/decided')).toEqual([])
    await world.clock.advance(1)
    expect((await running).reason).toEqual({ kind: 'completed' })
    expect(approvalLog(world)[1]).toMatchObject({
      outcome: 'denied',
      by: 'timeout',
      reason: 'no decision within 50 ms',
    })
    expect(requestToolResults(world.model.requests[1])).toEqual([
      'c1 error: Tool error (TOOL_DENIED): "t" was not approved: no decision within 50 ms',
    ])
    expect(world.runs.count).toBe(0)
  })

  test("cancelling while pending: decided {cancelled, cancel}, TOOL_ABORTED_BEFORE_DISPATCH, turn/end aborted; a later allow is 'already-decided'", async () => {
    const world = await approvalWorld({ approvalMode: 'manual' })
    const { agent } = world
    const running = agent.run('go')
    await until(() => agent.pendingApprovals.length > 0, 'the approval to be pending')
    const approvalId = agent.pendingApprovals[0]?.approvalId as string
    agent.cancel()
    const result = await running
    expect(result.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    expect(agent.pendingApprovals).toEqual([])
    expect(approvalLog(world)[1]).toEqual({ type: 'approval/decided', approvalId, outcome: 'cancelled', by: 'cancel' })
    expect(loopLog(agent, afterFirstAnchor(agent))).toEqual([
      'tool/call c1',
      'approval/asked',
      'approval/decided',
      'tool/result c1 TOOL_ABORTED_BEFORE_DISPATCH',
      'step/end',
      'turn/end',
    ])
    const length = agent.session.length
    expect(agent.approve(approvalId, { kind: 'allow' })).toBe('already-decided')
    expect(agent.session.length).toBe(length)
    await settle()
    expect(world.runs.count).toBe(0)
    expect(turnEnds(agent)).toEqual([{ turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } }])
    expect(world.model.requests).toHaveLength(1)
  })
})
