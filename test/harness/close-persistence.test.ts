import { expect, test } from 'vitest'
import { createHarness, HarnessCloseError, memoryPersistence, PersistenceError } from 'yoke'
import { faultyPersistence, fakeClock, fakeIds } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

test('close names the sessions whose events could not be flushed, after running every step', async () => {
  const adapter = faultyPersistence(memoryPersistence(), {
    fail: (call) => (call.method === 'append' && call.sessionId === 'sB' ? new Error('disk full') : undefined),
  })
  const harness = await createHarness({
    persistence: adapter,
    clock: fakeClock({ now: 1000 }),
    ids: fakeIds(),
    logger: recordingLogger(),
  })
  for (const id of ['sA', 'sB']) harness.sessions.create({ id }).append('turn/start', { turn: 1 })
  const error = await rejectionOf(harness.close())
  expect(HarnessCloseError.is(error)).toBe(true)
  const closeError = error as HarnessCloseError
  expect(closeError.unflushedSessions).toEqual(['sB'])
  const persistenceFailure = closeError.errors
    .map((failure) => failure.error)
    .find((cause) => PersistenceError.is(cause))
  expect((persistenceFailure as PersistenceError).code).toBe('CLOSE_FAILED')
  expect(adapter.calls.at(-1)?.method).toBe('close')
  expect(adapter.calls.filter((call) => call.method === 'append' && call.sessionId === 'sA')).toHaveLength(1)
})
