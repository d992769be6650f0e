/**
 * Scale-out benchmark: 1, 2 and 4 worker processes (bench/scale-out-worker.ts) over one PostgreSQL,
 * with a fake model that waits 50 ms per step, so the work is I/O-bound as with a real model.
 *
 * - **Throughput.** 64 sessions × 5 messages submitted at once; messages per second from the first
 *   submit until every turn ended, and its ratio to one worker (goals: ≥ 1.8× at 2, ≥ 3× at 4).
 * - **Delay.** Then messages arrive one by one at a steady rate (half of what one worker drives),
 *   each to one of the sessions; the delay from `submit` until a tail in this process sees the
 *   message in the log (the turn's first event), p50 and p99.
 *
 * Each size runs in a schema of its own. The server is `YOKE_BENCH_POSTGRES_URL`, or a throwaway
 * cluster on loopback (which runs with `fsync=off`).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { setMaxListeners } from 'node:events'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { createPostgresClient, createPostgresTail, type PostgresClient } from 'yoke/postgres'
import { benchPostgresServer } from './postgres.bench.js'
import type { BenchWorkerOptions } from './scale-out-worker.js'

const SIZES = [1, 2, 4] as const
const CONCURRENCY = 2
const STEP_MS = 50
const SESSIONS = 64
const MESSAGES = 5
/** The steady phase: messages per second as a share of what one worker drives, and its length. */
const STEADY_SHARE = 0.5
const STEADY_MS = 6_000

/** What one size measured. */
interface SizeResult {
  readonly workers: number
  readonly perSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
}

async function startWorker(options: BenchWorkerOptions): Promise<ChildProcess> {
  // The same loader flags as this process (tsx), without a profiler's.
  const execArgv = process.execArgv.filter((flag) => !flag.startsWith('--cpu-prof'))
  const child = spawn(
    process.execPath,
    [...execArgv, new URL('./scale-out-worker.ts', import.meta.url).pathname, JSON.stringify(options)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`a bench worker exited with ${code}`)))
    lines.once('line', (line) => (line === 'ready' ? resolve() : reject(new Error(`a bench worker said ${line}`))))
  })
  return child
}

async function stopWorker(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

const percentile = (sorted: readonly number[], share: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? Number.NaN

async function runSize(connectionString: string, workers: number): Promise<SizeResult> {
  const schema = `yoke_scale_${randomBytes(4).toString('hex')}`
  const sql = new pg.Pool({ connectionString, max: 2 })
  const client: PostgresClient = createPostgresClient({ connectionString, schema })
  const tails = createPostgresTail({ connectionString, schema })
  const children: ChildProcess[] = []
  try {
    // The first submit creates the tables; the workers find them there.
    await client.submit('warm-up', 'hello', { create: true })
    for (let index = 0; index < workers; index++)
      children.push(await startWorker({ connectionString, schema, concurrency: CONCURRENCY, stepMs: STEP_MS }))
    const turnsEnded = async (): Promise<number> => {
      const rows = await sql.query<{ count: string }>(
        `SELECT count(*) AS count FROM "${schema}"."yoke_events" WHERE body LIKE '{"type":"turn/end"%'`,
      )
      return Number(rows.rows[0]?.count ?? 0)
    }
    while ((await turnsEnded()) < 1) await sleep(20)

    // Throughput: everything at once, eight submits in flight.
    const sessions = Array.from({ length: SESSIONS }, (_, index) => `scale-${index}`)
    const jobs = sessions.flatMap((session) => Array.from({ length: MESSAGES }, (_, index) => ({ session, index })))
    const started = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!
          await client.submit(job.session, `message ${job.index}`, { create: true })
        }
      }),
    )
    const total = 1 + jobs.length
    while ((await turnsEnded()) < total) await sleep(10)
    const perSecond = jobs.length / ((performance.now() - started) / 1_000)

    // Delay: steady arrivals, each timed until a tail of its session sees the message.
    const controller = new AbortController()
    // One signal ends every tail of the phase.
    setMaxListeners(SESSIONS + 10, controller.signal)
    const seen = new Map<string, number>()
    const readers = sessions.map(async (session) => {
      for await (const event of tails.tail(session, { signal: controller.signal })) {
        if (event.type === 'user/message') seen.set((event.data as { id: string }).id, performance.now())
      }
    })
    const rate = STEADY_SHARE * (CONCURRENCY / (STEP_MS / 1_000))
    const count = Math.round((rate * STEADY_MS) / 1_000)
    const sent: { readonly id: string; readonly at: number }[] = []
    const submits: Promise<void>[] = []
    const steadyStart = performance.now()
    for (let index = 0; index < count; index++) {
      const due = steadyStart + (index * 1_000) / rate
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      const session = sessions[index % sessions.length]!
      const at = performance.now()
      submits.push(
        client.submit(session, `steady ${index}`).then((result) => {
          sent.push({ id: result.messageId, at })
        }),
      )
    }
    await Promise.all(submits)
    const deadline = performance.now() + 30_000
    while (sent.some((message) => !seen.has(message.id)) && performance.now() < deadline) await sleep(10)
    controller.abort()
    await Promise.all(readers)
    const delays = sent.map((message) => (seen.get(message.id) ?? Number.NaN) - message.at).sort((a, b) => a - b)
    return { workers, perSecond, p50Ms: percentile(delays, 0.5), p99Ms: percentile(delays, 0.99) }
  } finally {
    await Promise.all(children.map(stopWorker))
    await tails.close()
    await client.close()
    await sql.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
    await sql.end()
  }
}

/** Runs every size; the throughput ratios to one worker by size. */
export async function runScaleOutBench(): Promise<Record<string, number>> {
  const chosen = await benchPostgresServer()
  if (typeof chosen === 'string') {
    console.log(`  skipped: ${chosen}`)
    return {}
  }
  try {
    console.log(
      `  (${chosen.source}; ${SESSIONS} sessions × ${MESSAGES} messages at once, then steady arrivals; a fake model waiting ${STEP_MS} ms per step; ${CONCURRENCY} sessions per worker)`,
    )
    const results: SizeResult[] = []
    for (const workers of SIZES) {
      const result = await runSize(chosen.connectionString, workers)
      results.push(result)
      const ratio = result.perSecond / results[0]!.perSecond
      console.log(
        `  ${workers} worker${workers === 1 ? ' ' : 's'}: ${result.perSecond.toFixed(1).padStart(6)} messages/s  ${ratio.toFixed(2)}× one worker   submit → first event p50 ${result.p50Ms.toFixed(0)} ms, p99 ${result.p99Ms.toFixed(0)} ms`,
      )
    }
    const ratios: Record<string, number> = {}
    for (const result of results) ratios[`workers-${result.workers}`] = result.perSecond / results[0]!.perSecond
    const goals: Record<string, number> = { 'workers-2': 1.8, 'workers-4': 3 }
    for (const [name, goal] of Object.entries(goals)) {
      const value = ratios[name] ?? Number.NaN
      console.log(`  ${name}: ${value.toFixed(2)}× (goal ≥ ${goal}×) ${value >= goal ? 'PASS' : 'FAIL'}`)
    }
    return ratios
  } finally {
    await chosen.cluster?.stop()
  }
}
