/**
 * Approvals at the broker level: a real harness and session with turn
 * 1 step 1 open, `approval/request` listeners registered through `harness.on`, a fake clock for
 * `'manual'` timeouts. Routing and failure paths: `approval-broker.test.ts`; the events' schemas:
 * `approval-events.test.ts`.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import { ApprovalNotPendingError, type ApprovalDecision, createApprovalBroker, InvalidArgumentError } from 'yoke'
import type { ApprovalRequestPayload } from '../../src/tools/index.js'
import { thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'
import { approvalEvents, asked, callOf, closeHarnesses, decided, flush, gate, setup } from './approval-helpers.js'

afterEach(closeHarnesses)

describe("'auto' mode", () => {
  test('no listener: approval/asked, then approval/decided {denied, by default}; the outcome reason is "no approver answered"', async () => {
    const { agent, broker, session } = await setup()
    const outcome = await broker.ask(callOf(agent), { mode: 'auto' })
    expect(outcome).toEqual({ outcome: 'denied', by: 'default', reason: 'no approver answered' })
    expect(Object.isFrozen(outcome)).toBe(true)
    expect(approvalEvents(session)).toEqual([
      asked(),
      decided({ outcome: 'denied', by: 'default', reason: 'no approver answered' }),
    ])
    expect(session.events.map((event) => event.type)).toEqual([
      'turn/start',
      'step/start',
      'approval/asked',
      'approval/decided',
    ])
    expect(broker.pending).toEqual([])
  })

  test('a listener returning {kind: allow} decides {allowed, by listener}; it sees agent, approvalId, the call, the reason and a live signal', async () => {
    const { agent, broker, harness, session } = await setup()
    const seen: ApprovalRequestPayload[] = []
    const aborted: boolean[] = []
    harness.on('approval/request', (payload) => {
      seen.push(payload)
      aborted.push(payload.signal.aborted)
      return { kind: 'allow' }
    })
    const call = callOf(agent)
    const outcome = await broker.ask(call, { mode: 'auto', reason: 'writes a file' })
    expect(outcome).toEqual({ outcome: 'allowed', by: 'listener' })
    expect(approvalEvents(session)).toEqual([
      asked({ reason: 'writes a file' }),
      decided({ outcome: 'allowed', by: 'listener' }),
    ])
    expect(seen).toHaveLength(1)
    const payload = seen[0] as ApprovalRequestPayload
    expect(payload.agent).toBe(agent)
    expect(payload.call).toBe(call)
    expect(payload.approvalId).toBe('a1')
    expect(payload.reason).toBe('writes a file')
    expect(Object.isFrozen(payload)).toBe(true)
    expect(aborted).toEqual([false])
    expect(payload.signal.aborted).toBe(true)
  })

  test('a listener deny keeps its reason; a deny without one gets "denied by an approval listener"', async () => {
    const { agent, broker, harness, session } = await setup()
    const answers: ApprovalDecision[] = [{ kind: 'deny', reason: 'looks risky' }, { kind: 'deny' }]
    harness.on('approval/request', () => answers.shift())
    expect(await broker.ask(callOf(agent), { mode: 'auto' })).toEqual({
      outcome: 'denied',
      by: 'listener',
      reason: 'looks risky',
    })
    expect(await broker.ask(callOf(agent, { callId: 'c2' }), { mode: 'auto' })).toEqual({
      outcome: 'denied',
      by: 'listener',
      reason: 'denied by an approval listener',
    })
    expect(approvalEvents(session).filter((event) => event.type === 'approval/decided')).toEqual([
      decided({ outcome: 'denied', by: 'listener', reason: 'looks risky' }),
      decided({ approvalId: 'a2', outcome: 'denied', by: 'listener', reason: 'denied by an approval listener' }),
    ])
  })

  test('listeners are middleware: one calling next() reaches the next listener; all calling next() is the default deny', async () => {
    const { agent, broker, harness } = await setup()
    const order: string[] = []
    harness.on('approval/request', (_payload, next) => {
      order.push('outer')
      return next()
    })
    const inner = harness.on('approval/request', () => {
      order.push('inner')
      return { kind: 'allow' }
    })
    expect(await broker.ask(callOf(agent), { mode: 'auto' })).toEqual({ outcome: 'allowed', by: 'listener' })
    expect(order).toEqual(['outer', 'inner'])
    await inner()
    expect(await broker.ask(callOf(agent, { callId: 'c2' }), { mode: 'auto' })).toEqual({
      outcome: 'denied',
      by: 'default',
      reason: 'no approver answered',
    })
  })

  test.each([
    [
      'a synchronous throw',
      () => {
        throw new Error('approver down')
      },
    ],
    ['a rejection', () => Promise.reject(new Error('approver down'))],
  ])(
    'a listener failure (%s) denies by error: "the approval listener failed: approver down"',
    async (_name, listener) => {
      const { agent, broker, harness, session } = await setup()
      harness.on('approval/request', listener)
      expect(await broker.ask(callOf(agent), { mode: 'auto' })).toEqual({
        outcome: 'denied',
        by: 'error',
        reason: 'the approval listener failed: approver down',
      })
      expect(approvalEvents(session)[1]).toEqual(
        decided({ outcome: 'denied', by: 'error', reason: 'the approval listener failed: approver down' }),
      )
    },
  )

  test.each([
    ['{ kind: maybe }', { kind: 'maybe' }, ' (kind is "maybe")'],
    ['a string', 'allow', ''],
    ['null', null, ''],
    ['an allow with a reason', { kind: 'allow', reason: 'x' }, ' (unknown key "reason")'],
    ['a deny with a numeric reason', { kind: 'deny', reason: 5 }, ' (reason is not a string)'],
  ])('an invalid listener result (%s) denies by error, naming the problem', async (_name, result, detail) => {
    const { agent, broker, harness, session } = await setup()
    harness.on('approval/request', () => result as unknown as ApprovalDecision)
    const reason = `the approval listener returned an invalid decision: must be { kind: 'allow' } or { kind: 'deny', reason?: string }${detail}`
    expect(await broker.ask(callOf(agent), { mode: 'auto' })).toEqual({ outcome: 'denied', by: 'error', reason })
    expect(approvalEvents(session)).toEqual([asked(), decided({ outcome: 'denied', by: 'error', reason })])
  })

  test('the call signal cancels a slow listener: {cancelled, by cancel}; the listener sees its signal abort and its late allow is ignored', async () => {
    const { agent, broker, harness, session } = await setup()
    const answer = gate<ApprovalDecision>()
    let signal: AbortSignal | undefined
    harness.on('approval/request', (payload) => {
      signal = payload.signal
      return answer.promise
    })
    const controller = new AbortController()
    const pending = broker.ask(callOf(agent, { signal: controller.signal }), { mode: 'auto' })
    await flush()
    expect(broker.pending.map((entry) => entry.approvalId)).toEqual(['a1'])
    controller.abort()
    expect(signal?.aborted).toBe(true)
    expect(await pending).toEqual({ outcome: 'cancelled', by: 'cancel' })
    answer.open({ kind: 'allow' })
    await flush()
    expect(approvalEvents(session)).toEqual([asked(), decided({ outcome: 'cancelled', by: 'cancel' })])
    expect(broker.approve('a1', { kind: 'allow' })).toBe('already-decided')
  })

  test('an already aborted call signal: asked, then cancelled at once, and no listener runs', async () => {
    const { agent, broker, harness, session } = await setup()
    let calls = 0
    harness.on('approval/request', () => {
      calls++
      return { kind: 'allow' }
    })
    const controller = new AbortController()
    controller.abort()
    expect(await broker.ask(callOf(agent, { signal: controller.signal }), { mode: 'auto' })).toEqual({
      outcome: 'cancelled',
      by: 'cancel',
    })
    expect(calls).toBe(0)
    expect(approvalEvents(session)).toEqual([asked(), decided({ outcome: 'cancelled', by: 'cancel' })])
  })
})

describe("'manual' mode", () => {
  test('pending lists the ask; approve(deny "no") → decided, {denied, host, no}; a second approve → already-decided, nothing logged', async () => {
    const { agent, broker, session } = await setup()
    const outcome = broker.ask(callOf(agent), { mode: 'manual', reason: 'outside cwd' })
    await flush()
    expect(broker.pending).toEqual([
      { approvalId: 'a1', callId: 'c1', toolName: 't', arguments: '{"path":"a"}', reason: 'outside cwd' },
    ])
    expect(Object.isFrozen(broker.pending)).toBe(true)
    expect(Object.isFrozen(broker.pending[0])).toBe(true)
    expect(approvalEvents(session)).toEqual([asked({ reason: 'outside cwd' })])
    expect(broker.approve('a1', { kind: 'deny', reason: 'no' })).toBe('decided')
    expect(await outcome).toEqual({ outcome: 'denied', by: 'host', reason: 'no' })
    expect(broker.pending).toEqual([])
    const length = session.length
    expect(broker.approve('a1', { kind: 'allow' })).toBe('already-decided')
    expect(session.length).toBe(length)
    expect(approvalEvents(session)).toEqual([
      asked({ reason: 'outside cwd' }),
      decided({ outcome: 'denied', by: 'host', reason: 'no' }),
    ])
  })

  test('approve(allow) → {allowed, by host}; a deny without a reason gets "denied by the host"', async () => {
    const { agent, broker } = await setup()
    const first = broker.ask(callOf(agent), { mode: 'manual' })
    await flush()
    expect(broker.approve('a1', { kind: 'allow' })).toBe('decided')
    expect(await first).toEqual({ outcome: 'allowed', by: 'host' })
    const second = broker.ask(callOf(agent, { callId: 'c2' }), { mode: 'manual' })
    await flush()
    broker.approve('a2', { kind: 'deny' })
    expect(await second).toEqual({ outcome: 'denied', by: 'host', reason: 'denied by the host' })
  })

  test('approve for an id never asked throws ApprovalNotPendingError (APPROVAL_NOT_PENDING, approvalId)', async () => {
    const { broker } = await setup()
    expectError(
      thrownBy(() => broker.approve('unknown', { kind: 'allow' })),
      ApprovalNotPendingError,
      'APPROVAL_NOT_PENDING',
      { approvalId: 'unknown' },
    )
  })

  test.each([
    ['{ kind: maybe }', { kind: 'maybe' }],
    ['null', null],
    ['an allow with a reason', { kind: 'allow', reason: 'x' }],
    ['a deny with a numeric reason', { kind: 'deny', reason: 5 }],
    ['an array', [{ kind: 'allow' }]],
  ])(
    'a malformed decision (%s) throws InvalidArgumentError argument decision; the approval stays pending',
    async (_name, decision) => {
      const { agent, broker, session } = await setup()
      void broker.ask(callOf(agent), { mode: 'manual' })
      await flush()
      const length = session.length
      expectError(
        thrownBy(() => broker.approve('a1', decision as unknown as ApprovalDecision)),
        InvalidArgumentError,
        'INVALID_ARGUMENT',
        { argument: 'decision' },
      )
      expect(session.length).toBe(length)
      expect(broker.pending.map((entry) => entry.approvalId)).toEqual(['a1'])
    },
  )

  test('without an answer the ask waits: a listener returning undefined does not decide', async () => {
    const { agent, broker, harness, session } = await setup()
    let heard = 0
    harness.on('approval/request', () => {
      heard++
      return undefined
    })
    const outcome = broker.ask(callOf(agent), { mode: 'manual' })
    await flush()
    expect(heard).toBe(1)
    expect(approvalEvents(session)).toEqual([asked()])
    broker.approve('a1', { kind: 'allow' })
    expect(await outcome).toEqual({ outcome: 'allowed', by: 'host' })
  })

  test('timeoutMs on the harness clock: denied by timeout "no decision within 30000 ms" exactly at 30000 ms', async () => {
    const { agent, broker, clock, session } = await setup()
    let settled = false
    const outcome = broker.ask(callOf(agent), { mode: 'manual', timeoutMs: 30_000 })
    void outcome.then(() => {
      settled = true
    })
    await flush()
    expect(clock.pending()).toEqual([{ dueAt: 31_000, delayMs: 30_000 }])
    await clock.advance(29_999)
    expect(settled).toBe(false)
    await clock.advance(1)
    expect(await outcome).toEqual({ outcome: 'denied', by: 'timeout', reason: 'no decision within 30000 ms' })
    expect(approvalEvents(session)).toEqual([
      asked(),
      decided({ outcome: 'denied', by: 'timeout', reason: 'no decision within 30000 ms' }),
    ])
    expect(session.at(3)?.time).toBe(31_000)
    expect(broker.approve('a1', { kind: 'allow' })).toBe('already-decided')
  })

  test('a host decision before the timeout cancels the timer and aborts a slow listener', async () => {
    const { agent, broker, clock, harness } = await setup()
    let signal: AbortSignal | undefined
    harness.on('approval/request', (payload) => {
      signal = payload.signal
      return new Promise<undefined>(() => {})
    })
    const outcome = broker.ask(callOf(agent), { mode: 'manual', timeoutMs: 5000 })
    await flush()
    expect(signal?.aborted).toBe(false)
    broker.approve('a1', { kind: 'allow' })
    expect(signal?.aborted).toBe(true)
    expect(clock.pending()).toEqual([])
    expect(await outcome).toEqual({ outcome: 'allowed', by: 'host' })
  })

  test('cancelling while pending: {cancelled, cancel}; approve allow afterwards → already-decided, nothing logged', async () => {
    const { agent, broker, session } = await setup()
    const controller = new AbortController()
    const outcome = broker.ask(callOf(agent, { signal: controller.signal }), { mode: 'manual', timeoutMs: 1000 })
    await flush()
    controller.abort()
    expect(await outcome).toEqual({ outcome: 'cancelled', by: 'cancel' })
    expect(broker.approve('a1', { kind: 'allow' })).toBe('already-decided')
    expect(approvalEvents(session)).toEqual([asked(), decided({ outcome: 'cancelled', by: 'cancel' })])
  })

  test('a listener answering after the host decided changes nothing: exactly one approval/decided', async () => {
    const { agent, broker, harness, session } = await setup()
    const answer = gate<ApprovalDecision>()
    harness.on('approval/request', () => answer.promise)
    const outcome = broker.ask(callOf(agent), { mode: 'manual' })
    await flush()
    broker.approve('a1', { kind: 'deny', reason: 'no' })
    answer.open({ kind: 'allow' })
    await flush()
    expect(await outcome).toEqual({ outcome: 'denied', by: 'host', reason: 'no' })
    expect(approvalEvents(session)).toEqual([asked(), decided({ outcome: 'denied', by: 'host', reason: 'no' })])
  })

  test('pending is in ask order and drops each decided approval', async () => {
    const { agent, broker } = await setup()
    void broker.ask(callOf(agent, { callId: 'c1' }), { mode: 'manual' })
    void broker.ask(callOf(agent, { callId: 'c2', name: 'u', arguments: '' }), { mode: 'manual' })
    await flush()
    expect(broker.pending).toEqual([
      { approvalId: 'a1', callId: 'c1', toolName: 't', arguments: '{"path":"a"}' },
      { approvalId: 'a2', callId: 'c2', toolName: 'u', arguments: '' },
    ])
    broker.approve('a2', { kind: 'allow' })
    expect(broker.pending.map((entry) => entry.callId)).toEqual(['c1'])
  })

  test('after a crash the ids are void: a new broker over the same session throws ApprovalNotPendingError', async () => {
    const { agent, broker, ctx } = await setup()
    void broker.ask(callOf(agent), { mode: 'manual' })
    await flush()
    const resumed = createApprovalBroker({ ctx, agent })
    expect(resumed.pending).toEqual([])
    expectError(
      thrownBy(() => resumed.approve('a1', { kind: 'allow' })),
      ApprovalNotPendingError,
      'APPROVAL_NOT_PENDING',
      { approvalId: 'a1' },
    )
  })
})
