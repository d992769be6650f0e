import { describe, expect, test } from 'vitest'
import type { AssistantMessage, Message, ModelRequest, ToolResultMessage, UserMessage } from 'yoke'
import { checkRequest } from '../../../src/model/openai/check-request.js'
import { type SerializeSettings, serializeRequest } from '../../../src/model/openai/serialize-request.js'

const openaiSettings: SerializeSettings = {
  reasoningStyle: 'openai',
  sendReasoning: false,
  maxTokensField: 'max_tokens',
}
const deepseekSettings: SerializeSettings = {
  reasoningStyle: 'deepseek',
  sendReasoning: true,
  maxTokensField: 'max_tokens',
}

const user = (content: UserMessage['content']): UserMessage => ({
  id: 'u',
  role: 'user',
  content,
  source: { kind: 'user' },
})
const assistant = (content: AssistantMessage['content']): AssistantMessage => ({
  id: 'a',
  role: 'assistant',
  content,
  source: { kind: 'model', provider: 'p', model: 'm' },
})
const toolResult = (callId: string, content: ToolResultMessage['content'][0]['content']): ToolResultMessage => ({
  id: `t-${callId}`,
  role: 'user',
  content: [{ type: 'tool-result', toolCallId: callId, content }],
  source: { kind: 'tool', callId },
})

function request(overlay: Partial<ModelRequest> = {}): ModelRequest {
  return {
    provider: 'p',
    model: 'gpt-test',
    messages: [user([{ type: 'text', text: 'hi' }])],
    metadata: { purpose: 'conversation' },
    signal: new AbortController().signal,
    ...overlay,
  }
}

const png = { type: 'image', mediaType: 'image/png', uri: 'data:image/png;base64,AAAA' } as const

describe('serializeRequest', () => {
  test('the full body, keys in order, no reasoning_content without sendReasoning', () => {
    const body = serializeRequest(
      request({
        system: 'S',
        messages: [
          user([{ type: 'text', text: 'hi' }]),
          assistant([
            { type: 'reasoning', text: 'r' },
            { type: 'text', text: 'calling' },
            { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{"a":1}' },
          ]),
          toolResult('c1', [{ type: 'text', text: 'ok' }]),
        ],
        tools: [{ name: 'echo', description: 'Echoes', parameters: { type: 'object' } }],
        maxTokens: 100,
        temperature: 0.2,
        stop: ['END'],
      }),
      openaiSettings,
    )
    expect(JSON.stringify(body)).toBe(
      JSON.stringify({
        model: 'gpt-test',
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: 'calling',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"a":1}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        ],
        tools: [
          { type: 'function', function: { name: 'echo', description: 'Echoes', parameters: { type: 'object' } } },
        ],
        max_tokens: 100,
        temperature: 0.2,
        stop: ['END'],
      }),
    )
  })

  test('absent options are omitted; maxTokensField renames the ceiling', () => {
    expect(serializeRequest(request(), openaiSettings)).toEqual({
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(
      serializeRequest(request({ maxTokens: 7 }), { ...openaiSettings, maxTokensField: 'max_completion_tokens' }),
    ).toMatchObject({
      max_completion_tokens: 7,
    })
    expect(
      serializeRequest(request({ maxTokens: 7 }), { ...openaiSettings, maxTokensField: 'max_completion_tokens' }),
    ).not.toHaveProperty('max_tokens')
  })

  test('user text blocks join with a blank line; with images the content is a parts array in block order', () => {
    expect(
      serializeRequest(
        request({
          messages: [
            user([
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ]),
          ],
        }),
        openaiSettings,
      )['messages'],
    ).toEqual([{ role: 'user', content: 'a\n\nb' }])
    const withImage = serializeRequest(
      request({
        messages: [
          user([
            { type: 'text', text: 'look' },
            { ...png, uri: 'https://example.com/a.png' },
            { type: 'text', text: 'and' },
          ]),
        ],
      }),
      openaiSettings,
    )
    expect(withImage['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'text', text: 'and' },
        ],
      },
    ])
  })

  test("tool results: inner text joined, '(no output)' when empty, images in one user message after the run", () => {
    const messages: Message[] = [
      assistant([
        { type: 'tool-call', id: 'c1', name: 'shot', arguments: '{}' },
        { type: 'tool-call', id: 'c2', name: 'shot', arguments: '{}' },
        { type: 'tool-call', id: 'c3', name: 'noop', arguments: '{}' },
      ]),
      toolResult('c1', [{ type: 'text', text: 'one' }, png, { type: 'text', text: 'two' }]),
      toolResult('c2', [png]),
      toolResult('c3', []),
      user([{ type: 'text', text: 'next' }]),
    ]
    expect(serializeRequest(request({ messages }), openaiSettings)['messages']).toEqual([
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'shot', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'shot', arguments: '{}' } },
          { id: 'c3', type: 'function', function: { name: 'noop', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'one\n\ntwo' },
      { role: 'tool', tool_call_id: 'c2', content: '(no output)' },
      { role: 'tool', tool_call_id: 'c3', content: '(no output)' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by tool call c1:' },
          { type: 'image_url', image_url: { url: png.uri } },
          { type: 'text', text: 'Images returned by tool call c2:' },
          { type: 'image_url', image_url: { url: png.uri } },
        ],
      },
      { role: 'user', content: 'next' },
    ])
  })

  test('assistant messages: text joined, reasoning_content only with sendReasoning and non-empty', () => {
    const message = assistant([
      { type: 'reasoning', text: 'r1' },
      { type: 'text', text: 'a' },
      { type: 'reasoning', text: 'r2' },
      { type: 'text', text: 'b' },
    ])
    expect(serializeRequest(request({ messages: [message] }), deepseekSettings)['messages']).toEqual([
      { role: 'assistant', content: 'a\n\nb', reasoning_content: 'r1\n\nr2' },
    ])
    expect(serializeRequest(request({ messages: [message] }), openaiSettings)['messages']).toEqual([
      { role: 'assistant', content: 'a\n\nb' },
    ])
    const emptyReasoning = assistant([
      { type: 'reasoning', text: '' },
      { type: 'text', text: 'x' },
    ])
    expect(serializeRequest(request({ messages: [emptyReasoning] }), deepseekSettings)['messages']).toEqual([
      { role: 'assistant', content: 'x' },
    ])
  })

  test.each([
    ['openai', 'high', 'conversation', { reasoning_effort: 'high' }],
    ['openai', 'off', 'conversation', {}],
    ['openai', undefined, 'conversation', {}],
    ['deepseek', 'off', 'conversation', { thinking: { type: 'disabled' } }],
    ['deepseek', 'high', 'conversation', { thinking: { type: 'enabled' }, reasoning_effort: 'high' }],
    ['deepseek', undefined, 'conversation', {}],
    ['deepseek', 'high', 'title', { thinking: { type: 'disabled' } }],
    ['deepseek', undefined, 'title', { thinking: { type: 'disabled' } }],
    ['none', 'high', 'conversation', {}],
  ] as const)('style %s, effort %s, purpose %s', (style, effort, purpose, expected) => {
    const body = serializeRequest(
      request({ metadata: { purpose }, ...(effort !== undefined && { reasoningEffort: effort }) }),
      { ...openaiSettings, reasoningStyle: style },
    )
    const { model: _model, stream: _stream, stream_options: _options, messages: _messages, ...reasoning } = body
    expect(reasoning).toEqual(expected)
  })
})

describe('checkRequest', () => {
  test('an effort outside reasoningEfforts is UNSUPPORTED_REASONING_EFFORT; absent lists allow anything', () => {
    expect(checkRequest(request({ reasoningEffort: 'medium' }), { reasoningEfforts: ['off', 'high'] })).toEqual({
      code: 'UNSUPPORTED_REASONING_EFFORT',
      message: 'model gpt-test does not offer reasoning effort "medium" (allowed: off, high)',
      retryable: false,
      phase: 'pre-request',
      detail: { field: 'reasoningEffort', value: 'medium', allowed: ['off', 'high'] },
    })
    expect(checkRequest(request({ reasoningEffort: 'high' }), { reasoningEfforts: ['off', 'high'] })).toBeUndefined()
    expect(checkRequest(request({ reasoningEffort: 'anything' }), {})).toBeUndefined()
    expect(checkRequest(request({ reasoningEffort: 'anything' }), undefined)).toBeUndefined()
  })

  test.each(['data:image/png;base64,AA', 'http://x/a.png', 'HTTPS://x/a.png'])('an image at %s can be sent', (uri) => {
    expect(checkRequest(request({ messages: [user([{ ...png, uri }])] }), undefined)).toBeUndefined()
  })

  test('an image with another scheme is UNSUPPORTED_CONTENT, in user messages and tool results alike', () => {
    expect(checkRequest(request({ messages: [user([{ ...png, uri: 'file:///tmp/a.png' }])] }), undefined)).toEqual({
      code: 'UNSUPPORTED_CONTENT',
      message: 'an image URI with scheme "file" cannot be sent; use a data:, http: or https: URI',
      retryable: false,
      phase: 'pre-request',
      detail: { messageIndex: 0, scheme: 'file' },
    })
    const inToolResult = request({
      messages: [user([{ type: 'text', text: 'x' }]), toolResult('c', [{ ...png, uri: 's3://bucket/a.png' }])],
    })
    expect(checkRequest(inToolResult, undefined)).toMatchObject({
      code: 'UNSUPPORTED_CONTENT',
      detail: { messageIndex: 1, scheme: 's3' },
    })
  })

  test('any image for a model without the image modality is UNSUPPORTED_CONTENT', () => {
    expect(checkRequest(request({ messages: [user([png])] }), { inputModalities: ['text'] })).toEqual({
      code: 'UNSUPPORTED_CONTENT',
      message: 'model gpt-test does not accept image input',
      retryable: false,
      phase: 'pre-request',
      detail: { messageIndex: 0, mediaType: 'image/png' },
    })
    expect(checkRequest(request({ messages: [user([png])] }), { inputModalities: ['text', 'image'] })).toBeUndefined()
  })
})
