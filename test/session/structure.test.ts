import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type Harness,
  type JsonObject,
  type Session,
  SessionEventError,
  type SessionRegistry,
  StructureError,
} from 'yoke'
import { thrownBy } from '../helpers/outcomes.js'
import { AM, call, type EventPlan, L1, logOf, SE, SS, TC, TE, TR, TS, text, UM, withSources } from './builders.js'
import { append, appendAll, freshRegistry } from './session-helpers.js'

const H: JsonObject = { config: { provider: 'mock', model: 'm' } }

let harness: Harness
let sessions: SessionRegistry

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
})

afterEach(() => harness.close())

/** Runs a rejected append: returns its error after checking that nothing changed. */
function rejects(session: Session, plan: EventPlan): unknown {
  const events = session.events
  const length = session.length
  const nodes = [...session.surfaceNodes()]
  const messages = session.deriveMessages()
  const turnState = session.turnState()
  const error = thrownBy(() => append(session, plan))
  expect(session.length).toBe(length)
  expect(session.events).toBe(events)
  expect(session.surfaceNodes()).toEqual(nodes)
  expect(session.deriveMessages()).toBe(messages)
  expect(session.turnState()).toEqual(turnState)
  return error
}

function expectStructureError(error: unknown, fields: Record<string, unknown>): void {
  expect(StructureError.is(error), String(error)).toBe(true)
  expect(error).toMatchObject(fields)
}

/** A `tool/result` answering a call that never started: `isError`, `error.code 'TOOL_NOT_STARTED'`, no sources. */
function notStartedResult(turn: number, step: number, callId: string): EventPlan {
  return {
    type: 'tool/result',
    data: {
      turn,
      step,
      message: {
        id: `r-${callId}`,
        role: 'user',
        source: { kind: 'tool', callId },
        content: [
          { type: 'tool-result', toolCallId: callId, isError: true, content: [{ type: 'text', text: 'never ran' }] },
        ],
      },
      error: { name: 'X', code: 'TOOL_NOT_STARTED' },
    },
    options: { surfaceOp: 'append' },
  }
}

const requestContext = (): EventPlan => ({
  type: 'request/context',
  data: { provider: 'mock', model: 'm' },
  options: {},
})
const chunk = (turn: number, step: number, value: string): EventPlan => ({
  type: 'assistant/chunk',
  data: { turn, step, chunk: { type: 'text-delta', index: 0, text: value } },
  options: {},
})

describe('turn nesting and numbering', () => {
  test('a second turn/start while a turn is open is TURN_OPEN', () => {
    const session = sessions.create()
    append(session, TS(1))
    expectStructureError(rejects(session, TS(2)), { code: 'TURN_OPEN', sessionId: 's1', type: 'turn/start', seq: 1 })
  })

  test('a turn/end naming another turn is TURN_MISMATCH with expected and actual', () => {
    const session = sessions.create()
    append(session, TS(1))
    expectStructureError(rejects(session, TE(2, 'completed')), { code: 'TURN_MISMATCH', expected: 1, actual: 2 })
  })

  test('skipping a turn number is TURN_NUMBER with expected and actual', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), TE(1, 'completed')])
    expectStructureError(rejects(session, TS(3)), { code: 'TURN_NUMBER', expected: 2, actual: 3, seq: 2 })
  })

  test('the first turn must be turn 1', () => {
    const session = sessions.create()
    expectStructureError(rejects(session, TS(2)), { code: 'TURN_NUMBER', expected: 1, actual: 2 })
  })

  test('a first turn/end is NO_OPEN_TURN', () => {
    const session = sessions.create()
    expectStructureError(rejects(session, TE(1, 'completed')), { code: 'NO_OPEN_TURN', seq: 0 })
  })

  test('a request/context between turns is NO_OPEN_TURN, before any turn and after one', () => {
    const session = sessions.create()
    expectStructureError(rejects(session, requestContext()), { code: 'NO_OPEN_TURN' })
    appendAll(session, L1())
    expectStructureError(rejects(session, requestContext()), { code: 'NO_OPEN_TURN', seq: 6 })
  })

  test('a request/header between turns is NO_OPEN_TURN', () => {
    const session = sessions.create()
    appendAll(session, L1())
    const header: EventPlan = { type: 'request/header', data: { header: H, reason: 'initial' }, options: {} }
    expectStructureError(rejects(session, header), { code: 'NO_OPEN_TURN' })
  })

  test('a user/message between turns and a whole completed turn are accepted', () => {
    const session = sessions.create()
    append(session, UM('before'))
    appendAll(session, L1())
    append(session, UM('after'))
    expect(session.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(session.turnState()).toEqual({ openTurn: null, openStep: null, nextTurn: 2, pendingCallIds: [] })
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['u-before', 'u-hi', 'a-4', 'u-after'])
  })

  test('a completed turn leaves no open turn and numbers the next turn', () => {
    const session = sessions.create()
    appendAll(session, L1())
    expect(session.length).toBe(6)
    const state = session.turnState()
    expect(state).toEqual({ openTurn: null, openStep: null, nextTurn: 2, pendingCallIds: [] })
    expect(Object.isFrozen(state)).toBe(true)
    expect(Object.isFrozen(state.pendingCallIds)).toBe(true)
    append(session, TS(2))
    expect(session.turnState()).toMatchObject({ openTurn: 2, openStep: null, nextTurn: 3 })
  })
})

describe('step nesting and numbering', () => {
  test('turn/end with an open step is STEP_OPEN', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1)])
    expectStructureError(rejects(session, TE(1, 'completed')), { code: 'STEP_OPEN' })
  })

  test('step/start needs an open turn of the same number, no open step and the next number', () => {
    const session = sessions.create()
    expectStructureError(rejects(session, SS(1, 1)), { code: 'NO_OPEN_TURN' })
    append(session, TS(1))
    expectStructureError(rejects(session, SS(2, 1)), { code: 'TURN_MISMATCH', expected: 1, actual: 2 })
    expectStructureError(rejects(session, SS(1, 2)), { code: 'STEP_NUMBER', expected: 1, actual: 2 })
    append(session, SS(1, 1))
    expectStructureError(rejects(session, SS(1, 2)), { code: 'STEP_OPEN' })
    append(session, SE(1, 1))
    expectStructureError(rejects(session, SS(1, 1)), { code: 'STEP_NUMBER', expected: 2, actual: 1 })
    append(session, SS(1, 2))
    expect(session.turnState()).toMatchObject({ openTurn: 1, openStep: 2 })
  })

  test('step numbers restart at 1 in each turn', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), SE(1, 1), SS(1, 2), SE(1, 2), TE(1, 'completed'), TS(2)])
    expectStructureError(rejects(session, SS(2, 3)), { code: 'STEP_NUMBER', expected: 1, actual: 3 })
    append(session, SS(2, 1))
  })

  test('step-scoped events need the open step', () => {
    const session = sessions.create()
    append(session, TS(1))
    expectStructureError(rejects(session, SE(1, 1)), { code: 'NO_OPEN_STEP' })
    expectStructureError(rejects(session, chunk(1, 1, 'x')), { code: 'NO_OPEN_STEP' })
    expectStructureError(rejects(session, AM(1, 1, text('x'))), { code: 'NO_OPEN_STEP' })
    expectStructureError(rejects(session, TC(1, 1, 'c1')), { code: 'NO_OPEN_STEP' })
    append(session, SS(1, 1))
    const mismatch = { code: 'STEP_MISMATCH', expected: { turn: 1, step: 1 }, actual: { turn: 1, step: 2 } }
    expectStructureError(rejects(session, SE(1, 2)), mismatch)
    expectStructureError(rejects(session, chunk(1, 2, 'x')), mismatch)
    expectStructureError(rejects(session, AM(1, 2, text('x'))), mismatch)
    expectStructureError(rejects(session, TC(1, 2, 'c1')), mismatch)
    // A step-level event names the open step, turn included.
    const otherTurn = { code: 'STEP_MISMATCH', expected: { turn: 1, step: 1 }, actual: { turn: 2, step: 1 } }
    expectStructureError(rejects(session, AM(2, 1, text('x'))), otherTurn)
    expectStructureError(rejects(session, SE(2, 1)), otherTurn)
    expectStructureError(rejects(session, TC(2, 1, 'c1')), otherTurn)
  })

  test('between turns a step-level event is NO_OPEN_STEP', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), TE(1, 'completed')])
    for (const plan of [SE(1, 1), chunk(1, 1, 'x'), AM(1, 1, text('x')), TC(1, 1, 'c1')]) {
      expectStructureError(rejects(session, plan), { code: 'NO_OPEN_STEP', actual: { turn: 1, step: 1 } })
    }
  })

  test('a structure failure in a seed carries its index and creates nothing', () => {
    const seed = logOf([TS(1), SS(1, 1), SS(1, 2)])
    const error = thrownBy(() => sessions.create({ id: 'seeded', seed }))
    expectStructureError(error, { code: 'STEP_OPEN', index: 2 })
    expect(sessions.get('seeded')).toBeUndefined()
  })
})

describe('the tool-call table', () => {
  test('a result for an unknown call is UNKNOWN_TOOL_CALL; for another step STEP_MISMATCH', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1)])
    const unknown = rejects(session, TR(1, 1, 'ghost', 0))
    expectStructureError(unknown, { code: 'UNKNOWN_TOOL_CALL', callId: 'ghost', seq: 2, type: 'tool/result' })
    const message = (unknown as Error).message
    for (const part of ['s1', 'tool/result', 'seq 2', '"ghost"']) expect(message).toContain(part)
    expectStructureError(rejects(session, TR(1, 2, 'ghost', 0)), {
      code: 'STEP_MISMATCH',
      expected: { turn: 1, step: 1 },
      actual: { turn: 1, step: 2 },
    })
  })

  test('step/end with an unanswered started call is UNANSWERED_TOOL_CALL; answering it lets the step end', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1')])
    expect(session.turnState().pendingCallIds).toEqual(['c1'])
    expectStructureError(rejects(session, SE(1, 1)), { code: 'UNANSWERED_TOOL_CALL', callIds: ['c1'], seq: 4 })
    append(session, TR(1, 1, 'c1', 3))
    expect(session.turnState().pendingCallIds).toEqual([])
    append(session, SE(1, 1))
    expect(session.turnState()).toMatchObject({ openTurn: 1, openStep: null })
  })

  test('a requested call without tool/call also blocks step/end', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1'))])
    expectStructureError(rejects(session, SE(1, 1)), { code: 'UNANSWERED_TOOL_CALL', callIds: ['c1'] })
  })

  test('pendingCallIds and callIds list unanswered rows in table order', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('b'), call('a')), TC(1, 1, 'orphan'), TC(1, 1, 'a')])
    expect(session.turnState().pendingCallIds).toEqual(['b', 'a', 'orphan'])
    append(session, TR(1, 1, 'a', 4))
    expectStructureError(rejects(session, SE(1, 1)), { code: 'UNANSWERED_TOOL_CALL', callIds: ['b', 'orphan'] })
  })

  test('an orphan tool/call (no block) adds a row that must be answered', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), TC(1, 1, 'o1')])
    expectStructureError(rejects(session, SE(1, 1)), { code: 'UNANSWERED_TOOL_CALL', callIds: ['o1'] })
    append(session, TR(1, 1, 'o1', 2))
    append(session, SE(1, 1))
  })

  test('a repeated block id in one message is DUPLICATE_TOOL_CALL', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1)])
    expectStructureError(rejects(session, AM(1, 1, call('c1'), call('c1'))), {
      code: 'DUPLICATE_TOOL_CALL',
      callId: 'c1',
    })
  })

  test('a block id already requested in the step is DUPLICATE_TOOL_CALL', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1'))])
    expectStructureError(rejects(session, AM(1, 1, call('c1'))), { code: 'DUPLICATE_TOOL_CALL', callId: 'c1' })
  })

  test('a block id an orphan tool/call already put in the table is DUPLICATE_TOOL_CALL', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), TC(1, 1, 'o1')])
    expectStructureError(rejects(session, AM(1, 1, call('o1'))), { code: 'DUPLICATE_TOOL_CALL', callId: 'o1' })
  })

  test('a second tool/call for the same id is DUPLICATE_TOOL_CALL', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1')])
    expectStructureError(rejects(session, TC(1, 1, 'c1')), { code: 'DUPLICATE_TOOL_CALL', callId: 'c1' })
  })

  test('a second result for an answered call is UNKNOWN_TOOL_CALL', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1'), TR(1, 1, 'c1', 3)])
    const original = TR(1, 1, 'c1', 3)
    const data = original.data as JsonObject
    const renamed: EventPlan = {
      ...original,
      data: { ...data, message: { ...(data['message'] as JsonObject), id: 'r-c1-again' } },
    }
    expectStructureError(rejects(session, renamed), { code: 'UNKNOWN_TOOL_CALL', callId: 'c1' })
  })

  test('a tool-result rewrite (replace) needs an open turn only', () => {
    const session = sessions.create()
    appendAll(session, [
      TS(1),
      SS(1, 1),
      AM(1, 1, call('c1')),
      TC(1, 1, 'c1'),
      TR(1, 1, 'c1', 3),
      SE(1, 1),
      TE(1, 'completed'),
    ])
    const rewrite: EventPlan = {
      ...TR(1, 1, 'c1', 3),
      options: { surfaceOp: { op: 'replace', start: 4, end: 4 }, sourceEventSeqs: [4] },
    }
    expectStructureError(rejects(session, rewrite), { code: 'NO_OPEN_TURN' })
    append(session, TS(2))
    append(session, rewrite)
    expect(session.surfaceNodes()).toEqual([2, 8])
  })
})

describe('calls that never started', () => {
  test('a TOOL_NOT_STARTED error result answers a requested, unstarted call', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1'))])
    expectStructureError(rejects(session, notStartedResult(1, 1, 'c2')), { code: 'UNKNOWN_TOOL_CALL', callId: 'c2' })
    append(session, notStartedResult(1, 1, 'c1'))
    append(session, SE(1, 1))
    append(session, TE(1, 'interrupted'))
    expect(session.length).toBe(6)
    expect(session.turnState()).toEqual({ openTurn: null, openStep: null, nextTurn: 2, pendingCallIds: [] })
    expect(session.deriveMessages().map((message) => message.role)).toEqual(['assistant', 'user'])
  })

  test('in the order of the scenario: after c1 is answered and before the SE, a TOOL_NOT_STARTED result for c2 (no block) is UNKNOWN_TOOL_CALL', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1'))])
    const answered = append(session, notStartedResult(1, 1, 'c1'))
    expect(answered.seq).toBe(3)
    expect('sourceEventSeqs' in answered).toBe(false)
    expectStructureError(rejects(session, notStartedResult(1, 1, 'c2')), {
      code: 'UNKNOWN_TOOL_CALL',
      callId: 'c2',
      seq: 4,
      type: 'tool/result',
    })
    expect(append(session, SE(1, 1)).seq).toBe(4)
    expect(append(session, TE(1, 'interrupted')).seq).toBe(5)
  })

  test('without TOOL_NOT_STARTED, an unstarted call cannot be answered', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1'))])
    expectStructureError(rejects(session, withSources(TR(1, 1, 'c1', 2), [2])), {
      code: 'UNKNOWN_TOOL_CALL',
      callId: 'c1',
    })
  })
})

describe('message ids', () => {
  test('a user/message reusing an id is MESSAGE_ID_REUSED', () => {
    const session = sessions.create()
    append(session, UM('a'))
    expectStructureError(rejects(session, UM('a')), { code: 'MESSAGE_ID_REUSED', messageId: 'u-a', seq: 1 })
  })

  test('a replace-form user/message reusing an id is MESSAGE_ID_REUSED', () => {
    const session = sessions.create()
    append(session, UM('a'))
    const replace: EventPlan = {
      ...UM('a'),
      options: { surfaceOp: { op: 'replace', start: 0, end: 0 }, sourceEventSeqs: [0] },
    }
    expectStructureError(rejects(session, replace), { code: 'MESSAGE_ID_REUSED', messageId: 'u-a' })
  })

  test('assistant and tool-result ids share the space with user ids', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1')])
    const clash: EventPlan = {
      type: 'user/message',
      data: { id: 'a-2', role: 'user', content: [{ type: 'text', text: 'x' }], source: { kind: 'user' } },
      options: { surfaceOp: 'append' },
    }
    expectStructureError(rejects(session, clash), { code: 'MESSAGE_ID_REUSED', messageId: 'a-2' })
    append(session, TR(1, 1, 'c1', 3))
    const clashResult: EventPlan = { ...UM('x'), data: { ...(UM('x').data as JsonObject), id: 'r-c1' } }
    expectStructureError(rejects(session, clashResult), { code: 'MESSAGE_ID_REUSED', messageId: 'r-c1' })
  })

  test('ids inside agent/inbox/spliced do not count', () => {
    const session = sessions.create()
    const spliced: EventPlan = {
      type: 'agent/inbox/spliced',
      data: { target: 'next-turn', start: 0, inserted: [UM('a').data] },
      options: {},
    }
    append(session, spliced)
    append(session, UM('a'))
    expect(session.length).toBe(2)
  })

  test('a reused id in a seed is MESSAGE_ID_REUSED with its index', () => {
    expectStructureError(
      thrownBy(() => sessions.create({ seed: logOf([UM('a'), UM('b'), UM('a')]) })),
      { code: 'MESSAGE_ID_REUSED', index: 2 },
    )
    expect(sessions.list()).toEqual([])
  })
})

/** The canonical tool turn, seqs 0–16. */
function canonicalTurn(): EventPlan[] {
  const header: JsonObject = {
    config: { provider: 'mock', model: 'm', maxTokens: 100 },
    adapterDefaults: { maxTokens: true },
    system: 'be brief',
    tools: [{ name: 'echo', description: 'echoes', parameters: { type: 'object' } }],
  }
  return [
    TS(1),
    SS(1, 1),
    UM('q'),
    { type: 'request/header', data: { header, reason: 'initial' }, options: {} },
    { type: 'request/context', data: { provider: 'mock', model: 'm', contextWindow: 8000 }, options: {} },
    chunk(1, 1, 'let'),
    chunk(1, 1, ' me'),
    chunk(1, 1, ' check'),
    withSources(AM(1, 1, text('let me check'), call('c1')), [5, 6, 7]),
    TC(1, 1, 'c1'),
    TR(1, 1, 'c1', 9),
    SE(1, 1),
    SS(1, 2),
    chunk(1, 2, 'done'),
    withSources(AM(1, 2, text('done')), [13]),
    SE(1, 2),
    TE(1, 'completed'),
  ]
}

describe('the canonical tool turn', () => {
  test('is accepted as live appends', () => {
    const session = sessions.create()
    appendAll(session, canonicalTurn())
    expect(session.length).toBe(17)
    expect(session.events.map((event) => event.seq)).toEqual([...Array(17).keys()])
    expect(session.events.every((event) => event.time === 1000)).toBe(true)
    expect(session.deriveMessages().map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(session.surfaceNodes()).toEqual([2, 8, 10, 14])
    const seq3 = session.at(3)?.data as { readonly header: JsonObject }
    expect(session.requestHeader()).toEqual(seq3.header)
    expect(session.requestContext()).toEqual({ provider: 'mock', model: 'm', contextWindow: 8000 })
    expect(session.turnState()).toEqual({ openTurn: null, openStep: null, nextTurn: 2, pendingCallIds: [] })
  })

  test('is accepted as a seed and derives the same', () => {
    const live = sessions.create()
    appendAll(live, canonicalTurn())
    const seeded = sessions.create({ seed: logOf(canonicalTurn()) })
    expect(seeded.length).toBe(18)
    expect(seeded.events.slice(0, 17)).toEqual(live.events)
    expect(seeded.at(17)).toEqual({ type: 'session/end-seed', seq: 17, time: 1000, data: {} })
    expect(seeded.deriveMessages()).toEqual(live.deriveMessages())
    expect(seeded.deriveMessages().map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(seeded.requestHeader()).toEqual(live.requestHeader())
    const seededSeq3 = seeded.at(3)?.data as { readonly header: JsonObject }
    expect(seeded.requestHeader()).toEqual(seededSeq3.header)
  })

  test('a seed breaking the structure rules fails at that index', () => {
    const plans = canonicalTurn()
    const broken = logOf([...plans.slice(0, 11), TE(1, 'completed')])
    const error = thrownBy(() => sessions.create({ seed: broken }))
    expectStructureError(error, { code: 'STEP_OPEN', index: 11 })
    expect(SessionEventError.is(error)).toBe(false)
  })
})
