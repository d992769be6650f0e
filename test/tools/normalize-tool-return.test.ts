import { describe, expect, test } from 'vitest'
import type { ToolResult } from 'yoke'
import { normalizeToolReturn } from '../../src/tools/index.js'

const text = (value: string) => ({ type: 'text', text: value }) as const
const image = { type: 'image', mediaType: 'image/png', uri: 'data:image/png;base64,AAAA' } as const

function success(content: ToolResult['content'], extra: Partial<ToolResult> = {}): ToolResult {
  return { content, isError: false, concludesTurn: false, additionalContexts: [], ...extra }
}

/** The TOOL_FAILED result for an invalid return of tool "read". */
function failure(problem: string): ToolResult {
  const message = `"read" returned an invalid result: ${problem}`
  return {
    content: [text(`Tool error (TOOL_FAILED): ${message}`)],
    isError: true,
    error: { code: 'TOOL_FAILED', message },
    concludesTurn: false,
    additionalContexts: [],
  }
}

/** `[text a, <hole>, text b]`. */
function sparseBlocks(): unknown[] {
  const blocks: unknown[] = [text('a')]
  blocks[2] = text('b')
  return blocks
}

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen)
}

describe('the ToolReturn forms', () => {
  test('undefined → no content, success', () => {
    expect(normalizeToolReturn(undefined, 'read')).toEqual(success([]))
  })

  test('a string → one text block (an empty string too)', () => {
    expect(normalizeToolReturn('hello', 'read')).toEqual(success([text('hello')]))
    expect(normalizeToolReturn('', 'read')).toEqual(success([text('')]))
  })

  test('text and image blocks → as they are, in order', () => {
    expect(normalizeToolReturn([text('a'), image, text('b')], 'read')).toEqual(success([text('a'), image, text('b')]))
    expect(normalizeToolReturn([], 'read')).toEqual(success([]))
  })

  test('the object form with every field', () => {
    const result = normalizeToolReturn(
      {
        content: 'ok',
        isError: false,
        meta: { lines: 3, nested: { list: [1, null] } },
        concludesTurn: true,
        additionalContexts: ['note', [text('more'), image]],
      },
      'read',
    )
    expect(result).toEqual({
      content: [text('ok')],
      isError: false,
      meta: { lines: 3, nested: { list: [1, null] } },
      concludesTurn: true,
      additionalContexts: ['note', [text('more'), image]],
    })
  })

  test('the object form with only content; defaults fill the rest, no meta key', () => {
    const result = normalizeToolReturn({ content: [image] }, 'read')
    expect(result).toEqual(success([image]))
    expect(Object.hasOwn(result, 'meta')).toBe(false)
    expect(Object.hasOwn(result, 'error')).toBe(false)
  })

  test("a tool's isError result keeps its content and gets no runtime error", () => {
    const result = normalizeToolReturn({ content: 'it broke', isError: true }, 'read')
    expect(result).toEqual({ content: [text('it broke')], isError: true, concludesTurn: false, additionalContexts: [] })
    expect(Object.hasOwn(result, 'error')).toBe(false)
  })

  test('optional keys given as undefined count as absent', () => {
    const result = normalizeToolReturn(
      { content: 'x', isError: undefined, meta: undefined, concludesTurn: undefined, additionalContexts: undefined },
      'read',
    )
    expect(result).toEqual(success([text('x')]))
    expect(Object.hasOwn(result, 'meta')).toBe(false)
  })

  test('a null-prototype result object and meta are accepted', () => {
    const meta = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 })
    const value = Object.assign(Object.create(null) as Record<string, unknown>, { content: 'x', meta })
    expect(normalizeToolReturn(value, 'read')).toEqual(success([text('x')], { meta: { a: 1 } }))
  })

  test('the result is frozen throughout and copies what it was given', () => {
    const block = { type: 'text', text: 'a' } as { type: 'text'; text: string }
    const meta = { nested: { n: 1 } }
    const context = [{ type: 'text', text: 'c' } as { type: 'text'; text: string }]
    const result = normalizeToolReturn({ content: [block], meta, additionalContexts: [context] }, 'read')
    expect(isDeepFrozen(result)).toBe(true)
    block.text = 'changed'
    meta.nested.n = 2
    context[0]!.text = 'changed'
    expect(result.content).toEqual([text('a')])
    expect(result.meta).toEqual({ nested: { n: 1 } })
    expect(result.additionalContexts).toEqual([[text('c')]])
    expect(Object.isFrozen(block)).toBe(false)
  })
})

describe('invalid returns become TOOL_FAILED naming the field', () => {
  test.each([
    ['meta an array', { content: 'x', meta: [1] }, 'meta is not a plain JSON object'],
    ['meta a string', { content: 'x', meta: 'm' }, 'meta is not a plain JSON object'],
    ['meta null', { content: 'x', meta: null }, 'meta is not a plain JSON object'],
    ['meta with a bigint', { content: 'x', meta: { n: 1n } }, 'meta is not a plain JSON object'],
    ['meta with a function', { content: 'x', meta: { f: () => 1 } }, 'meta is not a plain JSON object'],
    ['meta with NaN', { content: 'x', meta: { n: Number.NaN } }, 'meta is not a plain JSON object'],
    ['meta with undefined', { content: 'x', meta: { n: undefined } }, 'meta is not a plain JSON object'],
    ['meta a Date', { content: 'x', meta: new Date(0) }, 'meta is not a plain JSON object'],
    ['meta a Map', { content: 'x', meta: new Map() }, 'meta is not a plain JSON object'],
    ['no content', { isError: true }, 'content is not a string or an array of text and image blocks'],
    ['content a number', { content: 5 }, 'content is not a string or an array of text and image blocks'],
    ['content an object', { content: text('x') }, 'content is not a string or an array of text and image blocks'],
    ['isError a string', { content: 'x', isError: 'yes' }, 'isError is not a boolean'],
    ['isError 1', { content: 'x', isError: 1 }, 'isError is not a boolean'],
    ['concludesTurn a string', { content: 'x', concludesTurn: 'true' }, 'concludesTurn is not a boolean'],
    ['an unknown key', { content: 'x', foo: 1 }, 'foo is not a result field'],
    [
      'an error key from a body',
      { content: 'x', isError: true, error: { code: 'TOOL_DENIED', message: 'no' } },
      'error is not a result field',
    ],
    ['a symbol key', { content: 'x', [Symbol('s')]: 1 }, 'Symbol(s) is not a result field'],
    ['additionalContexts a string', { content: 'x', additionalContexts: 'note' }, 'additionalContexts is not an array'],
    [
      'a context number',
      { content: 'x', additionalContexts: ['ok', 3] },
      'additionalContexts[1] is not a string or an array of text and image blocks',
    ],
    [
      'a context object',
      { content: 'x', additionalContexts: [text('x')] },
      'additionalContexts[0] is not a string or an array of text and image blocks',
    ],
    [
      'a context reasoning block',
      { content: 'x', additionalContexts: [[text('a'), { type: 'reasoning', text: 'r' }]] },
      'additionalContexts[0][1] is a "reasoning" block; only text and image blocks are allowed',
    ],
  ])('%s', (_label, value, problem) => {
    expect(normalizeToolReturn(value, 'read')).toEqual(failure(problem))
  })

  test('the documented example message for meta', () => {
    const result = normalizeToolReturn({ content: 'x', meta: [] }, 'read')
    expect(result.error?.message).toBe('"read" returned an invalid result: meta is not a plain JSON object')
    expect(result.content).toEqual([
      text('Tool error (TOOL_FAILED): "read" returned an invalid result: meta is not a plain JSON object'),
    ])
  })

  test.each([
    [
      'a reasoning block',
      [{ type: 'reasoning', text: 'thinking' }],
      'content[0] is a "reasoning" block; only text and image blocks are allowed',
    ],
    [
      'a tool-call block',
      [text('a'), { type: 'tool-call', id: 'c', name: 'x', arguments: '{}' }],
      'content[1] is a "tool-call" block; only text and image blocks are allowed',
    ],
    [
      'a tool-result block',
      [{ type: 'tool-result', toolCallId: 'c', content: [] }],
      'content[0] is a "tool-result" block; only text and image blocks are allowed',
    ],
    ['a string element', ['text'], 'content[0] is not a content block'],
    ['a null element', [null], 'content[0] is not a content block'],
    ['a hole', sparseBlocks(), 'content[1] is not a content block'],
    ['a block without type', [{ text: 'x' }], 'content[0] is not a content block'],
    ['a text block without text', [{ type: 'text' }], 'content[0].text is not a string'],
    ['a text block with a number', [{ type: 'text', text: 5 }], 'content[0].text is not a string'],
    [
      'a text block with an extra key',
      [{ type: 'text', text: 'x', cache: true }],
      'content[0].cache is not a text block field',
    ],
    [
      'an image without image media type',
      [{ type: 'image', mediaType: 'text/plain', uri: 'x' }],
      'content[0].mediaType is not an image media type (image/…)',
    ],
    [
      'an image with an empty uri',
      [{ type: 'image', mediaType: 'image/png', uri: '' }],
      'content[0].uri is not a non-empty string',
    ],
    [
      'an image with inline bytes',
      [{ type: 'image', mediaType: 'image/png', uri: 'x', data: 'AAAA' }],
      'content[0].data is not an image block field',
    ],
  ])('blocks: %s', (_label, blocks, problem) => {
    expect(normalizeToolReturn(blocks, 'read')).toEqual(failure(problem))
    expect(normalizeToolReturn({ content: blocks }, 'read')).toEqual(failure(problem))
  })

  test.each([
    ['null', null, 'null is not a tool result'],
    ['a number', 42, 'a number is not a tool result'],
    ['a boolean', true, 'a boolean is not a tool result'],
    ['a function', () => 'x', 'a function is not a tool result'],
    ['a bigint', 1n, 'a bigint is not a tool result'],
    ['a class instance', new (class Output {})(), 'a non-plain object is not a tool result'],
    ['a Promise', Promise.resolve('x'), 'a non-plain object is not a tool result'],
  ])('a top-level %s', (_label, value, start) => {
    const result = normalizeToolReturn(value, 'read')
    expect(result).toEqual(failure(`${start} (expected undefined, a string, content blocks or { content, … })`))
  })

  test('a value whose getter throws becomes TOOL_FAILED, never a throw', () => {
    const value = {
      get content(): string {
        throw new Error('getter exploded')
      },
    }
    expect(normalizeToolReturn(value, 'read')).toEqual(failure('reading it threw: getter exploded'))
  })

  test('a hostile Proxy becomes TOOL_FAILED', () => {
    const hostile = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('trap')
        },
      },
    )
    expect(normalizeToolReturn(hostile, 'read')).toEqual(failure('reading it threw: trap'))
  })
})

describe('the middleware form (allowError)', () => {
  test('an error result with a code passes through', () => {
    const value = {
      content: [text('nope')],
      isError: true,
      error: { code: 'TOOL_DENIED', message: 'nope' },
      concludesTurn: false,
      additionalContexts: [],
    }
    expect(normalizeToolReturn(value, 'read', { allowError: true })).toEqual(value)
  })

  test.each([
    [
      'error on a success',
      { content: 'x', error: { code: 'TOOL_DENIED', message: 'n' } },
      'error is set on a result whose isError is not true',
    ],
    [
      'an unknown code',
      { content: 'x', isError: true, error: { code: 'NOPE', message: 'n' } },
      'error.code is not a tool result code',
    ],
    [
      'a non-string message',
      { content: 'x', isError: true, error: { code: 'TOOL_DENIED', message: 1 } },
      'error.message is not a string',
    ],
    [
      'an extra error key',
      { content: 'x', isError: true, error: { code: 'TOOL_DENIED', message: 'n', name: 'x' } },
      'error.name is not an error field',
    ],
    [
      'error not an object',
      { content: 'x', isError: true, error: 'TOOL_DENIED' },
      'error is not an object { code, message }',
    ],
  ])('%s is refused', (_label, value, problem) => {
    expect(normalizeToolReturn(value, 'read', { allowError: true })).toEqual(failure(problem))
  })
})
