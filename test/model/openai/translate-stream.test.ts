import fc from 'fast-check'
import { describe, expect, it, test } from 'vitest'
import type { StreamChunk } from 'yoke'
import { createStreamTranslator } from '../../../src/model/openai/translate-stream.js'
import { delta, finishOf, sse, translate, translateBytes } from './sse-helpers.js'

const usageEvent = {
  id: 'c',
  object: 'chat.completion.chunk',
  choices: [],
  usage: {
    prompt_tokens: 100,
    completion_tokens: 20,
    prompt_tokens_details: { cached_tokens: 40 },
    completion_tokens_details: { reasoning_tokens: 5 },
  },
}

const reasoningThenText = sse([
  delta({ role: 'assistant' }),
  delta({ reasoning_content: 'r' }),
  delta({ content: 'hi' }),
  delta({}, 'stop'),
  usageEvent,
  '[DONE]',
])

const reasoningThenTextChunks: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'reasoning' },
  { type: 'reasoning-delta', index: 0, text: 'r' },
  { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'r' } },
  { type: 'block-start', index: 1, blockType: 'text' },
  { type: 'text-delta', index: 1, text: 'hi' },
  { type: 'block-end', index: 1, block: { type: 'text', text: 'hi' } },
  {
    type: 'usage',
    usage: { inputTokens: 60, outputTokens: 20, cacheReadTokens: 40, reasoningTokens: 5, raw: usageEvent.usage },
  },
  { type: 'finish', reason: 'stop', providerFinishReason: 'stop' },
]

const toolFragments = [
  delta({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"x"' } }] }),
  delta({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
  delta({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
]

describe('translation', () => {
  test('a reasoning block ends as soon as the text block starts; usage then finish after [DONE]', () => {
    expect(translate(reasoningThenText)).toEqual(reasoningThenTextChunks)
  })

  test('tool-call fragments: accumulated id and name on every delta, block-end when the next call starts', () => {
    expect(translate(sse([...toolFragments, delta({}, 'tool_calls'), '[DONE]']))).toEqual([
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

  test('a fragment for a wire index that already ended is MALFORMED_RESPONSE', () => {
    const chunks = translate(
      sse([
        ...toolFragments,
        delta({ tool_calls: [{ index: 0, function: { arguments: 'x' } }] }),
        delta({}, 'tool_calls'),
      ]),
    )
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      'block-start',
      'tool-call-delta',
      'tool-call-delta',
      'block-end',
      'block-start',
      'tool-call-delta',
      'finish',
    ])
    expect(finishOf(chunks)).toEqual({
      type: 'finish',
      reason: 'error',
      failure: {
        code: 'MALFORMED_RESPONSE',
        message: 'a tool-call fragment for wire index 0 arrived after that call ended',
        retryable: false,
        phase: 'streaming',
        detail: { wireIndex: 0 },
      },
    })
  })

  test('a tool call interrupted by text cannot be continued', () => {
    const chunks = translate(
      sse([
        toolFragments[0],
        delta({ content: 'note' }),
        delta({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      ]),
    )
    expect(finishOf(chunks).failure?.code).toBe('MALFORMED_RESPONSE')
  })

  test.each([
    ['an id', { index: 0, type: 'function', function: { name: 'f', arguments: '' } }],
    ['a function name', { index: 0, id: 'a', type: 'function', function: { arguments: '' } }],
  ])('the first fragment of a call without %s is MALFORMED_RESPONSE', (what, fragment) => {
    const failure = finishOf(translate(sse([delta({ tool_calls: [fragment] })]))).failure
    expect(failure).toMatchObject({
      code: 'MALFORMED_RESPONSE',
      message: `the first fragment of tool call 0 lacks ${what}`,
    })
  })

  test('a first fragment with empty arguments still sends the delta that names the call; empty later fragments send nothing', () => {
    const chunks = translate(
      sse([
        delta({
          tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } }],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
        delta({}, 'tool_calls'),
      ]),
    )
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'weather', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'weather', argumentsDelta: '{}' },
      { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'call_1', name: 'weather', arguments: '{}' } },
      { type: 'finish', reason: 'tool-calls', providerFinishReason: 'tool_calls' },
    ])
  })

  test('text and reasoning alternate into new blocks, never merged', () => {
    const chunks = translate(
      sse([
        delta({ reasoning_content: 'a' }),
        delta({ content: 'b' }),
        delta({ reasoning: 'c' }),
        delta({ reasoning_content: 'd' }),
        delta({}, 'stop'),
      ]),
    )
    expect(chunks.filter((chunk) => chunk.type === 'block-end')).toEqual([
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'a' } },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'b' } },
      { type: 'block-end', index: 2, block: { type: 'reasoning', text: 'cd' } },
    ])
  })

  test('empty and null content opens nothing; role-only and choice-less events are ignored', () => {
    const chunks = translate(
      sse([
        delta({ role: 'assistant', content: '' }),
        delta({ content: null, reasoning_content: '' }),
        { id: 'c', choices: [] },
        { id: 'c', choices: [{ index: 1, delta: { content: 'other choice' } }] },
        delta({ content: 'x' }, null),
        delta({ content: '' }, 'stop'),
        '[DONE]',
      ]),
    )
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'x' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'x' } },
      { type: 'finish', reason: 'stop', providerFinishReason: 'stop' },
    ])
  })

  test('the end of the body after a finish_reason completes the stream (no [DONE] needed)', () => {
    expect(
      translate(
        sse([delta({ content: 'ok' }), { ...delta({}, 'stop'), usage: { prompt_tokens: 3, completion_tokens: 1 } }]),
      ),
    ).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'ok' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'ok' } },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 1, raw: { prompt_tokens: 3, completion_tokens: 1 } } },
      { type: 'finish', reason: 'stop', providerFinishReason: 'stop' },
    ])
  })

  test('the end of the body before any finish_reason is STREAM_CLOSED, the open block left open', () => {
    expect(translate(sse([delta({ content: 'par' })]))).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'par' },
      {
        type: 'finish',
        reason: 'error',
        failure: {
          code: 'STREAM_CLOSED',
          message: 'the stream ended before the model finished',
          retryable: false,
          phase: 'streaming',
        },
      },
    ])
    expect(finishOf(translate('')).failure?.code).toBe('STREAM_CLOSED')
  })

  test('[DONE] without a finish_reason finishes stop', () => {
    expect(translate(sse([delta({ content: 'a' }), '[DONE]'])).slice(-2)).toEqual([
      { type: 'block-end', index: 0, block: { type: 'text', text: 'a' } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  test.each([
    ['not JSON', 'data: {"choices": [\n\n', 'the provider sent an event that is not JSON: {"choices": ['],
    ['not an object', 'data: 42\n\n', 'the provider sent an event that is not a JSON object: 42'],
    [
      'a final event without its blank line',
      'data: {"choices": [',
      'the provider sent an event that is not JSON: {"choices": [',
    ],
  ])('data that is %s is MALFORMED_RESPONSE', (_what, text, message) => {
    expect(finishOf(translate(sse([delta({ content: 'a' })]) + text))).toEqual({
      type: 'finish',
      reason: 'error',
      failure: { code: 'MALFORMED_RESPONSE', message, retryable: false, phase: 'streaming' },
    })
  })

  test('the key is redacted from a quoted malformed event', () => {
    const failure = finishOf(translate('data: not json sk-secret-1\n\n', { key: 'sk-secret-1' })).failure
    expect(failure?.message).toBe('the provider sent an event that is not JSON: not json [redacted]')
  })

  test('an in-stream error object finishes with the classified failure (default SERVER) and the request id', () => {
    const server = finishOf(
      translate(sse([delta({ content: 'a' }), { error: { message: 'overloaded', type: 'server_error' } }]), {
        requestId: 'req_9',
      }),
    )
    expect(server).toEqual({
      type: 'finish',
      reason: 'error',
      failure: {
        code: 'SERVER',
        message: 'model request failed (SERVER): overloaded',
        retryable: true,
        requestId: 'req_9',
        phase: 'streaming',
        detail: { providerCode: 'server_error', body: { error: { message: 'overloaded', type: 'server_error' } } },
      },
    })
    const overflow = finishOf(
      translate(sse([{ error: { message: 'too long', code: 'context_length_exceeded' } }])),
    ).failure
    expect(overflow).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', retryable: false, phase: 'streaming' })
  })

  test('usage: last non-null wins, reported once, before the finish', () => {
    const chunks = translate(
      sse([
        { ...delta({ content: 'a' }), usage: { prompt_tokens: 1, completion_tokens: 1 } },
        { ...delta({}, 'length'), usage: null },
        { choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, prompt_cache_hit_tokens: 4 } },
        '[DONE]',
      ]),
    )
    expect(chunks.filter((chunk) => chunk.type === 'usage')).toEqual([
      {
        type: 'usage',
        usage: {
          inputTokens: 6,
          outputTokens: 2,
          cacheReadTokens: 4,
          raw: { prompt_tokens: 10, completion_tokens: 2, prompt_cache_hit_tokens: 4 },
        },
      },
    ])
    expect(finishOf(chunks)).toEqual({ type: 'finish', reason: 'max-tokens', providerFinishReason: 'length' })
  })

  test('nothing is translated after the finish', () => {
    const translator = createStreamTranslator()
    expect(translator.feed(sse([delta({}, 'stop'), '[DONE]'])).map((chunk) => chunk.type)).toEqual(['finish'])
    expect(translator.finished).toBe(true)
    expect(translator.feed(sse([delta({ content: 'late' })]))).toEqual([])
    expect(translator.end()).toEqual([])
    expect(translator.fail('aborted', { code: 'ABORTED', message: 'request aborted' })).toEqual([])
  })

  test('fail() reports the usage seen so far, then the failure', () => {
    const translator = createStreamTranslator()
    translator.feed(sse([{ ...delta({ content: 'a' }), usage: { prompt_tokens: 2, completion_tokens: 1 } }]))
    const failure = { code: 'TIMEOUT', message: 'idle', retryable: true, phase: 'streaming' as const }
    expect(translator.fail('error', failure)).toEqual([
      { type: 'usage', usage: { inputTokens: 2, outputTokens: 1, raw: { prompt_tokens: 2, completion_tokens: 1 } } },
      { type: 'finish', reason: 'error', failure },
    ])
  })
})

describe('finish reasons', () => {
  test.each([
    ['stop', { reason: 'stop' }],
    ['tool_calls', { reason: 'tool-calls' }],
    ['function_call', { reason: 'tool-calls' }],
    ['length', { reason: 'max-tokens' }],
    [
      'content_filter',
      {
        reason: 'error',
        failure: {
          code: 'CONTENT_FILTER',
          message: 'the provider content filter stopped the output',
          retryable: false,
          phase: 'streaming',
        },
      },
    ],
    [
      'insufficient_system_resource',
      {
        reason: 'error',
        failure: {
          code: 'SERVER',
          message: 'the provider stopped the output: insufficient system resource',
          retryable: true,
          phase: 'streaming',
        },
      },
    ],
    [
      'weird-thing',
      {
        reason: 'error',
        failure: {
          code: 'FINISH_WEIRD_THING',
          message: 'the provider finished with an unknown reason "weird-thing"',
          retryable: false,
          phase: 'streaming',
        },
      },
    ],
  ])('%s', (raw, expected) => {
    expect(finishOf(translate(sse([delta({ content: 'x' }), delta({}, raw)])))).toEqual({
      type: 'finish',
      providerFinishReason: raw,
      ...expected,
    })
  })
})

describe('SSE framing', () => {
  test('CRLF, a BOM, comments, event names and multi-line data parse like plain LF framing', () => {
    const text = `\uFEFF: keep-alive\r\nevent: message\r\ndata: {"choices":[{"index":0,\r\ndata: "delta":{"content":"hi"}}]}\r\n\r\n: ping\r\n\r\ndata: ${JSON.stringify(delta({}, 'stop'))}\r\n\r\ndata: [DONE]\r\n\r\n`
    expect(translate(text)).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'hi' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'hi' } },
      { type: 'finish', reason: 'stop', providerFinishReason: 'stop' },
    ])
  })

  it('gives the same chunks for any split of the bytes (multi-byte characters and CRLF halves included)', () => {
    const text = sse([
      delta({ reasoning_content: 'Count the “r”s in “strawberry” — 🍓' }),
      delta({ content: 'There are **3** “r”s.' }),
      ...toolFragments,
      delta({}, 'tool_calls'),
      usageEvent,
      '[DONE]',
    ]).replaceAll('\n', '\r\n')
    const bytes = new TextEncoder().encode(text)
    const whole = translateBytes(bytes)
    expect(whole.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls', providerFinishReason: 'tool_calls' })
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (cuts) => {
        expect(
          translateBytes(
            bytes,
            [...cuts].sort((left, right) => left - right),
          ),
        ).toEqual(whole)
      }),
      { numRuns: 300 },
    )
  })

  test('byte-by-byte feeding gives the same chunks', () => {
    const bytes = new TextEncoder().encode(reasoningThenText)
    const cuts = Array.from({ length: bytes.length - 1 }, (_, index) => index + 1)
    expect(translateBytes(bytes, cuts)).toEqual(reasoningThenTextChunks)
  })
})
