import { describe, expect, test } from 'vitest'
import { InvalidArgumentError, type ToolResult, toolResult } from 'yoke'
import {
  defaultToolRunOptions,
  normalizeToolReturn,
  TRUNCATION_META_KEY,
  toolErrorResult,
  truncateToolResult,
} from '../../src/tools/index.js'
import { thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'

const bytes = (value: string): number => Buffer.byteLength(value, 'utf8')
const marker = (original: number, limit: number): string =>
  `\n[… tool output truncated: ${original} bytes in total, limit ${limit} bytes …]\n`
const image = (name: string) =>
  ({ type: 'image', mediaType: 'image/png', uri: `https://example.test/${name}.png` }) as const

/** 300 000 ASCII characters whose first and last characters are distinct markers. */
function asciiOutput(): string {
  let body = ''
  for (let index = 0; index < 299_998; index++) body += String.fromCharCode(97 + (index % 26))
  return `S${body}E`
}

function onlyText(result: ToolResult): string {
  const block = result.content[0]
  if (block?.type !== 'text') throw new Error('expected a text block first')
  return block.text
}

/** Whether `text` survives a UTF-8 round trip (no lone surrogate from a split pair). */
function isWellFormed(text: string): boolean {
  return Buffer.from(text, 'utf8').toString('utf8') === text
}

describe('the size limit', () => {
  const original = asciiOutput()
  const limit = defaultToolRunOptions.toolResultMaxBytes

  test('300 000 ASCII characters with the default limit: one text block of at most 102400 bytes with the marker', () => {
    expect(limit).toBe(102_400)
    const result = truncateToolResult(normalizeToolReturn(original, 't'), { limitBytes: limit })
    expect(result.content).toHaveLength(1)
    const text = onlyText(result)
    expect(bytes(text)).toBeLessThanOrEqual(102_400)
    expect(text).toContain('tool output truncated: 300000 bytes in total, limit 102400 bytes')
    expect(text).toContain(marker(300_000, 102_400))
    expect(text.startsWith('S')).toBe(true)
    expect(text.endsWith('E')).toBe(true)
    const budget = 102_400 - bytes(marker(300_000, 102_400))
    const head = Math.floor(budget / 2)
    expect(text).toBe(
      original.slice(0, head) + marker(300_000, 102_400) + original.slice(original.length - (budget - head)),
    )
    expect(bytes(text)).toBe(102_400)
    expect(result.meta).toEqual({ [TRUNCATION_META_KEY]: { originalBytes: 300_000, limitBytes: 102_400 } })
    expect(Object.hasOwn(result.meta![TRUNCATION_META_KEY] as object, 'full')).toBe(false)
    expect(TRUNCATION_META_KEY).toBe('yoke:truncation')
  })

  test("with spill 'meta', full equals the original content", () => {
    const before = normalizeToolReturn(toolResult({ content: [{ type: 'text', text: original }, image('a')] }), 't')
    const result = truncateToolResult(before, { limitBytes: limit, spill: 'meta' })
    expect(result.meta).toEqual({
      'yoke:truncation': {
        originalBytes: 300_000,
        limitBytes: 102_400,
        full: [{ type: 'text', text: original }, image('a')],
      },
    })
    expect(result.content[1]).toEqual(image('a'))
  })

  test('spill undefined behaves like no spill', () => {
    const result = truncateToolResult(normalizeToolReturn(original, 't'), { limitBytes: limit, spill: undefined })
    expect(result.meta).toEqual({ 'yoke:truncation': { originalBytes: 300_000, limitBytes: 102_400 } })
  })
})

describe('code points are never split', () => {
  test('emoji: head and tail keep whole surrogate pairs', () => {
    const original = '😀'.repeat(100)
    const limitBytes = 200
    const cut = marker(400, limitBytes)
    const budget = limitBytes - bytes(cut)
    const head = Math.floor(budget / 2)
    const result = truncateToolResult(normalizeToolReturn(original, 't'), { limitBytes })
    const text = onlyText(result)
    expect(text).toBe('😀'.repeat(Math.floor(head / 4)) + cut + '😀'.repeat(Math.floor((budget - head) / 4)))
    expect(isWellFormed(text)).toBe(true)
    expect(bytes(text)).toBeLessThanOrEqual(limitBytes)
  })

  test('CJK: three-byte characters are cut back to a boundary', () => {
    const original = '漢字'.repeat(60)
    const result = truncateToolResult(normalizeToolReturn(original, 't'), { limitBytes: 151 })
    const cut = marker(360, 151)
    const budget = 151 - bytes(cut)
    const head = Math.floor(budget / 2)
    expect(onlyText(result)).toBe(
      original.slice(0, Math.floor(head / 3)) + cut + original.slice(original.length - Math.floor((budget - head) / 3)),
    )
  })

  test('mixed widths under many limits: within the limit, well-formed, a prefix plus the marker plus a suffix', () => {
    const original = 'a漢😀é'.repeat(40)
    const originalBytes = bytes(original)
    for (let limitBytes = 80; limitBytes < 200; limitBytes++) {
      const text = onlyText(truncateToolResult(normalizeToolReturn(original, 't'), { limitBytes }))
      const cut = marker(originalBytes, limitBytes)
      expect(bytes(text), `limit ${limitBytes}`).toBeLessThanOrEqual(limitBytes)
      expect(isWellFormed(text), `limit ${limitBytes}`).toBe(true)
      const [head, tail] = text.split(cut) as [string, string]
      expect(original.startsWith(head), `limit ${limitBytes}`).toBe(true)
      expect(original.endsWith(tail), `limit ${limitBytes}`).toBe(true)
      const budget = limitBytes - bytes(cut)
      expect(bytes(head)).toBeGreaterThan(Math.floor(budget / 2) - 4)
      expect(bytes(tail)).toBeGreaterThan(budget - Math.floor(budget / 2) - 4)
    }
  })

  test('a lone surrogate counts as the three bytes it encodes to', () => {
    const result = normalizeToolReturn('\ud800'.repeat(10), 't')
    expect(truncateToolResult(result, { limitBytes: 30 })).toBe(result)
    expect(onlyText(truncateToolResult(result, { limitBytes: 29 }))).toBe(marker(30, 29))
  })
})

describe('several blocks', () => {
  test("text blocks are joined with '\\n' into one block placed first; other blocks keep their order after it", () => {
    const first = 'x'.repeat(100)
    const second = 'y'.repeat(100)
    const before = normalizeToolReturn(
      toolResult({
        content: [image('a'), { type: 'text', text: first }, image('b'), { type: 'text', text: second }, image('c')],
      }),
      't',
    )
    const limitBytes = 150
    const result = truncateToolResult(before, { limitBytes })
    const joined = `${first}\n${second}`
    const cut = marker(200, limitBytes)
    const budget = limitBytes - bytes(cut)
    const head = Math.floor(budget / 2)
    expect(result.content).toEqual([
      { type: 'text', text: joined.slice(0, head) + cut + joined.slice(joined.length - (budget - head)) },
      image('a'),
      image('b'),
      image('c'),
    ])
    expect(result.meta).toEqual({ 'yoke:truncation': { originalBytes: 200, limitBytes: 150 } })
  })

  test('the original count is the sum of the blocks before joining: exactly at the limit stays unchanged', () => {
    const before = normalizeToolReturn(
      toolResult({
        content: [
          { type: 'text', text: 'a'.repeat(50) },
          { type: 'text', text: 'b'.repeat(50) },
        ],
      }),
      't',
    )
    expect(truncateToolResult(before, { limitBytes: 100 })).toBe(before)
    expect(truncateToolResult(before, { limitBytes: 99 })).not.toBe(before)
  })

  test('images are uncounted: image-only content is never truncated', () => {
    const before = normalizeToolReturn(toolResult({ content: [image('a'), image('b')] }), 't')
    expect(truncateToolResult(before, { limitBytes: 1 })).toBe(before)
  })
})

describe('what is kept', () => {
  test('under the limit the very same result is returned', () => {
    const before = normalizeToolReturn('short', 't')
    expect(truncateToolResult(before, { limitBytes: 102_400 })).toBe(before)
    const empty = normalizeToolReturn(undefined, 't')
    expect(truncateToolResult(empty, { limitBytes: 1 })).toBe(empty)
  })

  test('existing meta is merged; other fields are kept; the result is frozen', () => {
    const before = normalizeToolReturn(
      toolResult({
        content: 'z'.repeat(500),
        meta: { lines: 1, 'yoke:truncation': 'stale' },
        concludesTurn: true,
        additionalContexts: ['note'],
      }),
      't',
    )
    const result = truncateToolResult(before, { limitBytes: 200 })
    expect(result.meta).toEqual({ lines: 1, 'yoke:truncation': { originalBytes: 500, limitBytes: 200 } })
    expect(result.concludesTurn).toBe(true)
    expect(result.isError).toBe(false)
    expect(result.additionalContexts).toEqual(['note'])
    expect(Object.isFrozen(result)).toBe(true)
    expect(Object.isFrozen(result.content)).toBe(true)
    expect(Object.isFrozen(result.meta)).toBe(true)
    expect(before.meta).toEqual({ lines: 1, 'yoke:truncation': 'stale' })
  })

  test('an error result keeps its error', () => {
    const before = toolErrorResult('TOOL_FAILED', 'q'.repeat(300))
    const result = truncateToolResult(before, { limitBytes: 150 })
    expect(result.isError).toBe(true)
    expect(result.error).toBe(before.error)
    expect(onlyText(result).startsWith('Tool error (TOOL_FAILED): ')).toBe(true)
  })

  test('a limit smaller than the marker gives the marker alone', () => {
    const result = truncateToolResult(normalizeToolReturn('w'.repeat(100), 't'), { limitBytes: 10 })
    expect(onlyText(result)).toBe(marker(100, 10))
  })

  test.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'limitBytes %s throws InvalidArgumentError',
    (limitBytes) => {
      expect(() => truncateToolResult(normalizeToolReturn('x', 't'), { limitBytes })).toThrow(InvalidArgumentError)
      try {
        truncateToolResult(normalizeToolReturn('x', 't'), { limitBytes })
      } catch (error) {
        expect((error as InvalidArgumentError).argument).toBe('limitBytes')
      }
    },
  )
})

describe('bad arguments throw InvalidArgumentError naming the argument, even for a result within the limit', () => {
  const small = normalizeToolReturn('x', 't')

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'text'],
    ['an object without content', { isError: false }],
    ['content that is not an array', { content: 'text', isError: false }],
  ])('a result that is %s: argument result', (_name, result) => {
    const error = expectError(
      thrownBy(() => truncateToolResult(result as never, { limitBytes: 100 })),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'result',
      },
    )
    expect(error.value).toBe(result)
  })

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 100],
    ['an array', [100]],
  ])('options that are %s: argument options', (_name, options) => {
    const error = expectError(
      thrownBy(() => truncateToolResult(small, options as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'options',
      },
    )
    expect(error.value).toBe(options)
  })

  test('an unknown option key (a typo of spill) is refused, the key named in the reason', () => {
    const options = { limitBytes: 100, spil: 'meta' }
    const error = expectError(
      thrownBy(() => truncateToolResult(small, options as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'options',
        reason: 'unknown option "spil" (allowed: limitBytes, spill)',
      },
    )
    expect(error.value).toBe(options)
  })

  test.each([
    ['missing', {}, undefined],
    ['a numeric string', { limitBytes: '100' }, '100'],
    ['above the safe integers', { limitBytes: 2 ** 53 }, 2 ** 53],
  ])('limitBytes %s: argument limitBytes with the value', (_name, options, value) => {
    expectError(
      thrownBy(() => truncateToolResult(small, options as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'limitBytes',
        value,
      },
    )
  })

  test.each([['off'], [true], ['META'], [null]])('spill %j: argument spill with the value', (spill) => {
    expectError(
      thrownBy(() => truncateToolResult(small, { limitBytes: 100, spill } as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'spill',
        value: spill,
      },
    )
  })

  test('the result is checked first, then the options; a good call still returns the same result', () => {
    expectError(
      thrownBy(() => truncateToolResult(null as never, null as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'result' },
    )
    expectError(
      thrownBy(() => truncateToolResult(small, { limitBytes: 0, spill: 'none' } as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'limitBytes',
      },
    )
    expect(truncateToolResult(small, Object.freeze({ limitBytes: 100, spill: 'meta' }))).toBe(small)
    const over = truncateToolResult(normalizeToolReturn('xyz', 't'), { limitBytes: 2, spill: undefined })
    expect(over.meta).toEqual({ 'yoke:truncation': { originalBytes: 3, limitBytes: 2 } })
  })

  test("spill 'none' (the agent option's word) truncates and keeps nothing", () => {
    const over = truncateToolResult(normalizeToolReturn('xyz', 't'), { limitBytes: 2, spill: 'none' })
    expect(over.meta).toEqual({ 'yoke:truncation': { originalBytes: 3, limitBytes: 2 } })
  })

  test('an inherited enumerable key is not an unknown option', () => {
    const options = Object.assign(Object.create({ inherited: true }) as object, { limitBytes: 100 }) as {
      limitBytes: number
    }
    expect(truncateToolResult(small, options)).toBe(small)
  })
})
