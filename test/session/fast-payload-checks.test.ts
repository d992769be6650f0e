import { describe, expect, test } from 'vitest'
import { coreEventTypes } from '../../src/session/core-event-types.js'
import {
  fastPayloadChecks,
  isAssistantMessage,
  isStreamChunkFast,
  isToolResultMessage,
  isUserMessage,
} from '../../src/session/fast-payload-checks.js'
import { assistantMessageSchema, toolResultMessageSchema, userMessageSchema } from '../../src/session/message.js'
import { streamChunkSchema } from '../../src/session/stream-chunk.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const userMessage = { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }
const assistantMessage = {
  id: 'a1',
  role: 'assistant',
  content: [
    { type: 'tool-call', id: 'call_1', name: 'noop', arguments: '{}' },
    { type: 'text', text: 'done' },
    { type: 'reasoning', text: 'hmm' },
  ],
  source: { kind: 'model', provider: 'mock', model: 'mock' },
}
const toolResult = {
  id: 't1',
  role: 'user',
  content: [{ type: 'tool-result', toolCallId: 'call_1', isError: false, content: [{ type: 'text', text: 'ok' }] }],
  source: { kind: 'tool', callId: 'call_1' },
}
const chunks: Json[] = [
  { type: 'block-start', index: 0, blockType: 'tool-call' },
  { type: 'text-delta', index: 0, text: 'do' },
  { type: 'reasoning-delta', index: 1, text: '' },
  { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'noop', argumentsDelta: '{}' },
  { type: 'tool-call-delta', index: 0, id: 'call_1', argumentsDelta: '' },
  { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'call_1', name: 'noop', arguments: '{}' } },
  { type: 'block-end', index: 2, block: { type: 'text', text: 'done' } },
  { type: 'finish', reason: 'stop' },
  { type: 'finish', reason: 'tool-calls', providerFinishReason: 'tool_use' },
  { type: 'finish', reason: 'max-tokens' },
  { type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } },
  {
    type: 'usage',
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 3, cacheWriteTokens: 0, reasoningTokens: 7 },
  },
]
/** Valid payloads of the fast-checked types; each must take the fast path. */
const payloads: readonly (readonly [string, Json])[] = [
  ['turn/start', { turn: 1 }],
  ['turn/end', { turn: 3, reason: { kind: 'completed' } }],
  ['step/start', { turn: 1, step: 2 }],
  ['step/end', { turn: 1, step: 2 }],
  ...chunks.map((chunk) => ['assistant/chunk', { turn: 1, step: 1, chunk }] as const),
  ['assistant/message', { turn: 1, step: 1, message: assistantMessage }],
  ['assistant/message', { turn: 1, step: 1, message: assistantMessage, usage: { inputTokens: 1, outputTokens: 1 } }],
  [
    'assistant/message',
    {
      turn: 1,
      step: 1,
      message: assistantMessage,
      usage: { inputTokens: 5, outputTokens: 0, reasoningTokens: 4 },
      interrupted: true,
    },
  ],
  ['tool/call', { turn: 1, step: 1, callId: 'call_1', name: 'noop', arguments: '{}' }],
  ['tool/result', { turn: 1, step: 1, message: toolResult }],
  [
    'tool/result',
    {
      turn: 1,
      step: 1,
      message: { ...toolResult, content: [{ type: 'tool-result', toolCallId: 'call_1', content: [] }] },
    },
  ],
  ['user/message', userMessage],
  ['agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [userMessage] }],
  ['agent/inbox/spliced', { target: 'next-step', start: 2, removedCount: 1, inserted: [], outcome: 'canceled' }],
  [
    'request/header',
    {
      header: {
        config: { provider: 'mock', model: 'mock' },
        tools: [{ name: 'noop', description: 'Does nothing', parameters: { type: 'object', properties: {} } }],
      },
      reason: 'initial',
    },
  ],
  [
    'request/header',
    {
      header: {
        config: { provider: 'p', model: 'm', reasoningEffort: 'high', temperature: 0.5, maxTokens: 10, stop: ['x'] },
        system: 'be brief',
        tools: [
          { name: 'a', description: '', parameters: {} },
          { name: 'b', description: 'B', parameters: { type: 'object' } },
        ],
      },
      reason: 'change',
    },
  ],
  ['request/context', { provider: 'mock', model: 'mock' }],
  ['request/context', { provider: 'p', model: 'm', contextWindow: 128000 }],
]

const replacements: readonly Json[] = [
  null,
  0,
  -1,
  1.5,
  2 ** 53,
  '',
  'x',
  'y'.repeat(1025),
  true,
  false,
  [],
  {},
  [1],
  { kind: 'user' },
  'canceled',
  'error',
  'image',
]

/** Every one-edit variant of `value`: each key deleted, each value replaced, an extra key added to each object. */
function mutations(value: Json): Json[] {
  const out: Json[] = replacements.filter((replacement) => replacement !== value)
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      for (const variant of mutations(item))
        out.push(value.map((other, position) => (position === index ? variant : other)))
      out.push(value.filter((_other, position) => position !== index))
    })
    out.push([...value, ...value.slice(0, 1)])
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      const { [key]: _removed, ...rest } = value
      out.push(rest)
      for (const variant of mutations(value[key] as Json)) out.push({ ...value, [key]: variant })
    }
    out.push({ ...value, extra: 1 })
  }
  return out
}

const catalog = coreEventTypes()

describe('fast payload checks', () => {
  test.each(payloads.map(([type, data], index) => [`${index} ${type}`, type, data] as const))(
    '%s: valid data takes the fast path',
    (_label, type, data) => {
      expect(fastPayloadChecks.get(type)?.(data)).toBe(true)
      expect(catalog.get(type)?.schema?.safeParse(data).success).toBe(true)
    },
  )

  test('a fast acceptance is never wrong: every one-edit variant the check accepts, the schema accepts', () => {
    let accepted = 0
    let rejected = 0
    for (const [type, data] of payloads) {
      const check = fastPayloadChecks.get(type) as (data: unknown) => boolean
      const schema = catalog.get(type)?.schema
      for (const variant of mutations(data)) {
        if (!check(variant)) {
          rejected++
          continue
        }
        accepted++
        expect({ type, variant, valid: schema?.safeParse(variant).success }).toEqual({ type, variant, valid: true })
      }
    }
    expect(accepted).toBeGreaterThan(20)
    expect(rejected).toBeGreaterThan(1000)
  })

  test('chunks: the fast check accepts only what the schema accepts, and leaves raw usage and failing finishes to it', () => {
    for (const chunk of chunks) {
      expect(isStreamChunkFast(chunk)).toBe(true)
      for (const variant of mutations(chunk))
        if (isStreamChunkFast(variant)) expect(streamChunkSchema.safeParse(variant).success).toBe(true)
    }
    const failing = {
      type: 'finish',
      reason: 'error',
      failure: { code: 'network', message: 'down', phase: 'stream', retryable: true },
    }
    const usage = { type: 'usage', usage: { inputTokens: 1, outputTokens: 2, raw: { prompt_tokens: 1 } } }
    expect([
      isStreamChunkFast(failing),
      isStreamChunkFast(usage),
      isStreamChunkFast({ type: 'finish', reason: 'stop', failure: failing.failure }),
    ]).toEqual([false, false, false])
    expect(streamChunkSchema.safeParse(usage).success).toBe(true)
  })

  test('messages: each message check accepts its valid message and only variants its schema accepts', () => {
    const cases = [
      [isUserMessage, userMessageSchema, userMessage],
      [isAssistantMessage, assistantMessageSchema, assistantMessage],
      [isToolResultMessage, toolResultMessageSchema, toolResult],
    ] as const
    for (const [check, schema, message] of cases) {
      expect(check(message)).toBe(true)
      for (const variant of mutations(message as unknown as Json))
        if (check(variant))
          expect({ variant, valid: schema.safeParse(variant).success }).toEqual({ variant, valid: true })
    }
    expect([isUserMessage(toolResult), isToolResultMessage(userMessage), isAssistantMessage(userMessage)]).toEqual([
      false,
      false,
      false,
    ])
  })

  test('payloads outside the fast shapes fall back (meta, cause, raw usage, error)', () => {
    const fallback: readonly (readonly [string, Json])[] = [
      ['step/end', { turn: 1, step: 1, meta: { synthetic: true } }],
      ['turn/end', { turn: 1, reason: { kind: 'completed' }, meta: { synthetic: true } }],
      ['turn/end', { turn: 1, reason: { kind: 'max-steps' } }],
      [
        'assistant/message',
        { turn: 1, step: 1, message: assistantMessage, usage: { inputTokens: 1, outputTokens: 1, raw: {} } },
      ],
      ['tool/result', { turn: 1, step: 1, message: toolResult, error: { name: 'Error', code: 'E' } }],
      ['user/message', { ...userMessage, source: { kind: 'plugin', plugin: 'p' } }],
      [
        'request/header',
        {
          header: { config: { provider: 'p', model: 'm', maxTokens: 5 }, adapterDefaults: { maxTokens: true } },
          reason: 'resume',
        },
      ],
      [
        'request/header',
        {
          header: {
            config: { provider: 'p', model: 'm' },
            tools: [
              { name: 'a', description: '', parameters: {} },
              { name: 'a', description: '', parameters: {} },
            ],
          },
          reason: 'initial',
        },
      ],
    ]
    expect(fallback.map(([type, data]) => fastPayloadChecks.get(type)?.(data))).toEqual(fallback.map(() => false))
  })
})
