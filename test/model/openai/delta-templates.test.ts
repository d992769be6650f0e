/**
 * The text-delta fast path of the SSE translator (src/model/openai/delta-templates.ts): an event
 * that repeats a parsed one's bytes around a new JSON string token skips `JSON.parse`. Whatever
 * the stream, the chunks must equal those of the full path, so most tests here are differential:
 * the same bytes through a translator with and without templates.
 */
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { createDeltaTemplates, type DeltaTemplates } from '../../../src/model/openai/delta-templates.js'
import { sse, translate, translateBytes } from './sse-helpers.js'

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/deepseek/${name}.chunks.txt`, import.meta.url), 'utf8')

/** DeepSeek's event shape: a constant header, one choice, `usage: null`. */
function event(delta: Record<string, unknown>, options: { id?: string; finish?: string | null; usage?: unknown } = {}): Record<string, unknown> {
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

/** What `match` hands over, or `undefined` when no shape fits. */
function matched(templates: DeltaTemplates, data: string): { readonly kind: string; readonly text: string } | undefined {
  let delta: { readonly kind: string; readonly text: string } | undefined
  const fit = templates.match(data, (kind, text) => {
    delta = { kind, text }
  })
  expect(fit).toBe(delta !== undefined)
  return delta
}

const text = (value: unknown): Record<string, unknown> => event({ content: value, reasoning_content: null })
const reasoning = (value: unknown): Record<string, unknown> => event({ content: null, reasoning_content: value })

/** Both paths over the same SSE text, cut at the same byte offsets. */
function bothPaths(body: string, cuts: readonly number[] = []): { readonly fast: unknown; readonly full: unknown } {
  const bytes = new TextEncoder().encode(body)
  return { fast: translateBytes(bytes, cuts), full: translateBytes(bytes, cuts, { deltaTemplates: false }) }
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
    expect(matched(templates, JSON.stringify(event({ content: 'x', reasoning_content: null }, { id: 'other' })))).toBeUndefined()
    expect(matched(templates, JSON.stringify(event({ content: 'x', reasoning_content: null }, { finish: 'stop' })))).toBeUndefined()
    expect(matched(templates, ` ${JSON.stringify(text('x'))}`)).toBeUndefined()
  })

  test.each([
    ['a finish reason', event({ content: 'Hello' }, { finish: 'stop' })],
    ['a usage object', event({ content: 'Hello' }, { usage: { prompt_tokens: 1 } })],
    ['an error', { ...text('Hello'), error: { message: 'x' } }],
    ['tool calls', event({ content: 'Hello', tool_calls: [] })],
    ['two text fields', event({ content: 'Hello', reasoning_content: 'Hi' })],
    ['an empty text', event({ content: '' })],
    ['a second choice', { ...text('Hello'), choices: [{ index: 0, delta: { content: 'Hello' } }, { index: 1, delta: { content: 'x' } }] }],
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

  test('a delta of 15 characters or more (decoded by JSON.parse, a fresh string) reads the same', () => {
    const templates = createDeltaTemplates()
    templates.learn(first, JSON.parse(first))
    const long = 'a much longer delta than thirteen characters'
    expect(matched(templates, JSON.stringify(text(long)))).toEqual({ kind: 'text', text: long })
  })
})

describe('the translator with and without the fast path', () => {
  test.each(['deepseek-reasoning', 'deepseek-text', 'deepseek-tool-call', 'deepseek-system-fingerprint', 'issue-19789-live-usage'])(
    'the %s fixture gives the same chunks',
    (name) => {
      const body = sse(
        fixture(name)
          .split('\n')
          .filter((line) => line.trim() !== ''),
      )
      const { fast, full } = bothPaths(`${body}data: [DONE]\n\n`)
      expect(fast).toEqual(full)
    },
  )

  test('a stream of repeated shapes: reasoning, then text, then a finish and usage', () => {
    const events: unknown[] = [event({ role: 'assistant', content: null, reasoning_content: '' })]
    for (let index = 0; index < 20; index++) events.push(reasoning(` r${index}`))
    for (let index = 0; index < 20; index++) events.push(text(` t${index} “q” \\ "x"`))
    events.push(event({ content: '', reasoning_content: null }, { finish: 'stop' }), event({}, { usage: { prompt_tokens: 3, completion_tokens: 40 } }), '[DONE]')
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
      expect((fast as { type: string }[]).at(-1)).toMatchObject({ type: 'finish', reason: 'error' })
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
      arbitrary: fc.constant(event({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] })),
    },
    { weight: 1, arbitrary: deltaText.map((value) => withToken(text('@'), `"${value}`)) },
    { weight: 1, arbitrary: fc.constant({ error: { message: 'overloaded', code: 'server_error' } }) },
  )

  test('random streams, cut at random byte offsets, give the same chunks on both paths', () => {
    fc.assert(
      fc.property(fc.array(anEvent, { maxLength: 40 }), fc.boolean(), fc.array(fc.nat(), { maxLength: 6 }), (events, done, rawCuts) => {
        const body = sse(done ? [...events, '[DONE]'] : events)
        const size = new TextEncoder().encode(body).length
        const cuts = [...new Set(rawCuts.map((cut) => cut % (size + 1)))].sort((left, right) => left - right)
        const { fast, full } = bothPaths(body, cuts)
        expect(fast).toEqual(full)
      }),
      { numRuns: 300 },
    )
  })
})
