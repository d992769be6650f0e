/**
 * `examples/mcp.ts`: run as a process with the scripted model, it mounts the real
 * server-everything over stdio, calls two of its tools in one turn, prints their results, the
 * live progress and the answer built from them, and exits 0 (its server's process ended with it).
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bundleExample, type ExampleBundle } from './example-process.js'

let example: ExampleBundle | undefined

beforeAll(async () => {
  example = await bundleExample('mcp')
}, 30_000)

afterAll(async () => {
  await example?.remove()
})

test('the MCP example mounts server-everything, calls get-sum and a long operation, and answers from them', async () => {
  const outcome = await example!.run()
  expect(outcome.stderr).toBe('')
  expect(outcome.code).toBe(0)
  expect(outcome.stdout.trimEnd().split('\n')).toEqual([
    expect.stringMatching(/^mounted \d+ tools \(\d+ may run side by side\)$/),
    'get-sum → The sum of 2 and 40 is 42.',
    'trigger-long-running-operation → Long running operation completed. Duration: 0.5 seconds, Steps: 5.',
    'progress events: some',
    'The server says: The sum of 2 and 40 is 42. / Long running operation completed. Duration: 0.5 seconds, Steps: 5.',
  ])
})
