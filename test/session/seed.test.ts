import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createSession,
  type Harness,
  HarnessError,
  InvalidOptionsError,
  type SessionEvent,
  SessionEventError,
  SessionHeaderError,
  type SessionRegistry,
  SurfaceError,
} from 'yoke'
import type { HarnessErrorClass } from '../../src/errors/index.js'
import { fakeClock } from 'yoke/testing'
import { isDeepFrozen, thrownBy } from '../helpers/outcomes.js'
import { AM, call, type EventPlan, L1, logOf, SE, SS, TC, TE, TR, TS, text, UM } from './builders.js'
import { append, appendAll, expectError, freshRegistry, recordCreatedIds } from './session-helpers.js'

let harness: Harness
let sessions: SessionRegistry
let created: string[]

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
  created = recordCreatedIds(harness)
})

afterEach(() => harness.close())

/** A seed event as a mutable plain object (a stored log's parsed line). */
function rawEvent(plan: EventPlan, seq: number, time = 1000): Record<string, unknown> {
  return structuredClone({ ...(logOf([plan], time)[0] as SessionEvent), seq }) as Record<string, unknown>
}

/**
 * Asserts a seeded construction throws `errorClass` with `code` and `fields`, and that no session
 * was created (none listed, no `session/created`).
 */
function expectSeedRejects<E>(
  action: () => unknown,
  errorClass: HarnessErrorClass<E>,
  code: string,
  fields: Readonly<Record<string, unknown>> = {},
): E {
  const listed = sessions.list()
  const announced = created.length
  const thrown = thrownBy(action)
  const typed = expectError(thrown, errorClass, code, fields)
  expect(sessions.list()).toEqual(listed)
  expect(created).toHaveLength(announced)
  return typed
}

describe('seeding with a live log', () => {
  test('copies the log, appends one session/end-seed and derives the same messages', () => {
    const source = sessions.create()
    appendAll(source, L1({ kind: 'aborted', reason: { kind: 'user' } }))
    const seeded = sessions.create({ seed: source.events })
    expect(seeded.id).toBe('s2')
    expect(seeded.length).toBe(7)
    expect(seeded.events.slice(0, 6)).toEqual(source.events)
    for (let seq = 0; seq < 6; seq++) expect(seeded.at(seq)).not.toBe(source.at(seq))
    const marker = seeded.at(6)
    expect(marker).toEqual({ type: 'session/end-seed', seq: 6, time: 1000, data: {} })
    expect(Object.keys(marker ?? {})).toEqual(['type', 'seq', 'time', 'data'])
    expect(seeded.firstLiveSeq).toBe(6)
    expect(seeded.deriveMessages()).toEqual(source.deriveMessages())
    expect(source.length).toBe(6)
    expect(seeded.turnState()).toEqual(source.turnState())
  })
})

describe('firstLiveSeq and the marker', () => {
  test('no seed: no events, no marker, firstLiveSeq 0', () => {
    const session = sessions.create()
    expect(session.events).toEqual([])
    expect(session.firstLiveSeq).toBe(0)
  })

  test('an empty seed gets the marker at seq 0 and firstLiveSeq 0', () => {
    const session = sessions.create({ seed: [] })
    expect(session.events).toEqual([{ type: 'session/end-seed', seq: 0, time: 1000, data: {} }])
    expect(session.firstLiveSeq).toBe(0)
  })

  test('a seed ending in the marker gains nothing: firstLiveSeq is its length', () => {
    const first = sessions.create({ seed: [] })
    const reopened = sessions.create({ seed: first.events })
    expect(reopened.events).toEqual([{ type: 'session/end-seed', seq: 0, time: 1000, data: {} }])
    expect(reopened.firstLiveSeq).toBe(1)
  })

  test('a restarted fork: firstLiveSeq 6 in the first life and 9 after two live events', () => {
    const source = sessions.create()
    appendAll(source, L1())
    const child = sessions.create({ seed: source.events })
    expect(child.firstLiveSeq).toBe(6)
    appendAll(child, [TS(2), TE(2, 'completed')])
    const restarted = sessions.create({ seed: child.events })
    expect(restarted.length).toBe(10)
    expect(restarted.firstLiveSeq).toBe(9)
    expect(restarted.at(9)?.type).toBe('session/end-seed')
    expect(restarted.at(6)?.type).toBe('session/end-seed')
  })

  test('session/end-seed may appear anywhere in a seed', () => {
    const seed = logOf([TS(1), SS(1, 1)])
    const withMarker = [seed[0], { type: 'session/end-seed', seq: 1, time: 5, data: {} }, { ...seed[1], seq: 2 }]
    const session = sessions.create({ seed: withMarker })
    expect(session.events.map((event) => event.type)).toEqual([
      'turn/start',
      'session/end-seed',
      'step/start',
      'session/end-seed',
    ])
    expect(session.at(1)?.time).toBe(5)
    expect(session.firstLiveSeq).toBe(3)
  })
})

describe('invalid message payloads in a seed', () => {
  const userMessage = UM('x')
  const assistantMessage = AM(1, 1, text('x'))
  const toolResult = TR(1, 1, 'c1', 1)

  function withData(plan: EventPlan, change: (data: Record<string, unknown>) => void): EventPlan {
    const data = structuredClone(plan.data) as Record<string, unknown>
    change(data)
    return { ...plan, data: data as EventPlan['data'] }
  }

  function messageOf(data: Record<string, unknown>): Record<string, unknown> {
    return data['message'] as Record<string, unknown>
  }

  test.each<[string, EventPlan, string]>([
    ['user/message data null', { ...userMessage, data: null }, 'data'],
    [
      "user/message role 'assistant'",
      withData(userMessage, (data) => {
        data['role'] = 'assistant'
      }),
      'data.role',
    ],
    [
      'user/message source null',
      withData(userMessage, (data) => {
        data['source'] = null
      }),
      'data.source',
    ],
    [
      "user/message content 'x'",
      withData(userMessage, (data) => {
        data['content'] = 'x'
      }),
      'data.content',
    ],
    [
      'assistant/message with a user source',
      withData(assistantMessage, (data) => {
        messageOf(data)['source'] = { kind: 'user' }
      }),
      'data.message.source',
    ],
    [
      'tool/result with a user source',
      withData(toolResult, (data) => {
        messageOf(data)['source'] = { kind: 'user' }
      }),
      'data.message.source',
    ],
    [
      'tool/result with a text block as content',
      withData(toolResult, (data) => {
        messageOf(data)['content'] = [text('x')]
      }),
      'data.message.content',
    ],
    [
      'tool/result whose toolCallId differs from source.callId',
      withData(toolResult, (data) => {
        const message = messageOf(data)
        message['source'] = { kind: 'tool', callId: 'a' }
        ;(message['content'] as Record<string, unknown>[])[0]!['toolCallId'] = 'b'
      }),
      'data.message.content[0].toolCallId',
    ],
  ])('%s at index 2 rejects INVALID_PAYLOAD (path prefix in the table)', (_label, plan, path) => {
    const seed = logOf([TS(1), SS(1, 1), plan])
    const error = expectSeedRejects(() => sessions.create({ seed }), SessionEventError, 'INVALID_PAYLOAD', { index: 2 })
    expect(error.path?.startsWith(path), `${error.path} starts with ${path}`).toBe(true)
  })
})

describe('a seeded user/message without id', () => {
  test('rejects INVALID_PAYLOAD path data.id at index 0', () => {
    const seed = [
      {
        type: 'user/message',
        seq: 0,
        time: 1000,
        data: { role: 'user', content: [text('x')], source: { kind: 'user' } },
        surfaceOp: 'append',
      },
    ]
    expectSeedRejects(() => sessions.create({ seed }), SessionEventError, 'INVALID_PAYLOAD', {
      index: 0,
      path: 'data.id',
    })
  })
})

describe('request/header adapterDefaults, as seed', () => {
  const header = { config: { provider: 'mock', model: 'm', maxTokens: 100 }, adapterDefaults: { maxTokens: true } }

  function headerPlan(adapterDefaults: unknown): EventPlan {
    return {
      type: 'request/header',
      data: { header: { ...header, adapterDefaults } as never, reason: 'initial' },
      options: {},
    }
  }

  test('a valid header is accepted and requestHeader() returns it frozen', () => {
    const session = sessions.create({ seed: logOf([TS(1), SS(1, 1), headerPlan({ maxTokens: true })]) })
    expect(session.requestHeader()).toEqual(header)
    expect(isDeepFrozen(session.requestHeader())).toBe(true)
  })

  test.each([
    ['null', null],
    ['[]', []],
    ['{unknown:true}', { unknown: true }],
    ['{maxTokens:false}', { maxTokens: false }],
    ['{reasoningEffort:true}', { reasoningEffort: true }],
  ])(
    'adapterDefaults %s rejects INVALID_PAYLOAD under data.header.adapterDefaults at index 2',
    (_label, adapterDefaults) => {
      const seed = logOf([TS(1), SS(1, 1), headerPlan(adapterDefaults)])
      const error = expectSeedRejects(() => sessions.create({ seed }), SessionEventError, 'INVALID_PAYLOAD', {
        index: 2,
      })
      expect(error.path?.startsWith('data.header.adapterDefaults'), error.path).toBe(true)
    },
  )
})

describe('seq and surface markers in a seed', () => {
  test('a seq gap rejects INVALID_ENVELOPE index 1, field seq, expected 1', () => {
    const seed = [rawEvent(TS(1), 0), rawEvent(TE(1, 'completed'), 5)]
    expectSeedRejects(() => sessions.create({ seed }), SessionEventError, 'INVALID_ENVELOPE', {
      index: 1,
      field: 'seq',
      expected: 1,
    })
  })

  test('a user/message without surfaceOp rejects SURFACE_MARKER_REQUIRED index 0', () => {
    const seed = [{ type: 'user/message', seq: 0, time: 1000, data: UM('x').data }]
    expectSeedRejects(() => sessions.create({ seed }), SurfaceError, 'SURFACE_MARKER_REQUIRED', { index: 0 })
  })
})

describe('a seeded test/note nesting 20 000 levels', () => {
  test('is accepted without RangeError and its deepest object is frozen', () => {
    sessions.registerEventType('test/note')
    let nested: Record<string, unknown> = { leaf: true }
    for (let level = 0; level < 20_000; level++) nested = { next: nested }
    const session = sessions.create({ seed: [{ type: 'test/note', seq: 0, time: 1000, data: nested }] })
    let cursor = session.at(0)?.data as Record<string, unknown>
    expect(cursor === nested).toBe(false)
    let depth = 0
    let unfrozen = 0
    while (cursor['next'] !== undefined) {
      if (!Object.isFrozen(cursor)) unfrozen += 1
      cursor = cursor['next'] as Record<string, unknown>
      depth += 1
    }
    expect(depth).toBe(20_000)
    expect(unfrozen).toBe(0)
    expect(Object.isFrozen(cursor)).toBe(true)
    expect(session.length).toBe(2)
  })
})

describe('the session header', () => {
  test.each<[string, Record<string, unknown>, string]>([
    ['version 2', { version: 2 }, 'version'],
    ["id 'x'", { id: 'x' }, 'id'],
    ["createdAt '123'", { createdAt: '123' }, 'createdAt'],
    ['cwd 1', { cwd: 1 }, 'cwd'],
    ["cwd 'rel'", { cwd: 'rel' }, 'cwd'],
    ['parentSession 1', { parentSession: 1 }, 'parentSession'],
    ["seedLength '1'", { seedLength: '1' }, 'seedLength'],
    ['seedLength 0.5', { seedLength: 0.5 }, 'seedLength'],
    ['seedLength -1', { seedLength: -1 }, 'seedLength'],
    ['extra: 1', { extra: 1 }, 'extra'],
  ])('%s rejects INVALID_HEADER with that key as field', (_label, header, field) => {
    expectSeedRejects(
      () => sessions.create({ id: 's9', header: header as never }),
      SessionHeaderError,
      'INVALID_HEADER',
      { field },
    )
    expect(sessions.get('s9')).toBeUndefined()
  })

  test('a valid header is frozen, detached and filled in', () => {
    const header = { cwd: '/w' }
    const session = sessions.create({ header })
    expect(session.header).toEqual({ version: 1, id: 's1', createdAt: 1000, cwd: '/w' })
    expect(Object.keys(session.header)).toEqual(['version', 'id', 'createdAt', 'cwd'])
    expect(session.header).not.toBe(header)
    expect(Object.isFrozen(session.header)).toBe(true)
    expect(Object.isFrozen(header)).toBe(false)
    header.cwd = '/elsewhere'
    expect(session.header.cwd).toBe('/w')
  })

  test('nested header metadata is deep-frozen', () => {
    const session = sessions.create({ header: { metadata: { owner: { name: 'x' } } } })
    expect(isDeepFrozen(session.header)).toBe(true)
  })
})

describe('seed envelope rules, each failure with its index', () => {
  function seedWith(second: unknown): unknown[] {
    return [rawEvent(TS(1), 0), second]
  }

  test.each<[string, () => unknown, string]>([
    ['an extra key', () => ({ ...rawEvent(SS(1, 1), 1), extra: 1 }), 'extra'],
    ['an empty type', () => ({ ...rawEvent(SS(1, 1), 1), type: '' }), 'type'],
    ['a numeric type', () => ({ ...rawEvent(SS(1, 1), 1), type: 5 }), 'type'],
    [
      'no type',
      () => {
        const { type: _type, ...rest } = rawEvent(SS(1, 1), 1)
        return rest
      },
      'type',
    ],
    ['a string seq', () => ({ ...rawEvent(SS(1, 1), 1), seq: '1' }), 'seq'],
    ['a fractional time', () => ({ ...rawEvent(SS(1, 1), 1), time: 1.5 }), 'time'],
    ['a string time', () => ({ ...rawEvent(SS(1, 1), 1), time: '1000' }), 'time'],
    ['an unsafe time', () => ({ ...rawEvent(SS(1, 1), 1), time: 2 ** 53 }), 'time'],
    [
      'no time',
      () => {
        const { time: _time, ...rest } = rawEvent(SS(1, 1), 1)
        return rest
      },
      'time',
    ],
    [
      'no data',
      () => {
        const { data: _data, ...rest } = rawEvent(SS(1, 1), 1)
        return rest
      },
      'data',
    ],
    ['ignorable on a core type', () => ({ ...rawEvent(SS(1, 1), 1), ignorable: true }), 'ignorable'],
    ['ignorable false', () => ({ ...rawEvent(SS(1, 1), 1), ignorable: false }), 'ignorable'],
  ])('%s rejects INVALID_ENVELOPE at index 1 with its field', (_label, second, field) => {
    expectSeedRejects(() => sessions.create({ seed: seedWith(second()) }), SessionEventError, 'INVALID_ENVELOPE', {
      index: 1,
      field,
    })
  })

  test('a non-object seed event rejects INVALID_ENVELOPE at its index', () => {
    expectSeedRejects(() => sessions.create({ seed: seedWith('turn/start') }), SessionEventError, 'INVALID_ENVELOPE', {
      index: 1,
    })
    expectSeedRejects(() => sessions.create({ seed: seedWith(null) }), SessionEventError, 'INVALID_ENVELOPE', {
      index: 1,
    })
  })

  test('a value that is not lossless JSON rejects NOT_JSON with a path from the event root', () => {
    const second = { ...rawEvent(SS(1, 1), 1), data: { turn: 1, step: 1n } }
    expectSeedRejects(() => sessions.create({ seed: seedWith(second) }), SessionEventError, 'NOT_JSON', {
      index: 1,
      path: 'data.step',
    })
    const withUndefined = { ...rawEvent(SS(1, 1), 1), data: undefined }
    expectSeedRejects(() => sessions.create({ seed: seedWith(withUndefined) }), SessionEventError, 'NOT_JSON', {
      index: 1,
      path: 'data',
    })
  })

  test('data: null on a registered type without schema is present, not missing', () => {
    sessions.registerEventType('test/note')
    const session = sessions.create({ seed: seedWith({ type: 'test/note', seq: 1, time: 1000, data: null }) })
    expect(session.at(1)?.data).toBeNull()
  })

  test('ignorable: true on a registered type is kept', () => {
    sessions.registerEventType('test/note')
    const session = sessions.create({
      seed: seedWith({ type: 'test/note', seq: 1, time: 1000, data: {}, ignorable: true }),
    })
    expect(session.at(1)?.ignorable).toBe(true)
  })

  test('the first failing event throws: later bad events are not reached', () => {
    const seed = [rawEvent(TS(1), 0), { ...rawEvent(SS(1, 1), 1), time: 'x' }, { extra: true }]
    expectSeedRejects(() => sessions.create({ seed }), SessionEventError, 'INVALID_ENVELOPE', {
      index: 1,
      field: 'time',
    })
  })

  test('a failing seed leaves the id free', () => {
    expectSeedRejects(
      () => sessions.create({ id: 'held', seed: seedWith({ extra: true }) }),
      SessionEventError,
      'INVALID_ENVELOPE',
      { index: 1 },
    )
    expect(sessions.create({ id: 'held' }).id).toBe('held')
  })

  test('unregistered createSession applies the same rules and reports the index', () => {
    const error = thrownBy(() =>
      createSession({
        id: 'check',
        clock: fakeClock({ now: 1000 }),
        seed: seedWith({ ...rawEvent(SS(1, 1), 1), seq: 3 }),
      }),
    )
    expect(SessionEventError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ENVELOPE', index: 1, field: 'seq', expected: 1 })
  })
})

describe('createSession options (options objects → InvalidOptionsError)', () => {
  test.each([
    ['null', null, []],
    ['missing', undefined, []],
    ['a string', 's1', []],
    ['an unknown key', { id: 's1', sead: [] }, ['sead']],
    ['a catalog that is not a SessionCatalog', { id: 's1', catalog: {} }, ['catalog']],
    ['a clock without setTimer', { id: 's1', clock: { now: () => 0 } }, ['clock']],
  ])('%s is an InvalidOptionsError naming the path', (_label, options, path) => {
    const error = thrownBy(() => createSession(options as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', issues: [{ path }] })
  })

  test('a bad id keeps INVALID_SESSION_ID', () => {
    expect(thrownBy(() => createSession({ id: '.hidden' }))).toMatchObject({ code: 'INVALID_SESSION_ID' })
  })
})

describe('what a seed commits', () => {
  test('events are re-ordered to the envelope order, keep their time and are detached and frozen', () => {
    const first = { data: { turn: 1 }, time: 7, seq: 0, type: 'turn/start' }
    const second = {
      sourceEventSeqs: [0],
      surfaceOp: 'append',
      data: UM('a').data,
      time: -3,
      seq: 1,
      type: 'user/message',
    }
    const session = sessions.create({ seed: [first, second] })
    expect(Object.keys(session.at(0) ?? {})).toEqual(['type', 'seq', 'time', 'data'])
    expect(Object.keys(session.at(1) ?? {})).toEqual(['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs'])
    expect(session.at(0)?.time).toBe(7)
    expect(session.at(1)?.time).toBe(-3)
    expect(session.at(2)?.time).toBe(1000)
    first.data.turn = 9
    second.sourceEventSeqs.push(5)
    expect(session.at(0)?.data).toEqual({ turn: 1 })
    expect(session.at(1)?.sourceEventSeqs).toEqual([0])
    for (const event of session.events) expect(isDeepFrozen(event)).toBe(true)
    expect(Object.isFrozen(first)).toBe(false)
  })

  test('the payload, surface and structure rules apply to seeds', () => {
    expectSeedRejects(() => sessions.create({ seed: logOf([TS(1), TS(2)]) }), HarnessError, 'TURN_OPEN', { index: 1 })
    const split = logOf([TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1'), SE(1, 1)])
    expectSeedRejects(() => sessions.create({ seed: split }), HarnessError, 'UNANSWERED_TOOL_CALL', {
      index: 4,
      callIds: ['c1'],
    })
    expectSeedRejects(() => sessions.create({ seed: logOf([UM('a'), UM('a')]) }), HarnessError, 'MESSAGE_ID_REUSED', {
      index: 1,
    })
  })

  test('no guards or observers run for seed events; session/created sees the finished session', () => {
    let guarded = 0
    sessions.addCommitGuard(() => {
      guarded += 1
    })
    const observed: number[] = []
    harness.on('session/event', ({ event }) => {
      observed.push(event.seq)
    })
    const lengths: number[] = []
    harness.on('session/created', ({ session }) => {
      lengths.push(session.length)
    })
    const session = sessions.create({ seed: logOf(L1()) })
    expect(guarded).toBe(0)
    expect(observed).toEqual([])
    expect(lengths).toEqual([7])
    expect(created).toEqual(['s1'])
    append(session, TS(2))
    expect(guarded).toBe(1)
    expect(observed).toEqual([7])
  })

  test('a seeded log accepts the same live appends as the original', () => {
    const source = sessions.create()
    appendAll(source, [TS(1), SS(1, 1), AM(1, 1, call('c1')), TC(1, 1, 'c1')])
    const seeded = sessions.create({ seed: source.events })
    expect(seeded.turnState()).toEqual({ openTurn: 1, openStep: 1, nextTurn: 2, pendingCallIds: ['c1'] })
    append(seeded, TR(1, 1, 'c1', 3))
    append(seeded, SE(1, 1))
    expect(seeded.deriveMessages().map((message) => message.role)).toEqual(['assistant', 'user'])
  })
})
