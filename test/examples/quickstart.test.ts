/**
 * `examples/quickstart.ts`: run as a process with the scripted model,
 * it prints the scripted answer and exits 0.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bundleExample, type ExampleBundle } from './example-process.js'

let example: ExampleBundle | undefined

beforeAll(async () => {
  example = await bundleExample('quickstart')
}, 30_000)

afterAll(async () => {
  await example?.remove()
})

test('quickstart prints the scripted answer and the completed turn, and exits 0', async () => {
  const outcome = await example!.run()
  expect(outcome.stderr).toBe('')
  expect(outcome.code).toBe(0)
  expect(outcome.stdout.trimEnd().split('\n')).toEqual([
    'Hello! I am a Yoke agent.',
    'turn 1 completed · 2 messages · 14 events in the log',
  ])
})
