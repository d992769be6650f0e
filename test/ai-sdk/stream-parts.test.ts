/**
 * `aiSdkModel` part by part: text and reasoning blocks keyed by part id (interleaved), tool input
 * streaming into tool-call blocks, finish reasons and usage of v2, v3 and v4, in-band errors,
 * thrown `APICallError`s, aborts, and malformed streams as typed failures.
 *
 * @module
 */
import { APICallError } from '@ai-sdk/provider'
import { describe, expect, test } from 'vitest'
import { createAssembler, InvalidArgumentError, type ModelRequest } from 'yoke'
import type { StreamChunk } from 'yoke'
import { aiSdkModel } from '../../src/ai-sdk/index.js'
import { finish, fullUsage, mockV3, scriptedAiSdkModel, textParts, toolParts, typedV2, v2Usage } from './models.js'

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    provider: 'p',
    model: 'm',
    messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
    metadata: { purpose: 'conversation' },
    signal: new AbortController().signal,
    ...overrides,
  }
}

async function collect(model: Parameters<typeof aiSdkModel>[0], overrides: Partial<ModelRequest> = {}) {
  const chunks: StreamChunk[] = []
  const req = request(overrides)
  for await (const chunk of aiSdkModel(model).stream(req, {
    signal: req.signal,
    clock: { now: () => 1_000_000, setTimer: () => () => undefined },
  }))
    chunks.push(chunk)
  return chunks
}

function outcome(chunks: readonly StreamChunk[]) {
  const assembler = createAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return assembler.outcome()
}

describe('text, reasoning and tool calls', () => {
  test('interleaved text and reasoning blocks keep their own ids and indexes', async () => {
    const chunks = await collect(
      mockV3([
        [
          { type: 'reasoning-start', id: 'a' },
          { type: 'text-start', id: 'a' },
          { type: 'reasoning-delta', id: 'a', delta: 'think ' },
          { type: 'text-delta', id: 'a', delta: 'Hel' },
          { type: 'reasoning-delta', id: 'a', delta: 'more' },
          { type: 'text-start', id: 'b' },
          { type: 'text-delta', id: 'b', delta: 'second' },
          { type: 'text-delta', id: 'a', delta: 'lo' },
          { type: 'text-end', id: 'a' },
          { type: 'reasoning-end', id: 'a' },
          finish('stop', 'end_turn'),
        ],
      ]),
    )
    expect(outcome(chunks)).toMatchObject({
      kind: 'message',
      finishReason: 'stop',
      content: [
        { type: 'reasoning', text: 'think more' },
        { type: 'text', text: 'Hello' },
        { type: 'text', text: 'second' },
      ],
    })
    expect(chunks.filter((chunk) => chunk.type === 'block-start').map((chunk) => chunk.index)).toEqual([0, 1, 2])
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop', providerFinishReason: 'end_turn' })
  })

  test('tool input streams into a tool-call block; the final tool-call input wins', async () => {
    const parts = toolParts('call-1', 'lookup', '{"q":"x"}')
    // The final input differs from the deltas: the tool-call part is authoritative.
    ;(parts[4] as { input: string }).input = '{"q":"y"}'
    const chunks = await collect(mockV3([parts]))
    expect(chunks.filter((chunk) => chunk.type === 'tool-call-delta').map((chunk) => chunk.argumentsDelta)).toEqual([
      '',
      '{"q"',
      ':"x"}',
    ])
    expect(outcome(chunks)).toMatchObject({
      kind: 'message',
      finishReason: 'tool-calls',
      content: [{ type: 'tool-call', id: 'call-1', name: 'lookup', arguments: '{"q":"y"}' }],
    })
  })

  test('a tool-call part without streamed input is one complete block; invalid JSON input is kept as written', async () => {
    const chunks = await collect(
      mockV3([[{ type: 'tool-call', toolCallId: 'c', toolName: 'lookup', input: '{not json' }, finish('tool-calls')]]),
    )
    expect(outcome(chunks)).toMatchObject({
      kind: 'message',
      content: [{ type: 'tool-call', id: 'c', name: 'lookup', arguments: '{not json' }],
    })
  })

  test('provider-executed tool calls are never turned into calls Yoke would run', async () => {
    const chunks = await collect(
      mockV3([
        [
          { type: 'tool-input-start', id: 's', toolName: 'web_search', providerExecuted: true },
          { type: 'tool-input-delta', id: 's', delta: '{}' },
          { type: 'tool-call', toolCallId: 's', toolName: 'web_search', input: '{}', providerExecuted: true },
          ...textParts('found it').slice(1),
        ],
      ]),
    )
    expect(outcome(chunks)).toMatchObject({ kind: 'message', content: [{ type: 'text', text: 'found it' }] })
  })

  test('blocks still open at finish are closed with what they streamed', async () => {
    const chunks = await collect(
      mockV3([
        [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'cut' },
          finish('length', 'max_tokens'),
        ],
      ]),
    )
    expect(outcome(chunks)).toMatchObject({ kind: 'message', finishReason: 'max-tokens', content: [{ text: 'cut' }] })
  })
})

describe('finish reasons and usage', () => {
  test('v3 usage keeps every part: uncached, cache read and write, reasoning, and the whole object as raw', async () => {
    const chunks = await collect(mockV3([textParts('hi')]))
    expect(chunks.find((chunk) => chunk.type === 'usage')).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 60,
        outputTokens: 50,
        cacheReadTokens: 30,
        cacheWriteTokens: 10,
        reasoningTokens: 30,
        raw: fullUsage,
      },
    })
  })

  test('v3 usage with every part absent is zero counts', async () => {
    const empty = {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    }
    const chunks = await collect(mockV3([[finish('stop', undefined, empty)]]))
    expect(chunks[0]).toEqual({
      type: 'usage',
      usage: { inputTokens: 0, outputTokens: 0, raw: { inputTokens: {}, outputTokens: {} } },
    })
    expect(chunks[1]).toEqual({ type: 'finish', reason: 'stop', providerFinishReason: 'stop' })
  })

  test('v3 usage without noCache derives it from the total; output total from text and reasoning', async () => {
    const usage = {
      inputTokens: { total: 100, noCache: undefined, cacheRead: 30, cacheWrite: 10 },
      outputTokens: { total: undefined, text: 5, reasoning: 7 },
    }
    const chunks = await collect(mockV3([[finish('stop', 'x', usage)]]))
    expect(chunks[0]).toMatchObject({ usage: { inputTokens: 60, outputTokens: 12, reasoningTokens: 7 } })
  })

  test('v2 usage and string finish reasons', async () => {
    const model = typedV2([
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'v2 text' },
      { type: 'text-end', id: '0' },
      { type: 'finish', finishReason: 'stop', usage: v2Usage },
    ])
    const chunks = await collect(model)
    expect(chunks.find((chunk) => chunk.type === 'usage')).toEqual({
      type: 'usage',
      usage: { inputTokens: 60, outputTokens: 50, cacheReadTokens: 40, reasoningTokens: 30, raw: v2Usage },
    })
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop', providerFinishReason: 'stop' })
  })

  test.each([
    ['stop', 'stop', undefined],
    ['other', 'stop', undefined],
    ['tool-calls', 'tool-calls', undefined],
    ['length', 'max-tokens', undefined],
    ['content-filter', 'error', 'CONTENT_FILTER'],
    ['error', 'error', 'FINISH_ERROR'],
    ['surprise', 'error', 'FINISH_SURPRISE'],
  ])('unified finish reason %s → %s', async (unified, reason, code) => {
    const chunks = await collect(mockV3([[finish(unified, `raw-${unified}`)]]))
    const last = chunks.at(-1)
    expect(last).toMatchObject({ type: 'finish', reason, providerFinishReason: `raw-${unified}` })
    if (code !== undefined) expect(last).toMatchObject({ failure: { code } })
  })
})

describe('errors and aborts', () => {
  test('an in-band error part ends the call with a classified failure', async () => {
    const chunks = await collect(
      mockV3([
        [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'partial' },
          { type: 'error', error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
          finish('stop'),
        ],
      ]),
    )
    const last = chunks.at(-1)
    expect(last).toMatchObject({ type: 'finish', reason: 'error', failure: { phase: 'streaming' } })
    expect(last?.type === 'finish' && last.failure?.message).toContain('Overloaded')
    expect(chunks.filter((chunk) => chunk.type === 'finish')).toHaveLength(1)
  })

  test('a thrown APICallError keeps status, retryable, retry-after and request id', async () => {
    const error = new APICallError({
      message: 'Too Many Requests',
      url: 'http://127.0.0.1/v1/chat',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '3', 'x-request-id': 'req-9' },
      responseBody: '{"error":{"message":"slow down","type":"rate_limit_error"}}',
      isRetryable: true,
    })
    const chunks = await collect(scriptedAiSdkModel('v4', [{ throws: error }]))
    expect(chunks).toEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: expect.objectContaining({
          code: 'RATE_LIMIT',
          status: 429,
          retryable: true,
          retryAfterMs: 3000,
          requestId: 'req-9',
          phase: 'response',
        }),
      },
    ])
  })

  test('a 400 APICallError is not retryable; one without status is a retryable transport failure', async () => {
    const bad = new APICallError({
      message: 'bad',
      url: 'u',
      requestBodyValues: {},
      statusCode: 400,
      isRetryable: false,
    })
    const down = new APICallError({ message: 'Cannot connect', url: 'u', requestBodyValues: {}, isRetryable: true })
    const [first] = await collect(scriptedAiSdkModel('v2', [{ throws: bad }]))
    const [second] = await collect(scriptedAiSdkModel('v2', [{ throws: down }]))
    expect(first).toMatchObject({ failure: { code: 'INVALID_REQUEST', status: 400, retryable: false } })
    expect(second).toMatchObject({ failure: { code: 'TRANSPORT', retryable: true, phase: 'connect' } })
  })

  test('an abort mid-stream ends the call aborted even when the provider stream ignores the signal', async () => {
    const controller = new AbortController()
    const model = {
      specificationVersion: 'v3',
      provider: 'slow',
      modelId: 'slow',
      supportedUrls: {},
      doGenerate: () => Promise.reject(new Error('unused')),
      doStream: async () => ({
        stream: new ReadableStream({
          start(stream) {
            stream.enqueue({ type: 'text-start', id: 't' })
            stream.enqueue({ type: 'text-delta', id: 't', delta: 'so far' })
            // Never closes: only the abort can end this call.
          },
        }),
      }),
    }
    const req = request({ signal: controller.signal })
    const chunks: StreamChunk[] = []
    for await (const chunk of aiSdkModel(model).stream(req, { signal: req.signal })) {
      chunks.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED' } })
  })

  test('the abort signal reaches the provider as abortSignal', async () => {
    const model = mockV3([textParts('x')])
    await collect(model)
    expect(model.doStreamCalls[0]?.abortSignal).toBeInstanceOf(AbortSignal)
  })
})

describe('malformed streams', () => {
  test.each([
    [
      'a repeated text part id',
      [
        { type: 'text-start', id: 'a' },
        { type: 'text-end', id: 'a' },
        { type: 'text-start', id: 'a' },
      ],
    ],
    ['a delta for a part never started', [{ type: 'text-delta', id: 'z', delta: 'x' }]],
    [
      'a repeated tool input id',
      [
        { type: 'tool-input-start', id: 'c', toolName: 't' },
        { type: 'tool-input-start', id: 'c', toolName: 't' },
      ],
    ],
    ['a tool-call without a string input', [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} }]],
    ['a part that is not an object', ['text']],
  ])('%s is a MALFORMED_RESPONSE failure', async (_name, parts) => {
    const chunks = await collect(mockV3([[...parts, finish('stop')]]))
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'MALFORMED_RESPONSE' } })
  })

  test('a stream that ends without finish is STREAM_CLOSED', async () => {
    const chunks = await collect(mockV3([textParts('x').slice(0, 3)]))
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'STREAM_CLOSED' } })
  })
})

const noStream = (): undefined => undefined

const notModels: readonly [string, unknown, string][] = [
  ['null', null, 'got null'],
  ['a string', 'gpt-4o', 'got a string'],
  [
    'an object without a version',
    { provider: 'p', modelId: 'm', doStream: noStream },
    'specificationVersion (undefined)',
  ],
  ['v1', { specificationVersion: 'v1', provider: 'p', modelId: 'm', doStream: noStream }, '"v1"'],
  ['v5', { specificationVersion: 'v5', provider: 'p', modelId: 'm', doStream: noStream }, '"v5"'],
  ['no doStream', { specificationVersion: 'v3', provider: 'p', modelId: 'm' }, 'doStream'],
  ['an empty modelId', { specificationVersion: 'v3', provider: 'p', modelId: '', doStream: noStream }, 'modelId'],
]

describe('refused models', () => {
  test.each(notModels)('%s is INVALID_ARGUMENT naming it', (_name, value, words) => {
    let thrown: unknown
    try {
      aiSdkModel(value as never)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError)
    expect(thrown).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'languageModel' })
    expect((thrown as Error).message).toContain(words)
  })
})
