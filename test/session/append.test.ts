import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type Clock,
  createSession,
  type Harness,
  type Session,
  SessionEventError,
  type SessionRegistry,
  SessionStateError,
  StructureError,
  SurfaceError,
} from 'yoke'
import type { HarnessErrorClass } from '../../src/errors/index.js'
import { isJsonValue } from '../../src/session/index.js'
import { fakeClock } from 'yoke/testing'
import { isDeepFrozen } from '../helpers/outcomes.js'
import { AM, call, type EventPlan, logOf, SE, SS, TC, TE, TR, TS, text, UM, withSources } from './builders.js'
import { append, appendAll, expectRejects, freshRegistry, replaceUM } from './session-helpers.js'

let harness: Harness
let sessions: SessionRegistry

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
})

afterEach(() => harness.close())

/** A clock whose `now()` returns the given values in turn (the last one repeats). */
function scriptedClock(values: readonly unknown[]): Clock & { readonly reads: () => number } {
  const timers = fakeClock({ now: 1000 })
  let reads = 0
  return {
    now: () => values[Math.min(reads++, values.length - 1)] as number,
    setTimer: (callback, delayMs) => timers.setTimer(callback, delayMs),
    reads: () => reads,
  }
}

function registerNote(): void {
  sessions.registerEventType('test/note')
}

describe('a tool turn appended live', () => {
  test('commits seqs 0–8 at time 1000 and derives user, assistant, user', () => {
    const session = sessions.create()
    appendAll(session, [
      TS(1),
      SS(1, 1),
      UM('hello'),
      {
        type: 'assistant/chunk',
        data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'let' } },
        options: {},
      },
      withSources(AM(1, 1, text('let me check'), call('c1')), [3]),
      TC(1, 1, 'c1'),
      TR(1, 1, 'c1', 5),
      SE(1, 1),
      TE(1, 'completed'),
    ])
    expect(session.length).toBe(9)
    expect(session.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    expect(session.events.map((event) => event.time)).toEqual(Array(9).fill(1000))
    const messages = session.deriveMessages()
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    expect(messages[1]?.content).toHaveLength(2)
    expect(messages[2]?.content[0]).toMatchObject({ type: 'tool-result', toolCallId: 'c1' })
    expect(session.at(4)?.sourceEventSeqs).toEqual([3])
    expect(session.turnState()).toEqual({ openTurn: null, openStep: null, nextTurn: 2, pendingCallIds: [] })
  })
})

describe('the committed envelope', () => {
  test('has exactly type, seq, time, data, ignorable?, surfaceOp?, sourceEventSeqs? in that order', () => {
    registerNote()
    const session = sessions.create()
    const start = append(session, TS(1))
    expect(Object.keys(start)).toEqual(['type', 'seq', 'time', 'data'])
    expect(start).toEqual({ type: 'turn/start', seq: 0, time: 1000, data: { turn: 1 } })
    const message = session.append(
      'user/message',
      { source: { kind: 'user' }, content: [{ type: 'text', text: 'x' }], role: 'user', id: 'u-x' },
      { sourceEventSeqs: [0], surfaceOp: 'append' },
    )
    expect(Object.keys(message)).toEqual(['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs'])
    expect(Object.keys(message.data as object)).toEqual(['source', 'content', 'role', 'id'])
    const ignorable = session.append('x/y', {}, { ignorable: true })
    expect(Object.keys(ignorable)).toEqual(['type', 'seq', 'time', 'data', 'ignorable'])
    expect(ignorable.ignorable).toBe(true)
  })

  test('the returned event is the stored one: at(seq), events[seq] and slice() share it', () => {
    const session = sessions.create()
    const start = append(session, TS(1))
    const step = append(session, SS(1, 1))
    expect(session.at(0)).toBe(start)
    expect(session.events[1]).toBe(step)
    const slice = session.slice(0)
    expect(slice).toEqual([start, step])
    expect(slice[0]).toBe(start)
    expect(Object.isFrozen(slice)).toBe(true)
    expect(session.at(2)).toBeUndefined()
  })

  test('later mutation of the caller’s data or options changes nothing', () => {
    const session = sessions.create()
    append(session, UM('a'))
    const data = { id: 'u-b', role: 'user', content: [{ type: 'text', text: 'b' }], source: { kind: 'user' } }
    const sources = [0]
    const options = { surfaceOp: 'append' as const, sourceEventSeqs: sources }
    const event = session.append('user/message', data as never, options)
    data.content[0]!.text = 'changed'
    data.id = 'u-changed'
    sources.push(7)
    expect(event.data).not.toBe(data)
    expect(event.data).toEqual({
      id: 'u-b',
      role: 'user',
      content: [{ type: 'text', text: 'b' }],
      source: { kind: 'user' },
    })
    expect(event.sourceEventSeqs).toEqual([0])
    expect(Object.isFrozen(data)).toBe(false)
    expect(session.deriveMessages()[1]).toBe(event.data)
  })

  test('time comes from the clock: negative and non-monotonic values are kept', () => {
    const clock = scriptedClock([1000, -5, 3000, 2000])
    const session = createSession({ id: 's1', clock })
    expect(session.header.createdAt).toBe(1000)
    const times = [TS(1), SS(1, 1), SE(1, 1)].map((plan) => append(session, plan).time)
    expect(times).toEqual([-5, 3000, 2000])
  })
})

describe('the append steps: the first failure throws and nothing changes', () => {
  test('step 1: a disposed session rejects SESSION_DISPOSED, before any other check', async () => {
    const session = sessions.create()
    append(session, TS(1))
    await sessions.dispose(session)
    expect(session.disposed).toBe(true)
    expectRejects(session, () => append(session, SS(1, 1)), SessionStateError, 'SESSION_DISPOSED', {
      sessionId: 's1',
      seq: 1,
    })
    expectRejects(session, () => session.append('', {}), SessionStateError, 'SESSION_DISPOSED')
    expectRejects(session, () => session.append('session/end-seed', {}), SessionStateError, 'SESSION_DISPOSED')
  })

  test('step 3: type must be a non-empty string and not session/end-seed', () => {
    const session = sessions.create()
    append(session, TS(1))
    expectRejects(session, () => session.append('', {}), SessionEventError, 'INVALID_ENVELOPE', {
      field: 'type',
      sessionId: 's1',
      seq: 1,
    })
    expectRejects(session, () => session.append(42 as unknown as string, {}), SessionEventError, 'INVALID_ENVELOPE', {
      field: 'type',
    })
    expectRejects(session, () => session.append('session/end-seed', {}), SessionEventError, 'RESERVED_EVENT_TYPE', {
      type: 'session/end-seed',
      seq: 1,
    })
  })

  test('step 3 comes before the options check', () => {
    const session = sessions.create()
    expectRejects(
      session,
      () => session.append('', {}, { bogus: true } as never),
      SessionEventError,
      'INVALID_ENVELOPE',
      { field: 'type' },
    )
  })

  test.each([
    ['an unknown key', { surfaceOp: 'append', bogus: 1 }, 'options.bogus'],
    ['ignorable false', { surfaceOp: 'append', ignorable: false }, 'options.ignorable'],
    ['ignorable on a core type', { surfaceOp: 'append', ignorable: true }, 'options.ignorable'],
  ])('step 4: %s → INVALID_ENVELOPE field %s', (_label, options, field) => {
    const session = sessions.create()
    expectRejects(
      session,
      () => session.append('user/message', UM('a').data as never, options as never),
      SessionEventError,
      'INVALID_ENVELOPE',
      {
        field,
        type: 'user/message',
        seq: 0,
      },
    )
  })

  test('step 4: ignorable on a core type without data problems is still refused', () => {
    const session = sessions.create()
    expectRejects(
      session,
      () => session.append('turn/start', { turn: 1 }, { ignorable: true }),
      SessionEventError,
      'INVALID_ENVELOPE',
      {
        field: 'options.ignorable',
      },
    )
  })

  test('step 4: options are copied as lossless JSON first (NOT_JSON with an options path)', () => {
    const session = sessions.create()
    append(session, UM('a'))
    // biome-ignore lint/suspicious/noSparseArray: a hole is the case under test
    const sparse = [, 0]
    expectRejects(
      session,
      () =>
        session.append(
          'user/message',
          UM('b').data as never,
          { surfaceOp: 'append', sourceEventSeqs: sparse } as never,
        ),
      SessionEventError,
      'NOT_JSON',
      {
        path: 'options.sourceEventSeqs[0]',
        seq: 1,
      },
    )
    expectRejects(
      session,
      () => session.append('user/message', UM('b').data as never, { surfaceOp: 'append', bogus: () => 1 } as never),
      SessionEventError,
      'NOT_JSON',
      {
        path: 'options.bogus',
      },
    )
    expectRejects(
      session,
      () =>
        session.append(
          'user/message',
          UM('b').data as never,
          { surfaceOp: { op: 'replace', start: 0, end: 1n } } as never,
        ),
      SessionEventError,
      'NOT_JSON',
      {
        path: 'options.surfaceOp.end',
      },
    )
  })

  test('step 4 comes before the catalog check (step 5)', () => {
    const session = sessions.create()
    expectRejects(
      session,
      () => session.append('x/y', {}, { bogus: true } as never),
      SessionEventError,
      'INVALID_ENVELOPE',
      { field: 'options.bogus' },
    )
    expectRejects(
      session,
      () => session.append('x/y', {}, { ignorable: false } as never),
      SessionEventError,
      'INVALID_ENVELOPE',
      {
        field: 'options.ignorable',
      },
    )
  })

  test('step 5: an unknown type rejects UNKNOWN_EVENT_TYPE before the data is copied', () => {
    const session = sessions.create()
    expectRejects(session, () => session.append('x/y', {}), SessionEventError, 'UNKNOWN_EVENT_TYPE', {
      type: 'x/y',
      seq: 0,
    })
    expectRejects(session, () => session.append('x/y', 1n), SessionEventError, 'UNKNOWN_EVENT_TYPE')
  })

  test('step 6 comes before the clock is read (step 7)', () => {
    const clock = scriptedClock([1000])
    const session = createSession({ id: 's1', clock })
    const before = clock.reads()
    expectRejects(session, () => session.append('turn/start', { turn: 1n } as never), SessionEventError, 'NOT_JSON', {
      path: 'data.turn',
    })
    expect(clock.reads()).toBe(before)
  })

  test.each([
    ['1.5', 1.5],
    ['NaN', Number.NaN],
    ['2 ** 53', 2 ** 53],
    ['a string', '1000'],
  ])('step 7: a clock returning %s rejects INVALID_ENVELOPE field time', (_label, value) => {
    const clock = scriptedClock([1000, value])
    const session = createSession({ id: 's1', clock })
    expectRejects(session, () => append(session, TS(1)), SessionEventError, 'INVALID_ENVELOPE', {
      field: 'time',
      type: 'turn/start',
      seq: 0,
    })
  })

  test('step 7 comes before the payload schema (step 8): a bad clock value wins over a bad payload', () => {
    const clock = scriptedClock([1000, 1.5])
    const session = createSession({ id: 's1', clock })
    expectRejects(session, () => session.append('turn/start', { turn: 0 }), SessionEventError, 'INVALID_ENVELOPE', {
      field: 'time',
      seq: 0,
    })
  })

  test('step 8: the payload schema rejects INVALID_PAYLOAD with path and issues', () => {
    const session = sessions.create()
    const error = expectRejects(
      session,
      () => session.append('turn/start', { turn: 0 }),
      SessionEventError,
      'INVALID_PAYLOAD',
      {
        path: 'data.turn',
        seq: 0,
        type: 'turn/start',
      },
    )
    expect(error.issues?.length).toBeGreaterThan(0)
    expect(error.issues?.[0]?.path).toEqual(['data', 'turn'])
    expectRejects(
      session,
      () => session.append('turn/start', { turn: 1, extra: true } as never),
      SessionEventError,
      'INVALID_PAYLOAD',
    )
  })

  test('step 8 comes before the surface rules (step 9)', () => {
    const session = sessions.create()
    const { id: _id, ...withoutId } = UM('x').data as Record<string, unknown>
    expectRejects(
      session,
      () => session.append('user/message', withoutId as never),
      SessionEventError,
      'INVALID_PAYLOAD',
      { path: 'data.id' },
    )
  })

  test('step 9 comes before the structure rules (step 10)', () => {
    const session = sessions.create()
    expectRejects(
      session,
      () => session.append('turn/start', { turn: 2 }, { surfaceOp: 'append' }),
      SurfaceError,
      'SURFACE_MARKER_FORBIDDEN',
      {
        field: 'surfaceOp',
      },
    )
    expectRejects(
      session,
      () => session.append('turn/start', { turn: 2 }, { sourceEventSeqs: [0] }),
      SurfaceError,
      'SURFACE_MARKER_FORBIDDEN',
      {
        field: 'sourceEventSeqs',
      },
    )
    expectRejects(
      session,
      () => session.append('user/message', UM('x').data as never),
      SurfaceError,
      'SURFACE_MARKER_REQUIRED',
    )
    expectRejects(session, () => append(session, TS(2)), StructureError, 'TURN_NUMBER', { expected: 1, actual: 2 })
  })

  test('step 10: a structure failure leaves the turn state as it was', () => {
    const session = sessions.create()
    append(session, TS(1))
    const state = session.turnState()
    expectRejects(session, () => append(session, SE(1, 1)), StructureError, 'NO_OPEN_STEP', { seq: 1, sessionId: 's1' })
    expect(session.turnState()).toBe(state)
    append(session, SS(1, 1))
    expect(session.turnState()).toEqual({ openTurn: 1, openStep: 1, nextTurn: 2, pendingCallIds: [] })
  })

  test('a rejected append does not take its seq: the next accepted one gets it', () => {
    const session = sessions.create()
    expectRejects(session, () => append(session, TS(2)), StructureError, 'TURN_NUMBER')
    expect(append(session, TS(1)).seq).toBe(0)
  })
})

describe('a live user/message without id', () => {
  test('rejects INVALID_PAYLOAD path data.id at seq 0', () => {
    const session = sessions.create()
    expectRejects(
      session,
      () =>
        session.append('user/message', { role: 'user', content: [text('x')], source: { kind: 'user' } } as never, {
          surfaceOp: 'append',
        }),
      SessionEventError,
      'INVALID_PAYLOAD',
      { path: 'data.id', seq: 0 },
    )
  })
})

describe('request/header adapterDefaults, live', () => {
  const header = {
    config: { provider: 'mock', model: 'm', maxTokens: 100 },
    adapterDefaults: { maxTokens: true as const },
  }

  test('a valid header is accepted and requestHeader() returns it frozen', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1)])
    const data = { header: structuredClone(header), reason: 'initial' as const }
    session.append('request/header', data)
    const stored = session.requestHeader()
    expect(stored).toEqual(header)
    expect(isDeepFrozen(stored)).toBe(true)
    data.header.config.maxTokens = 5
    expect(session.requestHeader()?.config.maxTokens).toBe(100)
  })

  test.each([
    ['null', null],
    ['[]', []],
    ['{unknown:true}', { unknown: true }],
    ['{maxTokens:false}', { maxTokens: false }],
    ['{reasoningEffort:true}', { reasoningEffort: true }],
  ])('adapterDefaults %s rejects INVALID_PAYLOAD under data.header.adapterDefaults', (_label, adapterDefaults) => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1)])
    const error = expectRejects(
      session,
      () => session.append('request/header', { header: { ...header, adapterDefaults }, reason: 'initial' } as never),
      SessionEventError,
      'INVALID_PAYLOAD',
      { seq: 2 },
    )
    expect(error.path?.startsWith('data.header.adapterDefaults'), error.path).toBe(true)
    expect(session.requestHeader()).toBeUndefined()
  })
})

describe('lossless JSON on append', () => {
  const cyclic: Record<string, unknown> = {}
  cyclic['self'] = cyclic

  test.each([
    ['1n', 1n, 'data'],
    ['a function', () => 1, 'data'],
    ['a symbol', Symbol(), 'data'],
    ['a Map', new Map(), 'data'],
    ['undefined', undefined, 'data'],
    ['Infinity', Number.POSITIVE_INFINITY, 'data'],
    ['NaN', Number.NaN, 'data'],
    ['-0', -0, 'data'],
    // biome-ignore lint/suspicious/noSparseArray: a hole is the case under test
    ['[1, , 3]', [1, , 3], 'data[1]'],
    ['[1, 2n, 3]', [1, 2n, 3], 'data[1]'],
    ['{a:{b(){}}}', { a: { b() {} } }, 'data.a.b'],
    ['o with o.self = o', cyclic, 'data.self'],
  ])('append test/note %s rejects NOT_JSON path %s', (_label, value, path) => {
    registerNote()
    const session = sessions.create()
    append(session, UM('a'))
    const error = expectRejects(session, () => session.append('test/note', value), SessionEventError, 'NOT_JSON', {
      path,
      seq: 1,
      type: 'test/note',
    })
    expect(typeof error.reason).toBe('string')
  })

  test('isJsonValue is false for -0, a Date and Object.create({}) and true for plain values', () => {
    for (const value of [-0, new Date(0), Object.create({})]) expect(isJsonValue(value)).toBe(false)
    for (const value of [0, '', null, [], {}, Object.create(null)]) expect(isJsonValue(value)).toBe(true)
  })

  test('a getter is read once and a throwing getter’s error propagates with nothing committed', () => {
    registerNote()
    const session = sessions.create()
    let reads = 0
    const counted = {
      get value() {
        reads += 1
        return reads
      },
    }
    const event = session.append('test/note', counted)
    expect(reads).toBe(1)
    expect(event.data).toEqual({ value: 1 })
    const failure = new Error('getter failed')
    const throwing = {
      get value(): number {
        throw failure
      },
    }
    const events = session.events
    expect(() => session.append('test/note', throwing)).toThrow(failure)
    expect(session.length).toBe(1)
    expect(session.events).toBe(events)
  })
})

describe('freezing, deep nesting and the events cache', () => {
  test('appended events, their data and nested objects are frozen', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), UM('a'), AM(1, 1, text('x'), call('c1')), TC(1, 1, 'c1'), TR(1, 1, 'c1', 4)])
    for (const event of session.events) expect(isDeepFrozen(event)).toBe(true)
    expect(Object.isFrozen(session.events)).toBe(true)
    expect(isDeepFrozen(session.deriveMessages())).toBe(true)
  })

  test('a test/note nesting 20 000 levels is accepted without RangeError, deepest object frozen', () => {
    registerNote()
    const session = sessions.create()
    let nested: Record<string, unknown> = { leaf: true }
    for (let level = 0; level < 20_000; level++) nested = { next: nested }
    const event = session.append('test/note', nested)
    let cursor = event.data as Record<string, unknown>
    let depth = 0
    let unfrozen = 0
    while (cursor['next'] !== undefined) {
      if (!Object.isFrozen(cursor)) unfrozen += 1
      cursor = cursor['next'] as Record<string, unknown>
      depth += 1
    }
    expect(depth).toBe(20_000)
    expect(unfrozen).toBe(0)
    expect(cursor).toEqual({ leaf: true })
    expect(Object.isFrozen(cursor)).toBe(true)
  })

  test('events is the same array until a commit; an array handed out never grows', () => {
    const session = sessions.create()
    append(session, TS(1))
    const held = session.events
    expect(session.events).toBe(held)
    expectRejects(session, () => append(session, TS(1)), StructureError, 'TURN_OPEN')
    expect(session.events).toBe(held)
    append(session, SS(1, 1))
    expect(session.events).not.toBe(held)
    expect(held).toHaveLength(1)
    expect(session.events).toHaveLength(2)
    expect(Object.isFrozen(held)).toBe(true)
  })
})

describe('an own __proto__ key through append and seed', () => {
  const parsed = (): Record<string, unknown> =>
    JSON.parse('{"a":1,"__proto__":{"polluted":true},"nested":[{"__proto__":null}]}') as Record<string, unknown>

  function expectProtoKept(data: unknown): void {
    const copy = data as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['a', '__proto__', 'nested'])
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true })
    expect(copy['polluted']).toBeUndefined()
    const inner = (copy['nested'] as Record<string, unknown>[])[0] as Record<string, unknown>
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype)
    expect(Object.keys(inner)).toEqual(['__proto__'])
    expect(Object.getOwnPropertyDescriptor(inner, '__proto__')?.value).toBeNull()
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
  }

  test('a live append keeps it as a data property and never changes a prototype', () => {
    registerNote()
    const session = sessions.create()
    const event = session.append('test/note', parsed())
    expectProtoKept(event.data)
    expectProtoKept(session.at(0)?.data)
  })

  test('a seed keeps it too, and a reopened copy equals the original', () => {
    registerNote()
    const live = sessions.create()
    live.append('test/note', parsed())
    const seeded = sessions.create({ seed: [{ type: 'test/note', seq: 0, time: 1000, data: parsed() }] })
    expectProtoKept(seeded.at(0)?.data)
    const reopened = sessions.create({ seed: seeded.events })
    expectProtoKept(reopened.at(0)?.data)
    expect(reopened.at(0)).toEqual(live.at(0))
  })
})

describe('issue #3 bad input: a typed error naming the field and seq, the log unchanged', () => {
  interface BadInput {
    readonly before: readonly EventPlan[]
    readonly act: (session: Session) => unknown
    readonly errorClass: HarnessErrorClass<unknown>
    readonly code: string
    readonly fields: Readonly<Record<string, unknown>>
    /** What the message must name besides the session id, the type and `seq N`. */
    readonly mentions: string
  }

  const cases: readonly (readonly [string, BadInput])[] = [
    [
      'non-JSON data',
      {
        before: [UM('a')],
        act: (s) => s.append('test/note', { a: 1n }),
        errorClass: SessionEventError,
        code: 'NOT_JSON',
        fields: { type: 'test/note', seq: 1, path: 'data.a' },
        mentions: 'data.a',
      },
    ],
    [
      'a bad envelope (an unknown option)',
      {
        before: [],
        act: (s) => s.append('user/message', UM('a').data as never, { surfaceOp: 'append', bogus: 1 } as never),
        errorClass: SessionEventError,
        code: 'INVALID_ENVELOPE',
        fields: { type: 'user/message', seq: 0, field: 'options.bogus' },
        mentions: 'bogus',
      },
    ],
    [
      'an unknown type',
      {
        before: [TS(1)],
        act: (s) => s.append('x/y', {}),
        errorClass: SessionEventError,
        code: 'UNKNOWN_EVENT_TYPE',
        fields: { type: 'x/y', seq: 1 },
        mentions: 'x/y',
      },
    ],
    [
      'a payload failing its schema',
      {
        before: [],
        act: (s) => s.append('turn/start', { turn: 0 }),
        errorClass: SessionEventError,
        code: 'INVALID_PAYLOAD',
        fields: { type: 'turn/start', seq: 0, path: 'data.turn' },
        mentions: 'data.turn',
      },
    ],
    [
      'broken nesting',
      {
        before: [TS(1)],
        act: (s) => append(s, TE(2, 'completed')),
        errorClass: StructureError,
        code: 'TURN_MISMATCH',
        fields: { type: 'turn/end', seq: 1, expected: 1, actual: 2 },
        mentions: '2',
      },
    ],
    [
      'an unanswered tool call at step/end',
      {
        before: [TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1')],
        act: (s) => append(s, SE(1, 1)),
        errorClass: StructureError,
        code: 'UNANSWERED_TOOL_CALL',
        fields: { type: 'step/end', seq: 4, callIds: ['c1'] },
        mentions: 'c1',
      },
    ],
    [
      'a foreign tool result',
      {
        before: [TS(1), SS(1, 1)],
        act: (s) => append(s, TR(1, 1, 'ghost', 0)),
        errorClass: StructureError,
        code: 'UNKNOWN_TOOL_CALL',
        fields: { type: 'tool/result', seq: 2, callId: 'ghost' },
        mentions: 'ghost',
      },
    ],
    [
      'a bad surface op',
      {
        before: [],
        act: (s) => s.append('user/message', UM('a').data as never, { surfaceOp: 'invalid' } as never),
        errorClass: SurfaceError,
        code: 'INVALID_SURFACE_OP',
        fields: { type: 'user/message', seq: 0 },
        mentions: 'surfaceOp',
      },
    ],
    [
      'a replace splitting a call from its result',
      {
        before: [
          TS(1),
          SS(1, 1),
          UM('q'),
          AM(1, 1, call('c1')),
          TC(1, 1, 'c1'),
          TR(1, 1, 'c1', 4),
          SE(1, 1),
          TE(1, 'completed'),
        ],
        act: (s) => append(s, replaceUM('s', 2, 3, [2, 3])),
        errorClass: SurfaceError,
        code: 'REPLACE_SPLITS_TOOL_PAIR',
        fields: { type: 'user/message', seq: 8, callId: 'c1', assistantSeq: 3, resultSeq: 5 },
        mentions: 'c1',
      },
    ],
  ]

  test.each(cases)('%s', (_label, bad) => {
    registerNote()
    const session = sessions.create()
    appendAll(session, bad.before)
    const error = expectRejects(session, () => bad.act(session), bad.errorClass, bad.code, {
      sessionId: 's1',
      ...bad.fields,
    }) as Error
    for (const part of ['s1', String(bad.fields['type']), `seq ${String(bad.fields['seq'])}`, bad.mentions]) {
      expect(error.message, `the message names ${part}`).toContain(part)
    }
  })

  test.each<[string, () => unknown[], HarnessErrorClass<unknown>, string, Readonly<Record<string, unknown>>]>([
    [
      'non-JSON data',
      () => [
        ...logOf([TS(1)]),
        { type: 'turn/end', seq: 1, time: 1000, data: { turn: 1, reason: { kind: 'completed' }, x: 1n } },
      ],
      SessionEventError,
      'NOT_JSON',
      { index: 1, path: 'data.x' },
    ],
    [
      'a bad envelope',
      () => [
        ...logOf([TS(1)]),
        { type: 'turn/end', seq: 1, time: 1000, data: { turn: 1, reason: { kind: 'completed' } }, extra: 1 },
      ],
      SessionEventError,
      'INVALID_ENVELOPE',
      { index: 1, field: 'extra' },
    ],
    [
      'an unknown type',
      () => [...logOf([TS(1)]), { type: 'x/y', seq: 1, time: 1000, data: {} }],
      SessionEventError,
      'UNKNOWN_EVENT_TYPE',
      { index: 1, type: 'x/y' },
    ],
    [
      'a payload failing its schema',
      () => logOf([{ type: 'turn/start', data: { turn: 0 }, options: {} }]),
      SessionEventError,
      'INVALID_PAYLOAD',
      { index: 0, path: 'data.turn' },
    ],
    [
      'broken nesting',
      () => logOf([TS(1), TE(2, 'completed')]),
      StructureError,
      'TURN_MISMATCH',
      { index: 1, expected: 1, actual: 2 },
    ],
    [
      'an unanswered tool call',
      () => logOf([TS(1), SS(1, 1), AM(1, 1, call('c1')), SE(1, 1)]),
      StructureError,
      'UNANSWERED_TOOL_CALL',
      { index: 3, callIds: ['c1'] },
    ],
    [
      'a foreign tool result',
      () => logOf([TS(1), SS(1, 1), TR(1, 1, 'ghost', 0)]),
      StructureError,
      'UNKNOWN_TOOL_CALL',
      { index: 2, callId: 'ghost' },
    ],
    [
      'a bad surface op',
      () => logOf([{ ...UM('a'), options: { surfaceOp: 'invalid' as never } }]),
      SurfaceError,
      'INVALID_SURFACE_OP',
      { index: 0 },
    ],
    [
      'a replace splitting a call from its result',
      () =>
        logOf([
          TS(1),
          SS(1, 1),
          UM('q'),
          AM(1, 1, call('c1')),
          TC(1, 1, 'c1'),
          TR(1, 1, 'c1', 4),
          SE(1, 1),
          TE(1, 'completed'),
          replaceUM('s', 2, 3, [2, 3]),
        ]),
      SurfaceError,
      'REPLACE_SPLITS_TOOL_PAIR',
      { index: 8, callId: 'c1', assistantSeq: 3 },
    ],
  ])('as a seed, %s fails at its index and creates nothing', (_label, seed, errorClass, code, fields) => {
    const before = sessions.list()
    let thrown: unknown
    try {
      sessions.create({ id: 'seeded', seed: seed() })
    } catch (error) {
      thrown = error
    }
    expect((errorClass as unknown as typeof SessionEventError).is(thrown), String(thrown)).toBe(true)
    expect(thrown).toMatchObject({ code, ...fields })
    expect(sessions.get('seeded')).toBeUndefined()
    expect(sessions.list()).toEqual(before)
  })
})
