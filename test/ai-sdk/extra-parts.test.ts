/**
 * What no Yoke content block holds, through full turns: provider-executed tool calls and their
 * results (never run by Yoke), files, sources, reasoning with no text but provider data, warnings
 * and response metadata. All of it is in the log (`aiSdkMessageState`), and what the prompt has a
 * place for goes back to the provider — live, after a JSONL resume, in a fork, and in every
 * rebuilt request (`verifyReconstruction`).
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { type AssistantMessage, createHarness, type ModelRequest, rebuildRequest } from 'yoke'
import { fakeIds } from 'yoke/testing'
import { aiSdkMessageState, aiSdkModel } from '../../src/ai-sdk/index.js'
import { finish, mockV2, mockV3, scriptedAiSdkModel, textParts, v2Usage } from './models.js'
import { lookupHarness, lookupTool, useTempDir } from './fixtures.js'

const tempDir = useTempDir('yoke-ai-sdk-extra-')

const searchResult = [{ url: 'https://example.com/yoke', title: 'Yoke', encryptedContent: 'enc-1' }]

/**
 * A first answer the way Anthropic streams server-side web search: redacted thinking, text, the
 * server tool's call and result, a citation source, a generated file, then a call Yoke runs.
 */
const searchStep = [
  { type: 'stream-start', warnings: [{ type: 'unsupported', feature: 'temperature', details: 'ignored' }] },
  { type: 'response-metadata', id: 'msg_1', modelId: 'claude-test', timestamp: new Date('2026-01-02T03:04:05Z') },
  { type: 'reasoning-start', id: 'r0', providerMetadata: { anthropic: { redactedData: 'opaque-1' } } },
  { type: 'reasoning-end', id: 'r0' },
  { type: 'text-start', id: 't0' },
  { type: 'text-delta', id: 't0', delta: 'Let me search.' },
  { type: 'text-end', id: 't0' },
  { type: 'tool-input-start', id: 'srv_1', toolName: 'web_search', providerExecuted: true },
  { type: 'tool-input-delta', id: 'srv_1', delta: '{"query":"yoke"}' },
  { type: 'tool-input-end', id: 'srv_1' },
  {
    type: 'tool-call',
    toolCallId: 'srv_1',
    toolName: 'web_search',
    input: '{"query":"yoke"}',
    providerExecuted: true,
    providerMetadata: { anthropic: { caller: 'direct' } },
  },
  {
    type: 'tool-result',
    toolCallId: 'srv_1',
    toolName: 'web_search',
    result: searchResult,
    providerMetadata: { anthropic: { kind: 'web_search_tool_result' } },
  },
  { type: 'source', sourceType: 'url', id: 'src-1', url: 'https://example.com/yoke', title: 'Yoke' },
  { type: 'file', mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) },
  { type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: '{"q":"yoke"}' },
  finish('tool-calls', 'tool_use'),
]

/** What the provider gets back for that first answer. */
const searchAssistant = {
  role: 'assistant',
  content: [
    { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque-1' } } },
    { type: 'text', text: 'Let me search.' },
    {
      type: 'tool-call',
      toolCallId: 'srv_1',
      toolName: 'web_search',
      input: { query: 'yoke' },
      providerExecuted: true,
      providerOptions: { anthropic: { caller: 'direct' } },
    },
    {
      type: 'tool-result',
      toolCallId: 'srv_1',
      toolName: 'web_search',
      output: { type: 'json', value: searchResult },
      providerOptions: { anthropic: { kind: 'web_search_tool_result' } },
    },
    { type: 'file', mediaType: 'image/png', data: 'AQID' },
    { type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: { q: 'yoke' } },
  ],
}

/** What the log keeps for it. */
const searchState = {
  content: [
    { at: 0, type: 'reasoning', text: '', providerMetadata: { anthropic: { redactedData: 'opaque-1' } } },
    {
      at: 1,
      type: 'tool-call',
      toolCallId: 'srv_1',
      toolName: 'web_search',
      input: '{"query":"yoke"}',
      providerExecuted: true,
      providerMetadata: { anthropic: { caller: 'direct' } },
    },
    {
      at: 1,
      type: 'tool-result',
      toolCallId: 'srv_1',
      toolName: 'web_search',
      result: searchResult,
      providerMetadata: { anthropic: { kind: 'web_search_tool_result' } },
    },
    { at: 1, type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AQID' } },
  ],
  sources: [{ sourceType: 'url', id: 'src-1', url: 'https://example.com/yoke', title: 'Yoke' }],
  warnings: [{ type: 'unsupported', feature: 'temperature', details: 'ignored' }],
  response: { id: 'msg_1', modelId: 'claude-test', timestamp: '2026-01-02T03:04:05.000Z' },
}

function assistantMessages(agent: { session: { deriveMessages(): readonly unknown[] } }): AssistantMessage[] {
  return agent.session
    .deriveMessages()
    .filter((message) => (message as AssistantMessage).role === 'assistant') as AssistantMessage[]
}

describe('provider-executed tools, files, sources, opaque reasoning', () => {
  test('are logged, never run, and go back to the provider live, after a resume, in a fork and rebuilt', async () => {
    const live = mockV3([searchStep, textParts('Yoke is a harness.')])
    const harness = await lookupHarness(live, tempDir(), { ids: fakeIds() })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const result = await agent.run('search for yoke')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'Let me search.\nYoke is a harness.' })
    // Yoke ran its own tool only: the provider's web search is no call of Yoke's.
    const calls = agent.session.events.filter((event) => event.type === 'tool/call')
    expect(calls.map((event) => (event.data as { callId: string }).callId)).toEqual(['call-1'])
    expect(live.doStreamCalls[1]?.prompt[1]).toEqual(searchAssistant)
    expect(live.doStreamCalls[1]?.prompt[2]).toMatchObject({ role: 'tool', content: [{ toolCallId: 'call-1' }] })

    const [first] = assistantMessages(agent)
    expect(first?.content).toEqual([
      { type: 'text', text: 'Let me search.' },
      { type: 'tool-call', id: 'call-1', name: 'lookup', arguments: '{"q":"yoke"}' },
    ])
    expect(first?.source.replayState).toEqual({ aiSdk: searchState })
    expect(aiSdkMessageState(first as AssistantMessage)).toEqual(searchState)
    const id = agent.id
    await harness.close()

    const resumedModel = mockV3([textParts('Again.')])
    const again = await lookupHarness(resumedModel, tempDir())
    const resumed = await again.resumeAgent(id, { options: { verifyReconstruction: true } })
    await resumed.run('and again?')
    expect(resumedModel.doStreamCalls[0]?.prompt[1]).toEqual(searchAssistant)
    const rebuilt = rebuildRequest(resumed.session, { turn: 1, step: 2 })
    expect(rebuilt.messages[1]).toEqual(first)

    const child = await again.fork(id)
    await again.close()
    const forkModel = mockV3([textParts('Forked.')])
    const third = await lookupHarness(forkModel, tempDir())
    const forked = await third.resumeAgent(child.id)
    await forked.run('from the fork')
    expect(forkModel.doStreamCalls[0]?.prompt[1]).toEqual(searchAssistant)
    await third.close()
  })

  test('v2 (MockLanguageModelV2): a provider tool result with isError goes back as error-json', async () => {
    const model = mockV2([
      [
        {
          type: 'tool-call',
          toolCallId: 'srv',
          toolName: 'code_execution',
          input: '{"code":"1/0"}',
          providerExecuted: true,
        },
        {
          type: 'tool-result',
          toolCallId: 'srv',
          toolName: 'code_execution',
          result: { error: 'division by zero' },
          isError: true,
          providerExecuted: true,
        },
        { type: 'text-start', id: '0' },
        { type: 'text-delta', id: '0', delta: 'It failed.' },
        { type: 'text-end', id: '0' },
        { type: 'finish', finishReason: 'stop', usage: v2Usage },
      ],
      textParts('ok', 'v2'),
    ])
    const harness = await createHarness({ model: aiSdkModel(model), ids: fakeIds(), persistence: { dir: tempDir() } })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    await agent.run('run 1/0')
    await agent.run('and?')
    expect(model.doStreamCalls[1]?.prompt[1]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'srv',
          toolName: 'code_execution',
          input: { code: '1/0' },
          providerExecuted: true,
        },
        {
          type: 'tool-result',
          toolCallId: 'srv',
          toolName: 'code_execution',
          output: { type: 'error-json', value: { error: 'division by zero' } },
        },
        { type: 'text', text: 'It failed.' },
      ],
    })
    await harness.close()
  })

  test('v4: tagged file data, reasoning files and custom parts go back in v4 form; a v3 model gets what v3 has', async () => {
    const model = scriptedAiSdkModel('v4', [
      [
        {
          type: 'reasoning-file',
          mediaType: 'image/png',
          data: { type: 'url', url: new URL('https://example.com/r.png') },
        },
        { type: 'custom', kind: 'openai.compaction', providerMetadata: { openai: { encrypted: 'c-1' } } },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Here.' },
        {
          type: 'text-end',
          id: 't',
          citations: [
            { source: { type: 'source', sourceType: 'url', id: 's', url: 'https://example.com' }, startIndex: 0 },
          ],
        },
        { type: 'file', mediaType: 'text/plain', data: { type: 'data', data: new Uint8Array([104, 105]) } },
        finish('stop', 'stop'),
      ],
      textParts('next', 'v4'),
    ])
    const harness = await createHarness({ model: aiSdkModel(model), ids: fakeIds() })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    await agent.run('draw')
    await agent.run('more')
    const prompt = (model.calls[1]?.['prompt'] ?? []) as { content: Record<string, unknown>[] }[]
    const content = prompt[1]?.content ?? []
    expect(content.map((part) => part['type'])).toEqual(['reasoning-file', 'custom', 'text', 'file'])
    expect(content[0]?.['data']).toMatchObject({ type: 'url' })
    expect(String((content[0]?.['data'] as { url?: URL } | undefined)?.url)).toBe('https://example.com/r.png')
    expect(content[1]).toEqual({
      type: 'custom',
      kind: 'openai.compaction',
      providerOptions: { openai: { encrypted: 'c-1' } },
    })
    expect(content[3]).toEqual({ type: 'file', mediaType: 'text/plain', data: { type: 'data', data: 'aGk=' } })
    const [message] = assistantMessages(agent)
    expect(aiSdkMessageState(message as AssistantMessage)?.parts).toEqual([
      { type: 'text', citations: [{ source: expect.objectContaining({ id: 's' }), startIndex: 0 }] },
    ])

    // The same logged message for a v3 model: no reasoning files or custom parts there, and file data is base64 text.
    const v3 = mockV3([textParts('x')])
    const request: ModelRequest = {
      provider: 'p',
      model: 'm',
      metadata: { purpose: 'conversation' },
      signal: new AbortController().signal,
      messages: agent.session.deriveMessages().slice(0, 2),
    }
    for await (const _chunk of aiSdkModel(v3).stream(request, { signal: request.signal })) {
      // drain
    }
    expect(v3.doStreamCalls[0]?.prompt[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Here.' },
        { type: 'file', mediaType: 'text/plain', data: 'aGk=' },
      ],
    })
    await harness.close()
  })

  test('a cut answer drops its tool calls but keeps the provider call, at the right place', async () => {
    const model = mockV3([
      [
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'a' },
        { type: 'text-end', id: 't' },
        { type: 'tool-call', toolCallId: 'mine', toolName: 'lookup', input: '{"q":' },
        { type: 'tool-call', toolCallId: 'srv', toolName: 'web_search', input: '{}', providerExecuted: true },
        finish('length', 'max_tokens'),
      ],
      textParts('b'),
    ])
    const harness = await createHarness({ model: aiSdkModel(model), tools: [lookupTool], ids: fakeIds() })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    await agent.run('go')
    const [message] = assistantMessages(agent)
    expect(message?.content).toEqual([{ type: 'text', text: 'a' }])
    expect(aiSdkMessageState(message as AssistantMessage)?.content).toEqual([
      { at: 1, type: 'tool-call', toolCallId: 'srv', toolName: 'web_search', input: '{}', providerExecuted: true },
    ])
    await harness.close()
  })

  test('preliminary tool results are not history; a message with nothing extra has no replay state', async () => {
    const model = mockV3([
      [
        { type: 'tool-call', toolCallId: 'srv', toolName: 'image', input: '{}', providerExecuted: true },
        { type: 'tool-result', toolCallId: 'srv', toolName: 'image', result: 'preview', preliminary: true },
        { type: 'tool-result', toolCallId: 'srv', toolName: 'image', result: 'final' },
        ...textParts('done').slice(1),
      ],
    ])
    const harness = await createHarness({ model: aiSdkModel(model), ids: fakeIds() })
    const agent = await harness.createAgent()
    await agent.run('go')
    const [message] = assistantMessages(agent)
    expect(aiSdkMessageState(message as AssistantMessage)?.content?.map((part) => part.type)).toEqual([
      'tool-call',
      'tool-result',
    ])
    expect(aiSdkMessageState(message as AssistantMessage)?.content?.[1]).toMatchObject({ result: 'final' })
    await harness.close()
  })
})

describe('call-level provider options', () => {
  test('go with every call', async () => {
    const model = mockV3([textParts('a')])
    const providerOptions = { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } }
    const harness = await createHarness({ model: aiSdkModel(model, { providerOptions }), ids: fakeIds() })
    const agent = await harness.createAgent()
    await agent.run('go')
    expect(model.doStreamCalls[0]?.providerOptions).toEqual(providerOptions)
    await harness.close()
  })

  test.each([
    ['a string', 'x', 'options.providerOptions'],
    ['an entry that is not an object', { openai: 'x' }, 'options.providerOptions.openai'],
    ['an entry that is not JSON', { openai: { at: () => 1 } }, 'options.providerOptions.openai'],
  ])('%s is INVALID_ARGUMENT naming it', (_name, value, argument) => {
    expect(() => aiSdkModel(mockV3([]), { providerOptions: value as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', argument }),
    )
  })
})
