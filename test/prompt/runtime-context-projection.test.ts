import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createRuntimeContextProjection,
  createSession,
  type Harness,
  type IdSource,
  InvalidArgumentError,
  type JsonValue,
  type RuntimeContextProjection,
  renderPrompt,
  type Session,
  type SessionEvent,
  type SessionRegistry,
  type UserMessage,
} from 'yoke'
import { type PromptTemplateSection, RUNTIME_CONTEXT_CLEARED, RUNTIME_CONTEXT_HEADER } from '../../src/prompt/index.js'
import { fakeClock, fakeIds } from 'yoke/testing'
import { isDeepFrozen } from '../helpers/outcomes.js'
import { AM, type EventPlan, SE, SS, TE, TS, text, UM } from '../session/builders.js'
import { append, appendAll, freshRegistry, replaceUM } from '../session/session-helpers.js'

const HDR = RUNTIME_CONTEXT_HEADER
const CLEARED = RUNTIME_CONTEXT_CLEARED
const owned = { kind: 'plugin', plugin: 'yoke/runtime-context', form: 'snapshot' } as const

let harness: Harness
let sessions: SessionRegistry
let ids: IdSource

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
  ids = fakeIds()
})

afterEach(() => harness.close())

/** Runtime contexts rendered like the loop does: one `renderPrompt` per context, kind `context`. */
function renderContexts(
  contexts: readonly PromptTemplateSection[],
  variables: Readonly<Record<string, string | undefined>>,
): PromptTemplateSection[] {
  return contexts.map((context) => ({
    name: context.name,
    text: renderPrompt([context], variables, { kind: 'context' }),
  }))
}

/** A `user/message` plan carrying `message` as data (what the loop logs for an entered candidate). */
function messagePlan(message: UserMessage | JsonValue): EventPlan {
  return { type: 'user/message', data: message as unknown as JsonValue, options: { surfaceOp: 'append' } }
}

/** An owned snapshot message with the given content, for logs the projection did not write. */
function ownedPlan(id: string, blocks: readonly JsonValue[]): EventPlan {
  return messagePlan({ id, role: 'user', content: blocks as JsonValue[], source: owned })
}

interface TurnRecord {
  /** The seq of the turn's prompt `user/message`. */
  readonly promptSeq: number
  /** The seq of the snapshot logged in this turn, if any. */
  readonly snapshotSeq: number | undefined
  /** The candidate `project` returned (logged or not). */
  readonly candidate: UserMessage | undefined
}

/**
 * One simulated turn of one step: project where the loop does (before the claimed prompt is logged), then log the
 * prompt and, when `keep` allows, the candidate right after it; `during` runs inside the open
 * step after those (a stand-in for a pre-step listener's own writes).
 */
function turn(
  session: Session,
  projection: RuntimeContextProjection,
  number: number,
  rendered: readonly PromptTemplateSection[],
  options: { keep?: boolean; during?: () => void } = {},
): TurnRecord {
  appendAll(session, [TS(number), SS(number, 1)])
  const candidate = projection.project(rendered)
  const promptSeq = append(session, UM(`prompt ${number}`)).seq
  let snapshotSeq: number | undefined
  if (candidate !== undefined && options.keep !== false) snapshotSeq = append(session, messagePlan(candidate)).seq
  options.during?.()
  appendAll(session, [AM(number, 1, text(`answer ${number}`)), SE(number, 1), TE(number, 'completed')])
  return { promptSeq, snapshotSeq, candidate }
}

function ownedEvents(session: Session): SessionEvent[] {
  return session.events.filter((event) => {
    const source = (event.data as { source?: { plugin?: string } } | null)?.source
    return event.type === 'user/message' && source?.plugin === 'yoke/runtime-context'
  })
}

function textOf(event: SessionEvent | UserMessage | undefined): string | undefined {
  const message = (event !== undefined && 'role' in event ? event : event?.data) as unknown as UserMessage | undefined
  const [first] = message?.content ?? []
  return first?.type === 'text' ? first.text : undefined
}

const modeContext = [{ name: 'mode', text: 'Mode: {{mode}}' }]

describe('a changing context is logged only when it changes', () => {
  test('plan, plan, build, disposed → CLEARED, then nothing', () => {
    const session = sessions.create()
    const projection = createRuntimeContextProjection({ session, ids })
    const modes = ['plan', 'plan', 'build']
    const records: TurnRecord[] = []
    for (const [index, mode] of modes.entries())
      records.push(turn(session, projection, index + 1, renderContexts(modeContext, { mode })))
    // The context is disposed: the assembly has no contexts any more.
    records.push(turn(session, projection, 4, renderContexts([], { mode: 'build' })))
    records.push(turn(session, projection, 5, []))

    expect(records.map((record) => record.snapshotSeq !== undefined)).toEqual([true, false, true, true, false])
    const logged = ownedEvents(session)
    expect(logged.map(textOf)).toEqual([`${HDR}\n\nMode: plan`, `${HDR}\n\nMode: build`, CLEARED])
    expect(logged.map((event) => event.seq)).toEqual([
      records[0]?.snapshotSeq,
      records[2]?.snapshotSeq,
      records[3]?.snapshotSeq,
    ])
    for (const record of records)
      if (record.snapshotSeq !== undefined) expect(record.snapshotSeq).toBe(record.promptSeq + 1)
    expect(logged.map((event) => (event.data as unknown as UserMessage).id)).toEqual(['m1', 'm2', 'm3'])
    expect(projection.retainedSeq).toBe(records[3]?.snapshotSeq)
  })

  test('the snapshot message has the exact shape, is deep-frozen and takes its id from ids("message")', () => {
    const session = sessions.create()
    const kinds: string[] = []
    const projection = createRuntimeContextProjection({
      session,
      ids: (kind) => {
        kinds.push(kind)
        return `id-${kinds.length}`
      },
    })
    const message = projection.project([
      { name: 'mode', text: 'Mode: plan' },
      { name: 'empty', text: '' },
      { name: 'blank', text: ' \n ' },
      { name: 'cwd', text: 'In /w.' },
    ])
    expect(message).toEqual({
      id: 'id-1',
      role: 'user',
      content: [{ type: 'text', text: `${HDR}\n\nMode: plan\n\nIn /w.` }],
      source: { kind: 'plugin', plugin: 'yoke/runtime-context', form: 'snapshot' },
    })
    expect(isDeepFrozen(message)).toBe(true)
    expect(kinds).toEqual(['message'])
    expect(HDR).toBe('Runtime context (this replaces any earlier runtime context):')
    expect(CLEARED).toBe('Runtime context: none. Any earlier runtime context is no longer in effect.')
  })

  test('project writes nothing, and a candidate that is not logged is projected again', () => {
    const session = sessions.create()
    const projection = createRuntimeContextProjection({ session, ids })
    const length = session.length
    const first = projection.project([{ name: 'mode', text: 'Mode: plan' }])
    const second = projection.project([{ name: 'mode', text: 'Mode: plan' }])
    expect(session.length).toBe(length)
    expect(textOf(first)).toBe(`${HDR}\n\nMode: plan`)
    expect(textOf(second)).toBe(`${HDR}\n\nMode: plan`)
    expect([first?.id, second?.id]).toEqual(['m1', 'm2'])
  })

  test('nothing ever logged and nothing non-empty rendered → undefined, and no id is taken', () => {
    const session = sessions.create()
    const taken: string[] = []
    const projection = createRuntimeContextProjection({
      session,
      ids: (kind) => {
        taken.push(kind)
        return 'x'
      },
    })
    expect(projection.project([])).toBeUndefined()
    expect(
      projection.project([
        { name: 'a', text: '' },
        { name: 'b', text: '\t ' },
      ]),
    ).toBeUndefined()
    expect(turn(session, projection, 1, []).candidate).toBeUndefined()
    expect(taken).toEqual([])
    expect(projection.retainedSeq).toBeUndefined()
  })
})

describe('a replacement that shadows the retained snapshot', () => {
  test('covering the retained seq clears it: turn 2 logs nothing, turn 3 a new snapshot', () => {
    const session = sessions.create()
    const projection = createRuntimeContextProjection({ session, ids })
    const plan = renderContexts(modeContext, { mode: 'plan' })
    const first = turn(session, projection, 1, plan)
    const k = first.snapshotSeq as number
    expect(projection.retainedSeq).toBe(k)
    const second = turn(session, projection, 2, plan, {
      during: () => append(session, replaceUM('summary', k, k, [k])),
    })
    expect(second.candidate).toBeUndefined()
    expect(projection.retainedSeq).toBeUndefined()
    const third = turn(session, projection, 3, plan)
    expect(textOf(third.candidate)).toBe(`${HDR}\n\nMode: plan`)
    expect(ownedEvents(session).map((event) => event.seq)).toEqual([k, third.snapshotSeq])
    expect(session.surfaceNodes()).not.toContain(k)
    expect(session.surfaceNodes()).toContain(third.snapshotSeq)
  })

  test('a replace that shadows only the turn-1 prompt keeps the snapshot: neither turn 2 nor 3 logs one', () => {
    const session = sessions.create()
    const projection = createRuntimeContextProjection({ session, ids })
    const plan = renderContexts(modeContext, { mode: 'plan' })
    const first = turn(session, projection, 1, plan)
    const prompt = first.promptSeq
    const second = turn(session, projection, 2, plan, {
      during: () => append(session, replaceUM('summary', prompt, prompt, [prompt])),
    })
    const third = turn(session, projection, 3, plan)
    expect([second.candidate, third.candidate]).toEqual([undefined, undefined])
    expect(projection.retainedSeq).toBe(first.snapshotSeq)
    expect(ownedEvents(session)).toHaveLength(1)
  })

  test('a replace whose sourceEventSeqs list the retained seq clears it even when it shadows something else', () => {
    const session = sessions.create()
    const projection = createRuntimeContextProjection({ session, ids })
    const first = turn(session, projection, 1, [{ name: 'mode', text: 'Mode: plan' }])
    const k = first.snapshotSeq as number
    append(session, replaceUM('summary', first.promptSeq, first.promptSeq, [first.promptSeq, k]))
    expect(projection.retainedSeq).toBeUndefined()
    expect(textOf(projection.project([{ name: 'mode', text: 'Mode: plan' }]))).toBe(`${HDR}\n\nMode: plan`)
  })

  test('an append-form event listing the retained seq does not clear it', () => {
    const session = sessions.create()
    const projection = createRuntimeContextProjection({ session, ids })
    const first = turn(session, projection, 1, [{ name: 'mode', text: 'Mode: plan' }])
    const k = first.snapshotSeq as number
    append(session, { ...UM('derived'), options: { surfaceOp: 'append', sourceEventSeqs: [k] } })
    expect(projection.retainedSeq).toBe(k)
    expect(projection.project([{ name: 'mode', text: 'Mode: plan' }])).toBeUndefined()
  })

  test('once the retained snapshot is shadowed, an empty rendering projects CLEARED (an owned message exists)', () => {
    const session = sessions.create()
    const projection = createRuntimeContextProjection({ session, ids })
    const k = turn(session, projection, 1, [{ name: 'mode', text: 'Mode: plan' }]).snapshotSeq as number
    append(session, replaceUM('summary', k, k, [k]))
    expect(textOf(projection.project([]))).toBe(CLEARED)
  })
})

test('a candidate dropped in turn 1 is projected again in turn 2', () => {
  const session = sessions.create()
  const projection = createRuntimeContextProjection({ session, ids })
  const plan = renderContexts(modeContext, { mode: 'plan' })
  const first = turn(session, projection, 1, plan, { keep: false })
  expect(first.snapshotSeq).toBeUndefined()
  expect(ownedEvents(session)).toEqual([])
  const second = turn(session, projection, 2, plan)
  expect(textOf(second.candidate)).toBe(`${HDR}\n\nMode: plan`)
  expect(second.snapshotSeq).toBe(second.promptSeq + 1)
  expect(ownedEvents(session).map((event) => event.seq)).toEqual([second.snapshotSeq])
})

describe('construction on an existing log (resume)', () => {
  /** A registered session seeded with `events` (as a resumed log is). */
  function resumed(events: readonly SessionEvent[]): Session {
    return sessions.create({ seed: events })
  }

  test('the newest owned snapshot on the surface is retained', () => {
    const original = sessions.create()
    const writer = createRuntimeContextProjection({ session: original, ids })
    turn(original, writer, 1, [{ name: 'mode', text: 'Mode: plan' }])
    const build = turn(original, writer, 2, [{ name: 'mode', text: 'Mode: build' }])
    const session = resumed(original.events)
    const projection = createRuntimeContextProjection({ session, ids: fakeIds() })
    expect(projection.retainedSeq).toBe(build.snapshotSeq)
    expect(projection.project([{ name: 'mode', text: 'Mode: build' }])).toBeUndefined()
    expect(textOf(projection.project([{ name: 'mode', text: 'Mode: plan' }]))).toBe(`${HDR}\n\nMode: plan`)
    expect(textOf(projection.project([]))).toBe(CLEARED)
  })

  test('a shadowed newer snapshot is skipped for an older one still on the surface', () => {
    const original = sessions.create()
    const writer = createRuntimeContextProjection({ session: original, ids })
    const plan = turn(original, writer, 1, [{ name: 'mode', text: 'Mode: plan' }])
    const build = turn(original, writer, 2, [{ name: 'mode', text: 'Mode: build' }])
    const k = build.snapshotSeq as number
    append(original, replaceUM('summary', k, k, [k]))
    const projection = createRuntimeContextProjection({ session: resumed(original.events), ids: fakeIds() })
    expect(projection.retainedSeq).toBe(plan.snapshotSeq)
    expect(projection.project([{ name: 'mode', text: 'Mode: plan' }])).toBeUndefined()
  })

  test('owned events exist but none is on the surface → none retained, and empty contexts project CLEARED', () => {
    const original = sessions.create()
    const writer = createRuntimeContextProjection({ session: original, ids })
    const first = turn(original, writer, 1, [{ name: 'mode', text: 'Mode: plan' }])
    const last = append(original, UM('after')).seq
    append(
      original,
      replaceUM('summary', first.promptSeq, last, [
        first.promptSeq,
        first.snapshotSeq as number,
        first.promptSeq + 2,
        last,
      ]),
    )
    const projection = createRuntimeContextProjection({ session: resumed(original.events), ids: fakeIds() })
    expect(projection.retainedSeq).toBeUndefined()
    expect(textOf(projection.project([{ name: 'mode', text: 'Mode: plan' }]))).toBe(`${HDR}\n\nMode: plan`)
    expect(textOf(projection.project([]))).toBe(CLEARED)
  })

  test('a log without owned messages: nothing retained, empty contexts → undefined', () => {
    const original = appendAll(sessions.create(), [
      TS(1),
      SS(1, 1),
      UM('hi'),
      AM(1, 1, text('hello')),
      SE(1, 1),
      TE(1, 'completed'),
    ])
    const projection = createRuntimeContextProjection({ session: resumed(original.events), ids })
    expect(projection.retainedSeq).toBeUndefined()
    expect(projection.project([])).toBeUndefined()
  })

  test('a projection created mid-log follows the events committed after it', () => {
    const session = sessions.create()
    const early = createRuntimeContextProjection({ session, ids })
    const writer = createRuntimeContextProjection({ session, ids })
    const first = turn(session, writer, 1, [{ name: 'mode', text: 'Mode: plan' }])
    expect(early.retainedSeq).toBe(first.snapshotSeq)
    expect(early.project([{ name: 'mode', text: 'Mode: plan' }])).toBeUndefined()
  })
})

describe('retained content must be exactly one text block with exactly the text', () => {
  test.each([
    ['two blocks', [text(`${HDR}\n\nMode: plan`), text('extra')]],
    ['one block with other text', [text(`${HDR}\n\nMode: plan `)]],
    [
      'the text block and an image',
      [text(`${HDR}\n\nMode: plan`), { type: 'image', mediaType: 'image/png', uri: 'https://example.com/a.png' }],
    ],
    ['no blocks', []],
  ])('a malformed owned message (%s) never compares equal', (_label, blocks) => {
    const session = appendAll(sessions.create(), [TS(1), SS(1, 1), UM('hi'), ownedPlan('odd', blocks as JsonValue[])])
    const projection = createRuntimeContextProjection({ session, ids })
    expect(projection.retainedSeq).toBe(3)
    const message = projection.project([{ name: 'mode', text: 'Mode: plan' }])
    expect(textOf(message)).toBe(`${HDR}\n\nMode: plan`)
    expect(textOf(projection.project([]))).toBe(CLEARED)
  })

  test('messages of other plugins or forms are not owned', () => {
    const session = appendAll(sessions.create(), [
      TS(1),
      SS(1, 1),
      messagePlan({
        id: 'other-form',
        role: 'user',
        content: [text(CLEARED)],
        source: { kind: 'plugin', plugin: 'yoke/runtime-context', form: 'summary' },
      }),
      messagePlan({
        id: 'other-plugin',
        role: 'user',
        content: [text(CLEARED)],
        source: { kind: 'plugin', plugin: 'yoke/other', form: 'snapshot' },
      }),
      messagePlan({
        id: 'no-form',
        role: 'user',
        content: [text(CLEARED)],
        source: { kind: 'plugin', plugin: 'yoke/runtime-context' },
      }),
      UM(CLEARED),
    ])
    const projection = createRuntimeContextProjection({ session, ids })
    expect(projection.retainedSeq).toBeUndefined()
    expect(projection.project([])).toBeUndefined()
  })
})

describe('cost', () => {
  /** A read-only view of `session` that counts `at` calls. */
  function countingView(session: Session): { view: Session; reads: () => number } {
    let reads = 0
    const view = {
      get length() {
        return session.length
      },
      at(seq: number) {
        reads++
        return session.at(seq)
      },
      surfaceNodes: () => session.surfaceNodes(),
    }
    return { view: view as unknown as Session, reads: () => reads }
  }

  test('construction stops at the newest retained snapshot; afterwards each committed event is read once', () => {
    const session = sessions.create()
    const writer = createRuntimeContextProjection({ session, ids })
    for (let number = 1; number <= 50; number++)
      turn(session, writer, number, [{ name: 'turn', text: `Turn ${number}` }])
    const snapshotSeq = writer.retainedSeq as number
    const { view, reads } = countingView(session)
    const projection = createRuntimeContextProjection({ session: view, ids })
    expect(reads()).toBe(session.length - snapshotSeq)
    const before = reads()
    const length = session.length
    turn(session, writer, 51, [{ name: 'turn', text: 'Turn 51' }])
    expect(session.length - length).toBe(7)
    projection.project([])
    projection.project([])
    expect(projection.retainedSeq).toBe(writer.retainedSeq)
    expect(reads() - before).toBe(7)
  })
})

describe('bad arguments throw InvalidArgumentError', () => {
  test.each([
    ['no options', () => createRuntimeContextProjection(undefined as never), 'options'],
    [
      'a session that is not one',
      () => createRuntimeContextProjection({ session: {} as Session, ids: fakeIds() }),
      'options.session',
    ],
    [
      'ids that are not a function',
      () =>
        createRuntimeContextProjection({ session: createSession({ id: 'plain' }), ids: 'm' as unknown as IdSource }),
      'options.ids',
    ],
  ])('%s', (_label, action, argument) => {
    expect(() => action()).toThrow(InvalidArgumentError)
    try {
      action()
    } catch (error) {
      expect((error as InvalidArgumentError).argument).toBe(argument)
    }
  })

  test.each([
    ['a string', 'Mode: plan', 'rendered'],
    ['a null entry', [null], 'rendered[0]'],
    ['an entry without a name', [{ text: 'x' }], 'rendered[0]'],
    [
      'an entry with a numeric text',
      [
        { name: 'a', text: 'ok' },
        { name: 'b', text: 2 },
      ],
      'rendered[1]',
    ],
  ])('project with %s', (_label, rendered, argument) => {
    const session = createSession({ id: 'plain', clock: fakeClock({ now: 1 }) })
    const projection = createRuntimeContextProjection({ session, ids })
    let thrown: unknown
    try {
      projection.project(rendered as unknown as PromptTemplateSection[])
    } catch (error) {
      thrown = error
    }
    expect(InvalidArgumentError.is(thrown)).toBe(true)
    expect((thrown as InvalidArgumentError).argument).toBe(argument)
    expect(session.length).toBe(0)
  })
})

test('an unregistered session works the same', () => {
  const session = createSession({ id: 'plain', clock: fakeClock({ now: 1 }) })
  const projection = createRuntimeContextProjection({ session, ids })
  const first = turn(session, projection, 1, [{ name: 'mode', text: 'Mode: plan' }])
  expect(first.snapshotSeq).toBeDefined()
  expect(turn(session, projection, 2, [{ name: 'mode', text: 'Mode: plan' }]).candidate).toBeUndefined()
})
