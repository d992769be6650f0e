/**
 * `harness.close({ drainMs })`: a graceful shutdown lets turns in flight finish (and be stored)
 * before the harness ends them, refuses new agents meanwhile, and ends what is still running once
 * the drain time is over. A bad `drainMs` is a typed error that closes nothing.
 *
 * @module
 */
import { afterEach, expect, test } from 'vitest'
import { createHarness, type Harness, HarnessClosedError, InvalidArgumentError, memoryPersistence } from 'yoke'
import { hang, scriptedModel, text } from 'yoke/testing'
import { createMemoryStore, type MemoryStore } from '../../src/persistence/index.js'
import { rejectionOf } from '../helpers/outcomes.js'

const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
})

async function harnessOver(store: MemoryStore, script: Parameters<typeof scriptedModel>[0]): Promise<Harness> {
  const harness = await createHarness({ model: scriptedModel(script), persistence: memoryPersistence({ store }) })
  harnesses.push(harness)
  return harness
}

/** The event types stored for `id`, read back by a fresh harness over the same store. */
async function storedTypes(store: MemoryStore, id: string): Promise<string[]> {
  const reader = await harnessOver(store, [])
  const history = await reader.readSession(id)
  return history.events.map((event) => event.type)
}

test('a turn in flight finishes within drainMs and is stored whole; new agents are refused meanwhile', async () => {
  const store = createMemoryStore()
  const harness = await harnessOver(store, [text('first', { delayMs: 150 }), text('second', { delayMs: 50 })])
  const agent = await harness.openAgent('drained')
  const first = agent.run('one')
  const second = agent.run('two') // queued behind the first: it finishes too
  await new Promise((resolve) => setTimeout(resolve, 20))

  const closing = harness.close({ drainMs: 5_000 })
  expect(harness.closed).toBe(true)
  expect(HarnessClosedError.is(await rejectionOf(harness.openAgent('late')))).toBe(true)

  const [one, two] = await Promise.all([first, second])
  expect(one).toMatchObject({ text: 'first', reason: { kind: 'completed' } })
  expect(two).toMatchObject({ text: 'second', reason: { kind: 'completed' } })
  await closing

  const types = await storedTypes(store, 'drained')
  expect(types.filter((type) => type === 'turn/end')).toHaveLength(2)
  expect(types.at(-1)).toBe('turn/end')
})

test('a turn still running when drainMs is over ends aborted (disposed) and its log is closed', async () => {
  const store = createMemoryStore()
  const harness = await harnessOver(store, [hang()])
  const agent = await harness.openAgent('stuck')
  const run = agent.run('wait forever')
  await new Promise((resolve) => setTimeout(resolve, 20))

  const started = performance.now()
  await harness.close({ drainMs: 100 })
  const waited = performance.now() - started
  expect(waited).toBeGreaterThanOrEqual(90)
  expect(await run).toMatchObject({ reason: { kind: 'aborted', reason: { kind: 'disposed' } } })
  expect((await storedTypes(store, 'stuck')).at(-1)).toBe('turn/end')
})

test('close() without options ends a running turn at once, as before', async () => {
  const store = createMemoryStore()
  const harness = await harnessOver(store, [text('slow', { delayMs: 2_000 })])
  const agent = await harness.openAgent('now')
  const run = agent.run('go')
  await new Promise((resolve) => setTimeout(resolve, 20))
  const started = performance.now()
  await harness.close()
  expect(performance.now() - started).toBeLessThan(1_000)
  expect(await run).toMatchObject({ reason: { kind: 'aborted', reason: { kind: 'disposed' } } })
})

test('drainMs: Infinity waits for the turn however long it takes', async () => {
  const store = createMemoryStore()
  const harness = await harnessOver(store, [text('late answer', { delayMs: 200 })])
  const agent = await harness.openAgent('patient')
  const run = agent.run('go')
  await new Promise((resolve) => setTimeout(resolve, 20))
  await harness.close({ drainMs: Number.POSITIVE_INFINITY })
  expect(await run).toMatchObject({ text: 'late answer', reason: { kind: 'completed' } })
})

test.each([
  ['a negative number', { drainMs: -1 }, 'options.drainMs'],
  ['NaN', { drainMs: Number.NaN }, 'options.drainMs'],
  ['a string', { drainMs: '5000' }, 'options.drainMs'],
  ['an unknown key', { drain: 5000 }, 'options.drain'],
  ['a non-object', 5000, 'options'],
])('a bad close option (%s) is an InvalidArgumentError naming it, and closes nothing', async (_, options, argument) => {
  const store = createMemoryStore()
  const harness = await harnessOver(store, [text('still open')])
  const error = await rejectionOf(harness.close(options as never))
  expect(InvalidArgumentError.is(error)).toBe(true)
  expect(error).toMatchObject({ argument })
  expect(harness.closed).toBe(false)
  const agent = await harness.openAgent('after')
  expect(await agent.run('hi')).toMatchObject({ text: 'still open' })
})
