import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createSession, type Harness, interruptedTurnClosers, type SessionEvent, type SessionRegistry } from 'yoke'
import { toolNotStartedText, toolOutcomeUnknownText } from '../../src/session/index.js'
import { fakeClock } from 'yoke/testing'
import { isDeepFrozen } from '../helpers/outcomes.js'
import { AM, call, L1, logOf, SE, SS, TC, TR, TS, text, UM } from './builders.js'
import { field, freshRegistry, resultText } from './session-helpers.js'

let harness: Harness
let sessions: SessionRegistry

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
})

afterEach(() => harness.close())

/** Seeds `log` plus its closers into a live session and checks it ends balanced. */
function repairInto(log: readonly SessionEvent[]): {
  closers: SessionEvent[]
  seeded: ReturnType<SessionRegistry['create']>
} {
  const closers = interruptedTurnClosers(log)
  const seeded = sessions.create({ seed: [...log, ...closers] })
  expect(seeded.turnState().openTurn).toBeNull()
  expect(seeded.turnState().pendingCallIds).toEqual([])
  expect(seeded.length).toBe(log.length + closers.length + 1)
  expect(seeded.at(seeded.length - 1)?.type).toBe('session/end-seed')
  return { closers, seeded }
}

const NOT_STARTED_TEXT =
  'This tool call never started: the session stopped before the call was recorded, so nothing ran. Call the tool again if you still need its result.'
const OUTCOME_UNKNOWN_TEXT =
  'This tool call started, but the session stopped before its result was saved, so the outcome is unknown and it may already have changed something. Do not simply repeat it: call it again only if it just reads or is safe to repeat; otherwise check the current state first or ask the user.'

describe('closers of a closed or empty log', () => {
  test('no open turn gives nothing', () => {
    expect(interruptedTurnClosers([])).toEqual([])
    expect(interruptedTurnClosers(logOf(L1()))).toEqual([])
    expect(interruptedTurnClosers(logOf([UM('a'), UM('b')]))).toEqual([])
  })

  test('an open step and turn are closed as synthetic, at the last time', () => {
    const closers = interruptedTurnClosers(logOf([TS(1), SS(1, 1)]))
    expect(closers).toStrictEqual([
      { type: 'step/end', seq: 2, time: 1000, data: { turn: 1, step: 1, meta: { synthetic: true } } },
      {
        type: 'turn/end',
        seq: 3,
        time: 1000,
        data: { turn: 1, reason: { kind: 'interrupted' }, meta: { synthetic: true } },
      },
    ])
    for (const closer of closers) expect(Object.keys(closer)).toEqual(['type', 'seq', 'time', 'data'])
    expect(closers.every(isDeepFrozen)).toBe(true)
    repairInto(logOf([TS(1), SS(1, 1)]))
  })

  test('an open turn without a step gets only turn/end', () => {
    const log = logOf([...L1(), TS(2)])
    expect(interruptedTurnClosers(log)).toStrictEqual([
      {
        type: 'turn/end',
        seq: 7,
        time: 1000,
        data: { turn: 2, reason: { kind: 'interrupted' }, meta: { synthetic: true } },
      },
    ])
    repairInto(log)
  })

  test('a step that ended inside the open turn needs no step/end', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, text('x')), SE(1, 1)])
    expect(interruptedTurnClosers(log).map((event) => event.type)).toEqual(['turn/end'])
    repairInto(log)
  })
})

describe('a call without tool/call', () => {
  const log = (): SessionEvent[] =>
    logOf(
      [
        { type: 'turn/start', data: { turn: 2 }, options: {} },
        { type: 'step/start', data: { turn: 2, step: 1 }, options: {} },
        AM(2, 1, text('x'), call('call-1')),
      ],
      7,
    )

  test('gets a TOOL_NOT_STARTED result, then step/end and turn/end, all at time 7', () => {
    const closers = interruptedTurnClosers(log())
    expect(closers.map((event) => [event.type, event.seq, event.time])).toEqual([
      ['tool/result', 3, 7],
      ['step/end', 4, 7],
      ['turn/end', 5, 7],
    ])
    const result = closers[0] as SessionEvent
    expect(result).toStrictEqual({
      type: 'tool/result',
      seq: 3,
      time: 7,
      data: {
        turn: 2,
        step: 1,
        message: {
          id: 'interrupted:call-1:3',
          role: 'user',
          source: { kind: 'tool', callId: 'call-1' },
          content: [
            {
              type: 'tool-result',
              toolCallId: 'call-1',
              isError: true,
              content: [{ type: 'text', text: NOT_STARTED_TEXT }],
            },
          ],
        },
        error: { name: 'InterruptedToolCallError', code: 'TOOL_NOT_STARTED' },
        meta: { synthetic: true },
      },
      surfaceOp: 'append',
    })
    expect(result).not.toHaveProperty('sourceEventSeqs')
    expect(Object.keys(result)).toEqual(['type', 'seq', 'time', 'data', 'surfaceOp'])
    expect(closers[1]?.data).toStrictEqual({ turn: 2, step: 1, meta: { synthetic: true } })
    expect(closers[2]?.data).toStrictEqual({ turn: 2, reason: { kind: 'interrupted' }, meta: { synthetic: true } })
  })

  test('is deterministic and pure', () => {
    const input = log()
    const snapshot = structuredClone(input)
    const first = interruptedTurnClosers(input)
    const second = interruptedTurnClosers(input)
    expect(second).toStrictEqual(first)
    expect(second[0]).not.toBe(first[0])
    expect(input).toStrictEqual(snapshot)
    expect(first.every(isDeepFrozen)).toBe(true)
  })

  test('the exported closer texts are the documented texts', () => {
    expect(toolNotStartedText).toBe(NOT_STARTED_TEXT)
    expect(toolOutcomeUnknownText).toBe(OUTCOME_UNKNOWN_TEXT)
  })
})

describe('a partly answered step', () => {
  test('only the unanswered call gets a result', () => {
    const log = logOf([
      TS(1),
      SS(1, 1),
      AM(1, 1, call('call-a'), call('call-b')),
      TC(1, 1, 'call-a'),
      TR(1, 1, 'call-a', 3),
    ])
    const { closers, seeded } = repairInto(log)
    expect(closers.map((event) => [event.type, event.seq])).toEqual([
      ['tool/result', 5],
      ['step/end', 6],
      ['turn/end', 7],
    ])
    const result = closers[0] as SessionEvent
    expect(field(result.data, 'message', 'source', 'callId')).toBe('call-b')
    expect(field(result.data, 'message', 'id')).toBe('interrupted:call-b:5')
    expect(field(result.data, 'error')).toStrictEqual({ name: 'InterruptedToolCallError', code: 'TOOL_NOT_STARTED' })
    expect(result).not.toHaveProperty('sourceEventSeqs')
    expect(seeded.deriveMessages().map((message) => message.id)).toEqual(['a-2', 'r-call-a', 'interrupted:call-b:5'])
  })

  test('several unanswered calls are answered in order of first mention', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('b'), call('a')), TC(1, 1, 'a'), TC(1, 1, 'orphan')])
    const { closers } = repairInto(log)
    expect(closers.map((event) => field(event.data, 'message', 'source', 'callId') ?? event.type)).toEqual([
      'b',
      'a',
      'orphan',
      'step/end',
      'turn/end',
    ])
    expect(closers.map((event) => field(event.data, 'error', 'code') ?? null)).toEqual([
      'TOOL_NOT_STARTED',
      'TOOL_OUTCOME_UNKNOWN',
      'TOOL_OUTCOME_UNKNOWN',
      null,
      null,
    ])
    expect(closers.map((event) => event.sourceEventSeqs ?? null)).toEqual([null, [3], [4], null, null])
  })
})

describe('a started call without a result', () => {
  test('gets a TOOL_OUTCOME_UNKNOWN result pointing at its tool/call', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1')])
    const closers = interruptedTurnClosers(log)
    const result = closers[0] as SessionEvent
    expect(result.type).toBe('tool/result')
    expect(result.seq).toBe(4)
    expect(result.sourceEventSeqs).toEqual([3])
    expect(Object.keys(result)).toEqual(['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs'])
    expect(field(result.data, 'error', 'code')).toBe('TOOL_OUTCOME_UNKNOWN')
    expect(field(result.data, 'error', 'name')).toBe('InterruptedToolCallError')
    const message = resultText(result)
    expect(message).toBe(OUTCOME_UNKNOWN_TEXT)
    expect(message).toContain('may already have changed something')
    expect(message).toContain('check the current state first or ask the user')
    expect(closers.map((event) => event.type)).toEqual(['tool/result', 'step/end', 'turn/end'])

    const { seeded } = repairInto(log)
    const derived = seeded.deriveMessages()
    expect(derived.at(-1)).toStrictEqual(field(result.data, 'message'))
    expect(derived.map((entry) => entry.role)).toEqual(['assistant', 'user'])
  })

  test('a repaired log also seeds an unregistered session', () => {
    const log = logOf([TS(1), SS(1, 1), UM('q'), AM(1, 1, call('c1')), TC(1, 1, 'c1')])
    const session = createSession({
      id: 'check',
      seed: [...log, ...interruptedTurnClosers(log)],
      clock: fakeClock({ now: 1000 }),
    })
    expect(session.turnState().openTurn).toBeNull()
    expect(session.deriveMessages()).toHaveLength(3)
  })
})

describe('an orphan tool/call', () => {
  test('gets a result too', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, text('x')), TC(1, 1, 'o1')])
    const { closers } = repairInto(log)
    expect(closers.map((event) => [event.type, event.seq])).toEqual([
      ['tool/result', 4],
      ['step/end', 5],
      ['turn/end', 6],
    ])
    const result = closers[0] as SessionEvent
    expect(field(result.data, 'message', 'source', 'callId')).toBe('o1')
    expect(field(result.data, 'error', 'code')).toBe('TOOL_OUTCOME_UNKNOWN')
    expect(result.sourceEventSeqs).toEqual([3])
    expect(field(result.data, 'turn')).toBe(1)
    expect(field(result.data, 'step')).toBe(1)
  })
})

describe('repair of longer logs', () => {
  test('only the last, open turn is closed; earlier calls are not answered again', () => {
    const log = logOf([
      ...L1(),
      TS(2),
      SS(2, 1),
      AM(2, 1, call('c1')),
      TC(2, 1, 'c1'),
      TR(2, 1, 'c1', 9),
      SE(2, 1),
      SS(2, 2),
      AM(2, 2, call('c2')),
    ])
    const { closers } = repairInto(log)
    expect(closers.map((event) => [event.type, field(event.data, 'turn'), field(event.data, 'step') ?? null])).toEqual([
      ['tool/result', 2, 2],
      ['step/end', 2, 2],
      ['turn/end', 2, null],
    ])
    expect(closers[0]?.seq).toBe(14)
  })

  test('the repaired log is accepted after seeding and then takes live turns', () => {
    const log = logOf([TS(1), SS(1, 1), UM('q'), AM(1, 1, call('c1'))])
    const { seeded } = repairInto(log)
    expect(seeded.firstLiveSeq).toBe(7)
    const next = seeded.append('turn/start', { turn: 2 })
    expect(next.seq).toBe(8)
  })

  test('a closer time follows the last event, whatever the clock says', () => {
    const log = logOf([TS(1), SS(1, 1)], -42)
    expect(interruptedTurnClosers(log).map((event) => event.time)).toEqual([-42, -42])
  })
})
