import { describe, expect, expectTypeOf, test } from 'vitest'
import type { z } from 'zod'
import {
  type AgentInboxSplicedData,
  type agentInboxSplicedDataSchema,
  type AssistantChunkData,
  type AssistantMessageData,
  type assistantChunkDataSchema,
  type assistantMessageDataSchema,
  type CoreEventData,
  type CoreEventType,
  type CoreSessionEvent,
  coreEventTypes,
  isSurfaceType,
  type RequestContextData,
  type RequestHeaderData,
  type requestContextDataSchema,
  type requestHeaderDataSchema,
  type SessionEndSeedData,
  type StepEndData,
  type StepStartData,
  type sessionEndSeedDataSchema,
  type stepEndDataSchema,
  type stepStartDataSchema,
  type ToolCallData,
  type ToolResultData,
  type TurnEndData,
  type TurnStartData,
  type toolCallDataSchema,
  toolResultDataSchema,
  type turnEndDataSchema,
  type turnStartDataSchema,
  type UserMessageData,
} from '../../src/session/core-event-types.js'
import { userMessageSchema } from '../../src/session/message.js'
import { accessPath, payloadIssues } from '../../src/session/payload-issues.js'

const catalog = coreEventTypes()

function schemaOf(type: CoreEventType): z.ZodType {
  const schema = catalog.get(type)?.schema
  if (schema === undefined) throw new Error(`no schema for ${type}`)
  return schema
}

/** `INVALID_PAYLOAD.path` as the session computes it, or `undefined` when the data is valid. */
function payloadPath(type: CoreEventType, data: unknown): string | undefined {
  const issues = payloadIssues(schemaOf(type), data)
  return issues === undefined ? undefined : accessPath('data', issues[0]!.path)
}

function valid(type: CoreEventType, data: unknown): boolean {
  return payloadIssues(schemaOf(type), data) === undefined
}

const text = (value: string) => ({ type: 'text', text: value }) as const
const call = (id: string) => ({ type: 'tool-call', id, name: 'echo', arguments: '{}' }) as const
const userMessage = (id: string): UserMessageData => ({
  id,
  role: 'user',
  content: [text(id)],
  source: { kind: 'user' },
})
const assistantData = (...content: AssistantMessageData['message']['content']): AssistantMessageData => ({
  turn: 1,
  step: 1,
  message: { id: 'a-3', role: 'assistant', content, source: { kind: 'model', provider: 'mock', model: 'mock' } },
})
const toolResultData = (id: string): ToolResultData => ({
  turn: 1,
  step: 1,
  message: {
    id: `r-${id}`,
    role: 'user',
    source: { kind: 'tool', callId: id },
    content: [{ type: 'tool-result', toolCallId: id, content: [{ type: 'text', text: 'ok' }] }],
  },
})

/** One valid payload per core type. */
const samples: { readonly [K in CoreEventType]: CoreEventData[K] } = {
  'turn/start': { turn: 1 },
  'turn/end': { turn: 1, reason: { kind: 'completed' } },
  'step/start': { turn: 1, step: 1 },
  'step/end': { turn: 1, step: 1 },
  'user/message': userMessage('u-hi'),
  'assistant/chunk': { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'let' } },
  'assistant/message': assistantData(text('let me check'), call('c1')),
  'tool/call': { turn: 1, step: 1, callId: 'c1', name: 'echo', arguments: '{}' },
  'tool/result': toolResultData('c1'),
  'request/header': { header: { config: { provider: 'mock', model: 'm' } }, reason: 'initial' },
  'request/context': { provider: 'mock', model: 'm', contextWindow: 1000 },
  'agent/inbox/spliced': { target: 'next-turn', start: 0, inserted: [userMessage('u-q')] },
  'agent/run-options': { messageId: 'u-q', maxSteps: 3, outputRepairs: 1 },
  'session/end-seed': {},
}

const coreTypes = Object.keys(samples) as CoreEventType[]

describe('the core catalog', () => {
  test('lists the fourteen core types in table order', () => {
    expect([...catalog.keys()]).toEqual([
      'turn/start',
      'turn/end',
      'step/start',
      'step/end',
      'user/message',
      'assistant/chunk',
      'assistant/message',
      'tool/call',
      'tool/result',
      'request/header',
      'request/context',
      'agent/inbox/spliced',
      'agent/run-options',
      'session/end-seed',
    ])
  })

  test('every definition is frozen, core, has a schema and names its type', () => {
    for (const [type, definition] of catalog) {
      expect(definition.type).toBe(type)
      expect(definition.core).toBe(true)
      expect(definition.schema).toBeDefined()
      expect(Object.isFrozen(definition)).toBe(true)
      expect(['none', 'turn', 'step']).toContain(definition.enclosure)
      expect(definition.surface).toBe(isSurfaceType(type))
    }
  })

  test('each call returns a fresh map, so changing one copy leaves the next intact', () => {
    const first = coreEventTypes() as Map<string, unknown>
    first.delete('turn/start')
    expect(first).not.toBe(coreEventTypes())
    expect(coreEventTypes().has('turn/start')).toBe(true)
    expect(coreEventTypes().get('tool/call')).toBe(catalog.get('tool/call'))
  })

  test('user/message is checked by the UserMessage schema itself', () => {
    expect(catalog.get('user/message')?.schema).toBe(userMessageSchema)
  })

  test('the surface types are exactly user/message, assistant/message and tool/result', () => {
    expect(coreTypes.filter(isSurfaceType)).toEqual(['user/message', 'assistant/message', 'tool/result'])
    expect(isSurfaceType('test/note')).toBe(false)
    expect(isSurfaceType('')).toBe(false)
    expect(isSurfaceType('user/messages')).toBe(false)
  })

  test.each(coreTypes)('%s accepts its sample payload', (type) => {
    expect(payloadIssues(schemaOf(type), samples[type])).toBeUndefined()
  })

  test.each(coreTypes)('%s rejects an unknown top-level key at the key', (type) => {
    expect(payloadPath(type, { ...samples[type], surplus: 1 })).toBe('data.surplus')
  })

  test.each(coreTypes)('%s rejects null, an array and a string at data', (type) => {
    for (const data of [null, [], 'x']) expect(payloadPath(type, data)).toBe('data')
  })
})

describe('types line up with schemas', () => {
  test('every payload schema infers exactly its hand-written interface', () => {
    expectTypeOf<z.infer<typeof turnStartDataSchema>>().toEqualTypeOf<TurnStartData>()
    expectTypeOf<z.infer<typeof turnEndDataSchema>>().toEqualTypeOf<TurnEndData>()
    expectTypeOf<z.infer<typeof stepStartDataSchema>>().toEqualTypeOf<StepStartData>()
    expectTypeOf<z.infer<typeof stepEndDataSchema>>().toEqualTypeOf<StepEndData>()
    expectTypeOf<z.infer<typeof userMessageSchema>>().toEqualTypeOf<UserMessageData>()
    expectTypeOf<z.infer<typeof assistantChunkDataSchema>>().toEqualTypeOf<AssistantChunkData>()
    expectTypeOf<z.infer<typeof assistantMessageDataSchema>>().toEqualTypeOf<AssistantMessageData>()
    expectTypeOf<z.infer<typeof toolCallDataSchema>>().toEqualTypeOf<ToolCallData>()
    expectTypeOf<z.infer<typeof toolResultDataSchema>>().toEqualTypeOf<ToolResultData>()
    expectTypeOf<z.infer<typeof requestHeaderDataSchema>>().toEqualTypeOf<RequestHeaderData>()
    expectTypeOf<z.infer<typeof requestContextDataSchema>>().toEqualTypeOf<RequestContextData>()
    expectTypeOf<z.infer<typeof agentInboxSplicedDataSchema>>().toEqualTypeOf<AgentInboxSplicedData>()
    expectTypeOf<z.infer<typeof sessionEndSeedDataSchema>>().toEqualTypeOf<SessionEndSeedData>()
    expectTypeOf<CoreSessionEvent<'turn/start'>['data']>().toEqualTypeOf<TurnStartData>()
    expectTypeOf<Extract<CoreSessionEvent, { type: 'tool/call' }>['data']>().toEqualTypeOf<ToolCallData>()
    const parsed: ToolResultData = toolResultDataSchema.parse(samples['tool/result'])
    expect(parsed).toEqual(samples['tool/result'])
  })
})

describe('invalid seeded payloads name the offending path', () => {
  const userData = samples['user/message']
  test.each<[string, CoreEventType, unknown, string]>([
    ['user/message data null', 'user/message', null, 'data'],
    ["user/message role 'assistant'", 'user/message', { ...userData, role: 'assistant' }, 'data.role'],
    ['user/message source null', 'user/message', { ...userData, source: null }, 'data.source'],
    ["user/message content 'x'", 'user/message', { ...userData, content: 'x' }, 'data.content'],
    [
      "assistant/message source {kind:'user'}",
      'assistant/message',
      { ...assistantData(text('x')), message: { ...assistantData(text('x')).message, source: { kind: 'user' } } },
      'data.message.source',
    ],
    [
      "tool/result source {kind:'user'}",
      'tool/result',
      { ...toolResultData('c1'), message: { ...toolResultData('c1').message, source: { kind: 'user' } } },
      'data.message.source',
    ],
    [
      "tool/result content [text('x')]",
      'tool/result',
      { ...toolResultData('c1'), message: { ...toolResultData('c1').message, content: [text('x')] } },
      'data.message.content',
    ],
    [
      "tool/result source.callId 'a', toolCallId 'b'",
      'tool/result',
      {
        ...toolResultData('a'),
        message: {
          ...toolResultData('a').message,
          content: [{ type: 'tool-result', toolCallId: 'b', content: [text('ok')] }],
        },
      },
      'data.message.content[0].toolCallId',
    ],
  ])('%s → path starting %s', (_name, type, data, prefix) => {
    const path = payloadPath(type, data)
    expect(path).toBeDefined()
    expect(path!.startsWith(prefix)).toBe(true)
  })

  test('the callId mismatch is reported exactly at the inner toolCallId', () => {
    const data = {
      ...toolResultData('a'),
      message: { ...toolResultData('a').message, content: [{ type: 'tool-result', toolCallId: 'b', content: [] }] },
    }
    expect(payloadPath('tool/result', data)).toBe('data.message.content[0].toolCallId')
  })
})

describe('a user/message without id', () => {
  test('is rejected at data.id', () => {
    const data = { role: 'user', content: [text('x')], source: { kind: 'user' } }
    expect(payloadPath('user/message', data)).toBe('data.id')
  })
})

describe('numeric bounds', () => {
  const positive: [CoreEventType, string][] = [
    ['turn/start', 'turn'],
    ['turn/end', 'turn'],
    ['step/start', 'turn'],
    ['step/start', 'step'],
    ['step/end', 'turn'],
    ['step/end', 'step'],
    ['assistant/chunk', 'turn'],
    ['assistant/chunk', 'step'],
    ['assistant/message', 'turn'],
    ['assistant/message', 'step'],
    ['tool/call', 'turn'],
    ['tool/call', 'step'],
    ['tool/result', 'turn'],
    ['tool/result', 'step'],
    ['request/context', 'contextWindow'],
    ['agent/inbox/spliced', 'removedCount'],
  ]

  test.each(positive)('%s %s is a positive safe integer', (type, field) => {
    for (const value of [1, 2, 2 ** 53 - 1]) expect(valid(type, { ...samples[type], [field]: value })).toBe(true)
    for (const value of [0, -1, 1.5, 2 ** 53, '1', null, true]) {
      expect(payloadPath(type, { ...samples[type], [field]: value })).toBe(`data.${field}`)
    }
  })

  test.each<[CoreEventType, string]>([
    ['turn/start', 'turn'],
    ['step/start', 'step'],
    ['tool/call', 'callId'],
    ['tool/call', 'name'],
    ['tool/call', 'arguments'],
    ['request/context', 'provider'],
    ['request/context', 'model'],
    ['agent/inbox/spliced', 'start'],
    ['agent/inbox/spliced', 'inserted'],
    ['agent/inbox/spliced', 'target'],
    ['request/header', 'header'],
    ['request/header', 'reason'],
    ['assistant/chunk', 'chunk'],
    ['assistant/message', 'message'],
    ['tool/result', 'message'],
    ['turn/end', 'reason'],
  ])('%s requires %s', (type, field) => {
    const { [field]: _removed, ...rest } = samples[type] as unknown as Record<string, unknown>
    expect(payloadPath(type, rest)).toBe(`data.${field}`)
  })

  test('agent/inbox/spliced start is a non-negative safe integer', () => {
    const base = samples['agent/inbox/spliced']
    for (const start of [0, 5, 2 ** 53 - 1]) expect(valid('agent/inbox/spliced', { ...base, start })).toBe(true)
    for (const start of [-1, 0.5, 2 ** 53, '0'])
      expect(payloadPath('agent/inbox/spliced', { ...base, start })).toBe('data.start')
  })

  test('optional numbers may be absent', () => {
    expect(valid('request/context', { provider: 'p', model: 'm' })).toBe(true)
    expect(valid('agent/inbox/spliced', { target: 'next-step', start: 2, inserted: [] })).toBe(true)
  })
})

describe('string bounds', () => {
  test.each<[CoreEventType, string]>([
    ['tool/call', 'callId'],
    ['tool/call', 'name'],
    ['request/context', 'provider'],
    ['request/context', 'model'],
  ])('%s %s must be a non-empty string', (type, field) => {
    expect(payloadPath(type, { ...samples[type], [field]: '' })).toBe(`data.${field}`)
    expect(payloadPath(type, { ...samples[type], [field]: 1 })).toBe(`data.${field}`)
  })

  test('tool/call callId has at most 256 characters', () => {
    expect(valid('tool/call', { ...samples['tool/call'], callId: 'c'.repeat(256) })).toBe(true)
    expect(payloadPath('tool/call', { ...samples['tool/call'], callId: 'c'.repeat(257) })).toBe('data.callId')
  })

  test('tool/call arguments stay a raw string, empty allowed', () => {
    expect(valid('tool/call', { ...samples['tool/call'], arguments: '' })).toBe(true)
    expect(payloadPath('tool/call', { ...samples['tool/call'], arguments: {} })).toBe('data.arguments')
  })

  test('tool/result error needs a non-empty name and code and nothing else', () => {
    const base = toolResultData('c1')
    const failed = { ...base, message: { ...base.message, content: [{ ...base.message.content[0], isError: true }] } }
    expect(valid('tool/result', { ...failed, error: { name: 'X', code: 'TOOL_FAILED' } })).toBe(true)
    expect(payloadPath('tool/result', { ...failed, error: { name: '', code: 'X' } })).toBe('data.error.name')
    expect(payloadPath('tool/result', { ...failed, error: { name: 'X', code: '' } })).toBe('data.error.code')
    expect(payloadPath('tool/result', { ...failed, error: { name: 'X' } })).toBe('data.error.code')
    expect(payloadPath('tool/result', { ...failed, error: { name: 'X', code: 'Y', stack: 's' } })).toBe(
      'data.error.stack',
    )
  })

  test('message ids inside payloads have 1 to 1024 characters', () => {
    const long = 'x'.repeat(1024)
    expect(valid('user/message', { ...samples['user/message'], id: long })).toBe(true)
    expect(payloadPath('user/message', { ...samples['user/message'], id: `${long}x` })).toBe('data.id')
    expect(payloadPath('user/message', { ...samples['user/message'], id: '' })).toBe('data.id')
    const inserted = [{ ...userMessage('u'), id: '' }]
    expect(payloadPath('agent/inbox/spliced', { ...samples['agent/inbox/spliced'], inserted })).toBe(
      'data.inserted[0].id',
    )
    const assistant = samples['assistant/message']
    expect(payloadPath('assistant/message', { ...assistant, message: { ...assistant.message, id: `${long}x` } })).toBe(
      'data.message.id',
    )
  })
})

describe('tool/result', () => {
  const base = toolResultData('c1')
  const withBlock = (extra: Record<string, unknown>) => ({
    ...base,
    message: { ...base.message, content: [{ ...base.message.content[0], ...extra }] },
  })

  test('with error, the block must have isError: true', () => {
    const error = { name: 'InterruptedToolCallError', code: 'TOOL_NOT_STARTED' }
    expect(payloadPath('tool/result', { ...base, error })).toBe('data.message.content[0].isError')
    expect(payloadPath('tool/result', { ...withBlock({ isError: false }), error })).toBe(
      'data.message.content[0].isError',
    )
    expect(valid('tool/result', { ...withBlock({ isError: true }), error })).toBe(true)
  })

  test('without error, isError is free', () => {
    expect(valid('tool/result', withBlock({ isError: true }))).toBe(true)
    expect(valid('tool/result', withBlock({ isError: false }))).toBe(true)
    expect(valid('tool/result', base)).toBe(true)
  })

  test('meta takes any JSON with any keys', () => {
    for (const meta of [{ synthetic: true }, { any: { nested: [1] } }, 1, 'x', null, []]) {
      expect(valid('tool/result', { ...base, meta })).toBe(true)
    }
  })

  test('unknown keys inside the message are rejected', () => {
    expect(payloadPath('tool/result', { ...base, message: { ...base.message, extra: 1 } })).toBe('data.message.extra')
    expect(payloadPath('tool/result', withBlock({ note: 'x' }))).toBe('data.message.content[0].note')
  })
})

describe('other payload rules', () => {
  test('turn/end takes every TurnEndReason, a cause and a synthetic marker', () => {
    const failure = { code: 'SERVER', message: 'down', retryable: true, phase: 'streaming' }
    expect(valid('turn/end', { turn: 2, reason: { kind: 'aborted', reason: { kind: 'user' } }, cause: failure })).toBe(
      true,
    )
    expect(valid('turn/end', { turn: 2, reason: { kind: 'interrupted' }, meta: { synthetic: true } })).toBe(true)
    expect(valid('turn/end', { turn: 2, reason: { kind: 'error', error: failure } })).toBe(true)
    expect(payloadPath('turn/end', { turn: 1, reason: { kind: 'done' } })).toBe('data.reason.kind')
    expect(payloadPath('turn/end', { turn: 1, reason: { kind: 'completed' }, cause: { code: '' } })).toBe(
      'data.cause.code',
    )
  })

  test.each(['turn/end', 'step/end'] as const)('%s meta is exactly { synthetic: true }', (type) => {
    expect(payloadPath(type, { ...samples[type], meta: { synthetic: false } })).toBe('data.meta.synthetic')
    expect(payloadPath(type, { ...samples[type], meta: {} })).toBe('data.meta.synthetic')
    expect(payloadPath(type, { ...samples[type], meta: { synthetic: true, by: 'x' } })).toBe('data.meta.by')
    expect(payloadPath(type, { ...samples[type], meta: true })).toBe('data.meta')
  })

  test('assistant/chunk validates the chunk', () => {
    expect(
      payloadPath('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: -1, text: 'x' } }),
    ).toBe('data.chunk.index')
    expect(payloadPath('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: 'error' } })).toBe(
      'data.chunk.failure',
    )
  })

  test('assistant/message takes usage and interrupted: true only', () => {
    const base = samples['assistant/message']
    expect(valid('assistant/message', { ...base, usage: { inputTokens: 3, outputTokens: 4 }, interrupted: true })).toBe(
      true,
    )
    expect(payloadPath('assistant/message', { ...base, interrupted: false })).toBe('data.interrupted')
    expect(payloadPath('assistant/message', { ...base, usage: { inputTokens: 3 } })).toBe('data.usage.outputTokens')
    expect(
      payloadPath('assistant/message', {
        ...base,
        message: { ...base.message, content: [{ type: 'image', mediaType: 'image/png', uri: 'x' }] },
      }),
    ).toBe('data.message.content[0].type')
  })

  test('request/header checks the reason and the header', () => {
    const base = samples['request/header']
    for (const reason of ['initial', 'resume', 'change'])
      expect(valid('request/header', { ...base, reason })).toBe(true)
    expect(payloadPath('request/header', { ...base, reason: 'restart' })).toBe('data.reason')
    expect(payloadPath('request/header', { ...base, header: { config: { provider: '', model: 'm' } } })).toBe(
      'data.header.config.provider',
    )
  })

  test('agent/inbox/spliced checks its target, outcome and inserted messages', () => {
    const base = samples['agent/inbox/spliced']
    expect(valid('agent/inbox/spliced', { ...base, removedCount: 2, outcome: 'canceled' })).toBe(true)
    expect(payloadPath('agent/inbox/spliced', { ...base, target: 'now' })).toBe('data.target')
    expect(payloadPath('agent/inbox/spliced', { ...base, outcome: 'done' })).toBe('data.outcome')
    expect(
      payloadPath('agent/inbox/spliced', { ...base, inserted: [{ ...userMessage('u'), role: 'assistant' }] }),
    ).toBe('data.inserted[0].role')
  })

  test('session/end-seed data is exactly {}', () => {
    expect(valid('session/end-seed', {})).toBe(true)
    expect(payloadPath('session/end-seed', { seq: 1 })).toBe('data.seq')
  })
})
