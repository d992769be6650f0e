import { afterEach, describe, expect, test } from 'vitest'
import type { JsonObject, JsonValue } from 'yoke'
import type { FetchFunction } from '../../../src/model/index.js'
import { fakeClock } from 'yoke/testing'
import { YOKE_VERSION } from '../../../src/version.js'
import { collect, failureOf, mockServer, oa, req } from './adapter-helpers.js'

const echoTool = {
  name: 'echo',
  description: 'Echoes its input',
  parameters: { type: 'object', properties: { a: { type: 'number' } } },
}

describe('wire shape', () => {
  test('one POST to /v1/chat/completions with the serialized body and the headers', async () => {
    const srv = await mockServer([{ text: 'ok' }])
    const chunks = await collect(
      oa(srv),
      req({
        system: 'S',
        messages: [
          { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
          {
            id: 'a1',
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'r' },
              { type: 'text', text: 'calling' },
              { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{"a":1}' },
            ],
            source: { kind: 'model', provider: 'openai-compatible', model: 'gpt-test' },
          },
          {
            id: 't1',
            role: 'user',
            content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'ok' }] }],
            source: { kind: 'tool', callId: 'c1' },
          },
        ],
        tools: [echoTool],
        maxTokens: 100,
        temperature: 0.2,
        stop: ['END'],
        metadata: { sessionId: 's1', purpose: 'conversation' },
      }),
    )
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop', providerFinishReason: 'stop' })
    expect(srv.requests).toHaveLength(1)
    const [sent] = srv.requests
    expect(sent?.method).toBe('POST')
    expect(sent?.path).toBe('/v1/chat/completions')
    expect(sent?.body).toEqual({
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
        {
          type: 'function',
          function: { name: 'echo', description: echoTool.description, parameters: echoTool.parameters },
        },
      ],
      max_tokens: 100,
      temperature: 0.2,
      stop: ['END'],
    })
    expect(sent?.headers).toMatchObject({
      authorization: 'Bearer test-key',
      accept: 'text/event-stream',
      'content-type': 'application/json',
      'x-session-id': 's1',
      'user-agent': `yoke/${YOKE_VERSION}`,
    })
    srv.assertComplete()
  })

  test('custom headers come last; sessionIdHeader renames or disables the session header; no key, no authorization', async () => {
    const srv = await mockServer([{ text: 'a' }, { text: 'b' }])
    const request = req({ metadata: { sessionId: 's2', purpose: 'conversation' } })
    await collect(
      oa(srv, { headers: { 'User-Agent': 'my-app/1', 'x-extra': 'yes' }, sessionIdHeader: 'x-conversation' }),
      request,
    )
    await collect(oa(srv, { apiKey: undefined, sessionIdHeader: false }), request)
    expect(srv.requests[0]?.headers).toMatchObject({
      'user-agent': 'my-app/1',
      'x-extra': 'yes',
      'x-conversation': 's2',
    })
    expect(srv.requests[0]?.headers).not.toHaveProperty('x-session-id')
    expect(srv.requests[1]?.headers).not.toHaveProperty('x-session-id')
    expect(srv.requests[1]?.headers).not.toHaveProperty('authorization')
  })

  test('a baseURL with a trailing slash still posts to <baseURL>/chat/completions; the fetch option is used', async () => {
    const srv = await mockServer([{ text: 'a' }])
    const urls: string[] = []
    const countingFetch: FetchFunction = (input, init) => {
      urls.push(input)
      return fetch(input, init)
    }
    await collect(oa(srv, { baseURL: `${srv.baseURL}/`, fetch: countingFetch }), req())
    expect(urls).toEqual([`${srv.baseURL}/chat/completions`])
    expect(srv.requests.map((request) => request.path)).toEqual(['/v1/chat/completions'])
  })
})

describe('translation end to end', () => {
  test('early block ends, usage with cache hits subtracted and raw kept, finish stop', async () => {
    const srv = await mockServer([
      {
        reasoning: 'r',
        text: 'hi',
        usage: { inputTokens: 60, outputTokens: 20, cacheReadTokens: 40, reasoningTokens: 5 },
      },
    ])
    const chunks = await collect(oa(srv), req())
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'r' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'r' } },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, text: 'hi' },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'hi' } },
      {
        type: 'usage',
        usage: {
          inputTokens: 60,
          outputTokens: 20,
          cacheReadTokens: 40,
          reasoningTokens: 5,
          raw: {
            prompt_tokens: 100,
            completion_tokens: 20,
            total_tokens: 120,
            prompt_tokens_details: { cached_tokens: 40 },
            completion_tokens_details: { reasoning_tokens: 5 },
          },
        },
      },
      { type: 'finish', reason: 'stop', providerFinishReason: 'stop' },
    ])
  })

  const fragment = (value: JsonValue, finishReason: string | null = null): JsonObject => ({
    id: 'x',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: value, finish_reason: finishReason }],
  })
  const fragments = [
    fragment({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"x"' } }] }),
    fragment({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
    fragment({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{}' } }] }),
  ]

  test('tool-call fragments become two tool-call blocks, each ended as soon as it is complete', async () => {
    const srv = await mockServer([{ events: [...fragments, fragment({}, 'tool_calls'), '[DONE]'] }])
    expect(await collect(oa(srv), req())).toEqual([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id: 'a', name: 'f', argumentsDelta: '{"x"' },
      { type: 'tool-call-delta', index: 0, id: 'a', name: 'f', argumentsDelta: ':1}' },
      { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'a', name: 'f', arguments: '{"x":1}' } },
      { type: 'block-start', index: 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 1, id: 'b', name: 'g', argumentsDelta: '{}' },
      { type: 'block-end', index: 1, block: { type: 'tool-call', id: 'b', name: 'g', arguments: '{}' } },
      { type: 'finish', reason: 'tool-calls', providerFinishReason: 'tool_calls' },
    ])
  })

  test('a further fragment for index 0 after index 1 started is MALFORMED_RESPONSE', async () => {
    const late = fragment({ tool_calls: [{ index: 0, function: { arguments: ' ' } }] })
    const srv = await mockServer([{ events: [...fragments, late, fragment({}, 'tool_calls'), '[DONE]'] }])
    expect(failureOf(await collect(oa(srv), req()))).toMatchObject({
      code: 'MALFORMED_RESPONSE',
      retryable: false,
      phase: 'streaming',
    })
  })
})

describe('HTTP classification', () => {
  test.each([
    [
      { fault: 'rate-limit', retryAfter: '2' },
      { code: 'RATE_LIMIT', retryable: true, status: 429, retryAfterMs: 2000, requestId: 'req_1', phase: 'response' },
    ],
    [
      { fault: 'server-error', status: 503 },
      { code: 'SERVER', retryable: true, status: 503, requestId: 'req_1', phase: 'response' },
    ],
    [
      { fault: 'context-overflow' },
      {
        code: 'CONTEXT_WINDOW_EXCEEDED',
        retryable: false,
        status: 400,
        phase: 'response',
        detail: { providerCode: 'context_length_exceeded' },
      },
    ],
    [{ fault: 'quota' }, { code: 'QUOTA', retryable: false, status: 402, phase: 'response' }],
    [{ fault: 'auth' }, { code: 'AUTH', retryable: false, status: 401, phase: 'response' }],
    [
      { fault: 'http', status: 418, body: {} },
      { code: 'HTTP_418', retryable: false, status: 418, phase: 'response' },
    ],
    [
      { fault: 'http', status: 400, body: { error: { message: 'Please reduce the length of the messages.' } } },
      { code: 'CONTEXT_WINDOW_EXCEEDED', retryable: false, status: 400 },
    ],
    [
      { fault: 'http', status: 400, body: { error: { message: 'bad value', code: 'invalid_value' } } },
      { code: 'INVALID_REQUEST', retryable: false, status: 400, detail: { providerCode: 'invalid_value' } },
    ],
    [
      { fault: 'http', status: 408 },
      { code: 'TIMEOUT', retryable: true, status: 408 },
    ],
    // Bad input of issue #5, end to end: 403, the default 5xx and a quota worded 429.
    [
      { fault: 'http', status: 403, body: { error: { message: 'forbidden' } } },
      { code: 'AUTH', retryable: false, status: 403, phase: 'response' },
    ],
    [{ fault: 'server-error' }, { code: 'SERVER', retryable: true, status: 500, phase: 'response' }],
    [
      { fault: 'http', status: 429, body: { error: { message: 'You exceeded your current quota' } } },
      { code: 'QUOTA', retryable: false, status: 429, phase: 'response' },
    ],
  ] as const)('%j', async (step, expected) => {
    const srv = await mockServer([step])
    const chunks = await collect(oa(srv), req())
    expect(chunks).toHaveLength(1)
    expect(chunks[0]).toMatchObject({ type: 'finish', reason: 'error', failure: expected })
  })

  test('the exact failure of a rate limit', async () => {
    const srv = await mockServer([{ fault: 'rate-limit', retryAfter: '2' }])
    expect(await collect(oa(srv), req())).toEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: {
          code: 'RATE_LIMIT',
          message: 'model request failed with HTTP 429 (RATE_LIMIT): Rate limit reached',
          retryable: true,
          status: 429,
          retryAfterMs: 2000,
          requestId: 'req_1',
          phase: 'response',
          detail: {
            providerCode: 'rate_limit_exceeded',
            body: { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } },
          },
        },
      },
    ])
  })

  test('retry-after as an HTTP date is measured against the clock option; retry-after-ms wins', async () => {
    const srv = await mockServer([
      {
        fault: 'http',
        status: 429,
        body: { error: { message: 'slow down' } },
        headers: { 'retry-after': 'Tue, 01 Jan 2030 00:00:30 GMT' },
      },
      {
        fault: 'http',
        status: 503,
        body: {},
        headers: { 'retry-after': '9', 'retry-after-ms': '1234', 'x-request-id': 'own-id' },
      },
    ])
    const adapter = oa(srv, { clock: fakeClock({ now: Date.parse('2030-01-01T00:00:00Z') }) })
    expect(failureOf(await collect(adapter, req()))).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 30_000 })
    expect(failureOf(await collect(adapter, req()))).toMatchObject({
      code: 'SERVER',
      retryAfterMs: 1234,
      requestId: 'own-id',
    })
  })

  test('a 2xx response that is not SSE: a JSON error body is classified, anything else is MALFORMED_RESPONSE, no body is EMPTY_RESPONSE', async () => {
    const srv = await mockServer([
      { fault: 'http', status: 200, body: { error: { message: 'overloaded', type: 'server_error' } } },
      { fault: 'http', status: 200, body: { choices: [] } },
      { fault: 'wrong-content-type' },
      { fault: 'http', status: 200 },
    ])
    const adapter = oa(srv)
    expect(failureOf(await collect(adapter, req()))).toEqual({
      code: 'SERVER',
      message: 'model request failed with HTTP 200 (SERVER): overloaded',
      retryable: true,
      status: 200,
      requestId: 'req_1',
      phase: 'response',
      detail: { providerCode: 'server_error', body: { error: { message: 'overloaded', type: 'server_error' } } },
    })
    expect(failureOf(await collect(adapter, req()))).toMatchObject({
      code: 'MALFORMED_RESPONSE',
      phase: 'response',
      status: 200,
    })
    expect(failureOf(await collect(adapter, req()))).toEqual({
      code: 'MALFORMED_RESPONSE',
      message: 'expected a text/event-stream response, got HTTP 200 text/html; charset=utf-8',
      retryable: false,
      status: 200,
      requestId: 'req_3',
      phase: 'response',
    })
    expect(failureOf(await collect(adapter, req()))).toMatchObject({
      code: 'EMPTY_RESPONSE',
      retryable: true,
      phase: 'response',
    })
  })

  test('an in-stream error event finishes with its classification and the request id', async () => {
    const srv = await mockServer([
      {
        events: [
          { choices: [{ index: 0, delta: { content: 'a' } }] },
          { error: { message: 'overloaded', type: 'server_error' } },
        ],
      },
    ])
    const chunks = await collect(oa(srv), req())
    expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(failureOf(chunks)).toMatchObject({ code: 'SERVER', retryable: true, requestId: 'req_1', phase: 'streaming' })
  })
})

describe('credentials', () => {
  const variable = 'YOKE_TEST_KEY'
  afterEach(() => {
    delete process.env[variable]
  })

  test('apiKeyEnv is read per request; missing → MISSING_CREDENTIAL without I/O; bad → INVALID_CREDENTIAL', async () => {
    const srv = await mockServer([{ text: 'one' }, { text: 'two' }])
    const adapter = oa(srv, { apiKey: undefined, apiKeyEnv: variable })
    const missing = await collect(adapter, req())
    expect(missing).toHaveLength(1)
    expect(failureOf(missing)).toMatchObject({ code: 'MISSING_CREDENTIAL', retryable: false, phase: 'pre-request' })
    expect(failureOf(missing).message).toContain(variable)
    expect(srv.requests).toEqual([])

    process.env[variable] = 'k1'
    await collect(adapter, req())
    process.env[variable] = 'k2'
    await collect(adapter, req())
    expect(srv.requests.map((request) => request.headers['authorization'])).toEqual(['Bearer k1', 'Bearer k2'])

    process.env[variable] = ' k 3'
    expect(failureOf(await collect(adapter, req()))).toMatchObject({ code: 'INVALID_CREDENTIAL', phase: 'pre-request' })
    expect(srv.requests).toHaveLength(2)
    expect(JSON.stringify(adapter)).not.toContain('k2')
    expect(JSON.parse(JSON.stringify(adapter))).toEqual({
      provider: 'openai-compatible',
      baseURL: srv.baseURL,
      model: 'gpt-test',
      apiKeyEnv: variable,
    })
  })

  test('a 401 whose message echoes the key is redacted in the message and the detail', async () => {
    const srv = await mockServer([
      {
        fault: 'http',
        status: 401,
        body: { error: { message: 'Incorrect API key provided: k2. Check k2 again.', code: 'invalid_api_key' } },
      },
    ])
    process.env[variable] = 'k2'
    const failure = failureOf(await collect(oa(srv, { apiKey: undefined, apiKeyEnv: variable }), req()))
    expect(failure.code).toBe('AUTH')
    expect(failure.message).toBe(
      'model request failed with HTTP 401 (AUTH): Incorrect API key provided: [redacted]. Check [redacted] again.',
    )
    expect(JSON.stringify(failure)).not.toContain('k2')
  })

  test('a key function runs per request; its rejection is MISSING_CREDENTIAL without its text and sends nothing', async () => {
    const srv = await mockServer([{ text: 'a' }, { text: 'b' }])
    let calls = 0
    const adapter = oa(srv, {
      apiKey: async () => {
        calls += 1
        if (calls === 2) throw new Error('vault down: token xyz')
        return `fn-${calls}`
      },
    })
    await collect(adapter, req())
    const rejected = failureOf(await collect(adapter, req()))
    expect(rejected).toMatchObject({
      code: 'MISSING_CREDENTIAL',
      message: 'no API key: the apiKey function failed',
      phase: 'pre-request',
    })
    expect(JSON.stringify(rejected)).not.toContain('vault')
    await collect(adapter, req())
    expect(srv.requests.map((request) => request.headers['authorization'])).toEqual(['Bearer fn-1', 'Bearer fn-3'])
  })
})

describe('pre-request checks', () => {
  test('an image the model cannot take and an effort it does not offer fail without I/O', async () => {
    const srv = await mockServer([])
    const adapter = oa(srv, {
      models: { 'gpt-test': { inputModalities: ['text'], reasoningEfforts: ['low', 'high'] } },
    })
    const image = req({
      messages: [
        {
          id: 'u',
          role: 'user',
          content: [{ type: 'image', mediaType: 'image/png', uri: 'data:image/png;base64,AA' }],
          source: { kind: 'user' },
        },
      ],
    })
    expect(failureOf(await collect(adapter, image))).toMatchObject({
      code: 'UNSUPPORTED_CONTENT',
      phase: 'pre-request',
    })
    expect(failureOf(await collect(adapter, req({ reasoningEffort: 'max' })))).toMatchObject({
      code: 'UNSUPPORTED_REASONING_EFFORT',
      phase: 'pre-request',
      detail: { allowed: ['low', 'high'] },
    })
    expect(srv.requests).toEqual([])
  })
})
