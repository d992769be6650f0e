import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  interruptedTurnClosers,
  toolNotStartedText,
  toolOutcomeUnknownText,
} from '../../src/session/interrupted-turn-closers.js'
import type { JsonObject } from '../../src/session/json-value.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import { AM, type EventPlan, L1, SE, SS, TC, TE, TR, TS, UM, call, logOf, text } from './builders.js'
import { field, note, resultText } from './session-helpers.js'

function expectDeepFrozen(value: unknown): void {
  if (typeof value !== 'object' || value === null) return
  expect(Object.isFrozen(value)).toBe(true)
  for (const child of Object.values(value)) expectDeepFrozen(child)
}

const turnEnd = (turn: number, seq: number, time = 1000) => ({
  type: 'turn/end',
  seq,
  time,
  data: { turn, reason: { kind: 'interrupted' }, meta: { synthetic: true } },
})
const stepEnd = (turn: number, step: number, seq: number, time = 1000) => ({
  type: 'step/end',
  seq,
  time,
  data: { turn, step, meta: { synthetic: true } },
})

describe('interruptedTurnClosers', () => {
  test('returns nothing for an empty log or a log whose turns all ended', () => {
    expect(interruptedTurnClosers([])).toEqual([])
    expect(interruptedTurnClosers(logOf(L1()))).toEqual([])
  })

  test('reads only the last turn, and a turn/start without a valid turn does not start one', () => {
    const open = logOf([...L1(), TS(2), TE(2, 'completed'), TS(3), SS(3, 1), AM(3, 1, text('x'), call('c1'))])
    const n = open.length
    expect(interruptedTurnClosers(open).map((event) => [event.type, event.seq, field(event.data, 'turn')])).toEqual([
      ['tool/result', n, 3],
      ['step/end', n + 1, 3],
      ['turn/end', n + 2, 3],
    ])
    const last = open.at(-1) as SessionEvent
    const bogus: SessionEvent = { type: 'turn/start', seq: last.seq + 1, time: last.time, data: { turn: 0 } }
    expect(interruptedTurnClosers([...open, bogus]).map((event) => event.type)).toEqual([
      'tool/result',
      'step/end',
      'turn/end',
    ])
    const ended: SessionEvent = { type: 'turn/end', seq: last.seq + 1, time: last.time, data: { turn: 'x' } }
    expect(interruptedTurnClosers([...open, ended])).toEqual([])
  })

  test('closes an open step and turn', () => {
    expect(interruptedTurnClosers(logOf([TS(1), SS(1, 1)]))).toStrictEqual([stepEnd(1, 1, 2), turnEnd(1, 3)])
  })

  test('answers a requested, never started call with TOOL_NOT_STARTED', () => {
    const log = logOf([TS(2), SS(2, 1), AM(2, 1, text('x'), call('call-1'))], 7)
    const closers = interruptedTurnClosers(log)
    expect(closers.map((event) => [event.type, event.seq, event.time])).toEqual([
      ['tool/result', 3, 7],
      ['step/end', 4, 7],
      ['turn/end', 5, 7],
    ])
    const result = closers[0]!
    expect(field(result.data, 'turn')).toBe(2)
    expect(field(result.data, 'step')).toBe(1)
    expect(field(result.data, 'message', 'id')).toBe('interrupted:call-1:3')
    expect(field(result.data, 'message', 'source', 'callId')).toBe('call-1')
    const content = field(result.data, 'message', 'content')
    expect(Array.isArray(content) && field(content[0], 'isError')).toBe(true)
    expect(field(result.data, 'error')).toEqual({ name: 'InterruptedToolCallError', code: 'TOOL_NOT_STARTED' })
    expect(field(result.data, 'meta')).toEqual({ synthetic: true })
    expect(result.surfaceOp).toBe('append')
    expect('sourceEventSeqs' in result).toBe(false)
    expect(resultText(result)).toBe(toolNotStartedText)
    expect(interruptedTurnClosers(log)).toEqual(closers)
  })

  test('answers only the unanswered call of a partly answered step', () => {
    const log = logOf([
      TS(1),
      SS(1, 1),
      AM(1, 1, call('call-a'), call('call-b')),
      TC(1, 1, 'call-a'),
      TR(1, 1, 'call-a', 3),
    ])
    const closers = interruptedTurnClosers(log)
    expect(closers.map((event) => [event.type, event.seq])).toEqual([
      ['tool/result', 5],
      ['step/end', 6],
      ['turn/end', 7],
    ])
    expect(field(closers[0]!.data, 'message', 'source', 'callId')).toBe('call-b')
    expect(field(closers[0]!.data, 'error', 'code')).toBe('TOOL_NOT_STARTED')
  })

  test('answers a started call with TOOL_OUTCOME_UNKNOWN sourced from its tool/call', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1')])
    const [result, ...rest] = interruptedTurnClosers(log)
    expect(result?.type).toBe('tool/result')
    expect(result?.sourceEventSeqs).toEqual([3])
    expect(field(result?.data, 'error', 'code')).toBe('TOOL_OUTCOME_UNKNOWN')
    expect(resultText(result!)).toContain('may already have changed something')
    expect(resultText(result!)).toContain('check the current state first or ask the user')
    expect(rest.map((event) => event.type)).toEqual(['step/end', 'turn/end'])
  })

  test('answers an orphan tool/call without a block', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, text('x')), TC(1, 1, 'o1')])
    expect(interruptedTurnClosers(log)).toStrictEqual([
      {
        type: 'tool/result',
        seq: 4,
        time: 1000,
        data: {
          turn: 1,
          step: 1,
          message: {
            id: 'interrupted:o1:4',
            role: 'user',
            source: { kind: 'tool', callId: 'o1' },
            content: [
              {
                type: 'tool-result',
                toolCallId: 'o1',
                isError: true,
                content: [{ type: 'text', text: toolOutcomeUnknownText }],
              },
            ],
          },
          error: { name: 'InterruptedToolCallError', code: 'TOOL_OUTCOME_UNKNOWN' },
          meta: { synthetic: true },
        },
        surfaceOp: 'append',
        sourceEventSeqs: [3],
      },
      stepEnd(1, 1, 5),
      turnEnd(1, 6),
    ])
  })

  test('exports the two closer result texts verbatim', () => {
    expect(toolNotStartedText).toBe(
      'This tool call never started: the session stopped before the call was recorded, so nothing ran. ' +
        'Call the tool again if you still need its result.',
    )
    expect(toolOutcomeUnknownText).toBe(
      'This tool call started, but the session stopped before its result was saved, so the outcome is ' +
        'unknown and it may already have changed something. Do not simply repeat it: call it again only ' +
        'if it just reads or is safe to repeat; otherwise check the current state first or ask the user.',
    )
  })

  test('writes keys in envelope order', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('a')), TC(1, 1, 'a'), AM(1, 1, call('b'))])
    const closers = interruptedTurnClosers(log)
    expect(closers.map((event) => Object.keys(event))).toEqual([
      ['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs'],
      ['type', 'seq', 'time', 'data', 'surfaceOp'],
      ['type', 'seq', 'time', 'data'],
      ['type', 'seq', 'time', 'data'],
    ])
    expect(Object.keys(closers[0]!.data as JsonObject)).toEqual(['turn', 'step', 'message', 'error', 'meta'])
    expect(Object.keys(field(closers[0]!.data, 'message') as JsonObject)).toEqual(['id', 'role', 'source', 'content'])
  })

  test('is deterministic and returns fresh objects on every call', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('a'), call('b')), TC(1, 1, 'b')])
    const first = interruptedTurnClosers(log)
    const second = interruptedTurnClosers(log)
    expect(second).toStrictEqual(first)
    expect(second).not.toBe(first)
    first.forEach((event, index) => {
      expect(second[index]).not.toBe(event)
      expect(second[index]?.data).not.toBe(event.data)
    })
  })

  test('deep-freezes every closer and leaves the log untouched', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('a')), TC(1, 1, 'a'), TC(1, 1, 'o')])
    const before = structuredClone(log)
    const closers = interruptedTurnClosers(log)
    expect(closers).toHaveLength(4)
    for (const event of closers) expectDeepFrozen(event)
    expect(log).toStrictEqual(before)
  })

  test('writes only turn/end when the turn is open but no step is', () => {
    expect(interruptedTurnClosers(logOf([TS(1)]))).toStrictEqual([turnEnd(1, 1)])
    const log = logOf([...L1(), TS(2), SS(2, 1), AM(2, 1, call('c1')), TC(2, 1, 'c1'), TR(2, 1, 'c1', 9), SE(2, 1)])
    expect(interruptedTurnClosers(log)).toStrictEqual([turnEnd(2, 12)])
  })

  test('returns nothing when the last turn ended and only log-only events follow', () => {
    expect(interruptedTurnClosers(logOf([...L1(), UM('later'), note(1), note(2)]))).toEqual([])
  })

  test('forgets calls of steps and turns that ended', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1'), TR(1, 1, 'c1', 3), SE(1, 1), SS(1, 2)])
    expect(interruptedTurnClosers(log)).toStrictEqual([stepEnd(1, 2, 7), turnEnd(1, 8)])
  })

  test('uses the last tool/call of a call for its sources', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1'), TC(1, 1, 'c1')])
    expect(interruptedTurnClosers(log)[0]?.sourceEventSeqs).toEqual([4])
  })

  test('keeps the first mention order: repeated ids and later tool/calls do not move a call', () => {
    const log = logOf([
      TS(1),
      SS(1, 1),
      AM(1, 1, call('a'), call('b'), call('a')),
      TC(1, 1, 'orphan'),
      TC(1, 1, 'b'),
      TC(1, 1, 'a'),
    ])
    const results = interruptedTurnClosers(log).filter((event) => event.type === 'tool/result')
    expect(results.map((event) => field(event.data, 'message', 'source', 'callId'))).toEqual(['a', 'b', 'orphan'])
    expect(results.map((event) => event.sourceEventSeqs)).toEqual([[5], [4], [3]])
    expect(results.map((event) => field(event.data, 'message', 'id'))).toEqual([
      'interrupted:a:6',
      'interrupted:b:7',
      'interrupted:orphan:8',
    ])
  })

  test('ignores replace-form messages: they neither request nor answer calls', () => {
    const replace = { op: 'replace', start: 2, end: 2 } as const
    const replacedAssistant: EventPlan = {
      ...AM(1, 1, call('r1')),
      options: { surfaceOp: replace, sourceEventSeqs: [2] },
    }
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('c1')), replacedAssistant])
    expect(interruptedTurnClosers(log).map((event) => field(event.data, 'message', 'source', 'callId'))).toEqual([
      'c1',
      undefined,
      undefined,
    ])
    const rewrite: EventPlan = { ...TR(1, 1, 'c1', 3), options: { surfaceOp: replace, sourceEventSeqs: [2] } }
    const withRewrite = logOf([TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1'), rewrite])
    expect(interruptedTurnClosers(withRewrite)[0]?.sourceEventSeqs).toEqual([3])
  })

  test('stamps the time of the last event on every closer', () => {
    const log = logOf([TS(1), SS(1, 1), AM(1, 1, call('c1'))]).map((event) =>
      Object.freeze({ ...event, time: event.seq === 2 ? -5 : 99 }),
    )
    expect(interruptedTurnClosers(log).map((event) => event.time)).toEqual([-5, -5, -5])
  })
})

/** A minimal checker of the turn/step structure rules; throws on the first violation. */
function checkStructure(events: readonly SessionEvent[]): { readonly openTurn: number | null } {
  let openTurn: number | null = null
  let openStep: number | null = null
  let nextTurn = 1
  let nextStep = 1
  const table = new Map<string, { started: boolean; answered: boolean }>()
  const fail = (event: SessionEvent, reason: string): never => {
    throw new Error(`${event.type} at seq ${event.seq}: ${reason}`)
  }
  const namesOpenStep = (event: SessionEvent) => {
    if (field(event.data, 'turn') !== openTurn || openStep === null || field(event.data, 'step') !== openStep) {
      fail(event, 'does not name the open step')
    }
  }
  events.forEach((event, index) => {
    if (event.seq !== index) fail(event, `seq is not ${index}`)
    const turn = field(event.data, 'turn')
    const append = event.surfaceOp === 'append'
    switch (event.type) {
      case 'turn/start':
        if (openTurn !== null || turn !== nextTurn) fail(event, 'turn open or wrong number')
        openTurn = nextTurn
        nextTurn += 1
        nextStep = 1
        break
      case 'turn/end':
        if (openTurn === null || turn !== openTurn || openStep !== null) fail(event, 'bad turn end')
        openTurn = null
        break
      case 'step/start':
        if (openTurn === null || turn !== openTurn || openStep !== null) fail(event, 'bad step start')
        if (field(event.data, 'step') !== nextStep) fail(event, 'wrong step number')
        openStep = nextStep
        nextStep += 1
        table.clear()
        break
      case 'step/end':
        namesOpenStep(event)
        if ([...table.values()].some((row) => !row.answered)) fail(event, 'unanswered call')
        openStep = null
        break
      case 'assistant/message': {
        namesOpenStep(event)
        if (!append) break
        const content = field(event.data, 'message', 'content')
        for (const block of Array.isArray(content) ? content : []) {
          const id = field(block, 'id')
          if (field(block, 'type') !== 'tool-call' || typeof id !== 'string') continue
          if (table.has(id)) fail(event, `duplicate call ${id}`)
          table.set(id, { started: false, answered: false })
        }
        break
      }
      case 'tool/call': {
        namesOpenStep(event)
        const callId = String(field(event.data, 'callId'))
        const row = table.get(callId) ?? { started: false, answered: false }
        if (row.started) fail(event, `duplicate call ${callId}`)
        table.set(callId, { ...row, started: true })
        break
      }
      case 'tool/result': {
        if (!append) break
        namesOpenStep(event)
        const callId = String(field(event.data, 'message', 'source', 'callId'))
        const row = table.get(callId)
        const notStarted = field(event.data, 'error', 'code') === 'TOOL_NOT_STARTED'
        if (row === undefined || row.answered || !(row.started || notStarted)) fail(event, `unknown call ${callId}`)
        table.set(callId, { started: row?.started ?? false, answered: true })
        break
      }
    }
  })
  return { openTurn }
}

/** A result for a call the producer never started (e.g. the turn was aborted first). */
function notStartedResult(turn: number, step: number, callId: string): EventPlan {
  const plan = TR(turn, step, callId, 0)
  const data = plan.data as JsonObject
  const message = data['message'] as JsonObject
  return {
    type: 'tool/result',
    data: {
      ...data,
      message: {
        ...message,
        content: [{ type: 'tool-result', toolCallId: callId, isError: true, content: [text('skipped')] }],
      },
      error: { name: 'AbortError', code: 'TOOL_NOT_STARTED' },
    },
    options: { surfaceOp: 'append' },
  }
}

interface StepShape {
  readonly userMessage: boolean
  readonly calls: readonly boolean[]
  readonly orphans: number
  readonly notes: number
}

const stepShape: fc.Arbitrary<StepShape> = fc.record({
  userMessage: fc.boolean(),
  calls: fc.array(fc.boolean(), { maxLength: 3 }),
  orphans: fc.integer({ min: 0, max: 1 }),
  notes: fc.integer({ min: 0, max: 1 }),
})

interface TurnShape {
  readonly steps: readonly StepShape[]
  readonly reason: string
}

const turnShape: fc.Arbitrary<TurnShape> = fc.record({
  steps: fc.array(stepShape, { maxLength: 3 }),
  reason: fc.constantFrom('completed', 'blocked', 'max-tokens'),
})

/** Producer order for each turn; every call of a step is answered before its `step/end`. */
function producerLog(turns: readonly TurnShape[]): EventPlan[] {
  const plans: EventPlan[] = []
  turns.forEach((shape, turnIndex) => {
    const turn = turnIndex + 1
    plans.push(TS(turn))
    shape.steps.forEach((step, stepIndex) => {
      const stepNumber = stepIndex + 1
      plans.push(SS(turn, stepNumber))
      if (step.userMessage) plans.push(UM(`${turn}-${stepNumber}`))
      const ids = step.calls.map((_, index) => `c${turn}-${stepNumber}-${index}`)
      plans.push(AM(turn, stepNumber, text('thinking'), ...ids.map((id) => call(id))))
      step.calls.forEach((logged, index) => {
        const id = ids[index]!
        if (!logged) {
          plans.push(notStartedResult(turn, stepNumber, id))
          return
        }
        plans.push(TC(turn, stepNumber, id))
        plans.push(TR(turn, stepNumber, id, plans.length - 1))
      })
      for (let index = 0; index < step.orphans; index += 1) {
        const id = `o${turn}-${stepNumber}-${index}`
        plans.push(TC(turn, stepNumber, id))
        plans.push(TR(turn, stepNumber, id, plans.length - 1))
      }
      for (let index = 0; index < step.notes; index += 1) plans.push(note(index))
      plans.push(SE(turn, stepNumber))
    })
    plans.push(TE(turn, shape.reason))
  })
  return plans
}

/** The call ids mentioned in the step open at the end of `events` (blocks and tool/calls). */
function openStepCalls(events: readonly SessionEvent[]): { readonly ids: Set<string>; readonly from: number } {
  let ids = new Set<string>()
  let from = -1
  for (const event of events) {
    if (event.type === 'step/start') {
      ids = new Set()
      from = event.seq
    } else if (event.type === 'step/end' || event.type === 'turn/end') {
      ids = new Set()
      from = -1
    } else if (event.type === 'assistant/message') {
      const content = field(event.data, 'message', 'content')
      for (const block of Array.isArray(content) ? content : []) {
        if (field(block, 'type') === 'tool-call') ids.add(String(field(block, 'id')))
      }
    } else if (event.type === 'tool/call') {
      ids.add(String(field(event.data, 'callId')))
    }
  }
  return { ids, from }
}

describe('interruptedTurnClosers property', () => {
  test('repairs any prefix of a valid producer log into a closed, valid log', () => {
    fc.assert(
      fc.property(fc.array(turnShape, { maxLength: 4 }), fc.nat(), (turns, cutSeed) => {
        const plans = producerLog(turns)
        const prefix = logOf(plans.slice(0, cutSeed % (plans.length + 1)), 42)
        const closers = interruptedTurnClosers(prefix)
        const repaired = [...prefix, ...closers]

        expect(repaired.every((event, index) => event.seq === index)).toBe(true)
        expect(closers.every((event) => event.time === 42)).toBe(true)
        expect(checkStructure(repaired).openTurn).toBeNull()

        const { ids, from } = openStepCalls(prefix)
        for (const id of ids) {
          const answers = repaired.filter(
            (event) =>
              event.seq > from &&
              event.type === 'tool/result' &&
              field(event.data, 'message', 'source', 'callId') === id,
          )
          expect(answers).toHaveLength(1)
        }
        expect(interruptedTurnClosers(repaired)).toEqual([])
      }),
      { numRuns: 300 },
    )
  })
})
