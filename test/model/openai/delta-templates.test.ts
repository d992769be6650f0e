/**
 * The text-delta fast path of the SSE translator (src/model/openai/delta-templates.ts and
 * body-splitter.ts): an event whose bytes repeat a parsed one's around a new JSON string token is
 * read from the bytes, without decoding, SSE parsing or `JSON.parse`. Whatever the stream, the
 * chunks must equal those of the reference path (a standard streaming `TextDecoder` and the SSE
 * parser, no shapes), so most tests here are differential.
 */
import { Buffer } from 'node:buffer'
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { createDeltaTemplates, type DeltaTemplates } from '../../../src/model/openai/delta-templates.js'
import {
  sse,
  translate,
  translateBytes,
  translateBytesByRead,
  translateDecoded,
  translateDecodedByRead,
} from './sse-helpers.js'

const fixture = (name: string): string =>
  readFileSync(new URL(`../../fixtures/deepseek/${name}.chunks.txt`, import.meta.url), 'utf8')

/** DeepSeek's event shape: a constant header, one choice, `usage: null`. */
function event(
  delta: Record<string, unknown>,
  options: { id?: string; finish?: string | null; usage?: unknown } = {},
): Record<string, unknown> {
  return {
    id: options.id ?? 'b1e2',
    object: 'chat.completion.chunk',
    created: 1_786_782_776,
    model: 'deepseek-v4-flash',
    system_fingerprint: 'fp',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: options.finish ?? null }],
    usage: options.usage ?? null,
  }
}

/** What `match` hands over for the event `data: <data>\n\n`, or `undefined` when no shape fits. */
function matched(
  templates: DeltaTemplates,
  data: string,
): { readonly kind: string; readonly text: string } | undefined {
  let delta: { readonly kind: string; readonly text: string } | undefined
  const bytes = Buffer.from(`data: ${data}\n\n`, 'utf8')
  const fit = templates.match(bytes, 0, bytes.length - 2, (kind, text) => {
    delta = { kind, text }
  })
  expect(fit).toBe(delta !== undefined)
  return delta
}

const text = (value: unknown): Record<string, unknown> => event({ content: value, reasoning_content: null })
const reasoning = (value: unknown): Record<string, unknown> => event({ content: null, reasoning_content: value })

/**
 * The byte path and the reference path over the same body, cut at the same byte offsets: the
 * chunks of each read, so a chunk held back to a later read shows as a difference too.
 */
function bothPaths(
  body: string | Uint8Array,
  cuts: readonly number[] = [],
): { readonly fast: unknown; readonly full: unknown } {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body
  return { fast: translateBytesByRead(bytes, cuts), full: translateDecodedByRead(bytes, cuts) }
}

/** The raw text of `value`'s JSON with its one `"@"` placeholder replaced by a raw token. */
function withToken(value: Record<string, unknown>, token: string): string {
  const json = JSON.stringify(value)
  const at = json.indexOf('"@"')
  if (at < 0) throw new Error('no placeholder')
  return `${json.slice(0, at)}${token}${json.slice(at + 3)}`
}

describe('createDeltaTemplates', () => {
  const first = JSON.stringify(text('Hello'))

  test('learns a lone text delta and reads the next event of the same shape', () => {
    const templates = createDeltaTemplates()
    expect(matched(templates, first)).toBeUndefined()
    templates.learn(first, JSON.parse(first))
    expect(matched(templates, JSON.stringify(text(' world')))).toEqual({ kind: 'text', text: ' world' })
    expect(matched(templates, JSON.stringify(reasoning(' world')))).toBeUndefined()
  })

  test('decodes escapes, keeps non-ASCII and reads the empty string', () => {
    const templates = createDeltaTemplates()
    templates.learn(first, JSON.parse(first))
    for (const value of ['a "quoted" \\ back\\slash', 'line\nbreak\ttab', '中文 “quotes” 🎉', '\u0001\u001f', '']) {
      expect(matched(templates, JSON.stringify(text(value)))).toEqual({ kind: 'text', text: value })
    }
    expect(matched(templates, withToken(text('@'), '"\\u00e9\\ud83c\\udf89"'))).toEqual({ kind: 'text', text: 'é🎉' })
  })

  test.each([
    ['an unescaped quote', '"a"b"'],
    ['a raw control character', '"a\u0001b"'],
    ['a raw newline', '"a\nb"'],
    ['a bad escape', '"a\\xb"'],
    ['a short unicode escape', '"a\\u12"'],
    ['a number', '12'],
    ['null', 'null'],
    ['two strings', '"a","b"'],
    ['an unterminated string', '"abc'],
  ])('does not read a token that is not one JSON string: %s', (_name, token) => {
    const templates = createDeltaTemplates()
    templates.learn(first, JSON.parse(first))
    expect(matched(templates, withToken(text('@'), token))).toBeUndefined()
  })

  test('does not match an event whose other bytes differ', () => {
    const templates = createDeltaTemplates()
    templates.learn(first, JSON.parse(first))
    expect(
      matched(templates, JSON.stringify(event({ content: 'x', reasoning_content: null }, { id: 'other' }))),
    ).toBeUndefined()
    expect(
      matched(templates, JSON.stringify(event({ content: 'x', reasoning_content: null }, { finish: 'stop' }))),
    ).toBeUndefined()
    expect(matched(templates, ` ${JSON.stringify(text('x'))}`)).toBeUndefined()
  })

  test.each([
    ['a finish reason', event({ content: 'Hello' }, { finish: 'stop' })],
    ['a usage object', event({ content: 'Hello' }, { usage: { prompt_tokens: 1 } })],
    ['an error', { ...text('Hello'), error: { message: 'x' } }],
    ['tool calls', event({ content: 'Hello', tool_calls: [] })],
    ['two text fields', event({ content: 'Hello', reasoning_content: 'Hi' })],
    ['an empty text', event({ content: '' })],
    [
      'a second choice',
      {
        ...text('Hello'),
        choices: [
          { index: 0, delta: { content: 'Hello' } },
          { index: 1, delta: { content: 'x' } },
        ],
      },
    ],
    ['another choice index', { ...text('Hello'), choices: [{ index: 1, delta: { content: 'Hello' } }] }],
    ['the value twice in the text', event({ content: 'Hello', role: 'Hello' })],
  ])('learns nothing from an event with %s', (_name, value) => {
    const templates = createDeltaTemplates()
    const data = JSON.stringify(value)
    templates.learn(data, JSON.parse(data) as Record<string, unknown>)
    templates.learn(data, JSON.parse(data) as Record<string, unknown>)
    expect(matched(templates, data)).toBeUndefined()
    expect(matched(templates, JSON.stringify(text('x')))).toBeUndefined()
  })

  test('learns nothing when the value is written with escapes JSON.stringify does not use', () => {
    const templates = createDeltaTemplates()
    const data = withToken(text('@'), '"\\u0048ello"')
    templates.learn(data, JSON.parse(data) as Record<string, unknown>)
    expect(matched(templates, data)).toBeUndefined()
  })

  test('stops learning after eight shapes that never matched, and a match resets the count', () => {
    const templates = createDeltaTemplates()
    const shaped = (id: number, value: string): string => JSON.stringify(event({ content: value }, { id: `id-${id}` }))
    for (let id = 0; id < 8; id++) templates.learn(shaped(id, 'v'), JSON.parse(shaped(id, 'v')))
    templates.learn(shaped(8, 'v'), JSON.parse(shaped(8, 'v')))
    expect(matched(templates, shaped(8, 'w'))).toBeUndefined()

    const fresh = createDeltaTemplates()
    for (let id = 0; id < 7; id++) fresh.learn(shaped(id, 'v'), JSON.parse(shaped(id, 'v')))
    expect(matched(fresh, shaped(6, 'w'))).toEqual({ kind: 'text', text: 'w' })
    fresh.learn(shaped(20, 'v'), JSON.parse(shaped(20, 'v')))
    expect(matched(fresh, shaped(20, 'w'))).toEqual({ kind: 'text', text: 'w' })
  })

  test('keeps the four newest shapes', () => {
    const templates = createDeltaTemplates()
    const shaped = (id: number, value: string): string => JSON.stringify(event({ content: value }, { id: `id-${id}` }))
    for (let id = 0; id < 5; id++) {
      templates.learn(shaped(id, 'v'), JSON.parse(shaped(id, 'v')))
      expect(matched(templates, shaped(id, 'w'))).toBeDefined()
    }
    expect(matched(templates, shaped(0, 'w'))).toBeUndefined()
    for (let id = 1; id < 5; id++) expect(matched(templates, shaped(id, 'w'))).toEqual({ kind: 'text', text: 'w' })
  })

  test('a long delta reads the same', () => {
    const templates = createDeltaTemplates()
    templates.learn(first, JSON.parse(first))
    const long = 'a much longer delta than thirteen characters'
    expect(matched(templates, JSON.stringify(text(long)))).toEqual({ kind: 'text', text: long })
  })
})

describe('the translator with and without the fast path', () => {
  test.each([
    'deepseek-reasoning',
    'deepseek-text',
    'deepseek-tool-call',
    'deepseek-system-fingerprint',
    'issue-19789-live-usage',
  ])('the %s fixture gives the same chunks', (name) => {
    const body = sse(
      fixture(name)
        .split('\n')
        .filter((line) => line.trim() !== ''),
    )
    const { fast, full } = bothPaths(`${body}data: [DONE]\n\n`)
    expect(fast).toEqual(full)
  })

  test('a stream of repeated shapes: reasoning, then text, then a finish and usage', () => {
    const events: unknown[] = [event({ role: 'assistant', content: null, reasoning_content: '' })]
    for (let index = 0; index < 20; index++) events.push(reasoning(` r${index}`))
    for (let index = 0; index < 20; index++) events.push(text(` t${index} “q” \\ "x"`))
    events.push(
      event({ content: '', reasoning_content: null }, { finish: 'stop' }),
      event({}, { usage: { prompt_tokens: 3, completion_tokens: 40 } }),
      '[DONE]',
    )
    const body = sse(events)
    const { fast, full } = bothPaths(body)
    expect(fast).toEqual(full)
    expect(translate(body).filter((chunk) => chunk.type === 'text-delta')).toHaveLength(20)
  })

  test('a malformed token after a learned shape fails the same way on both paths', () => {
    const good = sse([text('a'), text('b')])
    for (const token of ['"a"b"', '"a\u0001"', '"\\x"', '"abc']) {
      const body = `${good}data: ${withToken(text('@'), token)}\n\n`
      const { fast, full } = bothPaths(body)
      expect(fast).toEqual(full)
      expect((fast as { type: string }[][]).flat().at(-1)).toMatchObject({ type: 'finish', reason: 'error' })
    }
  })

  /** A delta text: plain, escapes, non-ASCII, emoji, control characters, quotes and backslashes. */
  const deltaText = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.string({ unit: 'grapheme', maxLength: 10 }),
    fc.constantFrom('', ' ', '"', '\\', '\n', '“”', '中文', '🎉', '\u0000', '\u2028', 'token'),
  )
  /** Events: mostly repeated shapes, with the occasional change of header, finish, usage, tool call or error. */
  const anEvent = fc.oneof(
    { weight: 6, arbitrary: deltaText.map((value) => text(value)) },
    { weight: 4, arbitrary: deltaText.map((value) => reasoning(value)) },
    { weight: 1, arbitrary: deltaText.map((value) => event({ content: value }, { id: 'other' })) },
    { weight: 1, arbitrary: deltaText.map((value) => event({ reasoning: value })) },
    { weight: 1, arbitrary: deltaText.map((value) => event({ content: value, reasoning_content: value })) },
    { weight: 1, arbitrary: fc.constant(event({ content: null }, { finish: 'stop' })) },
    { weight: 1, arbitrary: fc.constant(event({}, { usage: { prompt_tokens: 2, completion_tokens: 3 } })) },
    {
      weight: 1,
      arbitrary: fc.constant(
        event({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
      ),
    },
    { weight: 1, arbitrary: deltaText.map((value) => withToken(text('@'), `"${value}`)) },
    { weight: 1, arbitrary: fc.constant({ error: { message: 'overloaded', code: 'server_error' } }) },
  )

  /** Raw SSE framing around an event's JSON: what servers send besides `data: <json>\n\n`. */
  const framing = fc.constantFrom<(json: string) => string>(
    (json) => `data: ${json}\n\n`,
    (json) => `data: ${json}\n\n`,
    (json) => `data: ${json}\n\n`,
    (json) => `data:${json}\n\n`,
    (json) => `data: ${json}\r\n\r\n`,
    (json) => `data: ${json}\r\r`,
    (json) => `id: 7\ndata: ${json}\n\n`,
    (json) => `event: message\ndata: ${json}\n\n`,
    (json) => `: keep-alive\n\ndata: ${json}\n\n`,
    (json) => `data: ${json}\ndata: ${json}\n\n`,
    (json) => `\ufeffdata: ${json}\n\n`,
    (json) => `data: ${json}\n`,
  )
  /** Bytes that are not UTF-8 (a lone continuation byte, a cut sequence, an overlong form), put inside a delta. */
  const badBytes = fc.constantFrom(
    Buffer.from([0x80]),
    Buffer.from([0xe2, 0x80]),
    Buffer.from([0xc0, 0xaf]),
    Buffer.from([0xff]),
  )

  /** One event's bytes: a JSON event in some framing, or a delta with bytes that are not UTF-8. */
  const anEventBytes = fc.oneof(
    {
      weight: 12,
      arbitrary: anEvent.map((value) =>
        Buffer.from(`data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`, 'utf8'),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(anEvent, framing)
        .map(([value, frame]) => Buffer.from(frame(typeof value === 'string' ? value : JSON.stringify(value)), 'utf8')),
    },
    {
      weight: 1,
      arbitrary: badBytes.map((bad) => {
        const [head, tail] = JSON.stringify(text('@@')).split('@@') as [string, string]
        return Buffer.concat([Buffer.from(`data: ${head}`, 'utf8'), bad, Buffer.from(`${tail}\n\n`, 'utf8')])
      }),
    },
  )

  test('random streams, cut at random byte offsets, give the same chunks on both paths', () => {
    fc.assert(
      fc.property(
        fc.array(anEventBytes, { maxLength: 40 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        (events, bom, done, rawCuts) => {
          const parts = [
            ...(bom ? [Buffer.from([0xef, 0xbb, 0xbf])] : []),
            ...events,
            ...(done ? [Buffer.from('data: [DONE]\n\n')] : []),
          ]
          const body = Buffer.concat(parts)
          const cuts = [...new Set(rawCuts.map((cut) => cut % (body.length + 1)))].sort((left, right) => left - right)
          const { fast, full } = bothPaths(body, cuts)
          expect(fast).toEqual(full)
        },
      ),
      { numRuns: 400 },
    )
  })

  test('the shapes are used: a recorded stream reads almost every delta from the bytes', () => {
    let matches = 0
    const templates = createDeltaTemplates()
    const counting: DeltaTemplates = {
      match: (bytes, start, end, append) => {
        const fit = templates.match(bytes, start, end, append)
        if (fit) matches++
        return fit
      },
      learn: (data, event) => templates.learn(data, event),
    }
    const lines = fixture('deepseek-reasoning')
      .split('\n')
      .filter((line) => line.trim() !== '')
    const bytes = new TextEncoder().encode(`${sse(lines)}data: [DONE]\n\n`)
    const chunks = translateBytes(bytes, [100, 2000, 2001, 5000], { deltaTemplates: counting })
    expect(chunks).toEqual(translateDecoded(bytes, [100, 2000, 2001, 5000]))
    const deltas = chunks.filter((chunk) => chunk.type === 'text-delta' || chunk.type === 'reasoning-delta').length
    // Every delta but the first of each kind (which teaches the shape) comes from the bytes.
    expect(matches).toBe(deltas - 2)
  })

  test('a body with CRLF line ends is parsed as text from its first CR on, with the same chunks', () => {
    const body = sse([text('a'), text('b')]) + sse([text('c'), text('d')]).replaceAll('\n', '\r\n')
    const { fast, full } = bothPaths(body, [7, 300])
    expect(fast).toEqual(full)
    const deltas = (fast as { type: string; text?: string }[][]).flat().filter((chunk) => chunk.type === 'text-delta')
    expect(deltas.map((chunk) => chunk.text)).toEqual(['a', 'b', 'c', 'd'])
  })

  test('reads of any size: one read of many events, and an event longer than the 256 KiB held back', () => {
    const many = sse([...Array.from({ length: 2000 }, (_, index) => text(` t${index}`)), '[DONE]'])
    const { fast, full } = bothPaths(many)
    expect(fast).toEqual(full)
    const long = sse([text('a'), text('b'), text('x'.repeat(300 * 1024)), text('c'), text('d'), '[DONE]'])
    for (const cuts of [[], [1000, 100_000, 200_000, 307_000]]) {
      const result = bothPaths(long, cuts)
      expect(result.fast).toEqual(result.full)
    }
  })

  test('a BOM at the start of the body is dropped, one later is kept (as a streaming decoder does)', () => {
    for (const cuts of [[], [1], [2], [3], [5]]) {
      const body = Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(sse([text('a'), text('b')])),
        Buffer.from('\ufeffdata: x\n\n'),
      ])
      const { fast, full } = bothPaths(body, cuts)
      expect(fast).toEqual(full)
    }
  })
})
