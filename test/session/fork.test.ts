import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createSession, type Harness, type SessionEvent, SessionForkError, type SessionRegistry } from 'yoke'
import { fakeClock } from 'yoke/testing'
import { isDeepFrozen, thrownBy } from '../helpers/outcomes.js'
import { AM, L1, SE, SS, TE, TS, text, UM } from './builders.js'
import { append, appendAll, freshRegistry, recordCreatedIds } from './session-helpers.js'

let harness: Harness
let sessions: SessionRegistry
let created: string[]

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
  created = recordCreatedIds(harness)
})

afterEach(() => harness.close())

/** Runs a refused fork: returns its error after checking that no session was created. */
function refusedFork(action: () => unknown): SessionForkError {
  const live = sessions.list()
  const createdBefore = created.length
  const error = thrownBy(action)
  expect(SessionForkError.is(error), String(error)).toBe(true)
  expect(sessions.list()).toEqual(live)
  expect(created.length).toBe(createdBefore)
  return error as SessionForkError
}

const marker = (seq: number): SessionEvent => ({ type: 'session/end-seed', seq, time: 1000, data: {} })

describe('fork of an empty session', () => {
  test('gives a child with only the marker and the lineage header', () => {
    const parent = sessions.create({ header: { cwd: '/workspace' } })
    expect(parent.id).toBe('s1')
    const child = sessions.fork('s1')
    expect(child.id).toBe('s2')
    expect(child.events).toStrictEqual([marker(0)])
    expect(child.header).toStrictEqual({
      version: 1,
      id: 's2',
      createdAt: 1000,
      cwd: '/workspace',
      parentSession: 's1',
      seedLength: 0,
    })
    expect(Object.keys(child.header)).toEqual(['version', 'id', 'createdAt', 'cwd', 'parentSession', 'seedLength'])
    expect(Object.isFrozen(child.header)).toBe(true)
    expect(child.firstLiveSeq).toBe(0)
    expect(sessions.get('s2')).toBe(child)
    expect(created).toEqual(['s1', 's2'])
    expect(parent.length).toBe(0)
  })
})

describe('fork of a closed log', () => {
  test('copies every event into new frozen objects, then the marker', () => {
    const parent = appendAll(sessions.create(), L1())
    const child = sessions.fork(parent)
    expect(child.id).toBe('s2')
    expect(child.length).toBe(7)
    for (let seq = 0; seq < 6; seq++) {
      expect(child.at(seq)).toStrictEqual(parent.at(seq))
      expect(child.at(seq)).not.toBe(parent.at(seq))
      expect(child.at(seq)?.data).not.toBe(parent.at(seq)?.data)
    }
    expect(isDeepFrozen(child.events)).toBe(true)
    expect(child.at(6)).toStrictEqual(marker(6))
    expect(child.header.seedLength).toBe(6)
    expect(child.header).toStrictEqual({ version: 1, id: 's2', createdAt: 1000, parentSession: 's1', seedLength: 6 })
    expect(child.firstLiveSeq).toBe(6)
    expect(parent.length).toBe(6)
    expect(parent.events.some((event) => event.type === 'session/end-seed')).toBe(false)
    expect(child.deriveMessages()).toStrictEqual(parent.deriveMessages())
    expect(child.turnState()).toStrictEqual(parent.turnState())
  })

  test('the child and parent then grow independently', () => {
    const parent = appendAll(sessions.create(), L1())
    const child = sessions.fork('s1')
    append(parent, TS(2))
    expect(child.length).toBe(7)
    append(child, TS(2))
    append(child, UM('child only'))
    expect(parent.length).toBe(7)
    expect(child.at(7)?.type).toBe('turn/start')
    expect(parent.deriveMessages().map((message) => message.id)).toEqual(['u-hi', 'a-3'])
    expect(child.deriveMessages().map((message) => message.id)).toEqual(['u-hi', 'a-3', 'u-child only'])
  })

  test('createdAt is the clock, and only cwd and metadata are inherited', () => {
    const parent = appendAll(
      sessions.create({
        header: {
          createdAt: 5,
          cwd: '/w',
          metadata: { team: 'a' },
          origin: 'subagent',
          delegationDepth: 2,
          agentPreset: 'p',
        },
      }),
      L1(),
    )
    expect(parent.header.createdAt).toBe(5)
    const child = sessions.fork(parent, { id: 'child' })
    expect(child.id).toBe('child')
    expect(child.header).toStrictEqual({
      version: 1,
      id: 'child',
      createdAt: 1000,
      cwd: '/w',
      parentSession: 's1',
      seedLength: 6,
      metadata: { team: 'a' },
    })
    const grandchild = sessions.fork(child, { at: 5 })
    expect(grandchild.header).toMatchObject({ parentSession: 'child', seedLength: 6, cwd: '/w' })
    expect(grandchild.events.slice(0, 6)).toStrictEqual(parent.events)
  })

  test('a fork of a seeded session keeps its last marker and adds none', () => {
    const seeded = sessions.create({ seed: appendAll(sessions.create({ id: 'origin' }), L1()).events })
    expect(seeded.length).toBe(7)
    const child = sessions.fork(seeded)
    expect(child.length).toBe(7)
    expect(child.events).toStrictEqual(seeded.events)
    expect(child.header.seedLength).toBe(7)
    expect(child.firstLiveSeq).toBe(7)
    const earlier = sessions.fork(seeded, { at: 5 })
    expect(earlier.length).toBe(7)
    expect(earlier.at(6)).toStrictEqual(marker(6))
  })
})

describe('fork at a boundary', () => {
  test('copies the inclusive prefix only', () => {
    const parent = appendAll(sessions.create(), [
      ...L1(),
      TS(2),
      SS(2, 1),
      UM('again'),
      AM(2, 1, text('more')),
      SE(2, 1),
      TE(2, 'completed'),
      TS(3),
    ])
    expect(parent.length).toBe(13)
    const child = sessions.fork('s1', { at: 5 })
    expect(child.length).toBe(7)
    expect(child.events.slice(0, 6)).toStrictEqual(parent.events.slice(0, 6))
    expect(child.at(6)).toStrictEqual(marker(6))
    expect(child.header.seedLength).toBe(6)
    expect(child.deriveMessages().map((message) => message.content)).toEqual([[text('hi')], [text('hello')]])
    const later = sessions.fork('s1', { at: 11 })
    expect(later.header.seedLength).toBe(12)
    expect(later.deriveMessages()).toHaveLength(4)
  })

  test('log-only events after a closed turn are a balanced boundary', () => {
    sessions.registerEventType('test/note')
    const parent = appendAll(sessions.create(), [...L1(), { type: 'test/note', data: {}, options: {} }, UM('between')])
    expect(sessions.fork(parent, { at: 6 }).length).toBe(8)
    expect(sessions.fork(parent).length).toBe(9)
  })
})

describe('invalid boundaries and ids', () => {
  test('an empty source has no seq to fork at', () => {
    sessions.create()
    const error = refusedFork(() => sessions.fork('s1', { at: 0 }))
    expect(error).toMatchObject({ code: 'INVALID_BOUNDARY', at: 0, lastSeq: null })
  })

  test('an explicit at: null (or another non-number) is not a seq, on a full or an empty source', () => {
    appendAll(sessions.create(), L1())
    sessions.create({ id: 'empty' })
    for (const at of [null, false, '', '0']) {
      const error = refusedFork(() => sessions.fork('s1', { at: at as unknown as number }))
      expect(error).toMatchObject({ code: 'INVALID_BOUNDARY', lastSeq: 5 })
      expect(error.at).toBe(at)
      expect(refusedFork(() => sessions.fork('empty', { at: at as unknown as number }))).toMatchObject({
        code: 'INVALID_BOUNDARY',
        lastSeq: null,
      })
    }
    expect(sessions.list().map((session) => session.id)).toEqual(['s1', 'empty'])
  })

  test('at must be a seq of the source', () => {
    appendAll(sessions.create(), L1())
    for (const at of [-1, 0.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = refusedFork(() => sessions.fork('s1', { at }))
      expect(error).toMatchObject({ code: 'INVALID_BOUNDARY', lastSeq: 5 })
      expect(error.at).toBe(at)
    }
    const error = refusedFork(() => sessions.fork('s1', { at: 6 }))
    expect(error).toMatchObject({ code: 'INVALID_BOUNDARY', at: 6, lastSeq: 5, sessionId: 's1' })
    expect(error.message).toContain('s1')
    expect(sessions.list().map((session) => session.id)).toEqual(['s1'])
  })

  test('a live id is SESSION_EXISTS before any boundary check', () => {
    appendAll(sessions.create(), L1())
    const error = refusedFork(() => sessions.fork('s1', { id: 's1', at: 99 }))
    expect(error.code).toBe('SESSION_EXISTS')
  })

  test('a source not live here is SESSION_NOT_FOUND', async () => {
    const parent = appendAll(sessions.create(), L1())
    expect(refusedFork(() => sessions.fork('nope')).code).toBe('SESSION_NOT_FOUND')
    const impostor = createSession({ id: 's1', clock: fakeClock({ now: 1000 }) })
    expect(refusedFork(() => sessions.fork(impostor)).code).toBe('SESSION_NOT_FOUND')
    await sessions.dispose(parent)
    expect(refusedFork(() => sessions.fork(parent)).code).toBe('SESSION_NOT_FOUND')
    expect(refusedFork(() => sessions.fork('s1')).code).toBe('SESSION_NOT_FOUND')
  })
})

describe('forks inside an open turn', () => {
  test('are OPEN_TURN with the nearest balanced seq', () => {
    appendAll(sessions.create(), [...L1(), TS(2), SS(2, 1), UM('x')])
    for (const at of [6, 7, 8, undefined]) {
      const error = refusedFork(() => sessions.fork('s1', at === undefined ? {} : { at }))
      expect(error).toMatchObject({ code: 'OPEN_TURN', turn: 2, nearestBalancedSeq: 5 })
      expect(error.message).toContain('5')
    }
    expect(sessions.fork('s1', { at: 5 }).header.seedLength).toBe(6)
  })

  test('a turn open from seq 0 has no balanced seq', () => {
    append(sessions.create(), TS(1))
    const error = refusedFork(() => sessions.fork('s1', { at: 0 }))
    expect(error).toMatchObject({ code: 'OPEN_TURN', turn: 1, nearestBalancedSeq: null })
  })

  test('the nearest balanced seq skips back over log-only events before the turn', () => {
    appendAll(sessions.create(), [...L1(), UM('between'), TS(2), SS(2, 1)])
    const error = refusedFork(() => sessions.fork('s1'))
    expect(error).toMatchObject({ code: 'OPEN_TURN', turn: 2, nearestBalancedSeq: 6 })
    expect(sessions.fork('s1', { at: 6 }).length).toBe(8)
  })
})
