/**
 * Reads are bounded by the write timeout too: opening, resuming, reading or listing sessions on
 * storage that never answers a read fails with `WRITE_TIMEOUT` naming the read, instead of waiting
 * for ever, and the harness stays usable for what storage still answers.
 *
 * @module
 */
import { afterEach, expect, test } from 'vitest'
import { createHarness, type Harness, memoryPersistence, type PersistenceAdapter, PersistenceError } from 'yoke'
import { scriptedModel, text } from 'yoke/testing'
import { createMemoryStore, type MemoryStore } from '../../src/persistence/index.js'
import { rejectionOf } from '../helpers/outcomes.js'

const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
})

/** The memory adapter over `store`, whose reads named in `hung` never settle. */
function hungReads(store: MemoryStore, hung: ReadonlySet<'load' | 'readFrom' | 'list'>): PersistenceAdapter {
  const inner = memoryPersistence({ store })
  const never = new Promise<never>(() => {})
  return {
    name: 'hung-reads',
    create: (header) => inner.create(header),
    append: (id, events, options) => inner.append(id, events, options),
    load: (id, options) => (hung.has('load') ? never : inner.load(id, options)),
    readFrom: (id, from, options) =>
      hung.has('readFrom') ? never : (inner.readFrom as NonNullable<PersistenceAdapter['readFrom']>)(id, from, options),
    list: (options) => (hung.has('list') ? never : inner.list(options)),
    commitRepair: (id, torn, closers) => inner.commitRepair(id, torn, closers),
    acquire: (id) => inner.acquire(id),
    close: () => inner.close(),
  }
}

async function storeWithSession(id: string): Promise<MemoryStore> {
  const store = createMemoryStore()
  const harness = await createHarness({
    model: scriptedModel([text('stored')]),
    persistence: memoryPersistence({ store }),
  })
  const agent = await harness.openAgent(id)
  await agent.run('hello')
  await harness.close()
  return store
}

function expectReadTimeout(error: unknown, operation: string, sessionId?: string): void {
  expect(PersistenceError.is(error), String(error)).toBe(true)
  expect(error).toMatchObject({ code: 'WRITE_TIMEOUT', operation, timeoutMs: 100 })
  if (sessionId !== undefined) expect(error).toMatchObject({ sessionId })
}

test('resumeAgent and openAgent of a stored session fail WRITE_TIMEOUT (load) when its load hangs', async () => {
  const store = await storeWithSession('stored')
  const harness = await createHarness({
    persistence: hungReads(store, new Set(['load'])),
    writeTimeoutMs: 100,
  })
  harnesses.push(harness)
  const started = performance.now()
  expectReadTimeout(await rejectionOf(harness.resumeAgent('stored')), 'load', 'stored')
  expect(performance.now() - started).toBeLessThan(5_000)
  expectReadTimeout(await rejectionOf(harness.openAgent('stored')), 'load', 'stored')
  // The lease taken for the read was given back: a harness whose reads work opens it.
  const healthy = await createHarness({
    model: scriptedModel([text('again')]),
    persistence: memoryPersistence({ store }),
  })
  harnesses.push(healthy)
  const agent = await healthy.resumeAgent('stored')
  expect((await agent.run('still there?')).text).toBe('again')
})

test('listSessions fails WRITE_TIMEOUT (list) when the listing hangs, and readSession when its read hangs', async () => {
  const store = await storeWithSession('listed')
  const harness = await createHarness({
    persistence: hungReads(store, new Set(['list', 'load', 'readFrom'])),
    writeTimeoutMs: 100,
  })
  harnesses.push(harness)
  expectReadTimeout(await rejectionOf(harness.listSessions()), 'list')
  const error = await rejectionOf(harness.readSession('listed'))
  expect(PersistenceError.is(error) && error.code === 'WRITE_TIMEOUT').toBe(true)
})
