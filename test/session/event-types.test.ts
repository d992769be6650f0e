import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createSession,
  definePlugin,
  EventTypeError,
  type Harness,
  type Session,
  SessionEventError,
  type SessionRegistry,
  services,
  StructureError,
} from 'yoke'
import { type EventTypeOptions, createSessionCatalog } from '../../src/session/index.js'
import { fakeClock } from 'yoke/testing'
import { z } from 'zod'
import { thrownBy } from '../helpers/outcomes.js'
import { AM, logOf, SE, SS, TE, TS, text, UM } from './builders.js'
import { append, freshHarness, freshRegistry, note } from './session-helpers.js'

const coreTypes = [
  'agent/inbox/spliced',
  'agent/run-options',
  'assistant/chunk',
  'assistant/message',
  'request/context',
  'request/header',
  'session/end-seed',
  'step/end',
  'step/start',
  'tool/call',
  'tool/result',
  'turn/end',
  'turn/start',
  'user/message',
]

/** The types a default harness lists: the core ones plus those the default bundle's plugins register. */
const defaultTypes = [
  ...coreTypes,
  'approval/asked',
  'approval/decided',
  'compaction/end',
  'compaction/prune',
  'compaction/start',
  'compaction/summary',
  'llm/retry',
  'llm/retry-started',
].sort()

let harness: Harness
let sessions: SessionRegistry

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
})

afterEach(() => harness.close())

/** Runs a rejected append and checks that nothing changed. */
function rejects(session: Session, action: () => unknown): unknown {
  const events = session.events
  const length = session.length
  const messages = session.deriveMessages()
  const error = thrownBy(action)
  expect(session.length).toBe(length)
  expect(session.events).toBe(events)
  expect(session.deriveMessages()).toBe(messages)
  return error
}

function expectEventError(error: unknown, fields: Record<string, unknown>): void {
  expect(SessionEventError.is(error), String(error)).toBe(true)
  expect(error).toMatchObject(fields)
}

function expectTypeError(error: unknown, fields: Record<string, unknown>): void {
  expect(EventTypeError.is(error), String(error)).toBe(true)
  expect(error).toMatchObject(fields)
}

describe('eventTypes()', () => {
  test("lists the core types and the default plugins' types, sorted", () => {
    expect(sessions.eventTypes()).toEqual(defaultTypes)
    expect(Object.isFrozen(sessions.eventTypes())).toBe(true)
  })

  test('includes registered types, sorted, and drops them when unregistered', () => {
    const disposeNote = sessions.registerEventType('test/note')
    const disposeAlpha = sessions.registerEventType('aa/first')
    const disposeZeta = sessions.registerEventType('zz/last-one')
    const listed = sessions.eventTypes()
    expect(listed).toEqual([...defaultTypes, 'test/note', 'aa/first', 'zz/last-one'].sort())
    expect(listed[0]).toBe('aa/first')
    expect(listed.at(-1)).toBe('zz/last-one')
    expect(sessions.catalog.eventTypes()).toEqual(listed)
    disposeNote()
    expect(sessions.eventTypes()).toEqual([...defaultTypes, 'aa/first', 'zz/last-one'].sort())
    disposeAlpha()
    disposeZeta()
    expect(sessions.eventTypes()).toEqual(defaultTypes)
  })

  test('a standalone catalog starts with the core types; createSession defaults to them', () => {
    expect(createSessionCatalog().eventTypes()).toEqual(coreTypes)
    const session = createSession({ id: 'alone', clock: fakeClock({ now: 1000 }) })
    expectEventError(
      thrownBy(() => append(session, note(1))),
      { code: 'UNKNOWN_EVENT_TYPE' },
    )
    const catalog = createSessionCatalog()
    catalog.registerEventType('test/note')
    const withCatalog = createSession({ id: 'alone', clock: fakeClock({ now: 1000 }), catalog })
    expect(append(withCatalog, note(1))).toEqual({ type: 'test/note', seq: 0, time: 1000, data: { n: 1 } })
  })
})

describe('unknown types and ignorable', () => {
  test('an unknown type is UNKNOWN_EVENT_TYPE; with ignorable it commits with ignorable: true', () => {
    const session = sessions.create()
    expectEventError(
      rejects(session, () => session.append('x/y', {})),
      { code: 'UNKNOWN_EVENT_TYPE', type: 'x/y', seq: 0, sessionId: 's1' },
    )
    const event = session.append('x/y', {}, { ignorable: true })
    expect(event).toStrictEqual({ type: 'x/y', seq: 0, time: 1000, data: {}, ignorable: true })
    expect(Object.keys(event)).toEqual(['type', 'seq', 'time', 'data', 'ignorable'])
    expect(session.at(0)).toBe(event)
  })

  test('a non-ignorable unknown event in a seed is UNKNOWN_EVENT_TYPE with its index', () => {
    const seed = [...logOf([UM('a'), UM('b')]), { type: 'x/y', seq: 2, time: 5, data: {} }]
    const error = thrownBy(() => sessions.create({ id: 'seeded', seed }))
    expectEventError(error, { code: 'UNKNOWN_EVENT_TYPE', index: 2, type: 'x/y' })
    expect(sessions.get('seeded')).toBeUndefined()
  })

  test('an ignorable unknown event in a seed is kept in place', () => {
    const seed = [
      ...logOf([UM('a'), UM('b')]),
      { type: 'x/y', seq: 2, time: 5, data: { any: ['thing'] }, ignorable: true },
      ...logOf([UM('c')]).map((event) => ({ ...event, seq: 3 })),
    ]
    const session = sessions.create({ seed })
    expect(session.length).toBe(5)
    expect(session.at(2)).toStrictEqual({ type: 'x/y', seq: 2, time: 5, data: { any: ['thing'] }, ignorable: true })
    expect(session.at(4)?.type).toBe('session/end-seed')
    expect(session.surfaceNodes()).toEqual([0, 1, 3])
  })

  test('ignorable is refused on a core type, live and in a seed', () => {
    const session = sessions.create()
    expectEventError(
      rejects(session, () => session.append('turn/start', { turn: 1 }, { ignorable: true })),
      { code: 'INVALID_ENVELOPE', field: 'options.ignorable' },
    )
    const seed = [{ type: 'turn/start', seq: 0, time: 1, data: { turn: 1 }, ignorable: true }]
    expectEventError(
      thrownBy(() => sessions.create({ seed })),
      { code: 'INVALID_ENVELOPE', index: 0 },
    )
  })

  test('session/end-seed is reserved for seeded construction', () => {
    const session = sessions.create()
    expectEventError(
      rejects(session, () => session.append('session/end-seed', {})),
      { code: 'RESERVED_EVENT_TYPE' },
    )
  })

  test('ignorable is allowed on a registered type', () => {
    sessions.registerEventType('test/note')
    const session = sessions.create()
    expect(session.append('test/note', { n: 1 }, { ignorable: true })).toStrictEqual({
      type: 'test/note',
      seq: 0,
      time: 1000,
      data: { n: 1 },
      ignorable: true,
    })
  })
})

describe('registered types', () => {
  const markOptions = (): EventTypeOptions => ({ schema: z.object({ n: z.number() }), enclosure: 'turn' })

  test('the schema checks data live and in seeds', () => {
    sessions.registerEventType('test/mark', markOptions())
    const session = sessions.create()
    append(session, TS(1))
    expectEventError(
      rejects(session, () => session.append('test/mark', { n: '1' })),
      { code: 'INVALID_PAYLOAD', path: 'data.n', type: 'test/mark', seq: 1 },
    )
    expect(session.append('test/mark', { n: 1 }).seq).toBe(1)
    const seed = [...logOf([TS(1)]), { type: 'test/mark', seq: 1, time: 1000, data: { n: '1' } }]
    expectEventError(
      thrownBy(() => sessions.create({ seed })),
      { code: 'INVALID_PAYLOAD', path: 'data.n', index: 1 },
    )
  })

  test("enclosure 'turn' needs an open turn, live and in seeds", () => {
    sessions.registerEventType('test/mark', markOptions())
    const session = sessions.create()
    const error = rejects(session, () => session.append('test/mark', { n: 1 }))
    expect(StructureError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'NO_OPEN_TURN', type: 'test/mark' })
    for (const plan of [TS(1), SS(1, 1), UM('hi'), AM(1, 1, text('x')), SE(1, 1), TE(1, 'completed')])
      append(session, plan)
    const between = rejects(session, () => session.append('test/mark', { n: 1 }))
    expect(StructureError.is(between)).toBe(true)
    expect(between).toMatchObject({ code: 'NO_OPEN_TURN', type: 'test/mark', seq: 6, sessionId: 's1' })
    const seed = [{ type: 'test/mark', seq: 0, time: 1000, data: { n: 1 } }]
    expect(thrownBy(() => sessions.create({ seed }))).toMatchObject({ code: 'NO_OPEN_TURN', index: 0 })
  })

  test("enclosure 'step' needs an open step; 'none' goes anywhere", () => {
    sessions.registerEventType('test/in-step', { enclosure: 'step' })
    sessions.registerEventType('test/note')
    const session = sessions.create()
    append(session, note(0))
    append(session, TS(1))
    append(session, note(1))
    expect(rejects(session, () => session.append('test/in-step', {}))).toMatchObject({ code: 'NO_OPEN_STEP' })
    append(session, SS(1, 1))
    session.append('test/in-step', {})
    append(session, note(2))
    append(session, SE(1, 1))
    expect(rejects(session, () => session.append('test/in-step', {}))).toMatchObject({ code: 'NO_OPEN_STEP' })
    expect(session.length).toBe(7)
  })

  test('registering a registered or core name again is DUPLICATE_EVENT_TYPE', () => {
    sessions.registerEventType('test/mark', markOptions())
    expectTypeError(
      thrownBy(() => sessions.registerEventType('test/mark')),
      { code: 'DUPLICATE_EVENT_TYPE', eventType: 'test/mark' },
    )
    expectTypeError(
      thrownBy(() => sessions.registerEventType('turn/start')),
      { code: 'DUPLICATE_EVENT_TYPE', eventType: 'turn/start' },
    )
    expectTypeError(
      thrownBy(() => sessions.registerEventType('session/end-seed')),
      { code: 'DUPLICATE_EVENT_TYPE' },
    )
  })

  test('names must match noun/verb: INVALID_EVENT_TYPE_NAME registers nothing', () => {
    const before = sessions.eventTypes()
    for (const name of ['Bad', 'bad', 'a/B', '/a', 'a/', 'a//b', '1a/b', 'a/b c', '', 'a-/b_c']) {
      expectTypeError(
        thrownBy(() => sessions.registerEventType(name)),
        { code: 'INVALID_EVENT_TYPE_NAME' },
      )
    }
    expect(sessions.eventTypes()).toBe(before)
    sessions.registerEventType('a-1/b-2/c3')
    expect(sessions.eventTypes()).toContain('a-1/b-2/c3')
  })

  test('surface: true is SURFACE_NOT_ALLOWED and registers nothing', () => {
    const options = { surface: true } as unknown as EventTypeOptions
    expectTypeError(
      thrownBy(() => sessions.registerEventType('test/surfaced', options)),
      { code: 'SURFACE_NOT_ALLOWED', eventType: 'test/surfaced' },
    )
    expect(sessions.eventTypes()).not.toContain('test/surfaced')
    sessions.registerEventType('test/surfaced', { surface: false })
    expect(sessions.eventTypes()).toContain('test/surfaced')
  })

  test('plugin types are log-only: surface markers are forbidden', () => {
    sessions.registerEventType('test/note')
    const session = sessions.create()
    const error = rejects(session, () => session.append('test/note', {}, { surfaceOp: 'append' }))
    expect(error).toMatchObject({ code: 'SURFACE_MARKER_FORBIDDEN' })
  })

  test('after the disposer, appends fail with UNKNOWN_EVENT_TYPE and earlier events stay', () => {
    const dispose = sessions.registerEventType('test/mark', markOptions())
    const session = sessions.create()
    append(session, TS(1))
    const committed = session.append('test/mark', { n: 1 })
    const events = session.events
    dispose()
    expect(sessions.eventTypes()).not.toContain('test/mark')
    expectEventError(
      rejects(session, () => session.append('test/mark', { n: 1 })),
      { code: 'UNKNOWN_EVENT_TYPE' },
    )
    expect(session.events).toBe(events)
    expect(session.at(1)).toBe(committed)
    expect(committed).toStrictEqual({ type: 'test/mark', seq: 1, time: 1000, data: { n: 1 } })
    expectEventError(
      thrownBy(() => sessions.create({ seed: session.events })),
      { code: 'UNKNOWN_EVENT_TYPE', index: 1 },
    )
    dispose()
    sessions.registerEventType('test/mark')
    expect(session.append('test/mark', { anything: true }).seq).toBe(2)
  })
})

describe('registration through a plugin', () => {
  const notes = definePlugin({
    name: 'notes',
    inject: [services.sessions],
    apply(ctx) {
      ctx.sessions.registerEventType('test/note')
    },
  })

  test('a runtime plugin that stops unregisters its type', async () => {
    const handle = await harness.ctx.plugin(notes)
    expect(sessions.eventTypes()).toContain('test/note')
    const session = sessions.create()
    append(session, note(1))
    await handle.dispose()
    expect(sessions.eventTypes()).not.toContain('test/note')
    expectEventError(
      thrownBy(() => append(session, note(2))),
      { code: 'UNKNOWN_EVENT_TYPE' },
    )
    expect(session.length).toBe(1)
  })

  test('a boot plugin registers for the harness life; close unregisters it', async () => {
    const own = await freshHarness({ plugins: [notes] })
    const registry = own.ctx.sessions
    const catalog = registry.catalog
    expect(registry.eventTypes()).toContain('test/note')
    expect(sessions.eventTypes()).not.toContain('test/note')
    await own.close()
    expect(catalog.eventTypes()).not.toContain('test/note')
  })

  test('a disabled plugin registers nothing', async () => {
    const own = await freshHarness({ plugins: [{ plugin: notes, disabled: true }] })
    expect(own.ctx.sessions.eventTypes()).toEqual(defaultTypes)
    await own.close()
  })

  test('a registration failing in apply fails the plugin start and registers nothing', async () => {
    const broken = definePlugin({
      name: 'broken',
      inject: [services.sessions],
      apply(ctx) {
        ctx.sessions.registerEventType('test/ok')
        ctx.sessions.registerEventType('Bad')
      },
    })
    await expect(harness.ctx.plugin(broken)).rejects.toThrow()
    expect(sessions.eventTypes()).not.toContain('test/ok')
  })
})
