import { expect, test } from 'vitest'
import { raceSignal } from '../../src/kernel/race-signal.js'

test('resolves and rejects with the promise while the signal stays quiet', async () => {
  const controller = new AbortController()
  await expect(raceSignal(Promise.resolve(7), controller.signal)).resolves.toBe(7)
  const failure = new Error('work broke')
  await expect(raceSignal(Promise.reject(failure), controller.signal)).rejects.toBe(failure)
})

test('an abort rejects at once with the signal reason (or reasonOf), the work left running', async () => {
  const controller = new AbortController()
  let release: (value: string) => void = () => undefined
  const work = new Promise<string>((resolve) => (release = resolve))
  const raced = raceSignal(work, controller.signal)
  const reason = { kind: 'user' }
  controller.abort(reason)
  await expect(raced).rejects.toBe(reason)
  release('late')
  await expect(work).resolves.toBe('late')
  const marker = Symbol('aborted')
  await expect(raceSignal(new Promise<never>(() => undefined), controller.signal, () => marker)).rejects.toBe(marker)
})

test('an already aborted signal rejects without waiting; the losing rejection is observed', async () => {
  const controller = new AbortController()
  controller.abort('gone')
  const unhandled: unknown[] = []
  const onUnhandled = (error: unknown): void => {
    unhandled.push(error)
  }
  process.on('unhandledRejection', onUnhandled)
  try {
    await expect(raceSignal(Promise.reject(new Error('ignored')), controller.signal)).rejects.toBe('gone')
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
  expect(unhandled).toEqual([])
})
