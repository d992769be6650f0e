/**
 * `examples/ai-sdk.ts`: run as a process without `OPENAI_API_KEY`, `@ai-sdk/openai-compatible`
 * talks to Yoke's mock server on loopback; the model calls the tool, answers from its result, and
 * the example exits 0.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type Bundle, bundle, root } from '../helpers/child-process.js'

let example: Bundle | undefined

beforeAll(async () => {
  example = await bundle('examples/ai-sdk.ts')
}, 30_000)

afterAll(async () => {
  await example?.remove()
})

test('the ai-sdk example: a provider package as the model, one tool call, the answer', async () => {
  // No key, whatever the environment has: the example must use the mock server.
  const outcome = await example!.run([], { cwd: root, env: { OPENAI_API_KEY: '' } })
  expect(outcome.stderr).toBe('')
  expect(outcome.code).toBe(0)
  expect(outcome.stdout.trimEnd().split('\n')).toEqual([
    'It is 18°C with light rain in Paris.',
    'turn 1 completed · 1 tool call · response id logged: true',
  ])
})
