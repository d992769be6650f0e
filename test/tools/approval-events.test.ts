/**
 * The durable approval events: the strict `approval/asked` / `approval/decided`
 * payload schemas and their step enclosure, exercised through `session.append` (typed errors,
 * nothing committed), and `registerApprovalEventTypes`.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  EventTypeError,
  type Harness,
  InvalidArgumentError,
  type JsonObject,
  type Session,
  SessionEventError,
  StructureError,
} from 'yoke'
import {
  approvalAskedEventDataSchema,
  approvalDecidedEventDataSchema,
  registerApprovalEventTypes,
} from '../../src/tools/index.js'
import { fakeIds } from 'yoke/testing'
import { thrownBy } from '../helpers/outcomes.js'
import { SE, SS, TS } from '../session/builders.js'
import { appendAll, expectError, expectRejects } from '../session/session-helpers.js'

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()))
})

/** A session with turn 1 step 1 open, on a default harness (whose `tools` entry registers the approval types). */
async function openStep(): Promise<Session> {
  const harness = await createHarness({ ids: fakeIds(), patches: [{ id: 'persistence', disabled: true }] })
  harnesses.push(harness)
  return appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
}

const validAsked: JsonObject = {
  approvalId: 'a1',
  turn: 1,
  step: 1,
  callId: 'c1',
  toolName: 't',
  arguments: '{"path":"a"}',
}

describe('approval/asked and approval/decided payloads', () => {
  test('valid payloads commit verbatim; both schemas are strict', async () => {
    const session = await openStep()
    expect(session.append('approval/asked', validAsked).data).toEqual(validAsked)
    expect(
      session.append('approval/asked', { ...validAsked, approvalId: 'a2', arguments: '', reason: 'r' }).data,
    ).toEqual({
      ...validAsked,
      approvalId: 'a2',
      arguments: '',
      reason: 'r',
    })
    for (const data of [
      { approvalId: 'a1', outcome: 'allowed', by: 'listener' },
      { approvalId: 'a1', outcome: 'allowed', by: 'host' },
      { approvalId: 'a1', outcome: 'denied', by: 'timeout', reason: 'no decision within 5 ms' },
      { approvalId: 'a1', outcome: 'denied', by: 'default' },
      { approvalId: 'a1', outcome: 'cancelled', by: 'cancel' },
    ]) {
      expect(session.append('approval/decided', data).data).toEqual(data)
    }
    expect(approvalAskedEventDataSchema.safeParse({ ...validAsked, extra: 1 }).success).toBe(false)
    expect(
      approvalDecidedEventDataSchema.safeParse({ approvalId: 'a1', outcome: 'allowed', by: 'host', note: 'x' }).success,
    ).toBe(false)
  })

  test.each([
    ['an empty approvalId', { ...validAsked, approvalId: '' }, 'data.approvalId'],
    ['turn 0', { ...validAsked, turn: 0 }, 'data.turn'],
    ['a fractional step', { ...validAsked, step: 1.5 }, 'data.step'],
    ['an empty callId', { ...validAsked, callId: '' }, 'data.callId'],
    ['a tool name with a space', { ...validAsked, toolName: 'read file' }, 'data.toolName'],
    ['parsed arguments instead of the raw text', { ...validAsked, arguments: { path: 'a' } }, 'data.arguments'],
    ['a numeric reason', { ...validAsked, reason: 5 }, 'data.reason'],
    ['an unknown key', { ...validAsked, outcome: 'allowed' }, 'data.outcome'],
  ])(
    'approval/asked with %s is refused with SessionEventError INVALID_PAYLOAD at its path',
    async (_name, data, path) => {
      const session = await openStep()
      expectRejects(session, () => session.append('approval/asked', data), SessionEventError, 'INVALID_PAYLOAD', {
        path,
        type: 'approval/asked',
      })
    },
  )

  test.each([
    ['a missing approvalId', { outcome: 'allowed', by: 'host' }, 'data.approvalId'],
    ['an unknown outcome', { approvalId: 'a1', outcome: 'maybe', by: 'host' }, 'data.outcome'],
    ['allowed by default', { approvalId: 'a1', outcome: 'allowed', by: 'default' }, 'data.by'],
    ['allowed with a reason', { approvalId: 'a1', outcome: 'allowed', by: 'host', reason: 'ok' }, 'data.reason'],
    ['denied by cancel', { approvalId: 'a1', outcome: 'denied', by: 'cancel' }, 'data.by'],
    ['a numeric denial reason', { approvalId: 'a1', outcome: 'denied', by: 'host', reason: 1 }, 'data.reason'],
    ['cancelled by the host', { approvalId: 'a1', outcome: 'cancelled', by: 'host' }, 'data.by'],
  ])(
    'approval/decided with %s is refused with SessionEventError INVALID_PAYLOAD at its path',
    async (_name, data, path) => {
      const session = await openStep()
      expectRejects(session, () => session.append('approval/decided', data), SessionEventError, 'INVALID_PAYLOAD', {
        path,
        type: 'approval/decided',
      })
    },
  )

  test.each(['approval/asked', 'approval/decided'])(
    '%s outside an open step is refused with StructureError NO_OPEN_STEP',
    async (type) => {
      const session = await openStep()
      appendAll(session, [SE(1, 1)])
      const data = type === 'approval/asked' ? validAsked : { approvalId: 'a1', outcome: 'cancelled', by: 'cancel' }
      expectRejects(session, () => session.append(type, data), StructureError, 'NO_OPEN_STEP')
    },
  )
})

describe('registerApprovalEventTypes', () => {
  async function bare(): Promise<Harness> {
    const harness = await createHarness({
      ids: fakeIds(),
      patches: [
        { id: 'persistence', disabled: true },
        { id: 'tools', disabled: true },
      ],
    })
    harnesses.push(harness)
    return harness
  }

  test('registers both types; a second registration throws DUPLICATE_EVENT_TYPE; the returned function removes both', async () => {
    const harness = await bare()
    expect(harness.sessions.eventTypes()).not.toContain('approval/asked')
    const unregister = registerApprovalEventTypes(harness.sessions)
    expect(harness.sessions.eventTypes()).toEqual(expect.arrayContaining(['approval/asked', 'approval/decided']))
    expectError(
      thrownBy(() => registerApprovalEventTypes(harness.sessions)),
      EventTypeError,
      'DUPLICATE_EVENT_TYPE',
      { eventType: 'approval/asked' },
    )
    unregister()
    expect(harness.sessions.eventTypes()).not.toContain('approval/asked')
    expect(harness.sessions.eventTypes()).not.toContain('approval/decided')
  })

  test('both or neither: when approval/decided is taken, approval/asked is not left registered', async () => {
    const harness = await bare()
    harness.sessions.registerEventType('approval/decided')
    expectError(
      thrownBy(() => registerApprovalEventTypes(harness.sessions)),
      EventTypeError,
      'DUPLICATE_EVENT_TYPE',
      { eventType: 'approval/decided' },
    )
    expect(harness.sessions.eventTypes()).not.toContain('approval/asked')
  })

  test('something other than the session registry throws InvalidArgumentError argument sessions; nothing is registered', async () => {
    const harness = await bare()
    const before = harness.sessions.eventTypes()
    for (const sessions of [undefined, null, 'sessions', {}, harness, { registerEventType: 'approval/asked' }]) {
      const error = expectError(
        thrownBy(() => registerApprovalEventTypes(sessions as never)),
        InvalidArgumentError,
        'INVALID_ARGUMENT',
        {
          argument: 'sessions',
        },
      )
      expect(error.value).toBe(sessions)
    }
    expect(harness.sessions.eventTypes()).toEqual(before)
    registerApprovalEventTypes(harness.sessions)
    expect(harness.sessions.eventTypes()).toEqual(expect.arrayContaining(['approval/asked', 'approval/decided']))
  })
})
