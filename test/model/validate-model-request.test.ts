import { afterEach, describe, expect, test } from 'vitest'
import { type Harness, type Message, type ModelRegistry, type ModelRequest, services } from 'yoke'
import { validateCallConfig, validateModelRequest } from '../../src/model/index.js'
import { deepFreeze, isDeepFrozen } from '../helpers/outcomes.js'
import { collect, fakeAdapter, modelHarness, req, textAdapter, textChunks, userHi } from './registry-helpers.js'

const open: Harness[] = []
let reg: ModelRegistry

async function start(): Promise<void> {
  const started = await modelHarness()
  open.push(started.harness)
  reg = started.harness.ctx.get(services.models)
}

afterEach(async () => {
  for (const running of open.splice(0)) await running.close()
})

const assistant = (content: unknown): unknown => ({
  id: 'a1',
  role: 'assistant',
  content,
  source: { kind: 'model', provider: 'a', model: 'm' },
})
const tool = (name: string, parameters: unknown = { type: 'object' }) => ({ name, description: 'd', parameters })

/** [rule, request overrides, field, detail value (undefined: the value key is absent)] */
const violations: readonly [string, Record<string, unknown>, string, unknown][] = [
  ['provider is non-empty', { provider: '' }, 'provider', ''],
  ['provider is required', { provider: undefined }, 'provider', undefined],
  ['provider is a string', { provider: 7 }, 'provider', 7],
  ['model is non-empty', { model: '' }, 'model', ''],
  ['model is required', { model: undefined }, 'model', undefined],
  ['messages is an array', { messages: 'hi' }, 'messages', 'hi'],
  ['a message is an object', { messages: [null] }, 'messages[0]', null],
  [
    'a message role is user or assistant',
    { messages: [{ ...userHi(), role: 'system' }] },
    'messages[0].role',
    'system',
  ],
  [
    'a message follows the Message schema',
    { messages: [assistant([{ type: 'text', text: 1 }])] },
    'messages[0].content[0].text',
    1,
  ],
  ['a message has no extra key', { messages: [{ ...userHi(), extra: 1 }] }, 'messages[0].extra', 1],
  [
    'a user message holds user blocks',
    { messages: [userHi(), { ...userHi('m2'), content: [{ type: 'reasoning', text: 'r' }] }] },
    'messages[1].content[0].type',
    'reasoning',
  ],
  [
    'a tool result answers its call',
    {
      messages: [
        {
          id: 't1',
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: 'c2', content: [] }],
          source: { kind: 'tool', callId: 'c1' },
        },
      ],
    },
    'messages[0].content[0].toolCallId',
    'c2',
  ],
  [
    'a message is lossless JSON',
    {
      messages: [
        { ...(assistant([]) as object), source: { kind: 'model', provider: 'a', model: 'm', replayState: 1n } },
      ],
    },
    'messages[0]',
    '[non-JSON object]',
  ],
  ['system is a string', { system: 1 }, 'system', 1],
  ['tools is an array', { tools: {} }, 'tools', {}],
  ['tool names are unique', { tools: [tool('echo'), tool('echo')] }, 'tools[1].name', 'echo'],
  ['a tool has a non-empty name', { tools: [tool('')] }, 'tools[0].name', ''],
  ['tool parameters is a JSON object', { tools: [tool('echo', [])] }, 'tools[0].parameters', []],
  ['maxTokens is positive', { maxTokens: 0 }, 'maxTokens', 0],
  ['maxTokens is an integer', { maxTokens: 1.5 }, 'maxTokens', 1.5],
  ['maxTokens is a safe integer', { maxTokens: 2 ** 53 }, 'maxTokens', 2 ** 53],
  ['maxTokens is a number', { maxTokens: '100' }, 'maxTokens', '100'],
  ['temperature is finite', { temperature: Number.NaN }, 'temperature', 'NaN'],
  ['temperature is finite (Infinity)', { temperature: Number.POSITIVE_INFINITY }, 'temperature', 'Infinity'],
  ['temperature is at least 0', { temperature: -0.1 }, 'temperature', -0.1],
  ['temperature is at most 2', { temperature: 2.1 }, 'temperature', 2.1],
  ['stop is an array', { stop: 'END' }, 'stop', 'END'],
  ['stop holds non-empty strings', { stop: ['END', ''] }, 'stop[1]', ''],
  ['reasoningEffort is non-empty', { reasoningEffort: '' }, 'reasoningEffort', ''],
  ['metadata is an object', { metadata: undefined }, 'metadata', undefined],
  ['metadata.purpose is one of the three', { metadata: { purpose: 'chat' } }, 'metadata.purpose', 'chat'],
  ['metadata.sessionId is a string', { metadata: { purpose: 'title', sessionId: 1 } }, 'metadata.sessionId', 1],
  ['metadata has no other key', { metadata: { purpose: 'title', agent: 'x' } }, 'metadata.agent', 'x'],
  ['signal is an AbortSignal', { signal: {} }, 'signal', {}],
  ['no other top-level key', { config: {} }, 'config', {}],
]

describe('request validation', () => {
  test.each(violations)('%s', async (_rule, overrides, field, value) => {
    const found = validateModelRequest(req(overrides))
    expect(found?.field).toBe(field)
    await start()
    const adapter = textAdapter('a', 'never')
    reg.register(adapter)
    const chunks = await collect(reg.stream(req(overrides)))
    expect(chunks).toHaveLength(1)
    const detail = value === undefined ? { field } : { field, value }
    expect(chunks[0]).toEqual({
      type: 'finish',
      reason: 'error',
      failure: {
        code: 'INVALID_REQUEST',
        message: expect.stringContaining(field),
        retryable: false,
        phase: 'pre-request',
        detail,
      },
    })
    expect(adapter.requests).toHaveLength(0)
  })

  test('a request that is not an object names the request', () => {
    expect(validateModelRequest(null)).toEqual({ field: 'request', value: null, message: 'must be a request object' })
  })

  test.each([
    [
      'every optional field set',
      { system: '', tools: [tool('a'), tool('b')], maxTokens: 1, temperature: 0, stop: ['x'], reasoningEffort: 'low' },
    ],
    ['temperature 2', { temperature: 2 }],
    ['an optional field set to undefined', { system: undefined, tools: undefined }],
    ['all three purposes', { metadata: { purpose: 'compaction', sessionId: 's1' } }],
    ['empty messages', { messages: [] }],
    [
      'assistant with tool calls, then its tool result',
      {
        messages: [
          userHi(),
          assistant([{ type: 'tool-call', id: 'c1', name: 'echo', arguments: '{}' }]),
          {
            id: 't1',
            role: 'user',
            content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'ok' }] }],
            source: { kind: 'tool', callId: 'c1' },
          },
        ],
      },
    ],
  ])('accepts %s', (_name, overrides) => {
    expect(validateModelRequest(req(overrides))).toBeUndefined()
  })

  test('a request whose getter throws is INVALID_REQUEST, not a throw', async () => {
    await start()
    reg.register(textAdapter('a', 'never'))
    const request = req()
    Object.defineProperty(request, 'system', {
      enumerable: true,
      get: () => {
        throw new Error('trap')
      },
    })
    const chunks = await collect(reg.stream(request))
    expect(chunks[0]).toMatchObject({
      type: 'finish',
      reason: 'error',
      failure: { code: 'INVALID_REQUEST', detail: { field: 'request' } },
    })
  })

  test('call configs follow the same rules, with no request-only key', () => {
    expect(
      validateCallConfig({
        provider: 'a',
        model: 'm',
        maxTokens: 5,
        temperature: 2,
        stop: ['x'],
        reasoningEffort: 'high',
      }),
    ).toBeUndefined()
    expect(validateCallConfig({ provider: 'a', model: 'm', messages: [] })?.field).toBe('messages')
    expect(validateCallConfig({ provider: 'a' })?.field).toBe('model')
    expect(validateCallConfig({ provider: 'a', model: 'm', stop: [1] })?.field).toBe('stop[0]')
    expect(validateCallConfig('a')?.field).toBe('config')
  })
})

describe('deep-freezing what the adapter receives', () => {
  test('an unfrozen request is copied deep-frozen; the caller objects are untouched; the signal is the same', async () => {
    await start()
    const adapter = fakeAdapter('a', () => textChunks('ok'))
    reg.register(adapter)
    const request = req({ tools: [tool('echo')], stop: ['END'] })
    expect(await collect(reg.stream(request))).toEqual(textChunks('ok'))
    const received = adapter.requests[0] as ModelRequest
    expect(received).not.toBe(request)
    expect(received).toEqual(request)
    expect(received.signal).toBe(request.signal)
    expect(adapter.options[0]?.signal).toBe(request.signal)
    expect(isDeepFrozen(Object.freeze({ ...received, signal: undefined }))).toBe(true)
    expect(Object.isFrozen(received)).toBe(true)
    expect(Object.isFrozen(request)).toBe(false)
    expect(Object.isFrozen(request.messages)).toBe(false)
    expect(Object.isFrozen(request.messages[0])).toBe(false)
    expect(Object.isFrozen(request.tools?.[0]?.parameters)).toBe(false)
  })

  test('a deep-frozen request is forwarded as it is', async () => {
    await start()
    const adapter = fakeAdapter('a', () => textChunks('ok'))
    reg.register(adapter)
    const signal = new AbortController().signal
    const request = deepFreeze(req({ signal, tools: [tool('echo')] }), new Set([signal]))
    await collect(reg.stream(request))
    expect(adapter.requests[0]).toBe(request)
    await collect(reg.stream(request))
    expect(adapter.requests[1]).toBe(request)
  })

  test('already-frozen messages are shared, not copied, by the frozen copy', async () => {
    await start()
    const adapter = fakeAdapter('a', () => textChunks('ok'))
    reg.register(adapter)
    const logged = deepFreeze(userHi('logged')) as Message
    const fresh = userHi('fresh')
    const request = req({ messages: [logged, fresh] })
    await collect(reg.stream(request))
    const received = adapter.requests[0] as ModelRequest
    expect(received.messages).not.toBe(request.messages)
    expect(received.messages[0]).toBe(logged)
    expect(received.messages[1]).not.toBe(fresh)
    expect(received.messages[1]).toEqual(fresh)
    expect(isDeepFrozen(received.messages)).toBe(true)
  })

  test('a frozen request with an unfrozen part is copied, the frozen parts shared', async () => {
    await start()
    const adapter = fakeAdapter('a', () => textChunks('ok'))
    reg.register(adapter)
    const metadata = { purpose: 'conversation' as const }
    const messages = deepFreeze([userHi()])
    const request = Object.freeze(req({ messages, metadata }))
    await collect(reg.stream(request))
    const received = adapter.requests[0] as ModelRequest
    expect(received).not.toBe(request)
    expect(received.messages).toBe(messages)
    expect(received.metadata).not.toBe(metadata)
    expect(Object.isFrozen(received.metadata)).toBe(true)
    expect(Object.isFrozen(metadata)).toBe(false)
  })
})
