import { afterEach, describe, expect, test } from 'vitest'
import { InvalidArgumentError, InvalidOptionsError, ScriptedModelError } from 'yoke'
import { type MockOpenAIServer, type MockOpenAIServerOptions, type MockStep, startMockOpenAIServer } from 'yoke/testing'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'

const servers: MockOpenAIServer[] = []

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

async function start(options: MockOpenAIServerOptions): Promise<MockOpenAIServer> {
  const server = await startMockOpenAIServer(options)
  servers.push(server)
  return server
}

const streamingBody = { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] }
const usageBody = { ...streamingBody, stream_options: { include_usage: true } }

function post(
  server: MockOpenAIServer,
  body: unknown = streamingBody,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${server.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  })
}

/** The data of each SSE event: parsed JSON, or the raw text (`[DONE]`, malformed data). */
function dataOf(text: string): unknown[] {
  expect(text.endsWith('\n\n')).toBe(true)
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true)
      const data = event.slice('data: '.length)
      try {
        return JSON.parse(data) as unknown
      } catch {
        return data
      }
    })
}

/** A `chat.completion.chunk` event as the server renders it. */
function chunk(number: number, delta: Record<string, unknown>, finishReason: string | null = null, model = 'gpt-test') {
  return {
    id: `chatcmpl-${number}`,
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  }
}

/** The deltas of the chunk events (usage events and `[DONE]` skipped). */
function deltasOf(text: string): unknown[] {
  return dataOf(text).flatMap((event) => {
    const choices = (event as { choices?: { delta: unknown }[] }).choices
    return choices === undefined ? [] : choices.map((choice) => choice.delta)
  })
}

/** Reads the body until `count` events arrived; returns them and the reader (still open). */
async function readEvents(response: Response, count: number) {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (text.split('\n\n').length - 1 < count) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`the body ended after ${JSON.stringify(text)}`)
    text += decoder.decode(value, { stream: true })
  }
  return { text, reader }
}

/** Reads the rest of the body; returns what arrived and the read error, if any. */
async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>) {
  const decoder = new TextDecoder()
  let text = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { text, error: undefined }
      text += decoder.decode(value, { stream: true })
    }
  } catch (error) {
    return { text, error }
  }
}

describe('startMockOpenAIServer: replies', () => {
  test('a reasoning, text, tool-call and usage reply becomes exactly these SSE events', async () => {
    const server = await start({
      script: [
        {
          reasoning: 'think',
          text: 'hi',
          toolCalls: [{ name: 'echo', arguments: { x: 1 } }],
          usage: { inputTokens: 3, outputTokens: 4, cacheReadTokens: 2, reasoningTokens: 1 },
        },
      ],
    })
    expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
    const response = await post(server, usageBody)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(response.headers.get('x-request-id')).toBe('req_1')
    const text = await response.text()
    expect(text.startsWith(`data: ${JSON.stringify(chunk(1, { role: 'assistant' }))}\n\n`)).toBe(true)
    expect(text.endsWith('\n\ndata: [DONE]\n\n')).toBe(true)
    expect(dataOf(text)).toEqual([
      chunk(1, { role: 'assistant' }),
      chunk(1, { reasoning_content: 'think' }),
      chunk(1, { content: 'hi' }),
      chunk(1, {
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{"x":1}' } }],
      }),
      chunk(1, {}, 'tool_calls'),
      {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'gpt-test',
        choices: [],
        usage: {
          prompt_tokens: 5,
          completion_tokens: 4,
          total_tokens: 9,
          prompt_tokens_details: { cached_tokens: 2 },
          completion_tokens_details: { reasoning_tokens: 1 },
        },
      },
      '[DONE]',
    ])
    server.assertComplete()
  })

  test('chunkSize splits reasoning, text and tool arguments by code points; tool-call ids count across the script', async () => {
    const server = await start({
      script: [
        {
          reasoning: 'abc',
          text: 'a😀bcd',
          chunkSize: 2,
          toolCalls: [
            { name: 'f', arguments: '{"k":"v"}' },
            { id: 'mine', name: 'g' },
            { name: 'h', arguments: '' },
          ],
        },
        { toolCalls: [{ name: 'next' }] },
      ],
    })
    const first = await (await post(server)).text()
    expect(deltasOf(first)).toEqual([
      { role: 'assistant' },
      { reasoning_content: 'ab' },
      { reasoning_content: 'c' },
      { content: 'a😀' },
      { content: 'bc' },
      { content: 'd' },
      { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'k"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: ':"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'v"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '}' } }] },
      { tool_calls: [{ index: 1, id: 'mine', type: 'function', function: { name: 'g', arguments: '{}' } }] },
      { tool_calls: [{ index: 2, id: 'call_3', type: 'function', function: { name: 'h', arguments: '' } }] },
      {},
    ])
    const second = await (await post(server)).text()
    expect(dataOf(second)).toEqual([
      chunk(2, { role: 'assistant' }),
      chunk(2, {
        tool_calls: [{ index: 0, id: 'call_4', type: 'function', function: { name: 'next', arguments: '{}' } }],
      }),
      chunk(2, {}, 'tool_calls'),
      '[DONE]',
    ])
  })

  test('the usage event comes only when the body asks include_usage and the reply has usage', async () => {
    const usage = { inputTokens: 10, outputTokens: 2 }
    const server = await start({ script: [{ text: 'a', usage }, { text: 'b' }, { text: 'c', usage }] })
    expect(dataOf(await (await post(server)).text())).toEqual([
      chunk(1, { role: 'assistant' }),
      chunk(1, { content: 'a' }),
      chunk(1, {}, 'stop'),
      '[DONE]',
    ])
    expect(dataOf(await (await post(server, usageBody)).text())).toEqual([
      chunk(2, { role: 'assistant' }),
      chunk(2, { content: 'b' }),
      chunk(2, {}, 'stop'),
      '[DONE]',
    ])
    expect(dataOf(await (await post(server, usageBody)).text()).at(-2)).toEqual({
      id: 'chatcmpl-3',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'gpt-test',
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    })
  })

  test.each([
    [{ text: 'x', finish: 'max-tokens' }, 'length'],
    [{ text: 'x', finish: 'tool-calls' }, 'tool_calls'],
    [{ toolCalls: [{ name: 'f' }], finish: 'stop' }, 'stop'],
    [{ text: 'x' }, 'stop'],
  ] as const)('reply %j finishes with finish_reason %s', async (reply, reason) => {
    const server = await start({ script: [reply] })
    expect(dataOf(await (await post(server)).text()).at(-2)).toEqual(chunk(1, {}, reason))
  })

  test('the chunks echo the body model, or "mock" when the body has none', async () => {
    const server = await start({ script: [{ text: 'a' }, { text: 'b' }] })
    expect(dataOf(await (await post(server, { ...streamingBody, model: 'other' })).text())[0]).toEqual(
      chunk(1, { role: 'assistant' }, null, 'other'),
    )
    expect(dataOf(await (await post(server, [1, 2])).text())[0]).toEqual(chunk(2, { role: 'assistant' }, null, 'mock'))
  })

  test('chunkDelayMs spaces the events and delayMs holds the headers', async () => {
    const server = await start({
      script: [
        { text: 'abcd', chunkSize: 1, chunkDelayMs: 20 },
        { text: 'x', delayMs: 60 },
      ],
    })
    let began = performance.now()
    const text = await (await post(server)).text()
    expect(performance.now() - began).toBeGreaterThanOrEqual(6 * 20 - 5)
    expect(deltasOf(text)).toEqual([
      { role: 'assistant' },
      { content: 'a' },
      { content: 'b' },
      { content: 'c' },
      { content: 'd' },
      {},
    ])
    began = performance.now()
    await post(server)
    expect(performance.now() - began).toBeGreaterThanOrEqual(55)
  })
})

describe('startMockOpenAIServer: routing, recording and scripts', () => {
  test('both routes are served; 404, 401 and 400 consume no step; every request is recorded', async () => {
    const server = await start({ script: [{ text: 'one' }, { text: 'two' }], apiKey: 'test-key' })
    const origin = server.baseURL.slice(0, -'/v1'.length)
    const bearer = { authorization: 'Bearer test-key' }

    const notFound = await fetch(`${server.baseURL}/models`)
    expect(notFound.status).toBe(404)
    expect(await notFound.json()).toEqual({
      error: { message: 'no route for GET /v1/models', type: 'invalid_request_error', code: 'not_found' },
    })
    expect((await fetch(`${server.baseURL}/chat/completions`, { headers: bearer })).status).toBe(404)
    expect((await fetch(`${server.baseURL}/completions`, { method: 'POST', headers: bearer, body: '{}' })).status).toBe(
      404,
    )

    const authBody = {
      error: { message: 'Incorrect API key provided', type: 'authentication_error', code: 'invalid_api_key' },
    }
    const missing = await post(server)
    expect(missing.status).toBe(401)
    expect(await missing.json()).toEqual(authBody)
    const wrong = await post(server, streamingBody, { authorization: 'Bearer other' })
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toEqual(authBody)

    const invalid = await post(server, '{"model": ', bearer)
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toEqual({
      error: { message: 'request body is not valid JSON', type: 'invalid_request_error', code: 'invalid_json' },
    })

    const first = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify(streamingBody),
    })
    expect(first.headers.get('x-request-id')).toBe('req_1')
    expect(deltasOf(await first.text())).toContainEqual({ content: 'one' })
    const second = await fetch(`${origin}/chat/completions`, {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ n: 2 }),
    })
    expect(second.headers.get('x-request-id')).toBe('req_2')
    expect(deltasOf(await second.text())).toContainEqual({ content: 'two' })
    server.assertComplete()

    expect(server.requests.map(({ method, path, body }) => ({ method, path, body }))).toEqual([
      { method: 'GET', path: '/v1/models', body: '' },
      { method: 'GET', path: '/v1/chat/completions', body: '' },
      { method: 'POST', path: '/v1/completions', body: {} },
      { method: 'POST', path: '/v1/chat/completions', body: streamingBody },
      { method: 'POST', path: '/v1/chat/completions', body: streamingBody },
      { method: 'POST', path: '/v1/chat/completions', body: '{"model": ' },
      { method: 'POST', path: '/v1/chat/completions', body: streamingBody },
      { method: 'POST', path: '/chat/completions', body: { n: 2 } },
    ])
    const headers = server.requests[4]?.headers
    expect(headers?.['authorization']).toBe('Bearer other')
    expect(headers?.['content-type']).toBe('application/json')
    expect(headers?.['host']).toBe(origin.slice('http://'.length))
  })

  test('an exhausted list script answers 500 script_exhausted and assertComplete throws SCRIPT_OVERRUN', async () => {
    const server = await start({ script: [{ text: 'only' }] })
    await (await post(server)).text()
    const exhausted = await post(server)
    expect(exhausted.status).toBe(500)
    expect(exhausted.headers.get('x-request-id')).toBeNull()
    expect(await exhausted.json()).toEqual({ error: { message: 'mock script exhausted', code: 'script_exhausted' } })
    await post(server)
    const error = thrownBy(() => server.assertComplete())
    expect(ScriptedModelError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SCRIPT_OVERRUN', overrun: 2 })
    expect(server.requests).toHaveLength(3)
  })

  test('assertComplete throws SCRIPT_INCOMPLETE while steps are left', async () => {
    const server = await start({ script: [{ text: 'a' }, { fault: 'empty' }, { fault: 'quota' }] })
    await (await post(server)).text()
    const error = thrownBy(() => server.assertComplete())
    expect(ScriptedModelError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SCRIPT_INCOMPLETE', remaining: 2 })
  })

  test('a keyed script serves each session its own steps, by the session id header', async () => {
    const server = await start({ script: { a: [{ text: 'a1' }, { text: 'a2' }], b: [{ text: 'b1' }] } })
    const contentOf = async (response: Response) => deltasOf(await response.text())[1]
    const b = await post(server, streamingBody, { 'x-session-id': 'b' })
    expect(b.headers.get('x-request-id')).toBe('req_1')
    expect(await contentOf(b)).toEqual({ content: 'b1' })
    expect(await contentOf(await post(server, streamingBody, { 'x-session-id': 'a' }))).toEqual({ content: 'a1' })
    expect(() => server.assertComplete()).toThrow(expect.objectContaining({ code: 'SCRIPT_INCOMPLETE', remaining: 1 }))
    const a2 = await post(server, streamingBody, { 'x-session-id': 'a' })
    expect(a2.headers.get('x-request-id')).toBe('req_3')
    expect(await contentOf(a2)).toEqual({ content: 'a2' })
    server.assertComplete()
    expect((await post(server, streamingBody, { 'x-session-id': 'b' })).status).toBe(500)
    expect((await post(server, streamingBody, { 'x-session-id': 'toString' })).status).toBe(500)
    expect((await post(server)).status).toBe(500)
    expect(() => server.assertComplete()).toThrow(expect.objectContaining({ code: 'SCRIPT_OVERRUN', overrun: 3 }))
  })

  test('sessionIdHeader names the header, case-insensitively', async () => {
    const server = await start({ script: { s1: [{ text: 'yes' }] }, sessionIdHeader: 'X-Conversation' })
    expect((await post(server, streamingBody, { 'x-session-id': 's1' })).status).toBe(500)
    const response = await post(server, streamingBody, { 'x-conversation': 's1' })
    expect(deltasOf(await response.text())[1]).toEqual({ content: 'yes' })
  })

  test('a function script gets the body, its 0-based call index and the session id; undefined means exhausted', async () => {
    const calls: unknown[] = []
    const server = await start({
      script: async (body, index, sessionId) => {
        calls.push({ body, index, sessionId })
        return index < 2 ? { text: `reply ${index}` } : undefined
      },
    })
    expect(deltasOf(await (await post(server, { q: 1 }, { 'x-session-id': 's' })).text())[1]).toEqual({
      content: 'reply 0',
    })
    expect(deltasOf(await (await post(server, { q: 2 })).text())[1]).toEqual({ content: 'reply 1' })
    const exhausted = await post(server, { q: 3 })
    expect(exhausted.status).toBe(500)
    expect(await exhausted.json()).toEqual({ error: { message: 'mock script exhausted', code: 'script_exhausted' } })
    expect(calls).toEqual([
      { body: { q: 1 }, index: 0, sessionId: 's' },
      { body: { q: 2 }, index: 1, sessionId: undefined },
      { body: { q: 3 }, index: 2, sessionId: undefined },
    ])
    expect(() => server.assertComplete()).toThrow(expect.objectContaining({ code: 'SCRIPT_OVERRUN', overrun: 1 }))
  })

  test('a function script that throws or returns an invalid step answers 500 and fails assertComplete', async () => {
    const boom = new Error('boom')
    const steps: (() => MockStep)[] = [
      () => {
        throw boom
      },
      () => ({ fault: 'teapot' }) as unknown as MockStep,
      () => ({ text: 'fine' }),
    ]
    const server = await start({ script: (_body, index) => steps[index]!() })
    const thrown = await post(server)
    expect(thrown.status).toBe(500)
    expect(await thrown.json()).toEqual({ error: { message: 'mock script failed: boom', code: 'script_error' } })
    const invalid = await post(server)
    expect(invalid.status).toBe(500)
    expect(((await invalid.json()) as { error: { message: string } }).error.message).toContain('fault must be one of')
    const fine = await post(server)
    expect(fine.headers.get('x-request-id')).toBe('req_1')
    await fine.text()
    expect(thrownBy(() => server.assertComplete())).toBe(boom)
  })

  test('an invalid step returned alone fails assertComplete with InvalidArgumentError', async () => {
    const server = await start({ script: () => ({ text: 'x', chunkSize: 0 }) })
    expect((await post(server)).status).toBe(500)
    const error = thrownBy(() => server.assertComplete())
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ argument: 'mock step', reason: 'chunkSize must be a positive safe integer' })
  })

  test.each([
    [{ script: [{ text: 'ok' }, { fault: 'nope' }] }, 'script[1]'],
    [{ script: { s: [{ fault: 'http' }] } }, 'script.s[0]'],
    [{ script: { s: { text: 'x' } } }, 'script.s'],
    [{ script: 'text' }, 'script'],
    [{ script: [{ fault: 'stall', afterEvents: -1 }] }, 'script[0]'],
    [{ script: [{ fault: 'server-error', status: 700 }] }, 'script[0]'],
    [{ script: [{ toolCalls: [{ arguments: '{}' }] }] }, 'script[0]'],
    [{ script: [], apiKey: 42 }, 'apiKey'],
    [{ script: [], sessionIdHeader: 'bad header' }, 'sessionIdHeader'],
    [{ script: [], bogus: 1 }, 'bogus'],
    [undefined, ''],
    [null, ''],
  ])('invalid options %j are refused with InvalidOptionsError at %s', async (options, field) => {
    const error = await rejectionOf(startMockOpenAIServer(options as unknown as MockOpenAIServerOptions))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ field })
  })

  test('the error value is the offending field’s value', async () => {
    expect(await rejectionOf(startMockOpenAIServer({ script: 5 } as never))).toMatchObject({
      field: 'script',
      value: 5,
    })
    expect(await rejectionOf(startMockOpenAIServer({ script: [], apiKey: 5 } as never))).toMatchObject({
      field: 'apiKey',
      value: 5,
    })
  })
})

describe('startMockOpenAIServer: fault steps', () => {
  test('connection-reset without afterEvents destroys the socket before the headers: fetch rejects', async () => {
    const server = await start({ script: [{ fault: 'connection-reset' }, { text: 'after' }] })
    const error = await rejectionOf(post(server))
    expect(error).toBeInstanceOf(TypeError)
    expect(await server.clientClosed(0)).toBe(false)
    const next = await post(server)
    expect(next.headers.get('x-request-id')).toBe('req_2')
    expect(deltasOf(await next.text())[1]).toEqual({ content: 'after' })
    server.assertComplete()
  })

  test('connection-reset afterEvents flushes that many events of its reply, then breaks the body', async () => {
    const server = await start({
      script: [{ fault: 'connection-reset', afterEvents: 3, text: 'hello world', chunkSize: 6 }],
    })
    const response = await post(server)
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toBe('req_1')
    const { text, error } = await readRest(response.body!.getReader())
    expect(error).toBeInstanceOf(TypeError)
    expect(dataOf(text)).toEqual([
      chunk(1, { role: 'assistant' }),
      chunk(1, { content: 'hello ' }),
      chunk(1, { content: 'world' }),
    ])
  })

  test('streaming faults without reply fields send events of the reply "partial response"; afterEvents stops at the finish', async () => {
    const server = await start({
      script: [
        { fault: 'partial-eof', afterEvents: 10 },
        { fault: 'partial-eof', afterEvents: 5, reasoning: 'r' },
      ],
    })
    const first = await post(server)
    expect(first.headers.get('content-type')).toBe('text/event-stream')
    expect(dataOf(await first.text())).toEqual([
      chunk(1, { role: 'assistant' }),
      chunk(1, { content: 'partial response' }),
    ])
    expect(dataOf(await (await post(server)).text())).toEqual([
      chunk(2, { role: 'assistant' }),
      chunk(2, { reasoning_content: 'r' }),
    ])
  })

  test('partial-eof sends n events, then a clean end without finish_reason or [DONE]', async () => {
    const server = await start({
      script: [{ fault: 'partial-eof', afterEvents: 3, text: 'abcdef', chunkSize: 2 }, { fault: 'partial-eof' }],
    })
    const text = await (await post(server)).text()
    expect(dataOf(text)).toEqual([
      chunk(1, { role: 'assistant' }),
      chunk(1, { content: 'ab' }),
      chunk(1, { content: 'cd' }),
    ])
    const empty = await post(server)
    expect(empty.status).toBe(200)
    expect(await empty.text()).toBe('')
  })

  test('malformed-json sends n events, then data: {"choices": [ and the end', async () => {
    const server = await start({ script: [{ fault: 'malformed-json', afterEvents: 1 }, { fault: 'malformed-json' }] })
    const text = await (await post(server)).text()
    expect(text).toBe(`data: ${JSON.stringify(chunk(1, { role: 'assistant' }))}\n\ndata: {"choices": [\n\n`)
    expect(await (await post(server)).text()).toBe('data: {"choices": [\n\n')
  })

  test('stall sends the headers and n events, then waits until the client goes away, and sees it go', async () => {
    const server = await start({ script: [{ fault: 'stall', afterEvents: 2, text: 'abc', chunkSize: 1 }] })
    const controller = new AbortController()
    const response = await post(server, streamingBody, {}, controller.signal)
    expect(response.status).toBe(200)
    const { text, reader } = await readEvents(response, 2)
    expect(dataOf(text)).toEqual([chunk(1, { role: 'assistant' }), chunk(1, { content: 'a' })])
    const more = await Promise.race([
      reader.read(),
      new Promise((resolve) => setTimeout(() => resolve('silence'), 150)),
    ])
    expect(more).toBe('silence')
    let settled = false
    const closed = server.clientClosed(0).then((value) => {
      settled = true
      return value
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(settled).toBe(false)
    controller.abort()
    expect(await closed).toBe(true)
  })

  test('stall without afterEvents flushes only the headers', async () => {
    const server = await start({ script: [{ fault: 'stall' }] })
    const controller = new AbortController()
    const response = await post(server, streamingBody, {}, controller.signal)
    expect(response.headers.get('x-request-id')).toBe('req_1')
    controller.abort()
    expect(await server.clientClosed(0)).toBe(true)
  })

  test('close() ends a stalled connection and resolves; the client sees the body break', async () => {
    const server = await startMockOpenAIServer({ script: [{ fault: 'stall', afterEvents: 1 }] })
    const response = await post(server)
    const { reader } = await readEvents(response, 1)
    const rest = readRest(reader)
    await server.close()
    expect((await rest).error).toBeInstanceOf(TypeError)
    expect(await server.clientClosed(0)).toBe(false)
    await server.close()
    expect(await rejectionOf(post(server))).toBeInstanceOf(TypeError)
  })

  test('a finished response is not a client close', async () => {
    const server = await start({ script: [{ text: 'done' }] })
    await (await post(server)).text()
    expect(await server.clientClosed(0)).toBe(false)
    const error = await rejectionOf(server.clientClosed(1))
    expect(InvalidArgumentError.is(error)).toBe(true)
  })

  test('rate-limit answers 429 with Retry-After (default 1) and the OpenAI body', async () => {
    const server = await start({ script: [{ fault: 'rate-limit' }, { fault: 'rate-limit', retryAfter: '2' }] })
    const body = { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }
    const first = await post(server)
    expect([first.status, first.headers.get('retry-after'), first.headers.get('x-request-id')]).toEqual([
      429,
      '1',
      'req_1',
    ])
    expect(first.headers.get('content-type')).toBe('application/json')
    expect(await first.json()).toEqual(body)
    const second = await post(server)
    expect([second.status, second.headers.get('retry-after'), second.headers.get('x-request-id')]).toEqual([
      429,
      '2',
      'req_2',
    ])
    expect(await second.json()).toEqual(body)
  })

  test.each([
    [{ fault: 'server-error' }, 500, { error: { message: 'The server had an error', type: 'server_error' } }],
    [
      { fault: 'server-error', status: 503 },
      503,
      { error: { message: 'The server had an error', type: 'server_error' } },
    ],
    [
      { fault: 'context-overflow' },
      400,
      {
        error: {
          message: "This model's maximum context length is 1000 tokens.",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
    ],
    [
      { fault: 'quota' },
      402,
      { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } },
    ],
    [
      { fault: 'auth' },
      401,
      { error: { message: 'Incorrect API key provided', type: 'authentication_error', code: 'invalid_api_key' } },
    ],
  ] as const)('%j answers %i with its JSON body', async (step, status, body) => {
    const server = await start({ script: [step] })
    const response = await post(server)
    expect(response.status).toBe(status)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('x-request-id')).toBe('req_1')
    expect(await response.json()).toEqual(body)
    server.assertComplete()
  })

  test('empty sends only the final stop event and [DONE], even when usage was asked', async () => {
    const server = await start({ script: [{ fault: 'empty' }] })
    const response = await post(server, usageBody)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(dataOf(await response.text())).toEqual([chunk(1, {}, 'stop'), '[DONE]'])
  })

  test('wrong-content-type answers 200 text/html', async () => {
    const server = await start({ script: [{ fault: 'wrong-content-type' }] })
    const response = await post(server)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await response.text()).toContain('<html>')
  })

  test('an events step sends exactly its data events: strings as is, values as JSON', async () => {
    const server = await start({
      script: [
        {
          events: [{ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] }, 'not json', 42, '[DONE]'],
        },
      ],
    })
    const response = await post(server)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(response.headers.get('x-request-id')).toBe('req_1')
    expect(await response.text()).toBe(
      'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n\ndata: not json\n\ndata: 42\n\ndata: [DONE]\n\n',
    )
  })

  test('an http step answers verbatim: a string body as text, a value as JSON, its headers last', async () => {
    const server = await start({
      script: [
        { fault: 'http', status: 418, body: '{}' },
        {
          fault: 'http',
          status: 400,
          body: { error: { message: 'bad value', code: 'invalid_value' } },
          headers: { 'x-request-id': 'mine', 'x-extra': 'y' },
        },
        { fault: 'http', status: 204 },
      ],
    })
    const teapot = await post(server)
    expect([teapot.status, teapot.headers.get('content-type'), teapot.headers.get('x-request-id')]).toEqual([
      418,
      'text/plain; charset=utf-8',
      'req_1',
    ])
    expect(await teapot.text()).toBe('{}')
    const bad = await post(server)
    expect([
      bad.status,
      bad.headers.get('content-type'),
      bad.headers.get('x-request-id'),
      bad.headers.get('x-extra'),
    ]).toEqual([400, 'application/json', 'mine', 'y'])
    expect(await bad.json()).toEqual({ error: { message: 'bad value', code: 'invalid_value' } })
    const none = await post(server)
    expect(none.status).toBe(204)
    expect(none.headers.get('content-type')).toBeNull()
    expect(await none.text()).toBe('')
    server.assertComplete()
  })

  test('x-request-id counts only requests that consumed a step, faults included', async () => {
    const server = await start({
      script: [{ fault: 'quota' }, { fault: 'connection-reset' }, { text: 'a' }, { fault: 'empty' }],
    })
    expect((await post(server)).headers.get('x-request-id')).toBe('req_1')
    await rejectionOf(post(server))
    expect((await fetch(`${server.baseURL}/nothing`)).status).toBe(404)
    expect((await post(server, 'oops')).status).toBe(400)
    const third = await post(server)
    expect(third.headers.get('x-request-id')).toBe('req_3')
    expect(dataOf(await third.text())[0]).toEqual(chunk(3, { role: 'assistant' }))
    expect((await post(server)).headers.get('x-request-id')).toBe('req_4')
    server.assertComplete()
  })

  test('await using disposes the server', async () => {
    let baseURL = ''
    {
      await using server = await startMockOpenAIServer({ script: [] })
      baseURL = server.baseURL
      expect((await fetch(`${baseURL}/x`)).status).toBe(404)
    }
    expect(await rejectionOf(fetch(`${baseURL}/x`))).toBeInstanceOf(TypeError)
  })
})
