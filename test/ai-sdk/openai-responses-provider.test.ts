/**
 * A real AI SDK provider package for the OpenAI Responses API, `@ai-sdk/openai` 3.x
 * (specification v3), pointed at a loopback server speaking the Responses streaming wire format: a
 * full agent turn with reasoning (summary and encrypted content), a server-side web search, a
 * tool Yoke runs and a cited answer, over JSONL, with a resume (a new harness over the same
 * directory) before the next turn. The reasoning items, their encrypted content, the web search
 * call and the message item id all come back in the next requests' bodies.
 *
 * @module
 */
import { createOpenAI } from '@ai-sdk/openai'
import { expect, test } from 'vitest'
import { type AssistantMessage, createHarness } from 'yoke'
import { aiSdkMessageState, aiSdkModel } from '../../src/ai-sdk/index.js'
import { completed, created, type ResponsesServer, startResponsesServer } from './responses-server.js'
import { lookupTool, useCleanups, useTempDir } from './fixtures.js'

const tempDir = useTempDir('yoke-ai-sdk-responses-')
// Registered after the directory's: vitest runs the later afterEach first, so servers close before it is removed.
const cleanups = useCleanups()

const model = 'gpt-5-mini'
const usage = { input: 50, cached: 10, output: 20, reasoning: 12 }

/** The function call item of the lookup call, as added (no arguments yet) and as done. */
function lookupCall(argumentsJson: string, status: 'in_progress' | 'completed') {
  return { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: argumentsJson, status }
}

/** Reasoning with a summary, a server-side web search, then a function call streamed in two deltas. */
const toolStep = [
  created('resp_1', model),
  {
    type: 'response.output_item.added',
    output_index: 0,
    item: { type: 'reasoning', id: 'rs_1', encrypted_content: 'enc-A' },
  },
  { type: 'response.reasoning_summary_part.added', item_id: 'rs_1', summary_index: 0 },
  { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', summary_index: 0, delta: 'Need to look it up.' },
  { type: 'response.reasoning_summary_part.done', item_id: 'rs_1', summary_index: 0 },
  {
    type: 'response.output_item.done',
    output_index: 0,
    item: { type: 'reasoning', id: 'rs_1', encrypted_content: 'enc-A', summary: [] },
  },
  {
    type: 'response.output_item.added',
    output_index: 1,
    item: { type: 'web_search_call', id: 'ws_1', status: 'in_progress' },
  },
  {
    type: 'response.output_item.done',
    output_index: 1,
    item: { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'yoke' } },
  },
  {
    type: 'response.output_item.added',
    output_index: 2,
    item: lookupCall('', 'in_progress'),
  },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '{"q":' },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '"yoke"}' },
  {
    type: 'response.output_item.done',
    output_index: 2,
    item: lookupCall('{"q":"yoke"}', 'completed'),
  },
  completed(usage),
]

/** Reasoning with encrypted content and no summary, then a cited message. */
const answerStep = [
  created('resp_2', model),
  {
    type: 'response.output_item.added',
    output_index: 0,
    item: { type: 'reasoning', id: 'rs_2', encrypted_content: 'enc-B' },
  },
  {
    type: 'response.output_item.done',
    output_index: 0,
    item: { type: 'reasoning', id: 'rs_2', encrypted_content: 'enc-B', summary: [] },
  },
  { type: 'response.output_item.added', output_index: 1, item: { type: 'message', id: 'msg_2', role: 'assistant' } },
  {
    type: 'response.output_text.delta',
    item_id: 'msg_2',
    output_index: 1,
    content_index: 0,
    delta: 'It means a harness.',
  },
  {
    type: 'response.output_text.annotation.added',
    item_id: 'msg_2',
    annotation: { type: 'url_citation', url: 'https://example.com/yoke', title: 'Yoke', start_index: 0, end_index: 5 },
  },
  { type: 'response.output_item.done', output_index: 1, item: { type: 'message', id: 'msg_2', role: 'assistant' } },
  completed(usage),
]

function textStep(id: string, text: string) {
  return [
    created(`resp_${id}`, model),
    {
      type: 'response.output_item.added',
      output_index: 0,
      item: { type: 'message', id: `msg_${id}`, role: 'assistant' },
    },
    { type: 'response.output_text.delta', item_id: `msg_${id}`, output_index: 0, content_index: 0, delta: text },
    {
      type: 'response.output_item.done',
      output_index: 0,
      item: { type: 'message', id: `msg_${id}`, role: 'assistant' },
    },
    completed(usage),
  ]
}

/** Store off, encrypted reasoning included: the whole history goes in every request's `input`. */
const providerOptions = { openai: { store: false, include: ['reasoning.encrypted_content'] } }

function adapterFor(server: ResponsesServer) {
  const openai = createOpenAI({ baseURL: server.baseURL, apiKey: 'test-key' })
  return aiSdkModel(openai.responses(model), { providerOptions })
}

const firstStepInput = [
  { role: 'user', content: [{ type: 'input_text', text: 'look up yoke' }] },
  {
    type: 'reasoning',
    id: 'rs_1',
    encrypted_content: 'enc-A',
    summary: [{ type: 'summary_text', text: 'Need to look it up.' }],
  },
  { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'yoke' } },
  { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"yoke"}' },
  { type: 'function_call_output', call_id: 'call_1', output: 'found yoke' },
]

test('a tool turn through @ai-sdk/openai (Responses API), a resume, and the reasoning items come back', async () => {
  const server = await startResponsesServer([toolStep, answerStep, textStep('3', 'Still a harness.')])
  cleanups.push(() => server.close())
  const harness = await createHarness({
    model: adapterFor(server),
    tools: [lookupTool],
    persistence: { dir: tempDir() },
  })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  const result = await agent.run('look up yoke')
  expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'It means a harness.' })
  expect(agent.session.events.filter((event) => event.type === 'tool/call')).toHaveLength(1)

  const messages = agent.session
    .deriveMessages()
    .filter((message) => message.role === 'assistant') as AssistantMessage[]
  expect(messages[0]?.content).toEqual([
    { type: 'reasoning', text: 'Need to look it up.' },
    { type: 'tool-call', id: 'call_1', name: 'lookup', arguments: '{"q":"yoke"}' },
  ])
  expect(aiSdkMessageState(messages[0] as AssistantMessage)).toMatchObject({
    parts: [
      { type: 'reasoning', providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'enc-A' } } },
      { type: 'tool-call', providerMetadata: { openai: { itemId: 'fc_1' } } },
    ],
    content: [
      { at: 1, type: 'tool-call', toolCallId: 'ws_1', toolName: 'web_search', providerExecuted: true },
      { at: 1, type: 'tool-result', toolCallId: 'ws_1', result: { action: { type: 'search', query: 'yoke' } } },
    ],
    response: { id: 'resp_1', modelId: model, timestamp: '2026-01-02T03:04:05.000Z' },
  })
  // The reasoning without summary has no block; its encrypted content is kept for the next request.
  expect(messages[1]?.content).toEqual([{ type: 'text', text: 'It means a harness.' }])
  const answerState = aiSdkMessageState(messages[1] as AssistantMessage)
  expect(answerState?.content).toEqual([
    {
      at: 0,
      type: 'reasoning',
      text: '',
      providerMetadata: { openai: { itemId: 'rs_2', reasoningEncryptedContent: 'enc-B' } },
    },
  ])
  expect(answerState?.sources).toEqual([
    { sourceType: 'url', id: expect.any(String), url: 'https://example.com/yoke', title: 'Yoke' },
  ])
  // Usage: uncached input, cache reads, reasoning.
  const logged = agent.session.events.filter((event) => event.type === 'assistant/message')
  expect((logged[0]?.data as { usage?: unknown } | undefined)?.usage).toMatchObject({
    inputTokens: 40,
    cacheReadTokens: 10,
    outputTokens: 20,
    reasoningTokens: 12,
  })
  const id = agent.id
  await harness.close()

  const again = await createHarness({ model: adapterFor(server), tools: [lookupTool], persistence: { dir: tempDir() } })
  const resumed = await again.resumeAgent(id, { options: { verifyReconstruction: true } })
  expect((await resumed.run('and again?')).text).toBe('Still a harness.')
  await again.close()

  expect(server.bodies).toHaveLength(3)
  expect(server.bodies[0]).toMatchObject({
    model,
    stream: true,
    store: false,
    include: ['reasoning.encrypted_content'],
  })
  expect(server.bodies[0]?.['tools']).toEqual([expect.objectContaining({ type: 'function', name: 'lookup' })])
  expect(server.bodies[1]?.['input']).toEqual(firstStepInput)
  // After the resume: the same history from the log, the encrypted-only reasoning and the message item.
  expect(server.bodies[2]?.['input']).toEqual([
    ...firstStepInput,
    { type: 'reasoning', id: 'rs_2', encrypted_content: 'enc-B', summary: [] },
    { role: 'assistant', content: [{ type: 'output_text', text: 'It means a harness.' }], id: 'msg_2' },
    { role: 'user', content: [{ type: 'input_text', text: 'and again?' }] },
  ])
})

test('with store on (the default), the logged item ids come back as item references', async () => {
  const server = await startResponsesServer([toolStep, textStep('2', 'Done.')])
  cleanups.push(() => server.close())
  const openai = createOpenAI({ baseURL: server.baseURL, apiKey: 'test-key' })
  const harness = await createHarness({ model: aiSdkModel(openai.responses(model)), tools: [lookupTool] })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  await agent.run('look up yoke')
  await harness.close()
  expect(server.bodies[1]?.['input']).toEqual([
    { role: 'user', content: [{ type: 'input_text', text: 'look up yoke' }] },
    { type: 'item_reference', id: 'rs_1' },
    // The web search result stands for the whole server-side call.
    { type: 'item_reference', id: 'ws_1' },
    { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"yoke"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'found yoke' },
  ])
})
