import { describe, expect, expectTypeOf, test } from 'vitest'
import { z } from 'zod'
import {
  type AssistantContentBlock,
  assistantContentBlockSchema,
  type ContentBlock,
  contentBlockSchema,
  type ImageBlock,
  type imageBlockSchema,
  type ReasoningBlock,
  type reasoningBlockSchema,
  type TextBlock,
  textBlockSchema,
  type ToolCallBlock,
  type ToolResultBlock,
  type toolCallBlockSchema,
  type toolResultBlockSchema,
  type UserContentBlock,
  userContentBlockSchema,
} from '../../src/session/content-block.js'
import { type LlmFailure, llmFailureSchema } from '../../src/session/llm-failure.js'
import {
  type AssistantMessage,
  assistantMessageSchema,
  type Message,
  type ModelMessageSource,
  messageSchema,
  type modelMessageSourceSchema,
  type ToolMessageSource,
  type ToolResultMessage,
  type toolMessageSourceSchema,
  toolResultMessageSchema,
  type UserMessage,
  type UserMessageSource,
  userMessageSchema,
  type userMessageSourceSchema,
} from '../../src/session/message.js'
import { accessPath, payloadIssues } from '../../src/session/payload-issues.js'
import { typedSchema } from '../../src/session/schema-primitives.js'
import {
  type FinishReason,
  type finishReasonSchema,
  type StreamChunk,
  streamChunkSchema,
  type TokenUsage,
  type tokenUsageSchema,
} from '../../src/session/stream-chunk.js'
import {
  type CancelCause,
  type cancelCauseSchema,
  type TurnEndReason,
  turnEndReasonSchema,
} from '../../src/session/turn-end-reason.js'

/** The JS access path of the first issue, or `undefined` when the value is valid. */
function firstPath(schema: z.ZodType, value: unknown): string | undefined {
  const issues = payloadIssues(schema, value)
  return issues === undefined ? undefined : accessPath('value', issues[0]!.path)
}

const text = (value: string): TextBlock => ({ type: 'text', text: value })
const image: ImageBlock = { type: 'image', mediaType: 'image/png', uri: 'data:image/png;base64,AAAA' }
const call = (id: string): ToolCallBlock => ({ type: 'tool-call', id, name: 'echo', arguments: '{}' })
const userMessage: UserMessage = { id: 'u-1', role: 'user', content: [text('hi'), image], source: { kind: 'user' } }
const assistantMessage: AssistantMessage = {
  id: 'a-1',
  role: 'assistant',
  content: [{ type: 'reasoning', text: 'think' }, text('hello'), call('c1')],
  source: { kind: 'model', provider: 'mock', model: 'mock', replayState: { opaque: [1, 'two', null] } },
}
const toolResult = (callId: string, toolCallId = callId): ToolResultMessage => ({
  id: `r-${callId}`,
  role: 'user',
  content: [{ type: 'tool-result', toolCallId, content: [text('ok')] }],
  source: { kind: 'tool', callId },
})

describe('types line up with schemas', () => {
  test('every exported schema infers exactly its hand-written interface', () => {
    expectTypeOf<z.infer<typeof textBlockSchema>>().toEqualTypeOf<TextBlock>()
    expectTypeOf<z.infer<typeof reasoningBlockSchema>>().toEqualTypeOf<ReasoningBlock>()
    expectTypeOf<z.infer<typeof imageBlockSchema>>().toEqualTypeOf<ImageBlock>()
    expectTypeOf<z.infer<typeof toolCallBlockSchema>>().toEqualTypeOf<ToolCallBlock>()
    expectTypeOf<z.infer<typeof toolResultBlockSchema>>().toEqualTypeOf<ToolResultBlock>()
    expectTypeOf<z.infer<typeof contentBlockSchema>>().toEqualTypeOf<ContentBlock>()
    expectTypeOf<z.infer<typeof userContentBlockSchema>>().toEqualTypeOf<UserContentBlock>()
    expectTypeOf<z.infer<typeof assistantContentBlockSchema>>().toEqualTypeOf<AssistantContentBlock>()
    expectTypeOf<z.infer<typeof userMessageSourceSchema>>().toEqualTypeOf<UserMessageSource>()
    expectTypeOf<z.infer<typeof modelMessageSourceSchema>>().toEqualTypeOf<ModelMessageSource>()
    expectTypeOf<z.infer<typeof toolMessageSourceSchema>>().toEqualTypeOf<ToolMessageSource>()
    expectTypeOf<z.infer<typeof userMessageSchema>>().toEqualTypeOf<UserMessage>()
    expectTypeOf<z.infer<typeof assistantMessageSchema>>().toEqualTypeOf<AssistantMessage>()
    expectTypeOf<z.infer<typeof toolResultMessageSchema>>().toEqualTypeOf<ToolResultMessage>()
    expectTypeOf<z.infer<typeof messageSchema>>().toEqualTypeOf<Message>()
    expectTypeOf<z.infer<typeof cancelCauseSchema>>().toEqualTypeOf<CancelCause>()
    expectTypeOf<z.infer<typeof turnEndReasonSchema>>().toEqualTypeOf<TurnEndReason>()
    expectTypeOf<z.infer<typeof llmFailureSchema>>().toEqualTypeOf<LlmFailure>()
    expectTypeOf<z.infer<typeof tokenUsageSchema>>().toEqualTypeOf<TokenUsage>()
    expectTypeOf<z.infer<typeof finishReasonSchema>>().toEqualTypeOf<FinishReason>()
    expectTypeOf<z.infer<typeof streamChunkSchema>>().toEqualTypeOf<StreamChunk>()
    // Typed assignments: a parsed value can be used as the hand-written type directly.
    const parsed: Message = messageSchema.parse(userMessage)
    const parsedReason: TurnEndReason = turnEndReasonSchema.parse({ kind: 'completed' })
    expect([parsed, parsedReason]).toEqual([userMessage, { kind: 'completed' }])
  })

  test('typedSchema refuses a schema that does not describe exactly the interface', () => {
    interface Sample {
      readonly name: string
      readonly note?: string
    }
    const exact = typedSchema<Sample>()(z.strictObject({ name: z.string(), note: z.string().exactOptional() }))
    // @ts-expect-error the optional `note` is missing from the schema
    typedSchema<Sample>()(z.strictObject({ name: z.string() }))
    // @ts-expect-error `note` is required by the schema but optional in the interface
    typedSchema<Sample>()(z.strictObject({ name: z.string(), note: z.string() }))
    // @ts-expect-error `name` has the wrong type
    typedSchema<Sample>()(z.strictObject({ name: z.number(), note: z.string().exactOptional() }))
    // @ts-expect-error an extra key the interface lacks
    typedSchema<Sample>()(z.strictObject({ name: z.string(), note: z.string().exactOptional(), extra: z.boolean() }))
    expect(exact.safeParse({ name: 'x' }).success).toBe(true)
  })
})

describe('content blocks', () => {
  test.each<[string, ContentBlock]>([
    ['text', text('')],
    ['reasoning', { type: 'reasoning', text: 'why' }],
    ['image', image],
    ['tool-call', call('c1')],
    ['tool-call with empty arguments', { type: 'tool-call', id: 'c1', name: 'echo', arguments: '' }],
    ['tool-result', { type: 'tool-result', toolCallId: 'c1', content: [text('ok'), image], isError: false }],
    ['empty tool-result', { type: 'tool-result', toolCallId: 'c1', content: [] }],
  ])('accepts a %s block', (_name, block) => {
    expect(payloadIssues(contentBlockSchema, block)).toBeUndefined()
  })

  test.each<[string, unknown, string]>([
    ['an unknown type', { type: 'video', uri: 'x' }, 'value.type'],
    ['an unknown key on text', { type: 'text', text: 'x', extra: 1 }, 'value.extra'],
    ['a non-string text', { type: 'text', text: 1 }, 'value.text'],
    ['a non-image media type', { type: 'image', mediaType: 'text/plain', uri: 'x' }, 'value.mediaType'],
    ['an empty uri', { type: 'image', mediaType: 'image/png', uri: '' }, 'value.uri'],
    ['a non-string uri', { type: 'image', mediaType: 'image/png', uri: 1 }, 'value.uri'],
    ['an empty tool-call id', { ...call(''), id: '' }, 'value.id'],
    ['a 257-character tool-call id', call('c'.repeat(257)), 'value.id'],
    ['an empty tool name', { ...call('c1'), name: '' }, 'value.name'],
    ['parsed arguments', { ...call('c1'), arguments: {} }, 'value.arguments'],
    ['an empty toolCallId', { type: 'tool-result', toolCallId: '', content: [] }, 'value.toolCallId'],
    [
      'a 257-character toolCallId',
      { type: 'tool-result', toolCallId: 'c'.repeat(257), content: [] },
      'value.toolCallId',
    ],
    [
      'a reasoning block inside a tool result',
      { type: 'tool-result', toolCallId: 'c', content: [{ type: 'reasoning', text: 'x' }] },
      'value.content[0].type',
    ],
    ['a non-boolean isError', { type: 'tool-result', toolCallId: 'c', content: [], isError: 'yes' }, 'value.isError'],
  ])('rejects %s', (_name, block, path) => {
    expect(firstPath(contentBlockSchema, block)).toBe(path)
  })

  test('call ids of exactly 256 characters are accepted', () => {
    expect(payloadIssues(contentBlockSchema, call('c'.repeat(256)))).toBeUndefined()
    expect(
      payloadIssues(contentBlockSchema, { type: 'tool-result', toolCallId: 'c'.repeat(256), content: [] }),
    ).toBeUndefined()
  })

  test('user content takes text and images only; assistant content text, reasoning and tool calls', () => {
    expect(payloadIssues(userContentBlockSchema, image)).toBeUndefined()
    expect(firstPath(userContentBlockSchema, call('c1'))).toBe('value.type')
    expect(firstPath(userContentBlockSchema, { type: 'reasoning', text: 'x' })).toBe('value.type')
    expect(payloadIssues(assistantContentBlockSchema, call('c1'))).toBeUndefined()
    expect(firstPath(assistantContentBlockSchema, image)).toBe('value.type')
    expect(firstPath(assistantContentBlockSchema, { type: 'tool-result', toolCallId: 'c', content: [] })).toBe(
      'value.type',
    )
  })
})

describe('messages', () => {
  test.each<[string, Message]>([
    ['a user message', userMessage],
    [
      'a plugin message with a form',
      { id: 'p', role: 'user', content: [], source: { kind: 'plugin', plugin: 'yoke/compaction', form: 'summary' } },
    ],
    [
      'a plugin message without a form',
      { id: 'p', role: 'user', content: [text('x')], source: { kind: 'plugin', plugin: 'x' } },
    ],
    ['an assistant message', assistantMessage],
    [
      'an empty assistant message',
      { id: 'a', role: 'assistant', content: [], source: { kind: 'model', provider: 'p', model: 'm' } },
    ],
    ['a tool result', toolResult('c1')],
  ])('messageSchema accepts %s', (_name, message) => {
    expect(payloadIssues(messageSchema, message)).toBeUndefined()
  })

  test('a message id may have 1 to 1024 characters', () => {
    for (const schema of [userMessageSchema, assistantMessageSchema, toolResultMessageSchema]) {
      const base =
        schema === userMessageSchema
          ? userMessage
          : schema === assistantMessageSchema
            ? assistantMessage
            : toolResult('c1')
      expect(payloadIssues(schema, { ...base, id: 'x' })).toBeUndefined()
      expect(payloadIssues(schema, { ...base, id: 'x'.repeat(1024) })).toBeUndefined()
      expect(firstPath(schema, { ...base, id: 'x'.repeat(1025) })).toBe('value.id')
      expect(firstPath(schema, { ...base, id: '' })).toBe('value.id')
      expect(firstPath(schema, { ...base, id: 7 })).toBe('value.id')
    }
  })

  test.each<[string, unknown, string]>([
    ['null', null, 'value'],
    ['a missing id', { role: 'user', content: [], source: { kind: 'user' } }, 'value.id'],
    ['the assistant role', { ...userMessage, role: 'assistant' }, 'value.role'],
    ['a null source', { ...userMessage, source: null }, 'value.source'],
    ['string content', { ...userMessage, content: 'x' }, 'value.content'],
    ['a tool-call block', { ...userMessage, content: [call('c1')] }, 'value.content[0].type'],
    ['a model source', { ...userMessage, source: { kind: 'model', provider: 'p', model: 'm' } }, 'value.source.kind'],
    ['a plugin source without plugin', { ...userMessage, source: { kind: 'plugin' } }, 'value.source.plugin'],
    [
      'a plugin source with an empty form',
      { ...userMessage, source: { kind: 'plugin', plugin: 'x', form: '' } },
      'value.source.form',
    ],
    ['an unknown source key', { ...userMessage, source: { kind: 'user', who: 'me' } }, 'value.source.who'],
    ['an unknown message key', { ...userMessage, extra: true }, 'value.extra'],
  ])('a user message rejects %s', (_name, message, path) => {
    expect(firstPath(userMessageSchema, message)).toBe(path)
  })

  test.each<[string, unknown, string]>([
    ['a user source', { ...assistantMessage, source: { kind: 'user' } }, 'value.source.kind'],
    [
      'an empty provider',
      { ...assistantMessage, source: { kind: 'model', provider: '', model: 'm' } },
      'value.source.provider',
    ],
    [
      'an empty model',
      { ...assistantMessage, source: { kind: 'model', provider: 'p', model: '' } },
      'value.source.model',
    ],
    ['an image block', { ...assistantMessage, content: [image] }, 'value.content[0].type'],
    [
      'an unknown source key',
      { ...assistantMessage, source: { kind: 'model', provider: 'p', model: 'm', extra: 1 } },
      'value.source.extra',
    ],
    ['the user role', { ...assistantMessage, role: 'user' }, 'value.role'],
  ])('an assistant message rejects %s', (_name, message, path) => {
    expect(firstPath(assistantMessageSchema, message)).toBe(path)
  })

  test('replayState takes any JSON, unknown keys included', () => {
    for (const replayState of [null, 0, 'x', [], { deep: { any: ['thing', { a: 1 }] } }]) {
      const message = { ...assistantMessage, source: { kind: 'model', provider: 'p', model: 'm', replayState } }
      expect(payloadIssues(assistantMessageSchema, message)).toBeUndefined()
    }
  })

  test.each<[string, unknown, string]>([
    ['a user source', { ...toolResult('c1'), source: { kind: 'user' } }, 'value.source'],
    ['a text block', { ...toolResult('c1'), content: [text('x')] }, 'value.content'],
    ['no block', { ...toolResult('c1'), content: [] }, 'value.content'],
    [
      'two blocks',
      { ...toolResult('c1'), content: [toolResult('c1').content[0], toolResult('c1').content[0]] },
      'value.content',
    ],
    ['a mismatched toolCallId', toolResult('a', 'b'), 'value.content[0].toolCallId'],
    ['an empty callId', toolResult('', ''), 'value.content[0].toolCallId'],
    [
      'a 257-character callId',
      { ...toolResult('c'.repeat(256)), source: { kind: 'tool', callId: 'c'.repeat(257) } },
      'value.source.callId',
    ],
    ['the assistant role', { ...toolResult('c1'), role: 'assistant' }, 'value.role'],
  ])('a tool result rejects %s', (_name, message, path) => {
    expect(firstPath(toolResultMessageSchema, message)?.startsWith(path)).toBe(true)
  })

  test('a mismatched toolCallId is reported at content[0].toolCallId', () => {
    expect(payloadIssues(toolResultMessageSchema, toolResult('a', 'b'))).toEqual([
      { path: ['content', 0, 'toolCallId'], message: 'must equal source.callId ("a")' },
    ])
  })

  test('messageSchema rejects what no member accepts', () => {
    expect(payloadIssues(messageSchema, { ...userMessage, role: 'system' })).toHaveLength(1)
    expect(payloadIssues(messageSchema, toolResult('a', 'b'))).toBeDefined()
    expect(payloadIssues(messageSchema, { ...assistantMessage, content: [image] })).toBeDefined()
  })
})

describe('TurnEndReason', () => {
  test.each<TurnEndReason>([
    { kind: 'completed' },
    { kind: 'aborted', reason: { kind: 'user' } },
    { kind: 'aborted', reason: { kind: 'parent' } },
    { kind: 'aborted', reason: { kind: 'hook', reason: 'budget' } },
    { kind: 'aborted', reason: { kind: 'disposed' } },
    { kind: 'aborted', reason: { kind: 'timeout' } },
    { kind: 'blocked' },
    { kind: 'error', error: { message: 'boom', code: 'UNKNOWN' } },
    { kind: 'max-tokens' },
    { kind: 'interrupted' },
  ])('accepts %j', (reason) => {
    expect(payloadIssues(turnEndReasonSchema, reason)).toBeUndefined()
  })

  test.each<[unknown, string]>([
    [{ kind: 'finished' }, 'value.kind'],
    [{}, 'value.kind'],
    [{ kind: 'completed', extra: 1 }, 'value.extra'],
    [{ kind: 'aborted' }, 'value.reason'],
    [{ kind: 'aborted', reason: { kind: 'deadline' } }, 'value.reason.kind'],
    [{ kind: 'aborted', reason: { kind: 'hook' } }, 'value.reason.reason'],
    [{ kind: 'aborted', reason: { kind: 'user', why: 'x' } }, 'value.reason.why'],
    [{ kind: 'error' }, 'value.error'],
    [{ kind: 'error', error: { message: 'x' } }, 'value.error.code'],
    [{ kind: 'error', error: { message: 'x', code: '' } }, 'value.error.code'],
  ])('rejects %j at %s', (reason, path) => {
    expect(firstPath(turnEndReasonSchema, reason)).toBe(path)
  })
})

describe('LlmFailure', () => {
  test('accepts a minimal and a complete failure', () => {
    expect(payloadIssues(llmFailureSchema, { code: 'X', message: '' })).toBeUndefined()
    const full: LlmFailure = {
      code: 'RATE_LIMIT',
      message: 'slow down',
      retryable: true,
      status: 429,
      retryAfterMs: 1000,
      requestId: 'req_1',
      phase: 'response',
      detail: { providerCode: 'rate_limit_exceeded', body: null },
    }
    expect(payloadIssues(llmFailureSchema, full)).toBeUndefined()
    for (const phase of ['pre-request', 'connect', 'response', 'streaming']) {
      expect(payloadIssues(llmFailureSchema, { code: 'X', message: 'm', phase })).toBeUndefined()
    }
    for (const status of [100, 599])
      expect(payloadIssues(llmFailureSchema, { code: 'X', message: 'm', status })).toBeUndefined()
  })

  test.each<[string, unknown, string]>([
    ['a missing code', { message: 'm' }, 'value.code'],
    ['an empty code', { code: '', message: 'm' }, 'value.code'],
    ['a missing message', { code: 'X' }, 'value.message'],
    ['a string retryable', { code: 'X', message: 'm', retryable: 'yes' }, 'value.retryable'],
    ['status 99', { code: 'X', message: 'm', status: 99 }, 'value.status'],
    ['status 600', { code: 'X', message: 'm', status: 600 }, 'value.status'],
    ['status 404.5', { code: 'X', message: 'm', status: 404.5 }, 'value.status'],
    ['retryAfterMs 0', { code: 'X', message: 'm', retryAfterMs: 0 }, 'value.retryAfterMs'],
    ['retryAfterMs 1.5', { code: 'X', message: 'm', retryAfterMs: 1.5 }, 'value.retryAfterMs'],
    ['retryAfterMs 2**53', { code: 'X', message: 'm', retryAfterMs: 2 ** 53 }, 'value.retryAfterMs'],
    ['an unknown phase', { code: 'X', message: 'm', phase: 'later' }, 'value.phase'],
    ['a numeric requestId', { code: 'X', message: 'm', requestId: 1 }, 'value.requestId'],
    ['an unknown key', { code: 'X', message: 'm', cause: 'x' }, 'value.cause'],
  ])('rejects %s', (_name, failure, path) => {
    expect(firstPath(llmFailureSchema, failure)).toBe(path)
  })
})

describe('StreamChunk and TokenUsage', () => {
  const failure = { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'streaming' }

  test.each<StreamChunk>([
    { type: 'block-start', index: 0, blockType: 'text' },
    { type: 'block-start', index: 2, blockType: 'tool-call' },
    { type: 'text-delta', index: 0, text: 'let' },
    { type: 'reasoning-delta', index: 1, text: 'hmm' },
    { type: 'tool-call-delta', index: 2, id: 'c1', name: 'echo', argumentsDelta: '{"a"' },
    { type: 'tool-call-delta', index: 2, id: 'c1', argumentsDelta: ':1}' },
    { type: 'block-end', index: 0, block: { type: 'text', text: 'let me check' } },
    { type: 'block-end', index: 2, block: call('c1') },
    { type: 'usage', usage: { inputTokens: 0, outputTokens: 0 } },
    {
      type: 'usage',
      usage: {
        inputTokens: 1,
        outputTokens: 2,
        cacheReadTokens: 3,
        cacheWriteTokens: 4,
        reasoningTokens: 1,
        raw: { prompt_tokens: 4 },
      },
    },
    { type: 'finish', reason: 'stop' },
    { type: 'finish', reason: 'tool-calls', providerFinishReason: 'tool_calls', replayState: { id: 'x' } },
    { type: 'finish', reason: 'max-tokens' },
    { type: 'finish', reason: 'error', failure: { code: 'SERVER', message: 'down' } },
    { type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'request aborted' } },
  ])('accepts %j', (chunk) => {
    expect(payloadIssues(streamChunkSchema, chunk)).toBeUndefined()
  })

  test.each<[string, unknown, string]>([
    ['an unknown type', { type: 'text', index: 0, text: 'x' }, 'value.type'],
    ['a negative index', { type: 'text-delta', index: -1, text: 'x' }, 'value.index'],
    ['a fractional index', { type: 'text-delta', index: 0.5, text: 'x' }, 'value.index'],
    ['an unsafe index', { type: 'block-start', index: 2 ** 53, blockType: 'text' }, 'value.index'],
    ['an unknown block type', { type: 'block-start', index: 0, blockType: 'image' }, 'value.blockType'],
    ['a tool-call delta without id', { type: 'tool-call-delta', index: 0, argumentsDelta: '' }, 'value.id'],
    [
      'a tool-call delta with an empty name',
      { type: 'tool-call-delta', index: 0, id: 'c', name: '', argumentsDelta: '' },
      'value.name',
    ],
    [
      'a 257-character delta id',
      { type: 'tool-call-delta', index: 0, id: 'c'.repeat(257), argumentsDelta: '' },
      'value.id',
    ],
    ['an image block-end', { type: 'block-end', index: 0, block: image }, 'value.block.type'],
    [
      'a negative token count',
      { type: 'usage', usage: { inputTokens: -1, outputTokens: 0 } },
      'value.usage.inputTokens',
    ],
    ['a missing outputTokens', { type: 'usage', usage: { inputTokens: 1 } }, 'value.usage.outputTokens'],
    [
      'a fractional cache count',
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0.5 } },
      'value.usage.cacheReadTokens',
    ],
    [
      'an unknown usage key',
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
      'value.usage.totalTokens',
    ],
    ['an unknown finish reason', { type: 'finish', reason: 'length' }, 'value.reason'],
    ['an error finish without failure', { type: 'finish', reason: 'error' }, 'value.failure'],
    ['an aborted finish without failure', { type: 'finish', reason: 'aborted' }, 'value.failure'],
    ['a stop finish with a failure', { type: 'finish', reason: 'stop', failure }, 'value.failure'],
    ['an invalid failure', { type: 'finish', reason: 'error', failure: { code: '' } }, 'value.failure.code'],
    ['an unknown chunk key', { type: 'text-delta', index: 0, text: 'x', extra: 1 }, 'value.extra'],
  ])('rejects %s', (_name, chunk, path) => {
    expect(firstPath(streamChunkSchema, chunk)).toBe(path)
  })
})

describe('payloadIssues and accessPath', () => {
  test('payloadIssues returns undefined for valid data and discards the parse result', () => {
    const data = { type: 'text', text: 'x' }
    expect(payloadIssues(textBlockSchema, data)).toBeUndefined()
  })

  test('every unknown key is its own issue, at the key', () => {
    expect(payloadIssues(textBlockSchema, { type: 'text', text: 'x', b: 1, a: 2 })).toEqual([
      { path: ['b'], message: 'unknown key "b"' },
      { path: ['a'], message: 'unknown key "a"' },
    ])
  })

  test.each<[readonly (string | number)[], string]>([
    [[], 'data'],
    [['message', 'content', 0, 'toolCallId'], 'data.message.content[0].toolCallId'],
    [['a-b'], 'data["a-b"]'],
    [['$ok', '_fine', 'x1'], 'data.$ok._fine.x1'],
    [['1a'], 'data["1a"]'],
    [['0'], 'data["0"]'],
    [[''], 'data[""]'],
    [['say "hi"'], 'data["say \\"hi\\""]'],
    [[0, 1], 'data[0][1]'],
  ])('accessPath(data, %j) is %s', (path, expected) => {
    expect(accessPath('data', path)).toBe(expected)
  })
})
