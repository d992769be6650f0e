import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createSession,
  type Harness,
  type JsonObject,
  type Message,
  type Session,
  type SessionEvent,
  SessionEventError,
  type SessionRegistry,
  SurfaceError,
} from 'yoke'
import { foldSurface, createSessionCatalog, type SessionCatalog } from '../../src/session/index.js'
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

/** A plan with other (possibly invalid) append options. */
function withOptions(plan: EventPlan, options: unknown): EventPlan {
  return { ...plan, options: options as EventPlan['options'] }
}

/** The projection, computed from scratch: fold the surface, then project each node. */
function projectFromScratch(events: readonly SessionEvent[]): unknown[] {
  const messages: unknown[] = []
  for (const seq of foldSurface(events).nodes) {
    const event = events[seq] as SessionEvent
    const data = event.data as JsonObject
    if (event.type === 'user/message') messages.push(data)
    else {
      const message = data['message'] as JsonObject
      if (event.type === 'assistant/message' && (message['content'] as unknown[]).length === 0) continue
      messages.push(message)
    }
  }
  return messages
}

/** The `tool/result` of `TR(turn, step, callId, ·)` with other result content, as a rewrite of `target`. */
function rewriteOf(
  turn: number,
  step: number,
  callId: string,
  target: number,
  content: readonly JsonObject[],
): EventPlan {
  const data = structuredClone(TR(turn, step, callId, 0).data) as JsonObject
  const message = data['message'] as { content: { content: unknown }[] }
  ;(message.content[0] as { content: unknown }).content = content
  return {
    type: 'tool/result',
    data,
    options: { surfaceOp: { op: 'replace', start: target, end: target }, sourceEventSeqs: [target] },
  }
}

const scenario1: readonly EventPlan[] = [
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
]

describe('derived messages are frozen, shared and cached', () => {
  test('writes throw TypeError, the array is cached and the messages are the logged objects', () => {
    const session = sessions.create()
    appendAll(session, scenario1)
    const messages = session.deriveMessages()
    const first = messages[0] as Message
    const result = messages[2] as Message
    expect(() => {
      ;(first.content[0] as { text: string }).text = 'changed'
    }).toThrow(TypeError)
    expect(() => {
      ;(result.content[0] as { content: unknown }).content = []
    }).toThrow(TypeError)
    expect(() => (first.content as unknown[]).push(text('more'))).toThrow(TypeError)
    expect(() => (messages as Message[]).reverse()).toThrow(TypeError)
    expect(session.deriveMessages()).toBe(messages)
    expect(messages[0]).toBe(session.events[2]?.data)
    expect(messages[1]).toBe(((session.events[4] as SessionEvent).data as JsonObject)['message'])
    expect(messages[2]).toBe(((session.events[6] as SessionEvent).data as JsonObject)['message'])
  })
})

describe('invalid surface ops and sources', () => {
  test.each([
    ["'invalid'", 'invalid'],
    ['{op:replace, start:-1, end:0}', { op: 'replace', start: -1, end: 0 }],
    ['{op:replace, start:0.5, end:0}', { op: 'replace', start: 0.5, end: 0 }],
    ['{op:replace} with an extra key', { op: 'replace', start: 0, end: 0, extra: 1 }],
    ['{op:append}', { op: 'append' }],
    ['null', null],
  ])('a UM with surfaceOp %s rejects INVALID_SURFACE_OP', (_label, surfaceOp) => {
    const session = sessions.create()
    expectRejects(
      session,
      () => append(session, withOptions(UM('a'), { surfaceOp })),
      SurfaceError,
      'INVALID_SURFACE_OP',
      { seq: 0, type: 'user/message' },
    )
  })

  test('sources [0, -1] reject INVALID_SOURCES not-integer (the whole array is checked for integers first)', () => {
    const session = sessions.create()
    expectRejects(
      session,
      () => append(session, withOptions(UM('a'), { surfaceOp: 'append', sourceEventSeqs: [0, -1] })),
      SurfaceError,
      'INVALID_SOURCES',
      {
        reason: 'not-integer',
      },
    )
  })
})

describe('surface invariants over random valid turns (property)', () => {
  interface StepShape {
    readonly users: number
    readonly chunks: number
    readonly texts: number
    readonly calls: number
    readonly notes: readonly boolean[]
  }

  const stepShape = fc.record({
    users: fc.nat({ max: 2 }),
    chunks: fc.nat({ max: 3 }),
    texts: fc.nat({ max: 2 }),
    calls: fc.nat({ max: 2 }),
    notes: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  })
  const turnsShape = fc.array(fc.array(stepShape, { maxLength: 3 }), { minLength: 1, maxLength: 3 })

  function catalogWithNote(): SessionCatalog {
    const catalog = createSessionCatalog()
    catalog.registerEventType('test/note')
    return catalog
  }

  /**
   * The plans of some turns. With `logOnly` false, chunks and `test/note`s are left out: sources
   * are the seqs of the events actually kept, so the reduced plan is valid too.
   */
  function plansOf(turns: readonly (readonly StepShape[])[], logOnly: boolean): EventPlan[] {
    const plans: EventPlan[] = []
    let notes = 0
    const note = (wanted: boolean | undefined): void => {
      if (logOnly && wanted === true) plans.push({ type: 'test/note', data: { n: notes++ }, options: {} })
    }
    turns.forEach((steps, turnIndex) => {
      const turn = turnIndex + 1
      plans.push(TS(turn))
      steps.forEach((shape, stepIndex) => {
        const step = stepIndex + 1
        plans.push(SS(turn, step))
        note(shape.notes[0])
        for (let index = 0; index < shape.users; index++) {
          const plan = UM(`${turn}.${step}.${index}`)
          plans.push(plan)
        }
        note(shape.notes[1])
        const chunkSeqs: number[] = []
        if (logOnly) {
          for (let index = 0; index < shape.chunks; index++) {
            chunkSeqs.push(plans.length)
            plans.push({
              type: 'assistant/chunk',
              data: { turn, step, chunk: { type: 'text-delta', index: 0, text: `t${index}` } },
              options: {},
            })
          }
        }
        const callIds = Array.from({ length: shape.calls }, (_unused, index) => `c${turn}-${step}-${index}`)
        const blocks = [
          ...Array.from({ length: shape.texts }, (_unused, index) => text(`answer ${index}`)),
          ...callIds.map(call),
        ]
        const assistant = withSources(AM(turn, step, ...blocks), chunkSeqs)
        const data = assistant.data as JsonObject
        plans.push({
          ...assistant,
          data: { ...data, message: { ...(data['message'] as JsonObject), id: `a-${turn}-${step}` } },
        })
        note(shape.notes[2])
        for (const callId of callIds) {
          const callSeq = plans.length
          plans.push(TC(turn, step, callId))
          plans.push(TR(turn, step, callId, callSeq))
        }
        note(shape.notes[3])
        plans.push(SE(turn, step))
      })
      plans.push(TE(turn, 'completed'))
    })
    return plans
  }

  function sessionOf(plans: readonly EventPlan[], catalog: SessionCatalog): Session {
    const session = createSession({ id: 's1', catalog, clock: fakeClock({ now: 1000 }) })
    appendAll(session, plans)
    return session
  }

  test('equal appends, seeded copies and the log-only-free plan derive equal, frozen messages', () => {
    const catalog = catalogWithNote()
    fc.assert(
      fc.property(turnsShape, (turns) => {
        const plans = plansOf(turns, true)
        const first = sessionOf(plans, catalog)
        const second = sessionOf(plans, catalog)
        expect(second.deriveMessages()).toEqual(first.deriveMessages())
        first.events.forEach((event, index) => {
          expect(event.seq).toBe(index)
        })
        const seeded = createSession({ id: 's2', catalog, clock: fakeClock({ now: 1000 }), seed: first.events })
        expect(seeded.deriveMessages()).toEqual(first.deriveMessages())
        expect(seeded.length).toBe(first.length + 1)
        const reopened = createSession({ id: 's3', catalog, clock: fakeClock({ now: 1000 }), seed: seeded.events })
        expect(reopened.length).toBe(seeded.length)
        expect(reopened.events).toEqual(seeded.events)
        const reduced = sessionOf(plansOf(turns, false), catalog)
        expect(reduced.length).toBeLessThanOrEqual(first.length)
        expect(reduced.deriveMessages()).toEqual(first.deriveMessages())
        for (const message of first.deriveMessages()) {
          expect(isDeepFrozen(message)).toBe(true)
          expect(['user', 'assistant']).toContain(message.role)
        }
        expect(first.deriveMessages()).toEqual(projectFromScratch(first.events))
      }),
      { numRuns: 60 },
    )
  })
})

describe('provenance rules', () => {
  function twoUsers(): Session {
    const session = sessions.create()
    appendAll(session, [UM('a'), UM('b')])
    return session
  }

  test.each<[string, unknown, string]>([
    ["'x'", 'x', 'not-array'],
    ['[]', [], 'empty'],
    ['[0, 0]', [0, 0], 'duplicate'],
    ["['0']", ['0'], 'not-integer'],
    ['[0.5]', [0.5], 'not-integer'],
    ['[2]', [2], 'not-earlier'],
    ['[0, 0, 5]', [0, 0, 5], 'duplicate'],
    ['[5, 0.5]', [5, 0.5], 'not-integer'],
  ])('a UM with sources %s rejects INVALID_SOURCES with the reason in the table', (_label, sources, reason) => {
    const session = twoUsers()
    expectRejects(
      session,
      () => append(session, withOptions(UM('c'), { surfaceOp: 'append', sourceEventSeqs: sources })),
      SurfaceError,
      'INVALID_SOURCES',
      {
        reason,
        seq: 2,
      },
    )
  })

  test('a hole rejects NOT_JSON at options.sourceEventSeqs[0]', () => {
    const session = twoUsers()
    // biome-ignore lint/suspicious/noSparseArray: a hole is the case under test
    const sparse = [, 0]
    expectRejects(
      session,
      () => append(session, withOptions(UM('c'), { surfaceOp: 'append', sourceEventSeqs: sparse })),
      SessionEventError,
      'NOT_JSON',
      {
        path: 'options.sourceEventSeqs[0]',
      },
    )
  })

  test('a replace {0,1} with sources [0] rejects REPLACE_UNCOVERED missing [1]', () => {
    const session = twoUsers()
    expectRejects(session, () => append(session, replaceUM('c', 0, 1, [0])), SurfaceError, 'REPLACE_UNCOVERED', {
      missing: [1],
    })
  })

  test('AM with [] is accepted, other types may omit sources, and sources may point at any earlier type', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), AM(1, 1, text('x'))])
    expect(session.at(2)?.sourceEventSeqs).toEqual([])
    append(session, withSources(UM('y'), [0, 1, 2]))
    const withoutSources = append(session, withOptions(AM(1, 1, text('z')), { surfaceOp: 'append' }))
    expect('sourceEventSeqs' in withoutSources).toBe(false)
  })
})

describe('replaces in surface order', () => {
  test('nodes [3] and the replacements of foldSurface', () => {
    const session = sessions.create()
    appendAll(session, [UM('a'), UM('b'), replaceUM('c', 0, 0, [0])])
    expect(session.surfaceNodes()).toEqual([2, 1])
    append(session, replaceUM('d', 2, 1, [2, 1]))
    expect(session.surfaceNodes()).toEqual([3])
    const fold = foldSurface(session.events)
    expect(fold.nodes).toEqual([3])
    expect(fold.replacements).toEqual([
      { seq: 2, start: 0, end: 0, shadowedSeqs: [0] },
      { seq: 3, start: 2, end: 1, shadowedSeqs: [2, 1] },
    ])
    const again = foldSurface(session.events)
    expect(again.nodes).not.toBe(fold.nodes)
    expect(again.replacements).not.toBe(fold.replacements)
    expect(session.deriveMessages().map((message) => (message.content[0] as { text: string }).text)).toEqual(['d'])
  })
})

describe('replace positions and failures', () => {
  test.each<[string, readonly string[], number, number, readonly number[]]>([
    ['[0,1,2] replace {0,1}', ['a', 'b', 'c'], 0, 1, [3, 2]],
    ['[0,1] replace {1,1}', ['a', 'b'], 1, 1, [0, 2]],
    ['[0,1,2] replace {1,1}', ['a', 'b', 'c'], 1, 1, [0, 3, 2]],
  ])('%s gives the nodes in the table', (_label, users, start, end, nodes) => {
    const session = sessions.create()
    appendAll(session, users.map(UM))
    const sources = session
      .surfaceNodes()
      .slice(session.surfaceNodes().indexOf(start), session.surfaceNodes().indexOf(end) + 1)
    append(session, replaceUM('r', start, end, sources))
    expect(session.surfaceNodes()).toEqual(nodes)
  })

  test('on [0,1]: start 5 and end 99 are not found; {1,0} is reversed', () => {
    const session = sessions.create()
    appendAll(session, [UM('a'), UM('b')])
    expectRejects(session, () => append(session, replaceUM('r', 5, 1, [0, 1])), SurfaceError, 'REPLACE_NOT_FOUND', {
      which: 'start',
    })
    expectRejects(session, () => append(session, replaceUM('r', 0, 99, [0, 1])), SurfaceError, 'REPLACE_NOT_FOUND', {
      which: 'end',
    })
    expectRejects(session, () => append(session, replaceUM('r', 1, 0, [0, 1])), SurfaceError, 'REPLACE_REVERSED')
  })

  test('a shadowed seq is no longer a node', () => {
    const session = sessions.create()
    appendAll(session, [UM('a'), UM('b'), replaceUM('c', 0, 0, [0])])
    expectRejects(session, () => append(session, replaceUM('d', 0, 0, [0])), SurfaceError, 'REPLACE_NOT_FOUND', {
      which: 'start',
    })
  })
})

describe('what the surface holds and derives', () => {
  test('an empty-content AM is a node that derives nothing; chunks and boundaries never appear', () => {
    sessions.registerEventType('test/note')
    const session = sessions.create()
    const plans: EventPlan[] = [
      TS(1),
      SS(1, 1),
      UM('a'),
      {
        type: 'assistant/chunk',
        data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } },
        options: {},
      },
      withSources(AM(1, 1), [3]),
      { type: 'test/note', data: { n: 1 }, options: {} },
      SE(1, 1),
      SS(1, 2),
      AM(1, 2, text('calling'), call('c1')),
      TC(1, 2, 'c1'),
      TR(1, 2, 'c1', 9),
      SE(1, 2),
      TE(1, 'completed'),
      UM('b'),
      replaceUM('c', 2, 13, [2, 4, 8, 10, 13]),
      UM('d'),
    ]
    for (const plan of plans) {
      const before = session.deriveMessages()
      const event = append(session, plan)
      const surface = ['user/message', 'assistant/message', 'tool/result'].includes(event.type)
      if (!surface) expect(session.deriveMessages()).toBe(before)
      expect(session.deriveMessages()).toEqual(projectFromScratch(session.events))
      expect(session.surfaceNodes()).toEqual(foldSurface(session.events).nodes)
    }
    expect(session.surfaceNodes()).toEqual([14, 15])
  })

  test('the empty AM stays a node between the user message and the next one', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), UM('a')])
    const before = session.deriveMessages()
    append(session, AM(1, 1))
    expect(session.surfaceNodes()).toEqual([2, 3])
    expect(session.deriveMessages()).toBe(before)
    expect(session.deriveMessages()).toHaveLength(1)
  })

  test('replacing two user nodes by one gives a new array of length 1; the held array keeps length 2', () => {
    const session = sessions.create()
    appendAll(session, [UM('a'), UM('b')])
    const held = session.deriveMessages()
    append(session, replaceUM('c', 0, 1, [0, 1]))
    const next = session.deriveMessages()
    expect(next).not.toBe(held)
    expect(next).toHaveLength(1)
    expect(held).toHaveLength(2)
    expect(next[0]).toBe(session.at(2)?.data)
  })
})

describe('tool pairs are never split', () => {
  function toolTurn(): Session {
    const session = sessions.create()
    appendAll(session, [
      TS(1),
      SS(1, 1),
      UM('q'),
      AM(1, 1, call('c1')),
      TC(1, 1, 'c1'),
      TR(1, 1, 'c1', 4),
      SE(1, 1),
      TE(1, 'completed'),
    ])
    expect(session.surfaceNodes()).toEqual([2, 3, 5])
    return session
  }

  test('a replace of {2,3} splits c1; a rewrite keeps the pair; a replace covering both is accepted', () => {
    const session = toolTurn()
    expectRejects(
      session,
      () => append(session, replaceUM('s', 2, 3, [2, 3])),
      SurfaceError,
      'REPLACE_SPLITS_TOOL_PAIR',
      {
        callId: 'c1',
        assistantSeq: 3,
        resultSeq: 5,
      },
    )
    append(session, TS(2))
    const rewrite = append(session, rewriteOf(1, 1, 'c1', 5, [text('shortened')]))
    expect(rewrite.seq).toBe(9)
    expect(session.surfaceNodes()).toEqual([2, 3, 9])
    expect(session.deriveMessages()[2]).toBe((rewrite.data as JsonObject)['message'])
    append(session, replaceUM('s', 2, 9, [2, 3, 9]))
    expect(session.surfaceNodes()).toEqual([10])
  })

  test('shadowing only the result, or an assistant whose call has no result node yet, is a split', () => {
    const session = toolTurn()
    expectRejects(session, () => append(session, replaceUM('s', 5, 5, [5])), SurfaceError, 'REPLACE_SPLITS_TOOL_PAIR', {
      callId: 'c1',
      assistantSeq: 3,
      resultSeq: 5,
    })
    const open = sessions.create()
    appendAll(open, [TS(1), SS(1, 1), UM('q'), AM(1, 1, call('c1'))])
    expectRejects(open, () => append(open, replaceUM('s', 2, 3, [2, 3])), SurfaceError, 'REPLACE_SPLITS_TOOL_PAIR', {
      callId: 'c1',
      assistantSeq: 3,
      resultSeq: undefined,
    })
  })
})

describe('tool-result rewrites', () => {
  function toolTurnOpen(): Session {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1), UM('q'), AM(1, 1, call('c1')), TC(1, 1, 'c1'), TR(1, 1, 'c1', 4), SE(1, 1)])
    return session
  }

  test('a rewrite must shadow exactly one node', () => {
    const session = toolTurnOpen()
    const plan = rewriteOf(1, 1, 'c1', 3, [text('x')])
    expectRejects(
      session,
      () =>
        append(session, withOptions(plan, { surfaceOp: { op: 'replace', start: 3, end: 5 }, sourceEventSeqs: [3, 5] })),
      SurfaceError,
      'REWRITE_NOT_SINGLE',
    )
  })

  test('a rewrite must shadow a tool/result', () => {
    const session = toolTurnOpen()
    expectRejects(
      session,
      () => append(session, rewriteOf(1, 1, 'c1', 2, [text('x')])),
      SurfaceError,
      'REWRITE_NOT_TOOL_RESULT',
    )
  })

  test('a rewrite may change only message.content[0].content (path of the first difference)', () => {
    const session = toolTurnOpen()
    const plan = rewriteOf(1, 1, 'c1', 5, [text('x')])
    const data = structuredClone(plan.data) as { message: { id: string } }
    data.message.id = 'r-other'
    expectRejects(
      session,
      () => append(session, { ...plan, data: data as never }),
      SurfaceError,
      'REWRITE_NOT_CONTENT_ONLY',
      { path: 'data.message.id' },
    )
    const flagged = structuredClone(plan.data) as { message: { content: { isError?: boolean }[] } }
    ;(flagged.message.content[0] as { isError?: boolean }).isError = true
    expectRejects(
      session,
      () => append(session, { ...plan, data: flagged as never }),
      SurfaceError,
      'REWRITE_NOT_CONTENT_ONLY',
      {
        path: 'data.message.content[0].isError',
      },
    )
  })

  test('key order is ignored when comparing a rewrite with its target', () => {
    const session = toolTurnOpen()
    const plan = rewriteOf(1, 1, 'c1', 5, [text('x')])
    const data = plan.data as JsonObject
    const reordered = { message: data['message'], step: data['step'], turn: data['turn'] }
    append(session, { ...plan, data: reordered as never })
    expect(session.surfaceNodes()).toEqual([2, 3, 7])
  })
})

describe('markers and foldSurface', () => {
  test('a log-only type may not carry surfaceOp or sourceEventSeqs', () => {
    const session = sessions.create()
    appendAll(session, [TS(1), SS(1, 1)])
    const chunk: EventPlan = {
      type: 'assistant/chunk',
      data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } },
      options: {},
    }
    expectRejects(
      session,
      () => append(session, withOptions(chunk, { surfaceOp: 'append' })),
      SurfaceError,
      'SURFACE_MARKER_FORBIDDEN',
      { field: 'surfaceOp' },
    )
    expectRejects(
      session,
      () => append(session, withOptions(chunk, { sourceEventSeqs: [0] })),
      SurfaceError,
      'SURFACE_MARKER_FORBIDDEN',
      {
        field: 'sourceEventSeqs',
      },
    )
  })

  test('foldSurface replays with the same checks and errors', () => {
    const bad = logOf([UM('a'), UM('b'), replaceUM('c', 1, 0, [0, 1])])
    let thrown: unknown
    try {
      foldSurface(bad)
    } catch (error) {
      thrown = error
    }
    expect(SurfaceError.is(thrown)).toBe(true)
    expect((thrown as SurfaceError).code).toBe('REPLACE_REVERSED')
    const unmarked = logOf([{ ...UM('a'), options: {} }])
    expect(() => foldSurface(unmarked)).toThrow(expect.objectContaining({ code: 'SURFACE_MARKER_REQUIRED' }))
  })

  test('surfaceNodes() is frozen and cached until the surface changes', () => {
    const session = sessions.create()
    append(session, UM('a'))
    const nodes = session.surfaceNodes()
    expect(Object.isFrozen(nodes)).toBe(true)
    expect(session.surfaceNodes()).toBe(nodes)
    append(session, TS(1))
    expect(session.surfaceNodes()).toBe(nodes)
    append(session, UM('b'))
    expect(session.surfaceNodes()).toEqual([0, 2])
    expect(nodes).toEqual([0])
  })
})
