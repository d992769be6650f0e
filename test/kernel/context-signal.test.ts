import { describe, expect, test } from 'vitest'
import { ContextDisposedError } from 'yoke'
import { testRoot } from '../helpers/root.js'

// The signal's controller is made on first read: a context whose signal is read only after its
// disposal began must still see it aborted, with the same reason shape.
describe('context signal read only after disposal begins', () => {
  test('first read during cleanup: already aborted with a ContextDisposedError, the same signal on every read', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const seen: { aborted: boolean; reason: unknown }[] = []
    let first: AbortSignal | undefined
    worker.effect(() => () => {
      first = worker.signal
      seen.push({ aborted: first.aborted, reason: first.reason })
    })
    await worker.dispose()
    expect(seen).toHaveLength(1)
    expect(seen[0]?.aborted).toBe(true)
    expect(ContextDisposedError.is(seen[0]?.reason)).toBe(true)
    expect(seen[0]?.reason).toMatchObject({ code: 'CONTEXT_DISPOSED', context: 'harness/worker', operation: 'dispose' })
    expect(worker.signal).toBe(first)
    expect(worker.signal.reason).toBe(seen[0]?.reason)
  })

  test('first read after disposal ended, and on a child disposed with its parent', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const nested = worker.child('nested')
    await worker.dispose()
    expect([worker.signal.aborted, nested.signal.aborted]).toEqual([true, true])
    expect(nested.signal.reason).toMatchObject({
      code: 'CONTEXT_DISPOSED',
      context: 'harness/worker/nested',
      operation: 'dispose',
    })
  })

  test('a signal never read before disposal: a listener added afterwards never fires, an untouched sibling stays live', async () => {
    const { root } = testRoot()
    const worker = root.child('worker')
    const sibling = root.child('sibling')
    await worker.dispose()
    let fired = 0
    worker.signal.addEventListener('abort', () => {
      fired++
    })
    expect(fired).toBe(0)
    expect(worker.signal.aborted).toBe(true)
    expect(sibling.signal.aborted).toBe(false)
    await sibling.dispose()
    expect(sibling.signal.aborted).toBe(true)
  })
})
