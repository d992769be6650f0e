/**
 * Durability benchmarks (`npm run bench -- durability`): what a JSONL session's syncs cost, and
 * whether ephemeral agents leave anything behind.
 *
 * - Syncs per step on a continuing JSONL session (two-step turns: a tool call, then text) at
 *   `durability: 'step'` (the default) and `'turn'`, counted at the file system; what a fresh
 *   session's creation (lock + first turn) adds.
 * - Wall and CPU µs per step of the same turns, next to Yoke over memory persistence and the
 *   cost of one `fdatasync` of a small append measured in this run:
 *   wall ≤ memory + 1.2 × (syncs per step × fdatasync) is the goal at `'step'`.
 * - 10,000 create / run / dispose cycles with `persistence: false`: heap used (after a full GC)
 *   and the harness's listener count at cycle 1,000 and at the end (goal: flat).
 *
 * Rounds interleave the cases; the best round counts. Runs the source (through tsx), not `dist`.
 * Not part of `npm test`.
 */
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { z } from 'zod'
// From the source, like the listener count below (a kernel inspection the package does not export).
import {
  createHarness,
  defineTool,
  type Harness,
  jsonlPersistence,
  type Logger,
  type ModelAdapter,
  type StreamChunk,
} from '../src/index.js'
import { inspectContext } from '../src/kernel/index.js'
import { countingFileSystem } from '../test/helpers/counting-file-system.js'
import type { SyscallCounts } from './agent.bench.js'
import { scriptedModel, text, tool } from '../src/testing/index.js'

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const noop = defineTool({ name: 'noop', description: 'Does nothing', input: z.object({}), execute: () => 'ok' })
const STEPS_PER_TURN = 2
const TURNS = 200
const ROUNDS = 3
const CYCLES = 10_000

type Mode = 'memory' | 'step' | 'turn'

type Syncs = SyscallCounts

const syncsOf = (counts: Syncs): number => counts.fsync + counts.fdatasync

function scriptOf(turns: number) {
  return Array.from({ length: turns }, () => [tool('noop', {}), text('done')]).flat()
}

interface ModeResult {
  /** Syncs of createAgent plus the first turn. */
  readonly freshSyncs: number
  /** Syncs per step over the continuing turns. */
  readonly syncsPerStep: number
  readonly wallPerStep: number
  readonly cpuPerStep: number
}

/** One session of `TURNS + 1` turns in `mode`; the first turn (creation) is counted apart. */
async function oneRound(dir: string, mode: Mode): Promise<ModeResult> {
  const counts: Syncs = { fsync: 0, fdatasync: 0, write: 0 }
  const harness = await createHarness({
    model: scriptedModel(scriptOf(TURNS + 1)),
    tools: [noop],
    logger: silent,
    ...(mode === 'memory'
      ? {}
      : { persistence: jsonlPersistence({ dir, fileSystem: countingFileSystem(counts) }), durability: mode }),
  })
  try {
    const agent = await harness.createAgent()
    await agent.run('first')
    const freshSyncs = syncsOf(counts)
    const cpu = process.cpuUsage()
    const started = performance.now()
    for (let turn = 0; turn < TURNS; turn++) {
      const result = await agent.run(`question ${turn}`)
      if (result.reason.kind !== 'completed') throw new Error(`turn ended ${JSON.stringify(result.reason)}`)
    }
    const wall = performance.now() - started
    const used = process.cpuUsage(cpu)
    const steps = TURNS * STEPS_PER_TURN
    const result: ModeResult = {
      freshSyncs,
      syncsPerStep: (syncsOf(counts) - freshSyncs) / steps,
      wallPerStep: (wall * 1_000) / steps,
      cpuPerStep: (used.user + used.system) / steps,
    }
    await agent.dispose()
    return result
  } finally {
    await harness.close()
  }
}

/** µs of one small append + `fdatasync` on the bench's file system (the median of 200). */
function fdatasyncCost(dir: string): number {
  const fd = openSync(join(dir, 'floor.jsonl'), 'w')
  const line = Buffer.from(`${JSON.stringify({ type: 'step/start', seq: 1, time: 0, data: { turn: 1, step: 1 } })}\n`)
  const samples: number[] = []
  try {
    for (let index = 0; index < 200; index++) {
      const started = performance.now()
      writeSync(fd, line)
      fdatasyncSync(fd)
      samples.push((performance.now() - started) * 1_000)
    }
  } finally {
    closeSync(fd)
  }
  samples.sort((left, right) => left - right)
  return samples[Math.floor(samples.length / 2)] as number
}

/** The chunks a scripted model streams for one reply. */
async function chunksOf(entry: Parameters<typeof scriptedModel>[0][number]): Promise<readonly StreamChunk[]> {
  const chunks: StreamChunk[] = []
  const stream = scriptedModel([entry]).stream({} as never, { signal: new AbortController().signal })
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/**
 * A model that keeps nothing (a scripted model records every request): it calls the tool, and
 * answers `done` once the last message is the tool's result.
 */
async function statelessModel(): Promise<ModelAdapter> {
  const call = await chunksOf(tool('noop', {}))
  const answer = await chunksOf(text('done'))
  return {
    provider: 'mock',
    defaultModel: 'mock',
    async *stream(request) {
      const last = request.messages.at(-1)
      const answered = last?.content.some((block) => typeof block !== 'string' && block.type === 'tool-result')
      yield* answered === true ? answer : call
    },
  }
}

function listenerTotal(harness: Harness): number {
  let total = 0
  for (const event of inspectContext(harness.ctx).events) total += event.listeners
  return total
}

/** A full GC, when the flag can be turned on (it can on Node 20). */
function collect(): void {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (() => void) | undefined
  gc?.()
}

/** `CYCLES` create / run / dispose cycles with `persistence: false`; heap and listeners at cycle 1,000 and at the end. */
async function ephemeralCycles(): Promise<{
  heapAt1k: number
  heapAtEnd: number
  listenersAt1k: number
  listenersAtEnd: number
}> {
  const harness = await createHarness({
    persistence: false,
    model: await statelessModel(),
    tools: [noop],
    logger: silent,
  })
  let heapAt1k = 0
  let listenersAt1k = 0
  try {
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const agent = await harness.createAgent()
      const result = await agent.run('hi')
      if (result.reason.kind !== 'completed') throw new Error(`cycle ${cycle} ended ${JSON.stringify(result.reason)}`)
      await agent.dispose()
      if (cycle === 1_000) {
        collect()
        heapAt1k = process.memoryUsage().heapUsed
        listenersAt1k = listenerTotal(harness)
      }
    }
    collect()
    return {
      heapAt1k,
      heapAtEnd: process.memoryUsage().heapUsed,
      listenersAt1k,
      listenersAtEnd: listenerTotal(harness),
    }
  } finally {
    await harness.close()
  }
}

/** Runs the durability benchmark, prints its table, and returns the figures by name. */
export async function runDurabilityBench(): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-bench-durability-'))
  try {
    const modes: Mode[] = ['memory', 'step', 'turn']
    const best = new Map<Mode, ModeResult>()
    let sync = Number.POSITIVE_INFINITY
    // Round 0 warms up; rounds interleave the modes so each sees the same machine.
    for (let round = 0; round <= ROUNDS; round++) {
      sync = Math.min(sync, fdatasyncCost(dir))
      for (const mode of modes) {
        // Made here, so the adapter's first write does not create (and fsync) the directory.
        const sessions = join(dir, `${mode}-${round}`)
        await mkdir(sessions)
        const result = await oneRound(sessions, mode)
        const kept = best.get(mode)
        if (round > 0 && (kept === undefined || result.wallPerStep < kept.wallPerStep)) best.set(mode, result)
      }
    }
    const memory = best.get('memory') as ModeResult
    const step = best.get('step') as ModeResult
    const turn = best.get('turn') as ModeResult
    const stepGoal = memory.wallPerStep + 1.2 * step.syncsPerStep * sync
    const rows: [string, string, string?][] = [
      ['fdatasync of a small append (median)', `${sync.toFixed(0)} µs`],
      ['memory: wall / CPU µs per step', `${memory.wallPerStep.toFixed(0)} / ${memory.cpuPerStep.toFixed(0)}`],
      ["'step': syncs per step (continuing)", step.syncsPerStep.toFixed(2), '≤ 2'],
      // The lock's fsync (paid by every createAgent, resumeAgent and openAgent), then the first turn.
      ["'step': syncs of createAgent (lock) + turn 1; a continuing turn: 4", String(step.freshSyncs), '≤ 1 + 5'],
      [
        "'step': wall / CPU µs per step",
        `${step.wallPerStep.toFixed(0)} / ${step.cpuPerStep.toFixed(0)}`,
        `≤ ${stepGoal.toFixed(0)}`,
      ],
      ["'turn': syncs per step (continuing)", turn.syncsPerStep.toFixed(2), '0.5'],
      ["'turn': syncs of createAgent (lock) + turn 1; a continuing turn: 1", String(turn.freshSyncs)],
      ["'turn': wall / CPU µs per step", `${turn.wallPerStep.toFixed(0)} / ${turn.cpuPerStep.toFixed(0)}`],
    ]
    const cycles = await ephemeralCycles()
    rows.push(
      [
        `persistence: false, ${CYCLES} cycles: heap MB at 1,000 → end`,
        `${(cycles.heapAt1k / 2 ** 20).toFixed(1)} → ${(cycles.heapAtEnd / 2 ** 20).toFixed(1)}`,
        'flat',
      ],
      ['  listeners at 1,000 → end', `${cycles.listenersAt1k} → ${cycles.listenersAtEnd}`, 'equal'],
    )
    for (const [figure, value, goal] of rows) console.log(`${figure.padEnd(64)} ${value.padStart(14)}  ${goal ?? ''}`)
    return {
      'fdatasync-us': sync,
      'memory-wall-us-per-step': memory.wallPerStep,
      'step-syncs-per-step': step.syncsPerStep,
      'step-fresh-syncs': step.freshSyncs,
      'step-wall-us-per-step': step.wallPerStep,
      'step-wall-goal-us': stepGoal,
      'turn-syncs-per-step': turn.syncsPerStep,
      'turn-wall-us-per-step': turn.wallPerStep,
      'ephemeral-heap-growth-mb': (cycles.heapAtEnd - cycles.heapAt1k) / 2 ** 20,
      'ephemeral-listener-growth': cycles.listenersAtEnd - cycles.listenersAt1k,
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
