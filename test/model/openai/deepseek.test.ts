import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, test } from 'vitest'
import { deepseek, type JsonObject, type ModelRequest, type StreamChunk } from 'yoke'
import { assemble, collect, failureOf, mockServer, req } from './adapter-helpers.js'

const fixture = (name: string): string[] =>
  readFileSync(new URL(`../../fixtures/deepseek/${name}.chunks.txt`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '')

/** An independent oracle: the fixture's deltas of one field, joined. */
const joined = (lines: readonly string[], field: 'content' | 'reasoning_content'): string =>
  lines
    .map((line) => (JSON.parse(line) as { choices: { delta: Record<string, unknown> }[] }).choices[0]?.delta[field])
    .filter((value): value is string => typeof value === 'string')
    .join('')

const lastUsage = (lines: readonly string[]): JsonObject => JSON.parse(lines.at(-1)!).usage as JsonObject

const deepseekRequest = (overlay: Partial<ModelRequest> = {}): ModelRequest =>
  req({ provider: 'deepseek', model: 'deepseek-v4-flash', ...overlay })

function blocksOf(chunks: readonly StreamChunk[]): unknown[] {
  return chunks.flatMap((chunk) => (chunk.type === 'block-end' ? [chunk.block] : []))
}

describe('DeepSeek reasoning', () => {
  test.each([
    ['off', { thinking: { type: 'disabled' } }],
    ['high', { thinking: { type: 'enabled' }, reasoning_effort: 'high' }],
    ['max', { thinking: { type: 'enabled' }, reasoning_effort: 'max' }],
    [undefined, {}],
  ])('effort %s → %j', async (effort, expected) => {
    const srv = await mockServer([{ text: 'ok' }])
    const adapter = deepseek({ baseURL: srv.baseURL, apiKey: 'k', model: 'deepseek-v4-flash' })
    await collect(adapter, deepseekRequest(effort === undefined ? {} : { reasoningEffort: effort }))
    const body = srv.requests[0]?.body as JsonObject
    expect({ thinking: body['thinking'], reasoning_effort: body['reasoning_effort'] }).toEqual({
      thinking: undefined,
      reasoning_effort: undefined,
      ...expected,
    })
    expect(srv.requests[0]?.headers['authorization']).toBe('Bearer k')
  })

  test("effort 'medium' is UNSUPPORTED_REASONING_EFFORT before any request", async () => {
    const srv = await mockServer([])
    const adapter = deepseek({ baseURL: srv.baseURL, apiKey: 'k', model: 'deepseek-v4-flash' })
    const chunks = await collect(adapter, deepseekRequest({ reasoningEffort: 'medium' }))
    expect(chunks).toEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: {
          code: 'UNSUPPORTED_REASONING_EFFORT',
          message: 'model deepseek-v4-flash does not offer reasoning effort "medium" (allowed: off, low, high, max)',
          retryable: false,
          phase: 'pre-request',
          detail: { field: 'reasoningEffort', value: 'medium', allowed: ['off', 'low', 'high', 'max'] },
        },
      },
    ])
    expect(srv.requests).toEqual([])
    expect(
      failureOf(await collect(adapter, deepseekRequest({ model: 'deepseek-v9', reasoningEffort: 'medium' }))).code,
    ).toBe('UNSUPPORTED_REASONING_EFFORT')
  })

  test("purpose title with 'high' disables thinking; history reasoning is sent as reasoning_content", async () => {
    const srv = await mockServer([{ text: 'Title' }, { text: 'ok' }])
    const adapter = deepseek({ baseURL: srv.baseURL, apiKey: 'k', model: 'deepseek-v4-flash' })
    await collect(adapter, deepseekRequest({ reasoningEffort: 'high', metadata: { purpose: 'title' } }))
    await collect(
      adapter,
      deepseekRequest({
        messages: [
          { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
          {
            id: 'a1',
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'r' },
              { type: 'text', text: 'hello' },
            ],
            source: { kind: 'model', provider: 'deepseek', model: 'deepseek-v4-flash' },
          },
          { id: 'u2', role: 'user', content: [{ type: 'text', text: 'again' }], source: { kind: 'user' } },
        ],
      }),
    )
    const bodyOf = (index: number): JsonObject => srv.requests[index]!.body as JsonObject
    const title = bodyOf(0)
    expect(title['thinking']).toEqual({ type: 'disabled' })
    expect(title).not.toHaveProperty('reasoning_effort')
    expect(bodyOf(1)['messages']).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', reasoning_content: 'r' },
      { role: 'user', content: 'again' },
    ])
  })

  test('describeModel reports the catalog context window', () => {
    expect(deepseek({ apiKey: 'k' }).describeModel('deepseek-v4-flash')?.contextWindow).toBe(1_000_000)
    expect(deepseek({ apiKey: 'k' }).describeModel('deepseek-v4-pro')?.contextWindow).toBe(1_000_000)
  })

  describe('the default key variable', () => {
    const saved = process.env['DEEPSEEK_API_KEY']
    afterEach(() => {
      if (saved === undefined) delete process.env['DEEPSEEK_API_KEY']
      else process.env['DEEPSEEK_API_KEY'] = saved
    })

    test('DEEPSEEK_API_KEY is read at request time; unset → MISSING_CREDENTIAL naming it', async () => {
      const srv = await mockServer([{ text: 'ok' }])
      const adapter = deepseek({ baseURL: srv.baseURL })
      delete process.env['DEEPSEEK_API_KEY']
      const failure = failureOf(await collect(adapter, deepseekRequest()))
      expect(failure).toMatchObject({ code: 'MISSING_CREDENTIAL', phase: 'pre-request' })
      expect(failure.message).toContain('DEEPSEEK_API_KEY')
      process.env['DEEPSEEK_API_KEY'] = 'ds-key'
      await collect(adapter, deepseekRequest())
      expect(srv.requests.map((request) => request.headers['authorization'])).toEqual(['Bearer ds-key'])
    })
  })
})

describe('DeepSeek fixtures served through the mock server', () => {
  async function serve(name: string): Promise<{ chunks: StreamChunk[]; lines: string[] }> {
    const lines = fixture(name)
    const srv = await mockServer([{ events: lines }])
    const chunks = await collect(deepseek({ baseURL: srv.baseURL, apiKey: 'k' }), deepseekRequest())
    return { chunks, lines }
  }

  test('tool call: reasoning, then the weather call; cache hits subtracted; finish tool-calls', async () => {
    const { chunks, lines } = await serve('deepseek-tool-call')
    const toolCall = {
      type: 'tool-call',
      id: 'call_00_IhCAliIHtM9gKpgfqbBV9873',
      name: 'weather',
      arguments: '{"location": "San Francisco"}',
    }
    const reasoning = {
      type: 'reasoning',
      text: 'The user asks about the weather in San Francisco. I should use the weather tool.',
    }
    expect(blocksOf(chunks)).toEqual([reasoning, toolCall])
    expect(chunks.slice(-2)).toEqual([
      {
        type: 'usage',
        usage: { inputTokens: 118, outputTokens: 61, cacheReadTokens: 256, reasoningTokens: 17, raw: lastUsage(lines) },
      },
      { type: 'finish', reason: 'tool-calls', providerFinishReason: 'tool_calls' },
    ])
    const deltas = chunks.filter((chunk) => chunk.type === 'tool-call-delta')
    expect(deltas[0]).toEqual({
      type: 'tool-call-delta',
      index: 1,
      id: toolCall.id,
      name: 'weather',
      argumentsDelta: '',
    })
    expect(deltas).toHaveLength(11)
    expect(assemble(chunks)).toEqual({
      kind: 'message',
      content: [reasoning, toolCall],
      finishReason: 'tool-calls',
      usage: { inputTokens: 118, outputTokens: 61, cacheReadTokens: 256, reasoningTokens: 17, raw: lastUsage(lines) },
    })
  })

  test('reasoning then text: two blocks, the first ended before the second starts', async () => {
    const { chunks, lines } = await serve('deepseek-reasoning')
    const reasoningText = joined(lines, 'reasoning_content')
    expect(reasoningText.startsWith('We need answer simple. Need count r in strawberry.')).toBe(true)
    expect(blocksOf(chunks)).toEqual([
      { type: 'reasoning', text: reasoningText },
      { type: 'text', text: 'There are **3** “r”s in **“strawberry”**.' },
    ])
    const firstEnd = chunks.findIndex((chunk) => chunk.type === 'block-end')
    expect(chunks[firstEnd + 1]).toEqual({ type: 'block-start', index: 1, blockType: 'text' })
    expect(chunks.slice(-2)).toEqual([
      {
        type: 'usage',
        usage: { inputTokens: 97, outputTokens: 106, cacheReadTokens: 0, reasoningTokens: 88, raw: lastUsage(lines) },
      },
      { type: 'finish', reason: 'stop', providerFinishReason: 'stop' },
    ])
    expect(assemble(chunks)).toMatchObject({ kind: 'message', finishReason: 'stop' })
  })

  test('plain text: one block of 98 deltas', async () => {
    const { chunks, lines } = await serve('deepseek-text')
    const text = joined(lines, 'content')
    expect(text.startsWith('Introducing "Lumina\'s Eve," a holiday of gratitude')).toBe(true)
    expect(blocksOf(chunks)).toEqual([{ type: 'text', text }])
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(98)
    expect(chunks.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 22, outputTokens: 98, cacheReadTokens: 0, raw: lastUsage(lines) } },
      { type: 'finish', reason: 'stop', providerFinishReason: 'stop' },
    ])
  })

  test('live usage on the finishing chunk: length → max-tokens', async () => {
    const { chunks, lines } = await serve('issue-19789-live-usage')
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'sanitized' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'sanitized' } },
      {
        type: 'usage',
        usage: { inputTokens: 88, outputTokens: 4, cacheReadTokens: 0, reasoningTokens: 4, raw: lastUsage(lines) },
      },
      { type: 'finish', reason: 'max-tokens', providerFinishReason: 'length' },
    ])
    expect(assemble(chunks)).toMatchObject({
      kind: 'message',
      content: [{ type: 'text', text: 'sanitized' }],
      finishReason: 'max-tokens',
    })
  })

  test('system fingerprint: text OK', async () => {
    const { chunks, lines } = await serve('deepseek-system-fingerprint')
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'OK' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'OK' } },
      { type: 'usage', usage: { inputTokens: 9, outputTokens: 1, cacheReadTokens: 0, raw: lastUsage(lines) } },
      { type: 'finish', reason: 'stop', providerFinishReason: 'stop' },
    ])
  })
})
