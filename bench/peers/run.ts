/**
 * `npm run bench:peers`: Yoke next to pi-agent-core, the AI SDK, OpenAI Agents JS, LangGraph and a
 * hand-written floor, one table. Every measurement runs in a fresh child process; the cases are
 * interleaved round by round (every case once per round, so a slow spell of the machine hits all of
 * them) and each keeps the median of its rounds. Options (after `--`):
 *
 *   --rounds N          rounds of the interleaved cases (default 5)
 *   --only a,b          groups to run: fresh, long, flat, stream, load, memory (default all)
 *   --fresh-turns N     measured one-turn conversations per child (default 300)
 *   --long-turns N      turns of the one long conversation (default 200)
 *   --flat-turns N      turns of Yoke's flatness conversation (default 1000)
 *   --warmup N          warm-up turns per child (default 50)
 *   --deltas N          text deltas per streamed step (default 1000)
 *   --stream-turns N    streamed steps per child (default 30)
 *   --load-events N     events of the stored log (default 100000)
 *   --cycles N          create/run/dispose cycles of the memory figure (default 10000)
 *   --idle-events N     events of the idle agent's session (default 1000)
 *   --persistence-memory measure the memory figure over memory persistence, which keeps every session
 *                       (default: `persistence: false`, no store)
 *   --quick             small counts for a smoke run (rounds 1, 40 fresh turns, 40 long turns, …)
 */
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { RuntimeName } from './cases/index.js'
import type { Job, JobResult, StreamCase } from './job.js'
import { printReport } from './report.js'
import { median } from './stats.js'

const groups = ['fresh', 'long', 'flat', 'stream', 'load', 'memory'] as const
type Group = (typeof groups)[number]

interface Options {
  rounds: number
  only: Set<Group>
  freshTurns: number
  longTurns: number
  flatTurns: number
  warmup: number
  deltas: number
  streamTurns: number
  loadEvents: number
  cycles: number
  idleEvents: number
  persistenceFalse: boolean
}

function parseOptions(argv: readonly string[]): Options {
  const quick = argv.includes('--quick')
  const options: Options = {
    rounds: quick ? 1 : 5,
    only: new Set(groups),
    freshTurns: quick ? 40 : 300,
    longTurns: quick ? 40 : 200,
    flatTurns: quick ? 200 : 1_000,
    warmup: quick ? 10 : 50,
    deltas: 1_000,
    streamTurns: quick ? 5 : 30,
    loadEvents: quick ? 20_000 : 100_000,
    cycles: quick ? 1_000 : 10_000,
    idleEvents: 1_000,
    persistenceFalse: true,
  }
  const numeric: Record<string, keyof Options> = {
    '--rounds': 'rounds',
    '--fresh-turns': 'freshTurns',
    '--long-turns': 'longTurns',
    '--flat-turns': 'flatTurns',
    '--warmup': 'warmup',
    '--deltas': 'deltas',
    '--stream-turns': 'streamTurns',
    '--load-events': 'loadEvents',
    '--cycles': 'cycles',
    '--idle-events': 'idleEvents',
  }
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index] as string
    const key = numeric[flag]
    if (key !== undefined) {
      const value = Number(argv[++index])
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${flag} takes a positive integer`)
      Object.assign(options, { [key]: value })
    } else if (flag === '--only') {
      const asked = (argv[++index] ?? '').split(',')
      const unknown = asked.filter((name) => !(groups as readonly string[]).includes(name))
      if (unknown.length > 0)
        throw new Error(`unknown group ${unknown.join(', ')}; the groups are ${groups.join(', ')}`)
      options.only = new Set(asked as Group[])
    } else if (flag === '--persistence-memory') options.persistenceFalse = false
    else if (flag !== '--quick') throw new Error(`unknown option ${flag}`)
  }
  return options
}

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url))

/** The loaders every child gets: TypeScript through tsx, and the sync counter. */
const execArgv = ['--import', import.meta.resolve('tsx'), '--import', import.meta.resolve('./sync-counter.ts')]

/**
 * tsx reads this bench's tsconfig (no path mapping), so `yoke` in the reused root bench resolves as
 * the package does, to the built `dist`, the same copy the cases import.
 */
const env = { ...process.env, TSX_TSCONFIG_PATH: here('./tsconfig.json') }

/** Runs one job in a fresh child process and returns what it sent. */
function runChild(job: Job): Promise<JobResult> {
  return new Promise((resolve, reject) => {
    const child = fork(here('./child.ts'), [JSON.stringify(job)], {
      execArgv: [...execArgv, ...(job.kind === 'cycles' || job.kind === 'idle' ? ['--expose-gc'] : [])],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env,
      // Structured clone, not JSON: a figure that could not be measured stays NaN instead of turning null.
      serialization: 'advanced',
    })
    let result: JobResult | undefined
    child.on('message', (message) => {
      result = message as JobResult
    })
    child.on('error', reject)
    child.on('exit', (code) => {
      if (result !== undefined) resolve(result)
      else reject(new Error(`child for ${JSON.stringify(job)} exited ${code} without a result`))
    })
  })
}

/** Starts the loopback SSE server in its own process; resolves with its base URL and the process. */
function startServer(deltas: number): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = fork(here('./sse-server.ts'), [String(deltas)], {
      execArgv: ['--import', import.meta.resolve('tsx')],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    child.once('message', (message) => resolve({ url: (message as { url: string }).url, child }))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the SSE server exited ${code}`)))
  })
}

const turnRuntimes: readonly RuntimeName[] = [
  'pi',
  'ai-sdk',
  'openai-agents',
  'langgraph',
  'yoke-memory',
  'yoke-jsonl',
  'yoke-jsonl-turn',
  'floor',
]
const flatRuntimes: readonly RuntimeName[] = ['yoke-memory', 'yoke-jsonl']
const streamCases: readonly StreamCase[] = ['stream-floor', 'stream-ai-sdk', 'stream-yoke']

/** The interleaved jobs of one round, by key. */
function roundJobs(options: Options, url: string | undefined): [string, Job][] {
  const jobs: [string, Job][] = [['fsync', { kind: 'fsync', count: 200 }]]
  const { warmup } = options
  if (options.only.has('fresh'))
    for (const runtime of turnRuntimes)
      jobs.push([`fresh/${runtime}`, { kind: 'turns', runtime, mode: 'fresh', turns: options.freshTurns, warmup }])
  if (options.only.has('long'))
    for (const runtime of turnRuntimes)
      jobs.push([`long/${runtime}`, { kind: 'turns', runtime, mode: 'long', turns: options.longTurns, warmup }])
  if (options.only.has('flat'))
    for (const runtime of flatRuntimes)
      jobs.push([`flat/${runtime}`, { kind: 'turns', runtime, mode: 'long', turns: options.flatTurns, warmup }])
  if (url !== undefined)
    for (const name of streamCases)
      jobs.push([
        `stream/${name}`,
        { kind: 'stream', case: name, url, deltas: options.deltas, turns: options.streamTurns, warmup: 5 },
      ])
  return jobs
}

/** The median of every numeric field over the rounds; peak RSS is the highest; the rest from round 1. */
function combine(results: readonly JobResult[]): JobResult {
  const first = results[0] as JobResult
  const combined: Record<string, unknown> = { ...first }
  for (const [key, value] of Object.entries(first))
    if (typeof value === 'number')
      combined[key] =
        key === 'peakRss'
          ? Math.max(...results.map((result) => result.peakRss))
          : median(results.map((result) => (result as unknown as Record<string, number>)[key] as number))
  return combined as unknown as JobResult
}

const options = parseOptions(process.argv.slice(2))
console.log(
  `node ${process.version}, ${new Date().toISOString()}; ${options.rounds} round(s), groups ${[...options.only].join(', ')}`,
)
const server = options.only.has('stream') ? await startServer(options.deltas) : undefined
const collected = new Map<string, JobResult[]>()
try {
  for (let round = 1; round <= options.rounds; round++) {
    const jobs = roundJobs(options, server?.url)
    // Each round starts one case further on, so no case always runs right after the same one.
    const shift = (round - 1) % jobs.length
    const ordered = [...jobs.slice(shift), ...jobs.slice(0, shift)]
    const started = performance.now()
    for (const [key, job] of ordered) {
      // A case that fails is reported and left out of this round; the others still run.
      const result = await runChild(job).catch((error: unknown) => {
        console.error(`${key}, round ${round}: ${error instanceof Error ? error.message : String(error)}`)
        return undefined
      })
      if (result !== undefined) collected.set(key, [...(collected.get(key) ?? []), result])
    }
    console.log(
      `round ${round}/${options.rounds}: ${ordered.length} cases, ${((performance.now() - started) / 1_000).toFixed(0)} s`,
    )
  }
} finally {
  server?.child.removeAllListeners('exit')
  server?.child.disconnect()
}
if (options.only.has('load'))
  collected.set('load', [await runChild({ kind: 'load', events: options.loadEvents, rounds: 5 })])
if (options.only.has('memory')) {
  collected.set('cycles', [
    await runChild({
      kind: 'cycles',
      cycles: options.cycles,
      persistence: options.persistenceFalse ? 'false' : 'memory',
    }),
  ])
  collected.set('idle', [await runChild({ kind: 'idle', events: options.idleEvents })])
}
const results = new Map([...collected].map(([key, list]) => [key, combine(list)]))

printReport(options, results)
