/**
 * `examples/use-chat-route.ts` run as a real process (bundled once, `yoke`, `yoke/ai-sdk` and
 * `yoke/testing` aliased to the source): its web-standard route handler on node:http serves the
 * AI SDK's own chat client, which renders reasoning, text and a tool call with its output; the
 * resume route answers 204 once the turn is over, the history route gives the same message, and a
 * malformed body is a 400 naming the field.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type ExampleBundle, bundleExample } from './example-process.js'

let example: ExampleBundle | undefined

beforeAll(async () => {
  example = await bundleExample('use-chat-route')
}, 30_000)

afterAll(async () => {
  await example?.remove()
})

test('the example serves useChat: the rendered assistant message, the resume and history routes, a bad body', async () => {
  if (example === undefined) throw new Error('the example is not bundled yet')
  const outcome = await example.run()
  expect(outcome.stderr).toBe('')
  expect(outcome.code).toBe(0)
  const lines = outcome.stdout.trimEnd().split('\n')
  expect(lines[0]).toMatch(
    /^useChat route on http:\/\/127\.0\.0\.1:\d+\/api\/chat · model: scripted \(no network; set DEEPSEEK_API_KEY to use DeepSeek\)$/,
  )
  expect(lines.slice(1)).toEqual([
    'user: What is the weather in Paris?',
    'assistant (chat-demo:turn-1, ready):',
    '  [reasoning] The user asks for the weather; I will look it up.',
    '  [text] Let me check.',
    '  [tool weather] {"city":"Paris"} → "18 °C and sunny in Paris"',
    '  [text] It is 18 °C and sunny in Paris.',
    'GET /api/chat/chat-demo/stream: 204 (no turn running)',
    'GET /api/chat/chat-demo: 2 messages, the last one as streamed',
    'POST /api/chat (no messages): 400 invalid body.messages: must be a non-empty array of UI messages',
  ])
})
