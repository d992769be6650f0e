import { describe, expect, test } from 'vitest'
import { createAssembler, type ModelRequest, type StreamChunk } from 'yoke'
import type { AssemblerOutcome } from '../../src/model/index.js'
import { scriptedModel } from 'yoke/testing'

const request = (signal: AbortSignal = new AbortController().signal): ModelRequest => ({
  provider: 'mock',
  model: 'mock',
  messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
  metadata: { purpose: 'conversation' },
  signal,
})

const assemble = (chunks: readonly StreamChunk[]) => {
  const assembler = createAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return assembler
}

const outcomeOf = (chunks: readonly StreamChunk[]): AssemblerOutcome => assemble(chunks).outcome()

const stop: StreamChunk = { type: 'finish', reason: 'stop' }

const failureCode = (outcome: AssemblerOutcome): string | undefined =>
  outcome.kind === 'failure' ? outcome.failure.code : undefined

describe('createAssembler: scripted streams (acceptance 5, 6)', () => {
  test('5. text in three deltas with usage assembles to one text block, finish stop', async () => {
    const model = scriptedModel([{ text: 'abc', chunkSize: 1, usage: { inputTokens: 10, outputTokens: 11 } }])
    const chunks: StreamChunk[] = []
    const assembler = createAssembler()
    const signal = new AbortController().signal
    for await (const chunk of model.stream(request(signal), { signal })) {
      chunks.push(chunk)
      assembler.push(chunk)
    }
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      'block-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'block-end',
      'usage',
      'finish',
    ])
    expect(chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.text] : [])).join('')).toBe('abc')
    expect(assembler.outcome()).toStrictEqual({
      kind: 'message',
      content: [{ type: 'text', text: 'abc' }],
      finishReason: 'stop',
      usage: { inputTokens: 10, outputTokens: 11 },
    })
    expect(assembler.usage).toEqual({ inputTokens: 10, outputTokens: 11 })
  })

  test('6. max-tokens drops every tool call; a tool-only max-tokens reply is an empty message', async () => {
    const collectOutcome = async (model: ReturnType<typeof scriptedModel>): Promise<AssemblerOutcome> => {
      const assembler = createAssembler()
      const signal = new AbortController().signal
      for await (const chunk of model.stream(request(signal), { signal })) assembler.push(chunk)
      return assembler.outcome()
    }
    const model = scriptedModel([
      { text: 'partial', toolCalls: [{ name: 'echo' }], finish: 'max-tokens' },
      { toolCalls: [{ name: 'echo' }], finish: 'max-tokens' },
    ])
    expect(await collectOutcome(model)).toStrictEqual({
      kind: 'message',
      content: [{ type: 'text', text: 'partial' }],
      finishReason: 'max-tokens',
    })
    expect(await collectOutcome(model)).toStrictEqual({ kind: 'message', content: [], finishReason: 'max-tokens' })
  })
})

describe('createAssembler: outcome rules', () => {
  test('7. an empty stop is a retryable EMPTY_RESPONSE failure in the streaming phase', () => {
    const expected = {
      kind: 'failure',
      reason: 'error',
      failure: {
        code: 'EMPTY_RESPONSE',
        message: 'the model completed without content',
        retryable: true,
        phase: 'streaming',
      },
    }
    expect(outcomeOf([stop])).toStrictEqual(expected)
    expect(
      outcomeOf([
        { type: 'block-start', index: 0, blockType: 'text' },
        { type: 'block-end', index: 0, block: { type: 'text', text: '' } },
        stop,
      ]),
    ).toStrictEqual(expected)
    expect(
      outcomeOf([
        { type: 'reasoning-delta', index: 0, text: '' },
        { type: 'finish', reason: 'tool-calls' },
      ]),
    ).toStrictEqual(expected)
  })

  test('an empty stop keeps its usage on the failure', () => {
    const usage = { inputTokens: 5, outputTokens: 0 }
    expect(outcomeOf([{ type: 'usage', usage }, stop])).toMatchObject({
      kind: 'failure',
      failure: { code: 'EMPTY_RESPONSE' },
      usage,
    })
  })

  test('9. stop with a complete tool-call block becomes tool-calls; tool-calls with text only becomes stop', () => {
    const toolBlock = { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{}' } as const
    expect(outcomeOf([{ type: 'block-end', index: 0, block: toolBlock }, stop])).toStrictEqual({
      kind: 'message',
      content: [toolBlock],
      finishReason: 'tool-calls',
    })
    expect(
      outcomeOf([
        { type: 'text-delta', index: 0, text: 'hi' },
        { type: 'finish', reason: 'tool-calls' },
      ]),
    ).toStrictEqual({
      kind: 'message',
      content: [{ type: 'text', text: 'hi' }],
      finishReason: 'stop',
    })
  })

  test('9. a tool-call block without a name, or without an id, is MALFORMED_RESPONSE', () => {
    const nameless = outcomeOf([
      { type: 'tool-call-delta', index: 0, id: 'c1', argumentsDelta: '{}' },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(nameless).toStrictEqual({
      kind: 'failure',
      reason: 'error',
      failure: {
        code: 'MALFORMED_RESPONSE',
        message: 'tool-call block 0 has no name',
        retryable: false,
        phase: 'streaming',
        detail: { index: 0, missing: 'name' },
      },
    })
    const idless = outcomeOf([{ type: 'block-start', index: 0, blockType: 'tool-call' }, stop])
    expect(idless).toMatchObject({
      kind: 'failure',
      failure: { code: 'MALFORMED_RESPONSE', detail: { missing: 'id' } },
    })
  })

  test('a nameless tool call is dropped, not reported, under max-tokens', () => {
    const outcome = outcomeOf([
      { type: 'text-delta', index: 0, text: 'cut' },
      { type: 'tool-call-delta', index: 1, id: 'c1', argumentsDelta: '{"a' },
      { type: 'finish', reason: 'max-tokens' },
    ])
    expect(outcome).toStrictEqual({
      kind: 'message',
      content: [{ type: 'text', text: 'cut' }],
      finishReason: 'max-tokens',
    })
  })

  test('9. a delta for an index after its block-end changes nothing', () => {
    const outcome = outcomeOf([
      { type: 'text-delta', index: 0, text: 'a' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'final' } },
      { type: 'text-delta', index: 0, text: 'more' },
      { type: 'tool-call-delta', index: 0, id: 'c9', name: 'x', argumentsDelta: '{}' },
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'again' } },
      stop,
    ])
    expect(outcome).toStrictEqual({ kind: 'message', content: [{ type: 'text', text: 'final' }], finishReason: 'stop' })
  })

  test('block-end replaces the accumulated block, also before any delta', () => {
    const outcome = outcomeOf([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'draft' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'thought' } },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'answer' } },
      stop,
    ])
    expect(outcome).toStrictEqual({
      kind: 'message',
      content: [
        { type: 'reasoning', text: 'thought' },
        { type: 'text', text: 'answer' },
      ],
      finishReason: 'stop',
    })
  })

  test('blocks are ordered by first appearance, interleaved deltas each join into their own block', () => {
    const outcome = outcomeOf([
      { type: 'text-delta', index: 3, text: 't1' },
      { type: 'reasoning-delta', index: 1, text: 'r1' },
      { type: 'tool-call-delta', index: 0, id: 'call-a', name: 'first', argumentsDelta: '{"x"' },
      { type: 'text-delta', index: 3, text: 't2' },
      { type: 'tool-call-delta', index: 0, id: 'call-other', name: 'second', argumentsDelta: ':1}' },
      { type: 'reasoning-delta', index: 1, text: 'r2' },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(outcome).toStrictEqual({
      kind: 'message',
      content: [
        { type: 'text', text: 't1t2' },
        { type: 'reasoning', text: 'r1r2' },
        { type: 'tool-call', id: 'call-a', name: 'first', arguments: '{"x":1}' },
      ],
      finishReason: 'tool-calls',
    })
  })

  test('a tool call takes the first name seen, even when the first delta had none', () => {
    const outcome = outcomeOf([
      { type: 'tool-call-delta', index: 0, id: 'c1', argumentsDelta: '{' },
      { type: 'tool-call-delta', index: 0, id: 'c1', name: 'late', argumentsDelta: '}' },
      { type: 'tool-call-delta', index: 0, id: 'c1', name: 'later', argumentsDelta: '' },
      stop,
    ])
    expect(outcome).toMatchObject({
      kind: 'message',
      content: [{ type: 'tool-call', id: 'c1', name: 'late', arguments: '{}' }],
    })
  })

  test('whitespace-only text is content; only empty text is dropped', () => {
    expect(outcomeOf([{ type: 'text-delta', index: 0, text: '  ' }, stop])).toStrictEqual({
      kind: 'message',
      content: [{ type: 'text', text: '  ' }],
      finishReason: 'stop',
    })
  })

  test.each<[string, readonly StreamChunk[], Record<string, unknown>]>([
    [
      'a text delta into a tool-call block',
      [{ type: 'block-start', index: 0, blockType: 'tool-call' }, { type: 'text-delta', index: 0, text: 'x' }, stop],
      { index: 0, blockType: 'tool-call', chunk: 'text-delta' },
    ],
    [
      'a reasoning delta into a text block',
      [{ type: 'text-delta', index: 0, text: 'a' }, { type: 'reasoning-delta', index: 0, text: 'b' }, stop],
      { index: 0, blockType: 'text', chunk: 'reasoning-delta' },
    ],
    [
      'a tool-call delta into a reasoning block',
      [
        { type: 'reasoning-delta', index: 2, text: 'a' },
        { type: 'tool-call-delta', index: 2, id: 'c', name: 'n', argumentsDelta: '{}' },
        stop,
      ],
      { index: 2, blockType: 'reasoning', chunk: 'tool-call-delta' },
    ],
    [
      'a second block-start of another kind',
      [
        { type: 'block-start', index: 0, blockType: 'text' },
        { type: 'block-start', index: 0, blockType: 'reasoning' },
        stop,
      ],
      { index: 0, blockType: 'text', chunk: 'block-start' },
    ],
    [
      'a block-end of another kind',
      [
        { type: 'text-delta', index: 0, text: 'a' },
        { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'a' } },
        stop,
      ],
      { index: 0, blockType: 'text', chunk: 'block-end' },
    ],
  ])('kind mismatch: %s → MALFORMED_RESPONSE', (_name, chunks, detail) => {
    const outcome = outcomeOf(chunks)
    expect(outcome).toMatchObject({
      kind: 'failure',
      reason: 'error',
      failure: { code: 'MALFORMED_RESPONSE', retryable: false, phase: 'streaming', detail },
    })
  })

  test('a kind mismatch leaves the block as it was for interruptedContent', () => {
    const assembler = assemble([
      { type: 'text-delta', index: 0, text: 'kept' },
      { type: 'reasoning-delta', index: 0, text: 'lost' },
    ])
    expect(assembler.interruptedContent()).toStrictEqual([{ type: 'text', text: 'kept' }])
  })

  test('error and aborted finishes become failures carrying the finish failure and usage', () => {
    const failure = {
      code: 'RATE_LIMIT',
      message: 'slow down',
      retryable: true,
      status: 429,
      phase: 'response',
    } as const
    const usage = { inputTokens: 1, outputTokens: 2 }
    expect(
      outcomeOf([
        { type: 'text-delta', index: 0, text: 'x' },
        { type: 'usage', usage },
        { type: 'finish', reason: 'error', failure },
      ]),
    ).toStrictEqual({
      kind: 'failure',
      reason: 'error',
      failure,
      usage,
    })
    const aborted = { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'streaming' } as const
    expect(outcomeOf([{ type: 'finish', reason: 'aborted', failure: aborted }])).toStrictEqual({
      kind: 'failure',
      reason: 'aborted',
      failure: aborted,
    })
  })

  test('an error finish wins over an earlier protocol violation', () => {
    const failure = { code: 'SERVER', message: 'down', retryable: true, phase: 'streaming' } as const
    const outcome = outcomeOf([
      { type: 'text-delta', index: 0, text: 'a' },
      { type: 'reasoning-delta', index: 0, text: 'b' },
      { type: 'finish', reason: 'error', failure },
    ])
    expect(failureCode(outcome)).toBe('SERVER')
  })

  test('no finish pushed yet reports STREAM_CLOSED in the streaming phase', () => {
    expect(outcomeOf([{ type: 'text-delta', index: 0, text: 'partial' }])).toStrictEqual({
      kind: 'failure',
      reason: 'error',
      failure: {
        code: 'STREAM_CLOSED',
        message: 'the stream ended without a finish chunk',
        retryable: false,
        phase: 'streaming',
      },
    })
    expect(failureCode(outcomeOf([]))).toBe('STREAM_CLOSED')
    const violated = outcomeOf([
      { type: 'text-delta', index: 0, text: 'a' },
      { type: 'tool-call-delta', index: 0, id: 'c', argumentsDelta: '' },
    ])
    expect(failureCode(violated)).toBe('MALFORMED_RESPONSE')
  })

  test('replayState is carried to the message; providerFinishReason is not part of the outcome', () => {
    const replayState = { aiSdk: { blocks: { '0': { signature: 'abc' } } } }
    expect(
      outcomeOf([
        { type: 'text-delta', index: 0, text: 'hi' },
        { type: 'finish', reason: 'stop', providerFinishReason: 'end_turn', replayState },
      ]),
    ).toStrictEqual({
      kind: 'message',
      content: [{ type: 'text', text: 'hi' }],
      finishReason: 'stop',
      replayState,
    })
  })

  test('the last usage chunk wins, and chunks after the finish are ignored', () => {
    const assembler = assemble([
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
      { type: 'text-delta', index: 0, text: 'a' },
      { type: 'usage', usage: { inputTokens: 2, outputTokens: 3 } },
      stop,
      { type: 'usage', usage: { inputTokens: 9, outputTokens: 9 } },
      { type: 'text-delta', index: 0, text: 'after' },
      { type: 'finish', reason: 'error', failure: { code: 'SERVER', message: 'late' } },
    ])
    expect(assembler.usage).toEqual({ inputTokens: 2, outputTokens: 3 })
    expect(assembler.outcome()).toStrictEqual({
      kind: 'message',
      content: [{ type: 'text', text: 'a' }],
      finishReason: 'stop',
      usage: { inputTokens: 2, outputTokens: 3 },
    })
  })

  test('usage is undefined before any usage chunk', () => {
    const assembler = createAssembler()
    expect(assembler.usage).toBeUndefined()
    assembler.push({ type: 'text-delta', index: 0, text: 'a' })
    expect(assembler.usage).toBeUndefined()
  })

  test('outcomes are deeply frozen and do not alias the pushed block-end blocks', () => {
    const block = { type: 'text' as const, text: 'hi' }
    const assembler = assemble([{ type: 'block-end', index: 0, block }, stop])
    const outcome = assembler.outcome()
    expect(Object.isFrozen(outcome)).toBe(true)
    if (outcome.kind !== 'message') throw new Error('expected a message')
    expect(Object.isFrozen(outcome.content)).toBe(true)
    expect(Object.isFrozen(outcome.content[0])).toBe(true)
    expect(Object.isFrozen(block)).toBe(false)
    expect(assembler.outcome()).toBe(outcome)
    expect(Object.isFrozen(outcomeOf([stop]))).toBe(true)
  })

  test('outcome reflects chunks pushed after an earlier outcome call', () => {
    const assembler = createAssembler()
    assembler.push({ type: 'text-delta', index: 0, text: 'a' })
    expect(failureCode(assembler.outcome())).toBe('STREAM_CLOSED')
    assembler.push({ type: 'text-delta', index: 0, text: 'b' })
    expect(assembler.interruptedContent()).toStrictEqual([{ type: 'text', text: 'ab' }])
    assembler.push({ type: 'text-delta', index: 0, text: 'c' })
    assembler.push(stop)
    expect(assembler.outcome()).toStrictEqual({
      kind: 'message',
      content: [{ type: 'text', text: 'abc' }],
      finishReason: 'stop',
    })
  })

  test('many deltas join to the exact text', () => {
    const assembler = createAssembler()
    const pieces = Array.from({ length: 10_000 }, (_, index) => String(index % 10))
    for (const text of pieces) assembler.push({ type: 'text-delta', index: 0, text })
    assembler.push(stop)
    const outcome = assembler.outcome()
    expect(outcome.kind === 'message' ? outcome.content[0] : undefined).toEqual({ type: 'text', text: pieces.join('') })
  })
})

describe('createAssembler: interruptedContent (acceptance 8)', () => {
  test('8. keeps open text and drops the open tool call', () => {
    const assembler = assemble([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'partial' },
      { type: 'block-start', index: 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 1, id: 'c1', name: 'echo', argumentsDelta: '{"a"' },
    ])
    expect(assembler.interruptedContent()).toStrictEqual([{ type: 'text', text: 'partial' }])
  })

  test('8. reasoning only, a tool-call delta only, whitespace only', () => {
    expect(assemble([{ type: 'reasoning-delta', index: 0, text: 'hmm' }]).interruptedContent()).toStrictEqual([
      { type: 'reasoning', text: 'hmm' },
    ])
    expect(
      assemble([
        { type: 'tool-call-delta', index: 0, id: 'c1', name: 'echo', argumentsDelta: '{}' },
      ]).interruptedContent(),
    ).toStrictEqual([])
    expect(assemble([{ type: 'text-delta', index: 0, text: '   ' }]).interruptedContent()).toStrictEqual([])
  })

  test('keeps closed and open text and reasoning in order, closed tool calls dropped, frozen', () => {
    const assembler = assemble([
      { type: 'reasoning-delta', index: 0, text: 'r' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'thought' } },
      { type: 'block-end', index: 1, block: { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{}' } },
      { type: 'block-end', index: 2, block: { type: 'text', text: ' \n' } },
      { type: 'text-delta', index: 3, text: 'tail' },
    ])
    const kept = assembler.interruptedContent()
    expect(kept).toStrictEqual([
      { type: 'reasoning', text: 'thought' },
      { type: 'text', text: 'tail' },
    ])
    expect(Object.isFrozen(kept)).toBe(true)
    expect(Object.isFrozen(kept[0])).toBe(true)
  })
})
