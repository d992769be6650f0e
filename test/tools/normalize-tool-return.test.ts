import { describe, expect, test } from 'vitest'
import { InvalidArgumentError, type ToolResult, type ToolResultInit, toolResult } from 'yoke'
import { normalizeToolReturn } from '../../src/tools/index.js'
import { thrownBy } from '../helpers/outcomes.js'

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

/** The TOOL_FAILED result for a body of tool "read" returning a value that is not JSON. */
function notJson(problem: string): ToolResult {
  const message = `"read" returned a value that is not JSON: ${problem}`
  return {
    content: [text(`Tool error (TOOL_FAILED): ${message}`)],
    isError: true,
    error: { code: 'TOOL_FAILED', message },
    concludesTurn: false,
    additionalContexts: [],
  }
}

/** A rich result given through toolResult(), normalized as a body's return. */
function viaHelper(init: unknown): ToolResult {
  return normalizeToolReturn(toolResult(init as ToolResultInit), 'read')
}

/** The same fields as a middleware's output. */
function viaMiddleware(value: unknown): ToolResult {
  return normalizeToolReturn(value, 'read', { allowError: true })
}

/** What toolResult() throws for `init`: an InvalidArgumentError for argument `result`. */
function helperError(init: unknown): InvalidArgumentError {
  const error = thrownBy(() => toolResult(init as ToolResultInit))
  if (!InvalidArgumentError.is(error)) throw new Error(`expected InvalidArgumentError, got ${String(error)}`)
  expect(error.argument).toBe('result')
  return error
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

describe("the result forms (a body's undefined and string; toolResult() and a middleware's object form)", () => {
  test('undefined → no content, success', () => {
    expect(normalizeToolReturn(undefined, 'read')).toEqual(success([]))
  })

  test('a string → one text block (an empty string too)', () => {
    expect(normalizeToolReturn('hello', 'read')).toEqual(success([text('hello')]))
    expect(normalizeToolReturn('', 'read')).toEqual(success([text('')]))
  })

  test("text and image blocks → as they are, in order (a middleware's blocks, a toolResult content)", () => {
    expect(viaMiddleware([text('a'), image, text('b')])).toEqual(success([text('a'), image, text('b')]))
    expect(viaMiddleware([])).toEqual(success([]))
    expect(viaHelper({ content: [text('a'), image, text('b')] })).toEqual(success([text('a'), image, text('b')]))
    expect(viaHelper({ content: [] })).toEqual(success([]))
  })

  test.each([
    ['toolResult()', viaHelper],
    ['a middleware', viaMiddleware],
  ])('the object form with every field (%s)', (_label, normalize) => {
    const result = normalize({
      content: 'ok',
      isError: false,
      meta: { lines: 3, nested: { list: [1, null] } },
      concludesTurn: true,
      additionalContexts: ['note', [text('more'), image]],
    })
    expect(result).toEqual({
      content: [text('ok')],
      isError: false,
      meta: { lines: 3, nested: { list: [1, null] } },
      concludesTurn: true,
      additionalContexts: ['note', [text('more'), image]],
    })
  })

  test.each([
    ['toolResult()', viaHelper],
    ['a middleware', viaMiddleware],
  ])('the object form with only content; defaults fill the rest, no meta key (%s)', (_label, normalize) => {
    const result = normalize({ content: [image] })
    expect(result).toEqual(success([image]))
    expect(Object.hasOwn(result, 'meta')).toBe(false)
    expect(Object.hasOwn(result, 'error')).toBe(false)
  })

  test.each([
    ['toolResult()', viaHelper],
    ['a middleware', viaMiddleware],
  ])("a tool's isError result keeps its content and gets no runtime error (%s)", (_label, normalize) => {
    const result = normalize({ content: 'it broke', isError: true })
    expect(result).toEqual({ content: [text('it broke')], isError: true, concludesTurn: false, additionalContexts: [] })
    expect(Object.hasOwn(result, 'error')).toBe(false)
  })

  test.each([
    ['toolResult()', viaHelper],
    ['a middleware', viaMiddleware],
  ])('optional keys given as undefined count as absent (%s)', (_label, normalize) => {
    const result = normalize({
      content: 'x',
      isError: undefined,
      meta: undefined,
      concludesTurn: undefined,
      additionalContexts: undefined,
    })
    expect(result).toEqual(success([text('x')]))
    expect(Object.hasOwn(result, 'meta')).toBe(false)
  })

  test.each([
    ['toolResult()', viaHelper],
    ['a middleware', viaMiddleware],
  ])('a null-prototype result object and meta are accepted (%s)', (_label, normalize) => {
    const meta = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 })
    const value = Object.assign(Object.create(null) as Record<string, unknown>, { content: 'x', meta })
    expect(normalize(value)).toEqual(success([text('x')], { meta: { a: 1 } }))
  })

  test.each([
    ['toolResult()', viaHelper],
    ['a middleware', viaMiddleware],
  ])('the result is frozen throughout and copies what it was given (%s)', (_label, normalize) => {
    const block = { type: 'text', text: 'a' } as { type: 'text'; text: string }
    const meta = { nested: { n: 1 } }
    const context = [{ type: 'text', text: 'c' } as { type: 'text'; text: string }]
    const result = normalize({ content: [block], meta, additionalContexts: [context] })
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

describe("invalid rich results: toolResult() throws, a middleware's output becomes TOOL_FAILED, each naming the field", () => {
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
    expect(helperError(value).reason).toBe(problem)
    // A middleware may set `error` (on an error result); everything else is refused alike.
    if (!('error' in value)) expect(viaMiddleware(value)).toEqual(failure(problem))
  })

  test('toolResult() refuses what is not a plain object', () => {
    for (const value of [undefined, null, 'x', [text('x')], new (class Init {})()]) {
      expect(helperError(value).reason).toBe('a tool result must be a plain object { content, … }')
    }
  })

  test('the documented example message for meta', () => {
    expect(helperError({ content: 'x', meta: [] }).message).toBe('invalid result: meta is not a plain JSON object')
    const result = viaMiddleware({ content: 'x', meta: [] })
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
    expect(viaMiddleware(blocks)).toEqual(failure(problem))
    expect(viaMiddleware({ content: blocks })).toEqual(failure(problem))
    expect(helperError({ content: blocks }).reason).toBe(problem)
  })

  test.each([
    ['null', null, 'null is not a tool result'],
    ['a number', 42, 'a number is not a tool result'],
    ['a boolean', true, 'a boolean is not a tool result'],
    ['a function', () => 'x', 'a function is not a tool result'],
    ['a bigint', 1n, 'a bigint is not a tool result'],
    ['a class instance', new (class Output {})(), 'a non-plain object is not a tool result'],
    ['a Promise', Promise.resolve('x'), 'a non-plain object is not a tool result'],
  ])('a top-level %s from a middleware', (_label, value, start) => {
    const result = viaMiddleware(value)
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

describe("a body's JSON return: the model sees its JSON text", () => {
  const json = (value: unknown): ToolResult => normalizeToolReturn(value, 'read')

  test.each([
    ['an object', { rows: [{ id: 1, name: 'Ada' }], total: 1 }, '{"rows":[{"id":1,"name":"Ada"}],"total":1}'],
    ['an array', [1, 'two', { three: 3 }], '[1,"two",{"three":3}]'],
    ['a number', 42.5, '42.5'],
    ['zero', 0, '0'],
    ['negative zero, as JSON writes it', -0, '0'],
    ['true', true, 'true'],
    ['false', false, 'false'],
    ['null', null, 'null'],
    ['an empty object', {}, '{}'],
    ['an empty array', [], '[]'],
    ['nested', { a: { b: { c: [[], [null, [true]]] } } }, '{"a":{"b":{"c":[[],[null,[true]]]}}}'],
    ['an object with a content key', { content: 'x', isError: true }, '{"content":"x","isError":true}'],
    ['an array of content blocks', [text('a')], '[{"type":"text","text":"a"}]'],
    ['strings needing escapes', { 'a b': 'line\nbreak "quoted"' }, '{"a b":"line\\nbreak \\"quoted\\""}'],
  ])('%s', (_label, value, expected) => {
    const result = json(value)
    expect(result).toEqual(success([text(expected)]))
    expect(isDeepFrozen(result)).toBe(true)
  })

  test('the text is what JSON.stringify writes, keys in their own order', () => {
    const value = { z: 1, a: [1, 2, { y: null, b: 'x' }], m: { k: true } }
    expect(json(value).content).toEqual([text(JSON.stringify(value))])
  })

  test('a string stays text, not a JSON string', () => {
    expect(json('plain "text"').content).toEqual([text('plain "text"')])
  })

  test('an object property that is undefined is left out, as JSON.stringify does', () => {
    expect(json({ a: 1, missing: undefined, b: 2 }).content).toEqual([text('{"a":1,"b":2}')])
  })

  test('null-prototype objects and a sub-object shared twice (no cycle) are JSON', () => {
    const shared = { n: 1 }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { left: shared, right: shared })
    expect(json(bare).content).toEqual([text('{"left":{"n":1},"right":{"n":1}}')])
  })

  test('toJSON is never called: an object with a toJSON method is refused at that key', () => {
    expect(json({ id: 1, toJSON: () => 'swapped' })).toEqual(notJson('toJSON is a function'))
  })

  test('each property is read once: a getter that changes its answer is sent as first read', () => {
    let reads = 0
    const value = {
      get count(): number {
        reads++
        return reads
      },
    }
    expect(json(value).content).toEqual([text('{"count":1}')])
    expect(reads).toBe(1)
  })
})

describe("a body's return that is not JSON becomes TOOL_FAILED naming the path", () => {
  class Point {
    constructor(readonly x: number) {}
  }
  const cycle: Record<string, unknown> = { name: 'root', children: [] }
  ;(cycle['children'] as unknown[]).push({ parent: cycle })
  const selfArray: unknown[] = [1]
  selfArray.push(selfArray)
  const sparse: unknown[] = [1]
  sparse[2] = 3

  test.each([
    ['a cycle', cycle, 'children[0].parent is a cycle (it contains itself)'],
    ['an array containing itself', selfArray, '[1] is a cycle (it contains itself)'],
    ['a function', { rows: [{ format: () => 'x' }] }, 'rows[0].format is a function'],
    ['a bigint', { total: 10n }, 'total is a bigint'],
    ['a symbol', { tag: Symbol('t') }, 'tag is a symbol'],
    ['a Date', { rows: [{}, {}, { when: new Date(0) }] }, 'rows[2].when is a Date instance, not a plain object'],
    ['a Map', { index: new Map() }, 'index is a Map instance, not a plain object'],
    ['a class instance', { origin: new Point(0) }, 'origin is a Point instance, not a plain object'],
    ['a boxed string', { name: new String('x') }, 'name is a String instance, not a plain object'],
    ['undefined in an array', { list: [1, undefined] }, 'list[1] is undefined'],
    ['a hole in an array', { list: sparse }, 'list[1] is a hole in a sparse array'],
    ['NaN', { ratio: Number.NaN }, 'ratio is a non-finite number (NaN)'],
    ['Infinity', [Number.POSITIVE_INFINITY], '[0] is a non-finite number (Infinity)'],
    [
      'a key that is not an identifier',
      { 'first name': { at: new Date(0) } },
      '["first name"].at is a Date instance, not a plain object',
    ],
  ])('%s', (_label, value, problem) => {
    expect(normalizeToolReturn(value, 'read')).toEqual(notJson(problem))
  })

  test.each([
    ['a function', () => 'x', 'the value is a function'],
    ['a bigint', 1n, 'the value is a bigint'],
    ['a symbol', Symbol('s'), 'the value is a symbol'],
    ['NaN', Number.NaN, 'the value is a non-finite number (NaN)'],
    ['a class instance', new Point(1), 'the value is a Point instance, not a plain object'],
    ['a Promise', Promise.resolve('x'), 'the value is a Promise instance, not a plain object'],
    ['an Error', new Error('x'), 'the value is an Error instance, not a plain object'],
  ])('a top-level %s', (_label, value, problem) => {
    expect(normalizeToolReturn(value, 'read')).toEqual(notJson(problem))
  })

  test('the message names the tool and the path', () => {
    const result = normalizeToolReturn({ rows: [{}, {}, { when: new Date(0) }] }, 'query')
    expect(result.error).toEqual({
      code: 'TOOL_FAILED',
      message: '"query" returned a value that is not JSON: rows[2].when is a Date instance, not a plain object',
    })
  })

  test('a plain object that merely looks like a toolResult() is JSON: only the helper marks a rich result', () => {
    const lookalike = { content: 'x', concludesTurn: true, additionalContexts: ['note'] }
    const result = normalizeToolReturn(lookalike, 'read')
    expect(result.concludesTurn).toBe(false)
    expect(result.additionalContexts).toEqual([])
    expect(result.content).toEqual([text(JSON.stringify(lookalike))])
    // A copy of a toolResult() made by spreading loses the mark too.
    expect(normalizeToolReturn({ ...toolResult({ content: 'x', concludesTurn: true }) }, 'read').concludesTurn).toBe(
      false,
    )
  })
})
