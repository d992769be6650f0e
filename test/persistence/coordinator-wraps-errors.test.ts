/**
 * Every raw adapter failure reaches the caller of the coordinator
 * as `PersistenceError` `WRITE_FAILED` with the raw error as `cause`; a `HarnessError` of the
 * adapter passes unchanged, and an abort rejects with the caller's own reason.
 */
import { afterEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  type Harness,
  memoryPersistence,
  type PersistenceAdapter,
  PersistenceError,
  type SessionEvent,
  SessionLockedError,
} from 'yoke'
import { createMemoryStore } from '../../src/persistence/index.js'
import { fakeClock } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { L1, logOf, TS } from '../session/builders.js'

const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
})

type Method = 'load' | 'readFrom' | 'list' | 'delete' | 'acquire' | 'commitRepair'

/** A memory adapter holding session `s1` (one completed turn) whose `broken` method fails with `failure`. */
async function harnessWith(
  broken: Method,
  failure: unknown,
  stored: readonly SessionEvent[] = logOf(L1()),
): Promise<Harness> {
  const store = createMemoryStore()
  const seeding = memoryPersistence({ store })
  await seeding.create({ version: 1, id: 's1', createdAt: 0 })
  const lease = await seeding.acquire('s1')
  await seeding.append('s1', stored, { expectedSeq: 0, lease })
  await lease.release()
  await seeding.close()
  const inner = memoryPersistence({ store })
  // The memory adapter's methods are own properties that never use `this`: a spread keeps them.
  const adapter: PersistenceAdapter = { ...inner, [broken]: () => Promise.reject(failure) }
  const harness = await createHarness({ persistence: adapter, clock: fakeClock({ now: 0 }), logger: recordingLogger() })
  harnesses.push(harness)
  return harness
}

const operations: readonly [string, Method, (harness: Harness) => Promise<unknown>][] = [
  ['load', 'load', (harness) => harness.persistence.load('s1')],
  ['inspect', 'load', (harness) => harness.persistence.inspect('s1')],
  ['prepare', 'acquire', (harness) => harness.persistence.prepare('s1')],
  ['repair', 'load', (harness) => harness.persistence.repair('s1')],
  ['readFrom', 'readFrom', (harness) => harness.persistence.readFrom('s1', 0)],
  ['list', 'list', (harness) => harness.persistence.list()],
  ['delete', 'delete', (harness) => harness.persistence.delete('s1')],
]

describe('raw adapter errors are wrapped', () => {
  test.each(operations)(
    '%s: a raw %s failure is PersistenceError WRITE_FAILED with the cause',
    async (_name, method, operation) => {
      const raw = new Error(`disk on fire (${method})`)
      const harness = await harnessWith(method, raw)
      const error = await rejectionOf(operation(harness))
      expect(PersistenceError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'WRITE_FAILED', cause: raw })
      if (method !== 'list') expect(error).toMatchObject({ sessionId: 's1' })
      expect((error as Error).message).toContain(method)
    },
  )

  test('repair: a raw commitRepair failure (closing an open turn) is PersistenceError WRITE_FAILED with the cause', async () => {
    const raw = new Error('disk on fire (commitRepair)')
    const harness = await harnessWith('commitRepair', raw, logOf([TS(1)]))
    const error = await rejectionOf(harness.persistence.repair('s1'))
    expect(PersistenceError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'WRITE_FAILED', sessionId: 's1', cause: raw })
  })

  test('a HarnessError of the adapter passes unchanged', async () => {
    const locked = new SessionLockedError({
      code: 'SESSION_LOCKED',
      sessionId: 's1',
      detail: 'held elsewhere',
      holder: { pid: 1, host: 'h', acquiredAt: 0 },
    })
    const harness = await harnessWith('acquire', locked)
    expect(await rejectionOf(harness.persistence.prepare('s1'))).toBe(locked)
  })

  test('an abort during a read rejects with the caller’s reason itself', async () => {
    const controller = new AbortController()
    const reason = new Error('stop')
    const store = createMemoryStore()
    const inner = memoryPersistence({ store })
    const slow: PersistenceAdapter = {
      ...inner,
      list: (options) =>
        new Promise((_resolve, reject) => {
          options?.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true })
        }),
    }
    const harness = await createHarness({ persistence: slow, logger: recordingLogger() })
    harnesses.push(harness)
    const listing = harness.persistence.list({ signal: controller.signal })
    controller.abort(reason)
    expect(await rejectionOf(listing)).toBe(reason)
  })
})
