/**
 * A new session is registered in storage (`adapter.create`) before its first write. When that
 * fails because storage was unreachable (a plain error, wrapped as `WRITE_FAILED`), the next write
 * tries again, and once the fault clears the session's events are stored. A refusal
 * (`SESSION_EXISTS`) is final: every write fails with it, and the lease is given back.
 */
import { afterEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, memoryPersistence, PersistenceError } from 'yoke'
import { faultyPersistence, fakeIds, scriptedModel, text } from 'yoke/testing'
import { ErrorCode } from '../../src/errors/codes.js'
import { createMemoryStore } from '../../src/persistence/index.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
})

/** A harness over a memory store whose `create` calls fail as `failCreate` says. */
async function harnessOver(failCreate: (count: number) => Error | undefined) {
  const store = createMemoryStore()
  const adapter = faultyPersistence(memoryPersistence({ store }), {
    fail: (call) => (call.method === 'create' ? failCreate(call.count) : undefined),
  })
  const harness = await createHarness({
    model: scriptedModel([text('one'), text('two'), text('three')]),
    persistence: adapter,
    ids: fakeIds(),
    logger: recordingLogger(),
  })
  harnesses.push(harness)
  return { store, adapter, harness }
}

const stored = (events: readonly unknown[]): string[] => events.map((event) => JSON.stringify(event))

describe('registering a new session', () => {
  test('storage unreachable at registration: the first turn fails with WRITE_FAILED, the next registers and stores every event', async () => {
    let down = true
    const { store, adapter, harness } = await harnessOver(() =>
      down ? new Error('connect ECONNREFUSED 127.0.0.1:5432') : undefined,
    )
    const agent = await harness.createAgent()
    const first = await rejectionOf(agent.run('first'))
    expect(first).toMatchObject({
      code: 'FLUSH_FAILED',
      cause: { code: ErrorCode.WRITE_FAILED, sessionId: agent.session.id },
    })
    expect(PersistenceError.is((first as { cause?: unknown }).cause)).toBe(true)
    const failedCreates = adapter.calls.filter((call) => call.method === 'create').length
    expect(failedCreates).toBeGreaterThan(0)
    // The fault clears: the next turn's write registers the session again, then writes.
    down = false
    expect((await agent.run('second')).reason).toEqual({ kind: 'completed' })
    expect(adapter.calls.filter((call) => call.method === 'create')).toHaveLength(failedCreates + 1)
    const reader = memoryPersistence({ store })
    expect(stored((await reader.load(agent.session.id)).events)).toEqual(stored(agent.session.events))
    expect(agent.session.events.filter((event) => event.type === 'turn/start')).toHaveLength(2)
  })

  test('a refused registration (SESSION_EXISTS) fails every write, is not tried again, and gives the lease back', async () => {
    const { store, adapter, harness } = await harnessOver(
      () => new PersistenceError({ code: ErrorCode.SESSION_EXISTS, detail: 'another writer stored a log first' }),
    )
    const agent = await harness.createAgent()
    const id = agent.session.id
    for (const prompt of ['first', 'second']) {
      const error = await rejectionOf(agent.run(prompt))
      expect(error).toMatchObject({ code: 'FLUSH_FAILED', cause: { code: ErrorCode.SESSION_EXISTS } })
    }
    expect(adapter.calls.filter((call) => call.method === 'create')).toHaveLength(1)
    expect(adapter.calls.some((call) => call.method === 'append')).toBe(false)
    // Nothing stored, and the lease is free: another instance over the same store takes it.
    const other = memoryPersistence({ store })
    expect(await rejectionOf(other.load(id))).toMatchObject({ code: ErrorCode.SESSION_NOT_FOUND })
    const lease = await other.acquire(id)
    await lease.release()
  })
})
