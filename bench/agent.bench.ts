/**
 * Agent-loop benchmarks (issue figures). A scripted model and one no-op tool;
 * every turn has two steps (a tool call, then text).
 *
 * - 1,000 fresh sessions of one turn, memory persistence: µs of runtime per step (goal ≤ 50 µs).
 * - The same on JSONL at the default checkpoints, against a hand-written loop in this
 *   bench that writes the same events as JSON lines with the same durable syscalls: the lock file
 *   (a write, not synced, as the adapter's), the first batch with the header (write + fsync + directory fsync), every
 *   later batch (write + fdatasync), the lock's removal. The batches are the ones the harness
 *   wrote, recorded at the adapter (goal ≤ 1.3×).
 * - One session of 200 turns: the last turn's per-step cost against the first turn's (goal ≤ 1.2×).
 */
import { mkdir, mkdtemp, open, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import {
  createHarness,
  defineTool,
  type Harness,
  jsonlPersistence,
  type Logger,
  type PersistenceAdapter,
  type SessionEvent,
} from 'yoke'
import { type ScriptEntry, scriptedModel, text, tool } from 'yoke/testing'
import { countingFileSystem } from '../test/helpers/counting-file-system.js'

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const noop = defineTool({ name: 'noop', description: 'Does nothing', input: z.object({}), execute: () => 'ok' })
const SESSIONS = 1_000
const STEPS_PER_TURN = 2
/** Measured rounds (after one warm-up round); the best counts. */
const ROUNDS = 3

/** `turns` turns of the script: a tool call, then text. */
function scriptOf(turns: number): ScriptEntry[] {
  return Array.from({ length: turns }, () => [tool('noop', {}), text('done')]).flat()
}

/** Durable syscalls, counted (the floor must make the same ones). */
export type SyscallCounts = { fsync: number; fdatasync: number; write: number }

/** The adapter with every append's batch recorded per session (the events are the frozen originals). */
function recordingBatches(inner: PersistenceAdapter): {
  adapter: PersistenceAdapter
  batches: Map<string, (readonly SessionEvent[])[]>
} {
  const batches = new Map<string, (readonly SessionEvent[])[]>()
  const adapter: PersistenceAdapter = {
    ...inner,
    name: inner.name,
    create: (header) => inner.create(header),
    append: (sessionId, events, options) => {
      if (events.length > 0) {
        const list = batches.get(sessionId) ?? []
        list.push(events)
        batches.set(sessionId, list)
      }
      return inner.append(sessionId, events, options)
    },
    load: (sessionId, options) => inner.load(sessionId, options),
    commitRepair: (sessionId, torn, closers) => inner.commitRepair(sessionId, torn, closers),
    list: (options) => inner.list(options),
    acquire: (sessionId) => inner.acquire(sessionId),
    close: () => inner.close(),
  }
  return { adapter, batches }
}

/** One fresh agent, one turn; returns the ms of its whole life (create, run, dispose) and of `run` alone. */
async function oneSession(harness: Harness): Promise<{ total: number; run: number }> {
  const started = performance.now()
  const agent = await harness.createAgent()
  const running = performance.now()
  const result = await agent.run('hi')
  const ran = performance.now()
  if (result.reason.kind !== 'completed' || result.text !== 'done')
    throw new Error(`unexpected turn end ${JSON.stringify(result.reason)}`)
  await agent.dispose()
  return { total: performance.now() - started, run: ran - running }
}

/** `count` fresh sessions in a row; the summed ms. */
async function sessions(harness: Harness, count: number): Promise<{ total: number; run: number }> {
  let total = 0
  let run = 0
  for (let index = 0; index < count; index++) {
    const timing = await oneSession(harness)
    total += timing.total
    run += timing.run
  }
  return { total, run }
}

/** `SESSIONS` sessions on a fresh harness, closed afterwards. */
async function round(harness: Harness): Promise<{ total: number; run: number }> {
  try {
    return await sessions(harness, SESSIONS)
  } finally {
    await harness.close()
  }
}

/**
 * The hand-written floor for one recorded session: the same events as JSON lines, the same
 * durable syscalls as the adapter (see the module comment); ms.
 */
async function handWritten(
  dir: string,
  id: string,
  batches: readonly (readonly SessionEvent[])[],
  counts: SyscallCounts,
): Promise<number> {
  const started = performance.now()
  const lockPath = join(dir, `${id}.lock`)
  const lock = await open(lockPath, 'wx', 0o600)
  await lock.write(JSON.stringify({ pid: process.pid, token: id }))
  counts.write++
  await lock.close()
  const log = await open(join(dir, `${id}.jsonl`), 'wx', 0o600)
  let first = true
  for (const batch of batches) {
    let lines = first ? `${JSON.stringify({ type: 'session', version: 1, id, createdAt: 0 })}\n` : ''
    for (const event of batch) lines += `${JSON.stringify(event)}\n`
    await log.appendFile(lines)
    counts.write++
    if (first) {
      await log.sync()
      counts.fsync++
      const directory = await open(dir, 'r')
      await directory.sync()
      counts.fsync++
      await directory.close()
      first = false
    } else {
      await log.datasync()
      counts.fdatasync++
    }
  }
  await log.close()
  await unlink(lockPath)
  return performance.now() - started
}

/**
 * Per-step µs of each of `turns` turns of one session (memory persistence): three sessions are
 * driven turn by turn in lockstep and each turn keeps its fastest of the three (the least
 * disturbed by GC and other processes).
 */
async function longSessions(turns: number): Promise<number[]> {
  const lanes = 3
  const harness = await createHarness({ model: scriptedModel(scriptOf(turns * lanes)), tools: [noop], logger: silent })
  try {
    const agents = await Promise.all(Array.from({ length: lanes }, () => harness.createAgent()))
    const perStep: number[] = []
    for (let turn = 1; turn <= turns; turn++) {
      let best = Number.POSITIVE_INFINITY
      for (const agent of agents) {
        const started = performance.now()
        const result = await agent.run(`question ${turn}`)
        best = Math.min(best, ((performance.now() - started) * 1_000) / STEPS_PER_TURN)
        if (result.turn !== turn || result.reason.kind !== 'completed')
          throw new Error(`turn ${turn} ended ${JSON.stringify(result.reason)}`)
      }
      perStep.push(best)
    }
    return perStep
  } finally {
    await harness.close()
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((left, right) => left - right)
  return sorted[Math.floor(sorted.length / 2)] as number
}

interface Row {
  readonly figure: string
  readonly value: string
  /** Absent for an informative row. */
  readonly goal?: string
  readonly met?: boolean
}

function printTable(rows: readonly Row[]): void {
  const widths = [56, 16, 12]
  console.log(
    `${'figure'.padEnd(widths[0] as number)} ${'value'.padStart(widths[1] as number)}  ${'goal'.padEnd(widths[2] as number)} met`,
  )
  for (const row of rows) {
    console.log(
      `${row.figure.padEnd(widths[0] as number)} ${row.value.padStart(widths[1] as number)}  ${(row.goal ?? '—').padEnd(widths[2] as number)} ${row.met === undefined ? '' : row.met ? 'yes' : 'NO'}`,
    )
  }
}

/** Runs the agent benchmark, prints its table, and returns the figures by name. */
export async function runAgentBench(): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-bench-agent-'))
  try {
    const steps = SESSIONS * STEPS_PER_TURN
    const memoryHarness = (): Promise<Harness> =>
      createHarness({ model: scriptedModel(scriptOf(SESSIONS)), tools: [noop], logger: silent })
    // Round 0 warms up; the best of rounds 1–3 counts.
    let memory = { total: Number.POSITIVE_INFINITY, run: Number.POSITIVE_INFINITY, cpu: Number.POSITIVE_INFINITY }
    for (let index = 0; index <= ROUNDS; index++) {
      const cpuBefore = process.cpuUsage()
      const timing = await round(await memoryHarness())
      const cpu = process.cpuUsage(cpuBefore)
      if (index > 0 && timing.run < memory.run) memory = { ...timing, cpu: (cpu.user + cpu.system) / 1_000 }
    }

    // JSONL, alternating with the floor so both see the same machine: each harness round records
    // its adapter's batches and syscalls, and the floor replays that round's batches.
    let jsonlMs = Number.POSITIVE_INFINITY
    let floorMs = Number.POSITIVE_INFINITY
    let harnessCounts: SyscallCounts = zeroCounts()
    let floorCounts: SyscallCounts = zeroCounts()
    let recorded = new Map<string, (readonly SessionEvent[])[]>()
    for (let index = 0; index <= ROUNDS; index++) {
      harnessCounts = zeroCounts()
      const { adapter, batches } = recordingBatches(
        jsonlPersistence({ dir: join(dir, `harness-${index}`), fileSystem: countingFileSystem(harnessCounts) }),
      )
      recorded = batches
      const timing = await round(
        await createHarness({
          model: scriptedModel(scriptOf(SESSIONS)),
          tools: [noop],
          persistence: adapter,
          logger: silent,
        }),
      )
      const floorDir = join(dir, `floor-${index}`)
      await mkdir(floorDir)
      floorCounts = zeroCounts()
      let floor = 0
      for (const [id, list] of batches) floor += await handWritten(floorDir, id, list, floorCounts)
      if (index > 0) {
        jsonlMs = Math.min(jsonlMs, timing.total)
        floorMs = Math.min(floorMs, floor)
      }
    }
    const batchSizes = [...recorded.values()][0]?.map((batch) => batch.length) ?? []

    const long = await longSessions(200)
    const first = long[0] as number
    const last = long.at(-1) as number
    const firstTen = median(long.slice(0, 10))
    const lastTen = median(long.slice(-10))

    const memoryPerStep = (memory.run * 1_000) / steps
    const memoryLifePerStep = (memory.total * 1_000) / steps
    const memoryCpuPerStep = (memory.cpu * 1_000) / steps
    const jsonlPerStep = (jsonlMs * 1_000) / steps
    const floorPerStep = (floorMs * 1_000) / steps
    const jsonlRatio = jsonlMs / floorMs
    console.log(
      `  JSONL: batches per session ${JSON.stringify(batchSizes)}; durable syscalls per session, harness ${JSON.stringify(perSession(harnessCounts, recorded.size))}, floor ${JSON.stringify(perSession(floorCounts, recorded.size))}`,
    )
    printTable([
      {
        figure: 'memory: µs per step (agent.run, 1,000 one-turn sessions)',
        value: `${memoryPerStep.toFixed(1)} µs`,
        goal: '≤ 50 µs',
        met: memoryPerStep <= 50,
      },
      { figure: '  with createAgent + dispose (informative)', value: `${memoryLifePerStep.toFixed(1)} µs` },
      { figure: '  process CPU, whole round (informative)', value: `${memoryCpuPerStep.toFixed(1)} µs` },
      { figure: 'JSONL default checkpoints: µs per step (whole session)', value: `${jsonlPerStep.toFixed(1)} µs` },
      { figure: '  hand-written floor: µs per step', value: `${floorPerStep.toFixed(1)} µs` },
      { figure: '  ratio to the floor', value: `${jsonlRatio.toFixed(2)}×`, goal: '≤ 1.3×', met: jsonlRatio <= 1.3 },
      { figure: '200 turns: turn 1 per step', value: `${first.toFixed(1)} µs` },
      { figure: '200 turns: turn 200 per step', value: `${last.toFixed(1)} µs` },
      {
        figure: '  ratio turn 200 / turn 1',
        value: `${(last / first).toFixed(2)}×`,
        goal: '≤ 1.2×',
        met: last / first <= 1.2,
      },
      {
        figure: '  ratio median(turns 191–200) / median(turns 1–10)',
        value: `${(lastTen / firstTen).toFixed(2)}×`,
        goal: '≤ 1.2×',
        met: lastTen / firstTen <= 1.2,
      },
    ])
    return {
      'memory-us-per-step': memoryPerStep,
      'jsonl/hand-written': jsonlRatio,
      'turn200/turn1': last / first,
      'turns191-200/turns1-10': lastTen / firstTen,
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function zeroCounts(): SyscallCounts {
  return { fsync: 0, fdatasync: 0, write: 0 }
}

function perSession(counts: SyscallCounts, sessionCount: number): Record<string, number> {
  return {
    fsync: counts.fsync / sessionCount,
    fdatasync: counts.fdatasync / sessionCount,
    write: counts.write / sessionCount,
  }
}
