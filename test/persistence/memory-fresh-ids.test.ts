/**
 * A generated session id over a memory store that other harnesses share: the memory adapter
 * answers "nothing stored under this id" without a read, and that answer must match the read's.
 */
import { describe, expect, test } from 'vitest'
import { createHarness } from 'yoke'
import { createMemoryStore, memoryPersistence } from '../../src/persistence/memory-persistence.js'
import { fakeIds, scriptedModel, text } from 'yoke/testing'

describe('generated ids over a shared memory store', () => {
  test('a restarted deterministic generator skips the stored s1, and takes it again once s1 is deleted', async () => {
    const store = createMemoryStore()
    const first = await createHarness({
      persistence: memoryPersistence({ store }),
      model: scriptedModel([text('one')]),
      ids: fakeIds(),
    })
    const stored = await first.createAgent()
    expect(stored.id).toBe('s1')
    await stored.run('hi')
    await first.close()

    const second = await createHarness({ persistence: memoryPersistence({ store }), ids: fakeIds() })
    expect((await second.createAgent()).id).toBe('s2')
    await second.close()

    const third = await createHarness({ persistence: memoryPersistence({ store }), ids: fakeIds() })
    await third.persistence.delete('s1')
    expect((await third.createAgent()).id).toBe('s1')
    await third.close()
  })

  test('a closed adapter is asked through a read, which reports that it is closed', async () => {
    const persistence = memoryPersistence()
    const harness = await createHarness({ persistence, ids: fakeIds() })
    await persistence.close()
    await expect(harness.createAgent()).rejects.toMatchObject({ code: 'CLOSED' })
    await harness.close().catch(() => {})
  })
})
