import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type Harness,
  type Session,
  type SessionEvent,
  SessionRegistryError,
  type SessionRegistry,
  SessionStateError,
  SessionVetoError,
  services,
} from 'yoke'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { SS, TS } from './builders.js'
import { append, expectError, freshRegistry } from './session-helpers.js'

let harness: Harness
let sessions: SessionRegistry
let created: Session[]
let disposed: Session[]
let observed: { session: Session; event: SessionEvent }[]

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
  created = []
  disposed = []
  observed = []
  harness.on('session/created', ({ session }) => {
    created.push(session)
  })
  harness.on('session/disposed', ({ session }) => {
    disposed.push(session)
  })
  harness.on('session/event', (payload) => {
    observed.push(payload)
  })
})

afterEach(() => harness.close())

describe('create, get, list and session/event', () => {
  test('create() makes s1 with one session/created; get and list find it; TS(1) dispatches the committed event', () => {
    const session = sessions.create()
    expect(session.id).toBe('s1')
    expect(created).toHaveLength(1)
    expect(created[0]).toBe(session)
    expect(sessions.get('s1')).toBe(session)
    expect(sessions.list()).toEqual([session])
    expect(sessions.list()[0]).toBe(session)
    const event = append(session, TS(1))
    expect(observed).toHaveLength(1)
    expect(observed[0]?.event).toBe(event)
    expect(observed[0]?.event).toBe(session.at(0))
    expect(observed[0]?.session).toBe(session)
  })

  test('create({id:"s1"}) again rejects SESSION_EXISTS and leaves s1 intact', () => {
    const session = sessions.create()
    append(session, TS(1))
    const error = thrownBy(() => sessions.create({ id: 's1' }))
    expectError(error, SessionRegistryError, 'SESSION_EXISTS', { sessionId: 's1' })
    expect(sessions.get('s1')).toBe(session)
    expect(sessions.list()).toEqual([session])
    expect(session.disposed).toBe(false)
    expect(session.length).toBe(1)
    expect(created).toHaveLength(1)
    expect(disposed).toEqual([])
    append(session, SS(1, 1))
    expect(session.length).toBe(2)
  })

  test.each(['../x', '', '.hidden', 'a/b', 'a b', 'x'.repeat(129), 'é'])(
    'create({id: %j}) rejects INVALID_SESSION_ID',
    (id) => {
      expectError(
        thrownBy(() => sessions.create({ id })),
        SessionRegistryError,
        'INVALID_SESSION_ID',
      )
      expect(sessions.list()).toEqual([])
      expect(created).toEqual([])
    },
  )

  test.each(['a', 'A-b_c.d', '_x', '0', 'x'.repeat(128)])('create({id: %j}) is accepted', (id) => {
    expect(sessions.create({ id }).id).toBe(id)
  })

  test('ids come from the injected generator; list() is frozen and in creation order', () => {
    const first = sessions.create()
    const named = sessions.create({ id: 'named' })
    const second = sessions.create()
    expect([first.id, named.id, second.id]).toEqual(['s1', 'named', 's2'])
    const list = sessions.list()
    expect(list).toEqual([first, named, second])
    expect(Object.isFrozen(list)).toBe(true)
    expect(sessions.get('nope')).toBeUndefined()
  })

  test('the registry is the sessions service', () => {
    expect(harness.ctx.get(services.sessions).get('s1')).toBeUndefined()
    const session = harness.ctx.get(services.sessions).create()
    expect(sessions.get(session.id)).toBe(session)
  })
})

describe('dispose', () => {
  test('one session/disposed; get is undefined; the held object rejects appends; flush rejects; the id is free', async () => {
    const session = sessions.create()
    append(session, TS(1))
    await sessions.dispose('s1')
    expect(disposed).toEqual([session])
    expect(sessions.get('s1')).toBeUndefined()
    expect(sessions.list()).toEqual([])
    expect(session.disposed).toBe(true)
    const events = session.events
    expectError(
      thrownBy(() => append(session, SS(1, 1))),
      SessionStateError,
      'SESSION_DISPOSED',
      { sessionId: 's1', seq: 1 },
    )
    expect(session.length).toBe(1)
    expect(session.events).toBe(events)
    expectError(await rejectionOf(sessions.flush(session)), SessionRegistryError, 'SESSION_NOT_FOUND')
    expectError(await rejectionOf(sessions.flush('s1')), SessionRegistryError, 'SESSION_NOT_FOUND')
    const again = sessions.create({ id: 's1' })
    expect(again).not.toBe(session)
    expect(again.length).toBe(0)
    expect(sessions.get('s1')).toBe(again)
    expect(disposed).toHaveLength(1)
  })

  test('dispose takes effect synchronously, before session/disposed settles', async () => {
    const session = sessions.create()
    const pending = sessions.dispose(session)
    expect(session.disposed).toBe(true)
    expect(sessions.get('s1')).toBeUndefined()
    expect(() => append(session, TS(1))).toThrow(expect.objectContaining({ code: 'SESSION_DISPOSED' }))
    await pending
    expect(disposed).toEqual([session])
  })

  test('disposing twice, or a stale object whose id is live again, rejects SESSION_NOT_FOUND', async () => {
    const session = sessions.create()
    await sessions.dispose(session)
    expectError(await rejectionOf(sessions.dispose('s1')), SessionRegistryError, 'SESSION_NOT_FOUND')
    const again = sessions.create({ id: 's1' })
    expectError(await rejectionOf(sessions.dispose(session)), SessionRegistryError, 'SESSION_NOT_FOUND')
    expectError(await rejectionOf(sessions.flush(session)), SessionRegistryError, 'SESSION_NOT_FOUND')
    expect(sessions.get('s1')).toBe(again)
    expect(again.disposed).toBe(false)
    expect(disposed).toEqual([session])
  })

  test('flush of a live session resolves false without listeners and true with one', async () => {
    await harness.close()
    // Without the persistence entry nothing listens to session/flush.
    ;({ harness, sessions } = await freshRegistry({ patches: [{ id: 'persistence', disabled: true }] }))
    const session = sessions.create()
    expect(await sessions.flush(session)).toBe(false)
    const flushed: string[] = []
    harness.on('session/flush', async ({ session: target }) => {
      flushed.push(target.id)
    })
    expect(await sessions.flush('s1')).toBe(true)
    expect(flushed).toEqual(['s1'])
  })
})

describe('stage(): build now, register and announce later', () => {
  test('a staged session is appendable but unlisted and silent until publish(); persistence-visible events follow', () => {
    const staged = sessions.stage({ id: 'st' })
    append(staged.session, TS(1))
    expect(sessions.get('st')).toBeUndefined()
    expect(created).toEqual([])
    expect(observed).toEqual([])
    let registeredSeen: Session | undefined
    staged.publish(() => {
      registeredSeen = sessions.get('st')
      expect(created).toEqual([])
    })
    expect(registeredSeen).toBe(staged.session)
    expect(created).toEqual([staged.session])
    append(staged.session, SS(1, 1))
    expect(observed.map(({ event }) => event.type)).toEqual(['step/start'])
    const again = thrownBy(() => staged.publish())
    expect(again).toBeInstanceOf(SessionRegistryError)
    expect(again).toMatchObject({ code: 'SESSION_EXISTS', sessionId: 'st' })
  })

  test('a throwing registered callback unregisters; discard() makes the session unusable; the id stays free', () => {
    const staged = sessions.stage({ id: 'gone' })
    const failure = new Error('collision')
    expect(
      thrownBy(() =>
        staged.publish(() => {
          throw failure
        }),
      ),
    ).toBe(failure)
    expect(sessions.get('gone')).toBeUndefined()
    expect(created).toEqual([])
    staged.discard()
    expectError(
      thrownBy(() => append(staged.session, TS(1))),
      SessionStateError,
      'SESSION_DISPOSED',
    )
    expect(sessions.create({ id: 'gone' }).id).toBe('gone')
  })

  test('publish() rejects an id that went live meanwhile', () => {
    const staged = sessions.stage({ id: 'race' })
    sessions.create({ id: 'race' })
    expect(thrownBy(() => staged.publish())).toMatchObject({ code: 'SESSION_EXISTS', sessionId: 'race' })
  })
})

describe('session/* dispatch rules', () => {
  /** A harness without the persistence entry, so the test's listeners are the only ones. */
  async function bareRegistry(): Promise<void> {
    await harness.close()
    ;({ harness, sessions } = await freshRegistry({ patches: [{ id: 'persistence', disabled: true }] }))
    created = []
    disposed = []
  }

  function settle(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve))
  }

  test('a session/created listener throwing vetoes: CREATE_VETOED with cause, the session removed, listeners that saw it get session/disposed, the id free', async () => {
    await bareRegistry()
    const sawCreated: string[] = []
    const sawDisposed: string[] = []
    const failure = new Error('no')
    let veto = true
    harness.on('session/created', ({ session }) => {
      sawCreated.push(`first:${session.id}`)
    })
    harness.on('session/disposed', ({ session }) => {
      sawDisposed.push(`first:${session.id}`)
    })
    harness.on('session/created', () => {
      if (veto) throw failure
    })
    harness.on('session/created', ({ session }) => {
      sawCreated.push(`late:${session.id}`)
    })
    const error = thrownBy(() => sessions.create({ id: 'v1' }))
    expectError(error, SessionVetoError, 'CREATE_VETOED', { sessionId: 'v1', cause: failure })
    expect(sessions.get('v1')).toBeUndefined()
    expect(sessions.list()).toEqual([])
    expect(sawCreated).toEqual(['first:v1'])
    await settle()
    expect(sawDisposed).toEqual(['first:v1'])
    veto = false
    const again = sessions.create({ id: 'v1' })
    expect(sessions.get('v1')).toBe(again)
    expect(sawCreated).toEqual(['first:v1', 'first:v1', 'late:v1'])
  })

  test('an async rejection of a session/created listener is contained: the session stays live', async () => {
    await bareRegistry()
    harness.on('session/created', async () => {
      throw new Error('late')
    })
    const session = sessions.create({ id: 'a1' })
    await settle()
    expect(sessions.get('a1')).toBe(session)
    expect(session.disposed).toBe(false)
  })

  test('session/flush is a parallel barrier: every listener starts and settles, then FLUSH_FAILED with errors in registration order and cause = the first', async () => {
    await bareRegistry()
    const session = sessions.create({ id: 'f1' })
    const started: string[] = []
    const settled: string[] = []
    const first = new Error('first')
    const second = new Error('second')
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    harness.on('session/flush', async () => {
      started.push('a')
      await gate
      settled.push('a')
      throw first
    })
    harness.on('session/flush', async () => {
      started.push('b')
      settled.push('b')
      throw second
    })
    harness.on('session/flush', async () => {
      started.push('c')
      await gate
      settled.push('c')
    })
    const pending = rejectionOf(sessions.flush(session))
    await settle()
    expect(started).toEqual(['a', 'b', 'c'])
    expect(settled).toEqual(['b'])
    release()
    const error = expectError(await pending, SessionRegistryError, 'FLUSH_FAILED', { sessionId: 'f1' })
    expect(settled.sort()).toEqual(['a', 'b', 'c'])
    expect(error.errors).toEqual([first, second])
    expect(error.errors?.[0]).toBe(first)
    expect(error.cause).toBe(first)
  })

  test('session/disposed listeners run in parallel; dispose rejects DISPOSE_FAILED with errors after all settle; the session is disposed anyway', async () => {
    await bareRegistry()
    const session = sessions.create({ id: 'd1' })
    const failure = new Error('disposed listener failed')
    const settledListeners: string[] = []
    harness.on('session/disposed', async () => {
      settledListeners.push('a')
      throw failure
    })
    harness.on('session/disposed', async () => {
      await settle()
      settledListeners.push('b')
    })
    const error = expectError(await rejectionOf(sessions.dispose(session)), SessionRegistryError, 'DISPOSE_FAILED', {
      sessionId: 'd1',
    })
    expect(error.errors).toEqual([failure])
    expect(settledListeners).toEqual(['a', 'b'])
    expect(session.disposed).toBe(true)
    expect(sessions.get('d1')).toBeUndefined()
  })
})
