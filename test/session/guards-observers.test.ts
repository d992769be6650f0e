import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type Harness,
  InvalidArgumentError,
  type KernelErrorEvent,
  type SessionEvent,
  type SessionRegistry,
  SessionStateError,
  SessionVetoError,
} from 'yoke'
import { thrownBy } from '../helpers/outcomes.js'
import { type RecordingLogger, recordingLogger } from '../helpers/recording-logger.js'
import { SS, TS, UM } from './builders.js'
import { append, expectRejects, freshRegistry, replaceUM } from './session-helpers.js'

let harness: Harness
let sessions: SessionRegistry
let logger: RecordingLogger
let reports: KernelErrorEvent[]

beforeEach(async () => {
  logger = recordingLogger()
  ;({ harness, sessions } = await freshRegistry({ logger }))
  reports = []
  harness.on('kernel/error', (report) => {
    reports.push(report)
  })
})

afterEach(() => harness.close())

/** Lets pending promise reactions (async listener rejections) run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

function observe(): SessionEvent[] {
  const observed: SessionEvent[] = []
  harness.on('session/event', ({ event }) => {
    observed.push(event)
  })
  return observed
}

describe('failing session/event listeners are contained', () => {
  test('a throwing and a rejecting listener are reported with the session id; later listeners still run', async () => {
    const session = sessions.create()
    const syncFailure = new Error('sync listener failed')
    const asyncFailure = new Error('async listener failed')
    harness.on('session/event', () => {
      throw syncFailure
    })
    harness.on('session/event', async () => {
      throw asyncFailure
    })
    const lengths: number[] = []
    harness.on('session/event', ({ session: observed }) => {
      lengths.push(observed.length)
    })
    const event = append(session, TS(1))
    expect(event.seq).toBe(0)
    expect(lengths).toEqual([1])
    await settle()
    expect(reports).toHaveLength(2)
    expect(reports.map((report) => report.error)).toEqual([syncFailure, asyncFailure])
    for (const report of reports) {
      expect(report.subject).toBe('s1')
      expect(report.event).toBe('session/event')
      expect(report.phase).toBe('listener')
    }
    const logged = logger.at('error').filter((record) => record.message.includes('s1'))
    expect(logged).toHaveLength(2)
    expect(session.length).toBe(1)
  })
})

describe('commit guards veto before the commit', () => {
  test('a guard throwing once vetoes with its error as cause, nothing is dispatched, the retry commits seq 0', () => {
    const session = sessions.create()
    const observed = observe()
    const failure = new Error('not now')
    let remaining = 1
    sessions.addCommitGuard(
      () => {
        if (remaining > 0) {
          remaining -= 1
          throw failure
        }
      },
      { label: 'once' },
    )
    const error = expectRejects(session, () => append(session, TS(1)), SessionVetoError, 'APPEND_VETOED', {
      guard: 'once',
      sessionId: 's1',
      seq: 0,
    })
    expect(error.cause).toBe(failure)
    expect(observed).toEqual([])
    expect(append(session, TS(1)).seq).toBe(0)
    expect(observed.map((event) => event.seq)).toEqual([0])
  })

  test('a vetoed replace changes nothing: nodes stay [1,2], the messages array is the same, the next append is seq 3', () => {
    const session = sessions.create()
    append(session, TS(1))
    append(session, UM('a'))
    append(session, UM('b'))
    const messages = session.deriveMessages()
    const removeGuard = sessions.addCommitGuard(() => {
      throw new Error('veto')
    })
    expectRejects(session, () => append(session, replaceUM('c', 1, 2, [1, 2])), SessionVetoError, 'APPEND_VETOED', {
      guard: 'guard',
      seq: 3,
    })
    expect(session.surfaceNodes()).toEqual([1, 2])
    expect(session.deriveMessages()).toBe(messages)
    removeGuard()
    const next = append(session, replaceUM('c', 1, 2, [1, 2]))
    expect(next.seq).toBe(3)
    expect(session.surfaceNodes()).toEqual([3])
  })

  test.each([
    ['Promise.resolve()', () => Promise.resolve()],
    ['Promise.reject()', () => Promise.reject(new Error('late'))],
    // biome-ignore lint/suspicious/noThenProperty: a bare thenable is the case under test
    ['a thenable', () => ({ then: () => undefined })],
  ])('(beyond dsh) a guard returning %s vetoes the same way', async (_label, result) => {
    const session = sessions.create()
    const observed = observe()
    sessions.addCommitGuard(result as never, { label: 'async' })
    expectRejects(session, () => append(session, TS(1)), SessionVetoError, 'APPEND_VETOED', { guard: 'async' })
    expect(observed).toEqual([])
    await settle()
    expect(session.length).toBe(0)
  })

  test('guards see the frozen candidate and the old length, in registration order; the first veto stops the rest', () => {
    const session = sessions.create()
    const seen: string[] = []
    sessions.addCommitGuard((event, owner) => {
      expect(owner).toBe(session)
      expect(owner.length).toBe(0)
      expect(owner.at(0)).toBeUndefined()
      expect(Object.isFrozen(event)).toBe(true)
      expect(Object.isFrozen(event.data)).toBe(true)
      expect(event).toEqual({ type: 'turn/start', seq: 0, time: 1000, data: { turn: 1 } })
      seen.push('first')
    })
    const removeSecond = sessions.addCommitGuard(() => {
      seen.push('second')
      throw new Error('veto')
    })
    sessions.addCommitGuard(() => {
      seen.push('third')
    })
    expectRejects(session, () => append(session, TS(1)), SessionVetoError, 'APPEND_VETOED')
    expect(seen).toEqual(['first', 'second'])
    removeSecond()
    seen.length = 0
    const committed = append(session, TS(1))
    expect(seen).toEqual(['first', 'third'])
    expect(session.at(0)).toBe(committed)
  })

  test('guards run after the rule checks: a rule failure never reaches them', () => {
    const session = sessions.create()
    let calls = 0
    sessions.addCommitGuard(() => {
      calls += 1
    })
    expect(() => append(session, TS(2))).toThrow(expect.objectContaining({ code: 'TURN_NUMBER' }))
    expect(calls).toBe(0)
  })

  test('guards see the candidate that is then committed and dispatched', () => {
    const session = sessions.create()
    const candidates: SessionEvent[] = []
    sessions.addCommitGuard((event) => {
      candidates.push(event)
    })
    const observed = observe()
    const committed = append(session, TS(1))
    expect(candidates).toEqual([committed])
    expect(candidates[0]).toBe(committed)
    expect(observed[0]).toBe(committed)
  })
})

describe('reentrancy from guards', () => {
  test('an append to the same session from a guard throws REENTRANT_APPEND and vetoes the outer append', () => {
    const session = sessions.create()
    let inner: unknown
    sessions.addCommitGuard((_event, owner) => {
      try {
        append(owner, UM('inner'))
      } catch (error) {
        inner = error
        throw error
      }
    })
    const error = expectRejects(session, () => append(session, TS(1)), SessionVetoError, 'APPEND_VETOED')
    expect(SessionStateError.is(inner)).toBe(true)
    expect(inner).toMatchObject({ code: 'REENTRANT_APPEND', sessionId: 's1' })
    expect(error.cause).toBe(inner)
  })

  test('a guard that catches REENTRANT_APPEND lets the outer append commit', () => {
    const session = sessions.create()
    const caught: unknown[] = []
    sessions.addCommitGuard((_event, owner) => {
      try {
        append(owner, UM('inner'))
      } catch (error) {
        caught.push(error)
      }
    })
    expect(append(session, TS(1)).seq).toBe(0)
    expect(caught).toHaveLength(1)
    expect(caught[0]).toMatchObject({ code: 'REENTRANT_APPEND' })
    expect(session.length).toBe(1)
  })

  test('a guard may append to another session', () => {
    const first = sessions.create()
    const second = sessions.create()
    sessions.addCommitGuard((event, owner) => {
      if (owner === first && event.type === 'turn/start') append(second, UM(`mirror-${event.seq}`))
    })
    append(first, TS(1))
    expect(first.length).toBe(1)
    expect(second.length).toBe(1)
    expect(second.at(0)?.type).toBe('user/message')
  })
})

describe('an observer appending to its own session', () => {
  test('gets REENTRANT_APPEND (reported); the outer append returns and a later listener sees it', async () => {
    const session = sessions.create()
    harness.on('session/event', ({ session: owner }) => {
      append(owner, SS(1, 1))
    })
    const later: { seq: number; stored: boolean; length: number }[] = []
    harness.on('session/event', ({ session: owner, event }) => {
      later.push({ seq: event.seq, stored: owner.at(event.seq) === event, length: owner.length })
    })
    const event = append(session, TS(1))
    expect(event.seq).toBe(0)
    expect(later).toEqual([{ seq: 0, stored: true, length: 1 }])
    expect(session.length).toBe(1)
    await settle()
    expect(reports).toHaveLength(1)
    expect(SessionStateError.is(reports[0]?.error)).toBe(true)
    expect(reports[0]?.error).toMatchObject({ code: 'REENTRANT_APPEND', sessionId: 's1' })
    expect(reports[0]?.subject).toBe('s1')
  })

  test('an observer may append to another session, or defer a follow-up with queueMicrotask', async () => {
    const first = sessions.create()
    const second = sessions.create()
    harness.on('session/event', ({ session: owner, event }) => {
      if (owner !== first || event.type !== 'turn/start') return
      append(second, UM('mirror'))
      queueMicrotask(() => {
        append(owner, SS(1, 1))
      })
    })
    append(first, TS(1))
    expect(second.length).toBe(1)
    expect(first.length).toBe(1)
    await settle()
    expect(first.length).toBe(2)
    expect(first.at(1)?.type).toBe('step/start')
    expect(reports).toEqual([])
  })
})

describe('observers', () => {
  test('run in order, once per commit, with the committed event already readable through at()', () => {
    const session = sessions.create()
    const order: string[] = []
    harness.on('session/event', ({ session: owner, event }) => {
      order.push(`a${event.seq}`)
      expect(owner).toBe(session)
      expect(owner.at(event.seq)).toBe(event)
      expect(owner.events.at(-1)).toBe(event)
    })
    harness.on('session/event', ({ event }) => {
      order.push(`b${event.seq}`)
    })
    append(session, TS(1))
    append(session, SS(1, 1))
    expect(order).toEqual(['a0', 'b0', 'a1', 'b1'])
    expect(reports).toEqual([])
  })

  test('a rejected append dispatches nothing', () => {
    const session = sessions.create()
    const observed = observe()
    expect(() => append(session, TS(2))).toThrow(expect.objectContaining({ code: 'TURN_NUMBER' }))
    expect(observed).toEqual([])
  })
})

describe('only guards and observers make an append reentrant', () => {
  test('a session/created listener may append to the session it announces', () => {
    const appended: SessionEvent[] = []
    harness.on('session/created', ({ session }) => {
      appended.push(append(session, TS(1)))
    })
    const session = sessions.create({ id: 'c1' })
    expect(appended.map((event) => event.seq)).toEqual([0])
    expect(session.events.map((event) => event.type)).toEqual(['turn/start'])
  })

  test('a session/flush listener may append; a dispose asked for in it still waits for the dispatch', async () => {
    const session = sessions.create({ id: 'f1' })
    let disposedInside: boolean | undefined
    harness.on('session/flush', ({ session: target }) => {
      append(target, TS(1))
      void sessions.dispose(target)
      disposedInside = target.disposed
    })
    await sessions.flush(session).catch(() => {})
    expect(session.events.map((event) => event.type)).toEqual(['turn/start'])
    expect(disposedInside).toBe(false)
  })
})

describe('bad registry arguments get typed errors', () => {
  test('addCommitGuard with a non-function is InvalidArgumentError naming guard', () => {
    const error = thrownBy(() => sessions.addCommitGuard(5 as never))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ argument: 'guard', value: 5 })
  })

  test('addCommitGuard refuses options that are not { label? } with a string label; nothing is added', () => {
    for (const [options, argument] of [
      [null, 'options'],
      [5, 'options'],
      [{ bogus: 1 }, 'options.bogus'],
      [{ label: 7 }, 'options.label'],
    ] as const) {
      expect(thrownBy(() => sessions.addCommitGuard(() => undefined, options as never))).toMatchObject({
        code: 'INVALID_ARGUMENT',
        argument,
      })
    }
    const session = sessions.create({ id: 'g1' })
    append(session, TS(1))
    expect(session.length).toBe(1)
  })

  test('publish refuses a registered callback that is not a function; the staged session stays unpublished', () => {
    const staged = sessions.stage({ id: 'st' })
    const error = thrownBy(() => staged.publish(42 as never))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ argument: 'registered', value: 42 })
    expect(sessions.get('st')).toBeUndefined()
    staged.publish()
    expect(sessions.get('st')).toBe(staged.session)
  })

  test('create, stage and fork refuse a non-object options and an unknown option', () => {
    for (const options of [null, 5, 'x', []]) {
      expect(thrownBy(() => sessions.create(options as never))).toMatchObject({
        code: 'INVALID_ARGUMENT',
        argument: 'options',
      })
      expect(thrownBy(() => sessions.stage(options as never))).toMatchObject({
        code: 'INVALID_ARGUMENT',
        argument: 'options',
      })
    }
    expect(thrownBy(() => sessions.create({ bogus: 1 } as never))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      argument: 'options.bogus',
    })
    const parent = sessions.create({ id: 'p1' })
    expect(thrownBy(() => sessions.fork(parent, null as never))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      argument: 'options',
    })
    expect(thrownBy(() => sessions.fork(parent, { depth: 1 } as never))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      argument: 'options.depth',
    })
    expect(sessions.list().map((session) => session.id)).toEqual(['p1'])
  })
})

describe('registerEventType options', () => {
  test('options that are not an object, or hold an unknown key, are InvalidArgumentError; nothing is registered', () => {
    for (const [options, argument] of [
      [null, 'options'],
      [42, 'options'],
      ['x', 'options'],
      [[], 'options'],
      [{ bogus: 1 }, 'options.bogus'],
    ] as const) {
      expect(thrownBy(() => sessions.registerEventType('test/odd', options as never))).toMatchObject({
        code: 'INVALID_ARGUMENT',
        argument,
      })
    }
    expect(sessions.catalog.get('test/odd')).toBeUndefined()
  })
})
