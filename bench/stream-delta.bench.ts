/**
 * Streaming benchmark: one step streaming 1,000 text deltas from a loopback
 * OpenAI-compatible server in its own process (bench/stream-server.ts), through `openaiCompatible`
 * into the session log, a fresh agent per turn (create, run, dispose). Reported as this process's
 * CPU µs per delta against a raw floor in the same run: `fetch` + SSE split at blank lines +
 * `JSON.parse` of every event + push of its delta (goal ≤ 2×). For context: the adapter alone
 * (`adapter.stream` folded by `createAssembler`, no agent, no log) and the same turn on JSONL.
 * Cases run interleaved, round by round; each reports its median round.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { createHarness, type Harness, jsonlPersistence, type Logger, openaiCompatible } from 'yoke'
import { assembleOne } from './models.bench.js'
import { type Measurement, report } from './measure.js'

const DELTAS = 1_000
/** Timed rounds (after one warm-up round); each runs every case `TURNS` times. */
const ROUNDS = 7
const TURNS = 10
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const expectedText = Array.from({ length: DELTAS }, (_, index) => ` token${index}`).join('')

/** Starts the server process; resolves with its base URL and a stop function. */
async function startServer(): Promise<{ readonly baseURL: string; readonly stop: () => Promise<void> }> {
  // The same loader flags as this process (tsx), without a profiler's.
  const execArgv = process.execArgv.filter((flag) => !flag.startsWith('--cpu-prof'))
  const child: ChildProcess = spawn(
    process.execPath,
    [...execArgv, new URL('./stream-server.ts', import.meta.url).pathname, String(DELTAS)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const port = await new Promise<string>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the stream server exited with ${code}`)))
    lines.once('line', resolve)
  })
  return {
    baseURL: `http://127.0.0.1:${port.trim()}/v1`,
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit')
        child.once('exit', () => resolve())
        child.stdin?.end()
      }),
  }
}

/** The floor: fetch, split the body at blank lines, `JSON.parse` each event, push its delta. */
async function rawFloor(baseURL: string): Promise<void> {
  const response = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'count' }] }),
  })
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  const deltas: string[] = []
  let buffer = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let end = buffer.indexOf('\n\n')
    let start = 0
    while (end >= 0) {
      const data = buffer.slice(start + 6, end)
      if (data !== '[DONE]') {
        const parsed = JSON.parse(data) as { choices: { delta?: { content?: string } }[] }
        const content = parsed.choices[0]?.delta?.content
        if (content !== undefined && content !== '') deltas.push(content)
      }
      start = end + 2
      end = buffer.indexOf('\n\n', start)
    }
    buffer = buffer.slice(start)
  }
  if (deltas.length !== DELTAS) throw new Error(`floor saw ${deltas.length} deltas`)
}

/** The adapter alone: `adapter.stream` folded by an assembler (no agent, no log). */
async function adapterOnly(baseURL: string): Promise<void> {
  const adapter = openaiCompatible({ baseURL, apiKey: 'bench-key', model: 'bench-model' })
  const outcome = await assembleOne(adapter, 'bench-model')
  if (outcome.kind !== 'message') throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`)
}

/** One fresh agent, one turn, disposed. */
async function agentTurn(harness: Harness): Promise<void> {
  const agent = await harness.createAgent()
  const result = await agent.run('count')
  if (result.reason.kind !== 'completed' || result.text !== expectedText)
    throw new Error(`unexpected turn end ${JSON.stringify(result.reason)}`)
  await agent.dispose()
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((left, right) => left - right)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** This process's CPU µs (user + system) of `TURNS` runs of `run`, per delta. */
async function cpuPerDelta(run: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage()
  for (let turn = 0; turn < TURNS; turn++) await run()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / (TURNS * DELTAS)
}

/** Runs the streaming benchmark; returns its ratios. */
export async function runStreamDeltaBench(): Promise<Record<string, number>> {
  const server = await startServer()
  const dir = await mkdtemp(join(tmpdir(), 'yoke-bench-stream-'))
  const model = openaiCompatible({ baseURL: server.baseURL, apiKey: 'bench-key', model: 'bench-model' })
  const memory = await createHarness({ model, logger: silent })
  const jsonl = await createHarness({ model, logger: silent, persistence: jsonlPersistence({ dir }) })
  try {
    const cases = [
      { name: 'fetch + SSE split + JSON.parse + push', run: () => rawFloor(server.baseURL) },
      { name: 'openaiCompatible + assembler, no log', run: () => adapterOnly(server.baseURL) },
      { name: 'Yoke turn, memory persistence', run: () => agentTurn(memory) },
      { name: 'Yoke turn, JSONL persistence', run: () => agentTurn(jsonl) },
    ]
    for (const entry of cases) await cpuPerDelta(entry.run)
    const samples: number[][] = cases.map(() => [])
    for (let round = 0; round < ROUNDS; round++)
      for (const [index, entry] of cases.entries()) samples[index]?.push(await cpuPerDelta(entry.run))
    const measured: Measurement[] = cases.map((entry, index) => {
      const perDelta = median(samples[index] as number[])
      console.log(`${entry.name.padEnd(44)} ${perDelta.toFixed(2).padStart(8)} µs CPU per delta`)
      return { name: `${entry.name} (deltas/s of CPU)`, opsPerSecond: 1_000_000 / perDelta }
    })
    const [floor, adapter, yokeMemory, yokeJsonl] = measured as [Measurement, Measurement, Measurement, Measurement]
    return {
      'stream-1000-adapter': report(adapter, floor).ratio,
      'stream-1000-memory': report(yokeMemory, floor).ratio,
      'stream-1000-jsonl': report(yokeJsonl, floor).ratio,
    }
  } finally {
    await memory.close()
    await jsonl.close()
    await server.stop()
    await rm(dir, { recursive: true, force: true })
  }
}
