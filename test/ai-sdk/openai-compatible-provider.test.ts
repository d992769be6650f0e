/**
 * A real AI SDK provider package, `@ai-sdk/openai-compatible` 2.x (specification v3), pointed at
 * Yoke's mock OpenAI-compatible server on loopback: a full turn with a tool over JSONL with a
 * resume, reasoning, and a 429 with `Retry-After` mapped from the provider's `APICallError`.
 *
 * @module
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { expect, test } from 'vitest'
import { createHarness, type LlmFailure } from 'yoke'
import { type MockOpenAIServer, startMockOpenAIServer } from 'yoke/testing'
import { aiSdkModel } from '../../src/ai-sdk/index.js'
import { lookupTool, useCleanups, useTempDir } from './fixtures.js'

const tempDir = useTempDir('yoke-ai-sdk-provider-')
// Registered after the directory's: vitest runs the later afterEach first, so servers close before it is removed.
const cleanups = useCleanups()

function providerFor(server: MockOpenAIServer) {
  return createOpenAICompatible({ name: 'mock', baseURL: server.baseURL, apiKey: 'test-key', includeUsage: true })
}

test('a tool turn through @ai-sdk/openai-compatible, then a resumed turn that sends the whole history', async () => {
  const server = await startMockOpenAIServer({
    script: [
      { reasoning: 'Look it up first.', toolCalls: [{ id: 'call-1', name: 'lookup', arguments: { q: 'yoke' } }] },
      { text: 'It means a harness.' },
      { text: 'Still a harness.' },
    ],
  })
  cleanups.push(() => server.close())
  const harness = await createHarness({
    model: aiSdkModel(providerFor(server)('mock-model')),
    tools: [lookupTool],
    persistence: { dir: tempDir() },
  })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  const result = await agent.run('look up yoke')
  expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'It means a harness.' })
  const assistant = agent.session.events.find((event) => event.type === 'assistant/message')
  expect((assistant?.data as { message: { content: unknown } } | undefined)?.message.content).toEqual([
    { type: 'reasoning', text: 'Look it up first.' },
    { type: 'tool-call', id: 'call-1', name: 'lookup', arguments: '{"q":"yoke"}' },
  ])
  const id = agent.id
  await harness.close()

  const again = await createHarness({
    model: aiSdkModel(providerFor(server)('mock-model')),
    tools: [lookupTool],
    persistence: { dir: tempDir() },
  })
  const resumed = await again.resumeAgent(id)
  expect((await resumed.run('and again?')).text).toBe('Still a harness.')
  await again.close()
  server.assertComplete()

  const bodies = server.requests.map((request) => request.body as { messages: { role: string }[]; tools?: unknown[] })
  expect(bodies[0]?.tools).toHaveLength(1)
  expect(bodies[1]?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool'])
  expect(bodies[2]?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user'])
  expect(server.requests[0]?.headers['authorization']).toBe('Bearer test-key')
})

test("a 429 with Retry-After becomes a retryable RATE_LIMIT failure with the provider's wait", async () => {
  const server = await startMockOpenAIServer({ script: [{ fault: 'rate-limit', retryAfter: '2' }] })
  cleanups.push(() => server.close())
  const adapter = aiSdkModel(providerFor(server)('mock-model'))
  const signal = new AbortController().signal
  const chunks = []
  const request = {
    provider: adapter.provider,
    model: 'mock-model',
    messages: [
      {
        id: 'u1',
        role: 'user' as const,
        content: [{ type: 'text' as const, text: 'hi' }],
        source: { kind: 'user' as const },
      },
    ],
    metadata: { purpose: 'conversation' as const },
    signal,
  }
  for await (const chunk of adapter.stream(request, { signal })) chunks.push(chunk)
  expect(chunks).toHaveLength(1)
  const failure = (chunks[0] as { failure: LlmFailure }).failure
  expect(failure).toMatchObject({ code: 'RATE_LIMIT', status: 429, retryable: true, retryAfterMs: 2000 })
})
