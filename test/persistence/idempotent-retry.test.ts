/**
 * An append that committed but whose reply was lost (a dropped connection, a timeout) is retried
 * by the coordinator at the same seq: the adapter's idempotent re-append makes that retry succeed,
 * so nothing is duplicated and the session goes on.
 */
import { afterEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, memoryPersistence, type PersistenceAdapter, PersistenceError } from 'yoke'
import { createMemoryStore } from '../../src/persistence/index.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { rejectionOf } from '../helpers/outcomes.js'

const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
})

/**
 * A harness over a memory adapter whose first append fails: after its commit (`'after'`: the reply
 * was lost) or before it (`'before'`). Records each append's `expectedSeq` and size.
 */
async function harnessFailingFirstAppend(when: 'before' | 'after') {
  const store = createMemoryStore()
  const inner = memoryPersistence({ store })
  const appends: string[] = []
  let failures = 1
  // The memory adapter's methods are own properties that never use `this`: a spread keeps them.
  const adapter: PersistenceAdapter = {
    ...inner,
    append: async (sessionId, events, options) => {
      appends.push(`${options.expectedSeq}+${events.length}`)
      const fail = failures-- > 0
      if (fail && when === 'before') {
        throw new PersistenceError({ code: 'WRITE_FAILED', sessionId, detail: 'the connection dropped' })
      }
      await inner.append(sessionId, events, options)
      if (fail) throw new PersistenceError({ code: 'WRITE_FAILED', sessionId, detail: 'the reply was lost' })
    },
  }
  const harness = await createHarness({ persistence: adapter, logger: recordingLogger() })
  harnesses.push(harness)
  return { harness, store, appends }
}

describe.each([
  // Committed: the batch grown by the new event conflicts, so the failed batch goes again as it was (idempotent), then the rest.
  ['after', ['0+2', '0+3', '0+2', '2+1']],
  // Not committed: the grown batch simply goes through.
  ['before', ['0+2', '0+3']],
] as const)('an append that fails %s its commit', (when, expected) => {
  test('is retried with the events queued since: each event is stored once', async () => {
    const { harness, store, appends } = await harnessFailingFirstAppend(when)
    const session = harness.sessions.create({ id: 's1' })
    session.append('test/note', { n: 1 }, { ignorable: true })
    session.append('test/note', { n: 2 }, { ignorable: true })
    // The flush fails; the batch stays queued for the retry.
    expect(await rejectionOf(harness.sessions.flush(session))).toBeInstanceOf(Error)
    session.append('test/note', { n: 3 }, { ignorable: true })
    await harness.sessions.flush(session)
    expect(appends).toEqual(expected)
    const stored = (await memoryPersistence({ store }).load('s1')).events
    expect(stored.map((event) => event.seq)).toEqual([0, 1, 2])
    expect(stored.map((event) => (event.data as { n: number }).n)).toEqual([1, 2, 3])
    session.append('test/note', { n: 4 }, { ignorable: true })
    await harness.sessions.flush(session)
    expect(appends.at(-1)).toBe('3+1')
  })
})
