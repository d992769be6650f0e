/**
 * `toUIMessages`: a session log as the `useChat` history, from a live agent and from a stored log
 * read with `harness.readSession()`; accepted by the AI SDK's own `validateUIMessages`, and typed so
 * that it is the AI SDK's `UIMessage[]`.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type UIMessageChunk as AiUIMessageChunk, type UIMessage as AiUIMessage, validateUIMessages } from 'ai'
import { expect, test } from 'vitest'
import { createHarness, InvalidArgumentError } from 'yoke'
import { fail, scriptedModel, text } from 'yoke/testing'
import { toUIMessages, type UIMessageChunk, uiMessageStream } from '../../src/ai-sdk/index.js'
import { useCleanups, weatherTool } from './fixtures.js'

const cleanups = useCleanups()

test('a stored log read back gives the history: user text and images, turns with tools, a failed turn', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-ui-messages-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const model = scriptedModel([
    { reasoning: 'r', text: 'Looking.', toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Lima' } }] },
    text('Sunny.'),
    fail('BAD_REQUEST', 'nope', { retryable: false }),
  ])
  const first = await createHarness({ model, tools: [weatherTool], persistence: { dir } })
  const agent = await first.openAgent('chat-1')
  await agent.run('Weather in Lima?')
  await agent.run({
    content: [
      { type: 'text', text: 'And this?' },
      { type: 'image', mediaType: 'image/png', uri: 'https://example.com/a.png' },
    ],
  })
  const live = toUIMessages(agent)
  await first.close()

  const second = await createHarness({ persistence: { dir } })
  cleanups.push(() => second.close())
  const stored = toUIMessages(await second.readSession(agent.id))
  expect(stored).toEqual(live)
  expect(stored.map((message) => [message.role, message.parts.map((part) => part.type)])).toEqual([
    ['user', ['text']],
    ['assistant', ['step-start', 'reasoning', 'text', 'tool-weather', 'step-start', 'text']],
    ['user', ['text', 'file']],
    ['assistant', ['step-start']],
  ])
  expect(stored[1]?.id).toBe(`${agent.id}:turn-1`)
  expect(stored[2]?.parts[1]).toEqual({ type: 'file', mediaType: 'image/png', url: 'https://example.com/a.png' })
  expect(stored[1]?.parts[3]).toEqual({
    type: 'tool-weather',
    toolCallId: 'call_1',
    state: 'output-available',
    input: { city: 'Lima' },
    output: 'sunny in Lima',
  })
  await expect(validateUIMessages({ messages: stored })).resolves.toHaveLength(4)
  // The types are the AI SDK's: the history and the chunks go to it unconverted.
  const asAiMessages: AiUIMessage[] = stored
  const asAiChunks: ReadableStream<AiUIMessageChunk> = new ReadableStream<UIMessageChunk>()
  expect(asAiMessages).toBe(stored)
  expect(asAiChunks).toBeInstanceOf(ReadableStream)
})

test('options match the stream: no reasoning, dynamic tools, own ids; plugin messages are left out', async () => {
  const model = scriptedModel([
    { reasoning: 'r', toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Oslo' } }] },
    text('Done.'),
  ])
  const harness = await createHarness({ model, tools: [weatherTool] })
  cleanups.push(() => harness.close())
  const agent = await harness.createAgent()
  agent.inject({
    content: [{ type: 'text', text: 'context for the model' }],
    source: { kind: 'plugin', plugin: 'acme' },
  })
  const options = { sendReasoning: false, dynamicTools: true, messageId: ({ turn }: { turn: number }) => `t${turn}` }
  const chunks: UIMessageChunk[] = []
  for await (const chunk of uiMessageStream(agent.stream('Weather?'), options)) chunks.push(chunk)
  const messages = toUIMessages(agent, options)
  expect(JSON.stringify(messages)).not.toContain('context for the model')
  expect(messages[1]).toEqual({
    id: 't1',
    role: 'assistant',
    parts: [
      { type: 'step-start' },
      {
        type: 'dynamic-tool',
        toolName: 'weather',
        toolCallId: 'call_1',
        state: 'output-available',
        input: { city: 'Oslo' },
        output: 'sunny in Oslo',
      },
      { type: 'step-start' },
      { type: 'text', text: 'Done.', state: 'done' },
    ],
  })
  expect(chunks[0]).toEqual({ type: 'start', messageId: 't1' })
})

test('a bad source or option is InvalidArgumentError', async () => {
  for (const source of [null, {}, { id: 'x' }, { id: 1, events: [] }, { session: null }]) {
    expect(() => toUIMessages(source as never)).toThrow(InvalidArgumentError)
  }
  expect(() => toUIMessages({ id: 'x', events: [] }, { dynamicTools: 'yes' } as never)).toThrow(
    expect.objectContaining({ argument: 'options.dynamicTools' }),
  )
  expect(toUIMessages({ id: 'x', events: [] })).toEqual([])
})
