/**
 * Model-layer benchmark (issue: bench/models.bench.ts, 08-models.md §12): a recorded-shape
 * 2,000-chunk SSE stream translated end to end by `openaiCompatible` (fetch stubbed with an
 * in-memory `Response`, so no socket noise) and folded by `createAssembler`, against the floor of
 * `eventsource-parser` alone on the same bytes (decode + parse, every event delivered). Goal ≤ 2×.
 * Also reported against parser + `JSON.parse` of every event, the work no translator can skip.
 */
import { createParser } from 'eventsource-parser'
import { createAssembler, type ModelRequest, openaiCompatible } from 'yoke'
import { type Measurement, report } from './measure.js'

const CHUNKS = 2_000
const PIECE_BYTES = 1_024

/** A DeepSeek-shaped stream: reasoning deltas, then content deltas, finish and usage, `[DONE]`. */
function sseBody(): Uint8Array {
  const lines: string[] = []
  const event = (delta: object, finish: string | null = null): string =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'deepseek-v4-flash',
      system_fingerprint: 'fp_bench',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    })}\n\n`
  lines.push(event({ role: 'assistant', content: '' }))
  for (let index = 0; index < CHUNKS; index++) {
    const words = ` token ${index} “quoted”`
    lines.push(index < CHUNKS / 4 ? event({ content: null, reasoning_content: words }) : event({ content: words, reasoning_content: null }))
  }
  lines.push(event({}, 'stop'))
  lines.push(
    `data: ${JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: 120, completion_tokens: CHUNKS, total_tokens: CHUNKS + 120, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 56 },
    })}\n\n`,
  )
  lines.push('data: [DONE]\n\n')
  return new TextEncoder().encode(lines.join(''))
}

/** The body split into network-sized pieces (splits fall inside events and inside UTF-8 sequences). */
function pieces(bytes: Uint8Array): readonly Uint8Array[] {
  const parts: Uint8Array[] = []
  for (let offset = 0; offset < bytes.length; offset += PIECE_BYTES) parts.push(bytes.subarray(offset, offset + PIECE_BYTES))
  return parts
}

function streamOf(parts: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const part = parts[next++]
      if (part === undefined) controller.close()
      else controller.enqueue(part)
    },
  })
}

/** Reads the pieces through eventsource-parser, handing each event's data to `onData`. */
async function parseAll(parts: readonly Uint8Array[], onData: (data: string) => void): Promise<void> {
  let events = 0
  const parser = createParser({
    onEvent(event) {
      onData(event.data)
      events++
    },
  })
  const decoder = new TextDecoder()
  const reader = streamOf(parts).getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parser.feed(decoder.decode(value, { stream: true }))
  }
  if (events !== CHUNKS + 4) throw new Error(`floor saw ${events} events`)
}

async function bestOf(name: string, rounds: number, operation: () => Promise<unknown>): Promise<Measurement> {
  await operation()
  let best = Number.POSITIVE_INFINITY
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    await operation()
    best = Math.min(best, performance.now() - started)
  }
  return { name, opsPerSecond: (CHUNKS / best) * 1_000 }
}

/** Runs the model benchmark; returns its ratio. */
export async function runModelsBench(): Promise<Record<string, number>> {
  const parts = pieces(sseBody())

  const floor = await bestOf('eventsource-parser alone (chunks/s)', 30, () => parseAll(parts, () => {}))

  // Not the floor, reported for context: every event's data must be JSON-parsed anyway.
  const parseFloor = await bestOf('eventsource-parser + JSON.parse (chunks/s)', 30, () =>
    parseAll(parts, (data) => {
      if (data !== '[DONE]') JSON.parse(data)
    }),
  )

  const adapter = openaiCompatible({
    baseURL: 'http://127.0.0.1:9/v1',
    apiKey: 'bench-key',
    model: 'deepseek-v4-flash',
    reasoningStyle: 'deepseek',
    fetch: async () => new Response(streamOf(parts), { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  })
  const subject = await bestOf('openaiCompatible + assembler (chunks/s)', 30, async () => {
    const controller = new AbortController()
    const request: ModelRequest = {
      provider: 'openai-compatible',
      model: 'deepseek-v4-flash',
      messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'count' }], source: { kind: 'user' } }],
      metadata: { purpose: 'conversation' },
      signal: controller.signal,
    }
    const assembler = createAssembler()
    for await (const chunk of adapter.stream(request, { signal: controller.signal })) assembler.push(chunk)
    const outcome = assembler.outcome()
    if (outcome.kind !== 'message' || outcome.content.length !== 2) throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`)
  })
  const ratio = report(subject, floor).ratio
  const parsed = report(subject, parseFloor).ratio
  return { 'sse-translate-2000': ratio, 'sse-translate-2000-vs-parse': parsed }
}
