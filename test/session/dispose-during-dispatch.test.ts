import { afterEach, beforeEach, expect, test } from 'vitest'
import { type Harness, SessionStateError, type SessionRegistry } from 'yoke'
import { freshRegistry } from './session-helpers.js'

let harness: Harness
let sessions: SessionRegistry

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
})

afterEach(() => harness.close())

test('a dispose called from a session/event listener takes effect when the dispatch returns', async () => {
  const session = sessions.create()
  const seen: string[] = []
  let disposing: Promise<void> | undefined
  harness.on('session/event', ({ session: subject }) => {
    disposing ??= sessions.dispose(subject)
    seen.push(`first:${subject.disposed}:${sessions.get(subject.id) !== undefined}`)
  })
  harness.on('session/event', ({ session: subject }) => {
    seen.push(`second:${subject.disposed}:${sessions.get(subject.id) !== undefined}`)
  })
  harness.on('session/disposed', () => {
    seen.push('disposed')
  })
  const event = session.append('turn/start', { turn: 1 })
  expect(event.seq).toBe(0)
  // The dispatch has returned: the dispose took effect synchronously at its end.
  expect(session.disposed).toBe(true)
  expect(sessions.get('s1')).toBeUndefined()
  expect(seen).toEqual(['first:false:true', 'second:false:true'])
  await disposing
  expect(seen).toEqual(['first:false:true', 'second:false:true', 'disposed'])
  expect(() => session.append('step/start', { turn: 1, step: 1 })).toThrow(SessionStateError)
})

test('a dispose called from a session/created listener takes effect when that dispatch returns', async () => {
  const seen: string[] = []
  let disposing: Promise<void> | undefined
  harness.on('session/created', ({ session }) => {
    disposing ??= sessions.dispose(session)
    seen.push(`first:${session.disposed}:${sessions.get(session.id) !== undefined}`)
  })
  harness.on('session/created', ({ session }) => {
    seen.push(`second:${session.disposed}:${sessions.get(session.id) !== undefined}`)
  })
  const session = sessions.create({ id: 'c1' })
  expect(seen).toEqual(['first:false:true', 'second:false:true'])
  expect(session.disposed).toBe(true)
  expect(sessions.get('c1')).toBeUndefined()
  await disposing
})

test('a dispose called from a session/flush listener takes effect once every listener started', async () => {
  const session = sessions.create({ id: 'f1' })
  const seen: string[] = []
  let disposing: Promise<void> | undefined
  harness.on('session/flush', ({ session: subject }) => {
    disposing ??= sessions.dispose(subject)
    seen.push(`first:${subject.disposed}:${sessions.get(subject.id) !== undefined}`)
  })
  harness.on('session/flush', ({ session: subject }) => {
    seen.push(`second:${subject.disposed}:${sessions.get(subject.id) !== undefined}`)
  })
  const flushing = sessions.flush(session)
  expect(seen).toEqual(['first:false:true', 'second:false:true'])
  expect(session.disposed).toBe(true)
  await flushing
  await disposing
})

test('two dispose calls share one promise and one session/disposed', async () => {
  const session = sessions.create()
  let count = 0
  harness.on('session/disposed', () => {
    count++
  })
  const first = sessions.dispose(session)
  expect(() => sessions.get(session.id)).not.toThrow()
  expect(sessions.get(session.id)).toBeUndefined()
  await first
  await expect(sessions.dispose(session)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  expect(count).toBe(1)
})
