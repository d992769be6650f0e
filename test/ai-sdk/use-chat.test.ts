/**
 * The UI message stream driven by the AI SDK's real client: `AbstractChat` (what `useChat` wraps)
 * over `DefaultChatTransport`, against a node:http loopback server serving a Yoke harness with the
 * scripted model and real tools. The final UI message carries the text, the reasoning and the tool
 * calls with inputs and outputs; a failing tool, a cancelled turn and a failed turn show as the AI
 * SDK shows them; a dropped connection is resumed with `useChat`'s own resume request.
 *
 * @module
 */
import { DefaultChatTransport, type UIMessage, validateUIMessages } from 'ai'
import { expect, test } from 'vitest'
import { createHarness, defineTool, type Harness } from 'yoke'
import { fail, scriptedModel, text } from 'yoke/testing'
import { z } from 'zod'
import { toUIMessages } from '../../src/ai-sdk/index.js'
import { gate, until } from '../helpers/gates.js'
import { type ChatServer, droppingChat, startChatServer, TestChat } from './ui-chat.js'
import { heldWeatherTool, useCleanups, weatherTool } from './fixtures.js'

const cleanups = useCleanups()

const broken = defineTool({
  name: 'broken',
  description: 'Always fails.',
  input: z.object({}),
  execute: () => {
    throw new Error('the database password is hunter2')
  },
})

async function serve(harness: Harness, options = {}): Promise<ChatServer> {
  cleanups.push(() => harness.close())
  const server = await startChatServer(harness, options)
  cleanups.push(() => server.close())
  return server
}

function chatOf(id: string, server: ChatServer): TestChat {
  return new TestChat({ id, transport: new DefaultChatTransport({ api: server.api }) })
}

function partsWithoutUndefined(message: UIMessage | undefined): unknown {
  return JSON.parse(JSON.stringify(message?.parts ?? null))
}

/** The assistant message's parts after the first test's turn, as the chat renders them and as the log gives them back. */
const parisParts = [
  { type: 'step-start' },
  { type: 'reasoning', id: 'reasoning-1-0', text: 'The user wants the weather.', state: 'done' },
  { type: 'text', text: 'Let me check.', state: 'done' },
  {
    type: 'tool-weather',
    toolCallId: 'call_w',
    state: 'output-available',
    input: { city: 'Paris' },
    output: 'sunny in Paris',
  },
  {
    type: 'tool-broken',
    toolCallId: 'call_b',
    state: 'output-error',
    input: {},
    errorText: 'Tool error (TOOL_FAILED): the database password is hunter2',
  },
  { type: 'step-start' },
  { type: 'text', text: 'It is sunny in Paris.', state: 'done' },
]

test('useChat renders a turn with reasoning, text, a tool call with its input and output, and a failing tool', async () => {
  const model = scriptedModel([
    {
      reasoning: 'The user wants the weather.',
      text: 'Let me check.',
      toolCalls: [
        { id: 'call_w', name: 'weather', arguments: { city: 'Paris' } },
        { id: 'call_b', name: 'broken', arguments: {} },
      ],
      chunkSize: 4,
    },
    text('It is sunny in Paris.', { chunkSize: 5 }),
  ])
  const harness = await createHarness({ model, tools: [weatherTool, broken] })
  const server = await serve(harness)
  const finished: { isError: boolean; finishReason: string | undefined }[] = []
  const chat = new TestChat({
    id: 'chat-1',
    transport: new DefaultChatTransport({ api: server.api }),
    onFinish: ({ isError, finishReason }) => finished.push({ isError, finishReason }),
  })
  await chat.sendMessage({ text: 'Weather in Paris?' })

  expect(chat.status).toBe('ready')
  expect(chat.error).toBeUndefined()
  expect(finished).toEqual([{ isError: false, finishReason: 'stop' }])
  expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant'])
  const assistant = chat.messages[1]
  expect(assistant?.id).toBe('chat-1:turn-1')
  expect(partsWithoutUndefined(assistant)).toEqual(parisParts)
  // The log read back gives the same messages (the user's id is the log's own).
  const history = toUIMessages(await harness.openAgent('chat-1'))
  expect(history[1]).toEqual({
    id: 'chat-1:turn-1',
    role: 'assistant',
    parts: parisParts,
  })
  expect(history[0]).toMatchObject({ role: 'user', parts: [{ type: 'text', text: 'Weather in Paris?' }] })
  await expect(validateUIMessages({ messages: history })).resolves.toHaveLength(2)
  model.assertComplete()
})

test('a second message continues the same session, and the client history matches the log', async () => {
  const model = scriptedModel([text('Hello!'), text('Still here.')])
  const harness = await createHarness({ model })
  const server = await serve(harness)
  const chat = chatOf('chat-2', server)
  await chat.sendMessage({ text: 'Hi' })
  await chat.sendMessage({ text: 'Are you there?' })
  expect(
    chat.messages.map((message) => [message.role, message.id.startsWith('chat-2:turn-') ? message.id : 'user']),
  ).toEqual([
    ['user', 'user'],
    ['assistant', 'chat-2:turn-1'],
    ['user', 'user'],
    ['assistant', 'chat-2:turn-2'],
  ])
  // Read back from the log, the history is what the client holds, but for the user messages' ids.
  const history = toUIMessages(await harness.openAgent('chat-2'))
  const withoutUserIds = (messages: readonly UIMessage[]) =>
    JSON.parse(
      JSON.stringify(messages.map((message) => (message.role === 'user' ? { ...message, id: 'user' } : message))),
    )
  expect(withoutUserIds(history)).toEqual(withoutUserIds(chat.messages))
})

test('a failed turn is an error chunk whose text hides the failure unless onError maps it', async () => {
  const failing = () =>
    scriptedModel([fail('BAD_REQUEST', 'upstream said: key sk-secret is invalid', { retryable: false })])
  for (const [options, expected] of [
    [{}, 'An error occurred.'],
    [
      { onError: (reason: { kind: string; error?: { code: string } }) => `failed: ${reason.error?.code}` },
      'failed: BAD_REQUEST',
    ],
  ] as const) {
    const harness = await createHarness({ model: failing() })
    const server = await serve(harness, options)
    const errors: string[] = []
    const chat = new TestChat({
      id: 'chat-3',
      transport: new DefaultChatTransport({ api: server.api }),
      onError: (error) => errors.push(error.message),
    })
    await chat.sendMessage({ text: 'Hi' })
    expect(chat.status).toBe('error')
    expect(chat.error?.message).toBe(expected)
    expect(errors).toEqual([expected])
    expect(JSON.stringify(chat.messages)).not.toContain('sk-secret')
  }
})

test('a cancelled turn ends with an abort chunk: the chat is ready and keeps what was streamed', async () => {
  const held = gate()
  const slow = defineTool({
    name: 'slow',
    description: 'Waits.',
    input: z.object({}),
    execute: async (_args, { signal }) => {
      await new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => resolve(), { once: true })
        void held.promise.then(resolve)
      })
      return 'done'
    },
  })
  const model = scriptedModel([{ text: 'Working on it.', toolCalls: [{ id: 'call_s', name: 'slow', arguments: {} }] }])
  const harness = await createHarness({ model, tools: [slow] })
  const server = await serve(harness)
  const chat = chatOf('chat-4', server)
  const sent = chat.sendMessage({ text: 'Go' })
  const agent = await harness.openAgent('chat-4')
  await until(
    () => agent.session.length > 0 && agent.status === 'running' && JSON.stringify(chat.messages).includes('call_s'),
    'the tool call',
  )
  agent.cancel()
  await sent
  expect(chat.status).toBe('ready')
  const parts = partsWithoutUndefined(chat.messages[1]) as { type: string; state?: string }[]
  expect(parts.slice(0, 2)).toEqual([{ type: 'step-start' }, { type: 'text', text: 'Working on it.', state: 'done' }])
  expect(parts[2]).toMatchObject({ type: 'tool-slow', toolCallId: 'call_s' })
})

test('a dropped connection is resumed with useChat resume (GET {api}/{id}/stream): the message is whole, every part once', async () => {
  const held = gate()
  const waiting = heldWeatherTool(held.promise, (city) => `rainy in ${city}`, 'The weather, slowly.')
  const model = scriptedModel([
    {
      reasoning: 'Hmm.',
      text: 'Checking the weather.',
      toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Oslo' } }],
      chunkSize: 3,
    },
    text('It is rainy in Oslo.', { chunkSize: 4 }),
  ])
  const harness = await createHarness({ model, tools: [waiting] })
  const server = await serve(harness)
  const { chat, dropWhen } = droppingChat('chat-5', server.api)
  dropWhen((seen) => seen.includes('"tool-input-available"'))
  await chat.sendMessage({ text: 'Weather in Oslo?' })
  // The network failure leaves the chat in error with a partial message; the turn goes on.
  expect(chat.status).toBe('error')
  const agent = await harness.openAgent('chat-5')
  expect(agent.status).toBe('running')

  const resumed = chat.resumeStream()
  await until(() => server.requests.includes('GET /api/chat/chat-5/stream'), 'the resume request')
  held.open()
  await resumed
  expect(chat.status).toBe('ready')
  expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant'])
  expect(partsWithoutUndefined(chat.messages[1])).toEqual([
    { type: 'step-start' },
    { type: 'reasoning', id: 'reasoning-1-0', text: 'Hmm.', state: 'done' },
    { type: 'text', text: 'Checking the weather.', state: 'done' },
    {
      type: 'tool-weather',
      toolCallId: 'call_1',
      state: 'output-available',
      input: { city: 'Oslo' },
      output: 'rainy in Oslo',
    },
    { type: 'step-start' },
    { type: 'text', text: 'It is rainy in Oslo.', state: 'done' },
  ])
  // Nothing runs now: the resume request answers 204 and the chat stays as it is.
  const before = JSON.stringify(chat.messages)
  await chat.resumeStream()
  expect(chat.status).toBe('ready')
  expect(JSON.stringify(chat.messages)).toBe(before)
})

test('a page reload renders the history with toUIMessages, and resuming the running turn replaces its partial message', async () => {
  const held = gate()
  const waiting = heldWeatherTool(held.promise, (city) => `windy in ${city}`, 'The weather, slowly.')
  const model = scriptedModel([
    { text: 'One moment.', toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Rome' } }] },
    text('It is windy in Rome.'),
  ])
  const harness = await createHarness({ model, tools: [waiting] })
  const server = await serve(harness)
  const first = chatOf('chat-6', server)
  const sent = first.sendMessage({ text: 'Weather in Rome?' })
  const agent = await harness.openAgent('chat-6')
  await until(
    () => agent.session.length > 0 && JSON.stringify(toUIMessages(agent)).includes('call_1'),
    'the tool call in the log',
  )

  // The reloaded page: the history so far, then useChat({ resume: true }).
  const history = (await (await fetch(`${server.api}/chat-6/messages`)).json()) as UIMessage[]
  expect(history.map((message) => message.id)).toEqual([expect.any(String), 'chat-6:turn-1'])
  const initial = new TestChat({
    id: 'chat-6',
    transport: new DefaultChatTransport({ api: server.api }),
    initialMessages: history,
  })
  const resumed = initial.resumeStream()
  await until(
    () => server.requests.filter((request) => request === 'GET /api/chat/chat-6/stream').length === 1,
    'the resume',
  )
  held.open()
  await Promise.all([resumed, sent])
  expect(initial.messages.map((message) => message.id)).toEqual(history.map((message) => message.id))
  expect(partsWithoutUndefined(initial.messages[1])).toEqual(partsWithoutUndefined(first.messages[1]))
  expect(JSON.parse(JSON.stringify(toUIMessages(agent)))).toEqual(JSON.parse(JSON.stringify(initial.messages)))
})
