/**
 * Model-layer benchmark (issue: bench/models.bench.ts): a 2,000-chunk SSE stream
 * translated end to end by `openaiCompatible` (fetch stubbed with an in-memory `Response`, so no
 * socket noise) and folded by `createAssembler`, against the floor of `eventsource-parser` alone
 * on the same bytes (decode + parse, every event delivered). Goal ≤ 2×. Two bodies: a synthetic
 * DeepSeek-shaped one with 19-character deltas, and one made of recorded DeepSeek events
 * (test/fixtures/deepseek, cycled byte for byte). Also reported against parser + `JSON.parse` of
 * every event. Cases run interleaved, round by round, and each keeps its best round.
 */
import { readFileSync } from 'node:fs'
import { createParser } from 'eventsource-parser'
import { createAssembler, type ModelAdapter, type ModelRequest, openaiCompatible } from 'yoke'
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
    lines.push(
      index < CHUNKS / 4
        ? event({ content: null, reasoning_content: words })
        : event({ content: words, reasoning_content: null }),
    )
  }
  lines.push(event({}, 'stop'))
  lines.push(
    `data: ${JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      choices: [],
      usage: {
        prompt_tokens: 120,
        completion_tokens: CHUNKS,
        total_tokens: CHUNKS + 120,
        prompt_cache_hit_tokens: 64,
        prompt_cache_miss_tokens: 56,
      },
    })}\n\n`,
  )
  lines.push('data: [DONE]\n\n')
  return new TextEncoder().encode(lines.join(''))
}

/** The body split into network-sized pieces (splits fall inside events and inside UTF-8 sequences). */
function pieces(bytes: Uint8Array): readonly Uint8Array[] {
  const parts: Uint8Array[] = []
  for (let offset = 0; offset < bytes.length; offset += PIECE_BYTES)
    parts.push(bytes.subarray(offset, offset + PIECE_BYTES))
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

/** A stream made of recorded DeepSeek events (test/fixtures): its reasoning and content deltas, cycled, byte for byte. */
function recordedBody(): Uint8Array {
  const lines = readFileSync(
    new URL('../test/fixtures/deepseek/deepseek-reasoning.chunks.txt', import.meta.url),
    'utf8',
  )
    .split('\n')
    .filter((line) => line !== '')
  const deltaOf = (line: string): Record<string, unknown> =>
    (JSON.parse(line) as { choices: { delta: Record<string, unknown>; finish_reason: unknown }[] }).choices[0]?.delta ??
    {}
  const nonEmpty = (value: unknown): boolean => typeof value === 'string' && value !== ''
  const reasoning = lines.filter((line) => nonEmpty(deltaOf(line)['reasoning_content']))
  const content = lines.filter((line) => nonEmpty(deltaOf(line)['content']))
  const first = lines[0] as string
  const last = lines.at(-1) as string
  const events = [first]
  for (let index = 0; index < CHUNKS; index++) {
    const source = index < CHUNKS / 4 ? reasoning : content
    events.push(source[index % source.length] as string)
  }
  events.push(last)
  return new TextEncoder().encode(`${events.map((event) => `data: ${event}\n\n`).join('')}data: [DONE]\n\n`)
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
  if (events < CHUNKS) throw new Error(`floor saw ${events} events`)
}

/** The body's chunks through `openaiCompatible` (fetch answering from memory) and `createAssembler`. */
/**
 * One request of `adapter`, its stream folded by an assembler (no agent, no log).
 *
 * @param adapter - the adapter to stream from
 * @param model - the model id of the request
 * @returns the assembled outcome
 */
export async function assembleOne(
  adapter: ModelAdapter,
  model: string,
): Promise<ReturnType<ReturnType<typeof createAssembler>['outcome']>> {
  const controller = new AbortController()
  const request: ModelRequest = {
    provider: 'openai-compatible',
    model,
    messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'count' }], source: { kind: 'user' } }],
    metadata: { purpose: 'conversation' },
    signal: controller.signal,
  }
  const assembler = createAssembler()
  for await (const chunk of adapter.stream(request, { signal: controller.signal })) assembler.push(chunk)
  return assembler.outcome()
}

async function translateAll(parts: readonly Uint8Array[]): Promise<void> {
  const adapter = openaiCompatible({
    baseURL: 'http://127.0.0.1:9/v1',
    apiKey: 'bench-key',
    model: 'deepseek-v4-flash',
    reasoningStyle: 'deepseek',
    fetch: async () => new Response(streamOf(parts), { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  })
  const outcome = await assembleOne(adapter, 'deepseek-v4-flash')
  if (outcome.kind !== 'message' || outcome.content.length !== 2)
    throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`)
}

/** Timed rounds; each round runs every case once (so a slow spell of the machine hits all of them), and each case keeps its best round. */
const ROUNDS = 40
/** Streams per timed sample, so one sample lasts several milliseconds. */
const REPEAT = 4

async function interleaved(
  cases: readonly { readonly name: string; readonly run: () => Promise<void> }[],
): Promise<Measurement[]> {
  for (const entry of cases) await entry.run()
  const best = cases.map(() => Number.POSITIVE_INFINITY)
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, entry] of cases.entries()) {
      const started = performance.now()
      for (let repeat = 0; repeat < REPEAT; repeat++) await entry.run()
      best[index] = Math.min(best[index] as number, (performance.now() - started) / REPEAT)
    }
  }
  return cases.map((entry, index) => ({ name: entry.name, opsPerSecond: (CHUNKS / (best[index] as number)) * 1_000 }))
}

/** One body: the subject against the parser floor (the issue's) and against parser + `JSON.parse` (context). */
async function compare(label: string, body: Uint8Array): Promise<{ readonly ratio: number; readonly parsed: number }> {
  const parts = pieces(body)
  const [floor, parseFloor, subject] = await interleaved([
    { name: 'eventsource-parser alone (chunks/s)', run: () => parseAll(parts, () => {}) },
    {
      name: 'eventsource-parser + JSON.parse (chunks/s)',
      run: () =>
        parseAll(parts, (data) => {
          if (data !== '[DONE]') JSON.parse(data)
        }),
    },
    { name: `openaiCompatible + assembler, ${label}`, run: () => translateAll(parts) },
  ])
  const ratio = report(subject as Measurement, floor as Measurement).ratio
  const parsed = report(subject as Measurement, parseFloor as Measurement).ratio
  return { ratio, parsed }
}

/** Runs the model benchmark; returns its ratios. */
export async function runModelsBench(): Promise<Record<string, number>> {
  const synthetic = await compare('synthetic (chunks/s)', sseBody())
  const recorded = await compare('recorded DeepSeek (chunks/s)', recordedBody())
  return {
    'sse-translate-2000': synthetic.ratio,
    'sse-translate-2000-vs-parse': synthetic.parsed,
    'sse-translate-2000-recorded': recorded.ratio,
    'sse-translate-2000-recorded-vs-parse': recorded.parsed,
  }
}
