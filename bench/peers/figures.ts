/** Yoke's own figures with no peer: loading a 100,000-event log, and its memory over many agents. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHarness, jsonlPersistence, type SessionEvent } from '../../dist/index.js'
import { fakeAdapter, lookupTool, yokeRuntime } from './cases/yoke.js'
import type { CyclesResult, IdleResult, Job, LoadResult } from './job.js'

/** What the load figure reuses from the repository's persistence bench (loaded at run time). */
interface PersistenceBench {
  logOf(count: number): readonly SessionEvent[]
  interleavedBest(
    rounds: number,
    cases: readonly { readonly name: string; readonly run: () => Promise<void> }[],
  ): Promise<{ readonly name: string; readonly opsPerSecond: number }[]>
}

/**
 * `persistence.load` of a stored log against `readFile` + `split` + `JSON.parse`, interleaved, each
 * keeping its best round: the same cases as the load part of `npm run bench persistence`, reusing
 * its log builder and round helper.
 */
export async function measureLoad(job: Extract<Job, { kind: 'load' }>): Promise<LoadResult> {
  // A path the type checker does not follow: the repository's bench is checked with the package sources.
  const benchPath = new URL('../persistence.bench.ts', import.meta.url).href
  const bench = (await import(benchPath)) as PersistenceBench
  const { readFile, stat } = await import('node:fs/promises')
  const dir = await mkdtemp(join(tmpdir(), 'yoke-peers-load-'))
  try {
    const events = bench.logOf(job.events)
    const writer = jsonlPersistence({ dir })
    await writer.create({ version: 1, id: 'p1', createdAt: 1_000 })
    const lease = await writer.acquire('p1')
    for (let at = 0; at < events.length; at += 100)
      await writer.append('p1', events.slice(at, at + 100), { expectedSeq: at, lease })
    await lease.release()
    await writer.close()
    const path = join(dir, 'p1.jsonl')
    const harness = await createHarness({ persistence: jsonlPersistence({ dir }) })
    const [floor, load] = await bench.interleavedBest(job.rounds, [
      {
        name: 'floor',
        run: async () => {
          const lines = (await readFile(path, 'utf8')).split('\n')
          let parsed = 0
          for (const line of lines) if (line.length > 0 && JSON.parse(line) !== undefined) parsed++
          if (parsed !== events.length + 1) throw new Error(`parsed ${parsed} lines`)
        },
      },
      {
        name: 'load',
        run: async () => {
          if ((await harness.persistence.load('p1')).events.length !== events.length) throw new Error('short load')
        },
      },
    ])
    await harness.close()
    return {
      kind: 'load',
      floorMs: 1_000 / (floor?.opsPerSecond ?? Number.NaN),
      loadMs: 1_000 / (load?.opsPerSecond ?? Number.NaN),
      megabytes: (await stat(path)).size / 1_048_576,
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const collect = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('run with --expose-gc')
  gc()
  gc()
}

/** Listeners on the process (every event name) — a leak of signal or exit handlers shows here. */
function processListeners(): number {
  return process.eventNames().reduce((total, name) => total + process.listenerCount(name), 0)
}

/**
 * Yoke over `cycles` create/run/dispose cycles: heap and counts after a gc at 30% of the cycles and
 * at the end. With `persistence: 'false'` (the default) the harness has no store at all; with
 * `'memory'` the memory store keeps every session, so its heap grows by design.
 */
export async function measureCycles(job: Extract<Job, { kind: 'cycles' }>): Promise<CyclesResult> {
  const persistence = job.persistence
  const runtime = await yokeRuntime('memory', persistence === 'false' ? { extra: { persistence: false } } : {})
  // The first sample comes after a warm-up: the first few thousand cycles fill JIT feedback and
  // caches of fixed size (from 1,000 to 4,000 cycles the heap grows about 3 MB, then not at all
  // up to 40,000), and that is not growth per cycle.
  const early = Math.max(1, Math.round((job.cycles * 3) / 10))
  let heapEarly = 0
  let listenersEarly = 0
  let resourcesEarly = 0
  for (let cycle = 1; cycle <= job.cycles; cycle++) {
    const conversation = await runtime.conversation()
    await conversation.turn(`question ${cycle}`)
    await conversation.close()
    if (cycle === early) {
      collect()
      heapEarly = process.memoryUsage().heapUsed
      listenersEarly = processListeners()
      resourcesEarly = process.getActiveResourcesInfo().length
    }
  }
  collect()
  const result: CyclesResult = {
    kind: 'cycles',
    persistence,
    heapEarly,
    heapEnd: process.memoryUsage().heapUsed,
    listenersEarly,
    listenersEnd: processListeners(),
    resourcesEarly,
    resourcesEnd: process.getActiveResourcesInfo().length,
    cycles: job.cycles,
  }
  await runtime.close()
  return result
}

/**
 * Live, idle agents over stored sessions of about `events` events each: the sessions are written by
 * one harness (JSONL), then a second harness opens them; the heap they hold afterwards (after a gc),
 * per agent, against the JSON bytes of one agent's events. A first session is opened before, so
 * code loading and first-use caches are not counted, and the heap is shared out over several agents,
 * so what the first of them allocates once (compiled code's feedback, caches of fixed size) does not
 * count as one agent's.
 */
export async function measureIdle(job: Extract<Job, { kind: 'idle' }>): Promise<IdleResult> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-peers-idle-'))
  try {
    const writer = await yokeHarness(dir)
    const idleIds = Array.from({ length: IDLE_AGENTS }, (_, index) => `idle-${index}`)
    for (const id of ['warm', ...idleIds]) {
      const agent = await writer.createAgent({ sessionId: id })
      let turn = 0
      while (agent.session.length < job.events) await agent.run(`question ${++turn}`)
      await agent.dispose()
    }
    await writer.close()
    const reader = await yokeHarness(dir)
    const warm = await reader.openAgent('warm')
    collect()
    const before = process.memoryUsage().heapUsed
    const idle = []
    for (const id of idleIds) idle.push(await reader.openAgent(id))
    collect()
    const heldBytes = (process.memoryUsage().heapUsed - before) / idle.length
    const jsonBytes =
      idle.reduce(
        (total, agent) =>
          total + agent.session.events.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)), 0),
        0,
      ) / idle.length
    const events = Math.round(idle.reduce((total, agent) => total + agent.session.length, 0) / idle.length)
    // For scale: the same logs' lines parsed by JSON.parse alone, held the same way.
    const { readFile } = await import('node:fs/promises')
    collect()
    const parsedBefore = process.memoryUsage().heapUsed
    const parsed: unknown[][] = []
    for (const id of idleIds) {
      const lines = (await readFile(join(dir, `${id}.jsonl`), 'utf8')).split('\n')
      parsed.push(lines.filter((line) => line.length > 0).map((line) => JSON.parse(line) as unknown))
    }
    collect()
    const parsedBytes = (process.memoryUsage().heapUsed - parsedBefore) / parsed.length
    for (const agent of idle) await agent.dispose()
    await warm.dispose()
    await reader.close()
    return { kind: 'idle', events, jsonBytes, heldBytes, parsedBytes }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** How many idle agents the heap is shared out over. */
const IDLE_AGENTS = 5

async function yokeHarness(dir: string): Promise<Awaited<ReturnType<typeof createHarness>>> {
  return createHarness({
    model: fakeAdapter,
    tools: [lookupTool],
    persistence: jsonlPersistence({ dir }),
    logger: silentLogger,
  })
}

const silentLogger = { debug() {}, info() {}, warn() {}, error() {} }
