/**
 * Crash tests with real processes: a child runs seeded sessions
 * against a JSONL dir and is killed with SIGKILL at a seeded random delay after its first
 * acknowledged flush; the parent then reopens every session of that run with a fresh harness and
 * asserts it loads, every acknowledged prefix is present byte-exact, the log is balanced after
 * repair, and a second load changes nothing.
 *
 * Knobs (environment): `YOKE_CRASH_SEED` (base seed, default 0x5eed), `YOKE_CRASH_RUNS` (kills
 * per compression, default 70), `YOKE_CRASH_LANES` (children alive at once, default 3),
 * `YOKE_CRASH_ONLY` (`<compression>:<run>` reruns one run), `YOKE_CRASH_REPAIR_RATIO` (share of
 * runs that also kill a repairing child, default 1/6), `YOKE_CRASH_TSX=1` (run the child
 * through tsx instead of a prebuilt bundle). The producer's content and the kill delay are
 * seeded; where in the child's work the kill lands depends on scheduling, so a failing run prints
 * its seed and keeps a snapshot of the killed child's files.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as wasmZstd from '@foxglove/wasm-zstd'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createHarness,
  createSession,
  jsonlPersistence,
  PersistenceError,
  type SessionEvent,
} from '../../../src/index.js'
import { type Bundle, bundle } from '../../helpers/child-process.js'
import { type LogRecord, recordingLogger } from '../../helpers/recording-logger.js'
import { type Ack, between, type ChildOptions, deriveSeed, digestOf, mulberry32, sessionIdsOf } from './workload.js'

type Compression = ChildOptions['compression']

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..', '..')
const baseSeed = Number(process.env['YOKE_CRASH_SEED'] ?? 0x5eed) >>> 0
const runsPerCompression = Number(process.env['YOKE_CRASH_RUNS'] ?? 70)
const lanes = Math.max(1, Number(process.env['YOKE_CRASH_LANES'] ?? 3))
const only = process.env['YOKE_CRASH_ONLY']
const repairKillRatio = Number(process.env['YOKE_CRASH_REPAIR_RATIO'] ?? 1 / 6)
const compressions: readonly Compression[] = ['none', 'gzip', 'zstd']
const sessionsPerRun = 3
const windowMs = 5
const extensions = { none: '.jsonl', gzip: '.jsonl.gz', zstd: '.jsonl.zst' } as const
const zstdEncoder = (bytes: Uint8Array, level: number): Uint8Array => new Uint8Array(wasmZstd.compress(bytes, level))

/** How the child is started: a bundle built once (fast), or through tsx (`YOKE_CRASH_TSX=1`). */
let childCommand: string[] = []
let crashChild: Bundle | undefined

beforeAll(async () => {
  await wasmZstd.isLoaded
  const childSource = join(here, 'child.ts')
  if (process.env['YOKE_CRASH_TSX'] === '1') {
    childCommand = ['--import', 'tsx', childSource]
    return
  }
  // A bundle, since tsx needs ~1 s per start on 2 cores; @foxglove/wasm-zstd stays external (it
  // loads a .wasm file beside it).
  crashChild = await bundle('test/persistence/crash/child.ts', { external: ['@foxglove/wasm-zstd'] })
  childCommand = [crashChild.file]
}, 60_000)

afterAll(async () => {
  await crashChild?.remove()
})

interface RunContext {
  readonly compression: Compression
  readonly dir: string
  readonly run: number
  readonly seed: number
  readonly delayMs: number
  readonly shortWrites: boolean
  /** When set, a repairing child is killed this many ms after it is ready, before the parent checks. */
  readonly repairKillMs: number | undefined
}

interface RunOutcome {
  /** Sessions that loaded. */
  loaded: number
  /** Sessions never materialized (allowed only when never acknowledged). */
  missing: number
  /** Sessions whose raw log had a torn tail, by defect. */
  torn: Record<string, number>
  /** Torn compressed tails with records salvaged from the last frame. */
  salvaged: number
  /** Sessions that needed closers (an open turn at the kill). */
  closed: number
  /** Stale locks of dead children taken over by the parent. */
  takeovers: number
  /** Repairing children killed, by how many of the run's sessions they had finished. */
  repairKills: Record<string, number>
  /** Acknowledgements checked. */
  acks: number
  /** Events the parent saw beyond the last acknowledgement (written by write-behind, not acked). */
  unacked: number
}

class RunFailure extends Error {
  override readonly name = 'RunFailure'
}

function describeRun(context: RunContext): string {
  return `seed ${baseSeed} (0x${baseSeed.toString(16)}), compression ${context.compression}, run ${context.run} (run seed ${context.seed}, kill ${context.delayMs} ms after the first ack, ${context.shortWrites ? 'short writes' : 'whole writes'}${context.repairKillMs === undefined ? '' : `, repairer killed ${context.repairKillMs} ms after ready`}); rerun: YOKE_CRASH_SEED=${baseSeed} YOKE_CRASH_ONLY=${context.compression}:${context.run}`
}

function tailOf(bytes: Uint8Array, compression: Compression): string {
  const tail = bytes.subarray(Math.max(0, bytes.length - 240))
  return compression === 'none' ? JSON.stringify(Buffer.from(tail).toString('utf8')) : Buffer.from(tail).toString('hex')
}

interface ChildExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** A spawned child: its fd 3 lines as parsed JSON, its stderr, and its reaping. */
interface RunningChild {
  readonly lines: Record<string, unknown>[]
  readonly stderr: () => string
  /** Resolves at the first fd 3 line. */
  readonly firstLine: Promise<void>
  /** 'close': the process is reaped (its pid is dead, so its locks are stale) and every pipe is drained. */
  readonly closed: Promise<ChildExit>
  kill(): void
}

function spawnChild(options: ChildOptions): RunningChild {
  const env = { ...process.env }
  delete env['NODE_OPTIONS']
  const child: ChildProcess = spawn(process.execPath, [...childCommand, JSON.stringify(options)], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  })
  const lines: Record<string, unknown>[] = []
  let stderr = ''
  let pending = ''
  let onLine: (() => void) | undefined
  const firstLine = new Promise<void>((resolve) => {
    onLine = resolve
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const pipe = child.stdio[3]
  if (pipe === null || pipe === undefined) throw new RunFailure('the child has no fd 3 pipe')
  pipe.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    // A line is complete only with its newline; a kill cannot split a pipe write this small (PIPE_BUF).
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
      lines.push(JSON.parse(pending.slice(0, newline)) as Record<string, unknown>)
      pending = pending.slice(newline + 1)
      onLine?.()
    }
  })
  const closed = new Promise<ChildExit>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }))
  })
  return { lines, stderr: () => stderr, firstLine, closed, kill: () => child.kill('SIGKILL') }
}

/** Waits for the child's first line (or its end, or 30 s). */
async function started(child: RunningChild): Promise<'line' | 'exited' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined
  const outcome = await Promise.race([
    child.firstLine.then(() => 'line' as const),
    child.closed.then(() => 'exited' as const),
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), 30_000)
    }),
  ])
  clearTimeout(timer)
  return outcome
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Spawns the producing child, waits for its first ack and the seeded delay, kills it, and returns its acks once it is reaped. */
async function killChild(context: RunContext, log: string[]): Promise<Map<string, Ack[]>> {
  const child = spawnChild({
    dir: context.dir,
    compression: context.compression,
    seed: context.seed,
    run: context.run,
    sessions: sessionsPerRun,
    windowMs,
    shortWrites: context.shortWrites,
  })
  const how = await started(child)
  if (how === 'line') await sleep(context.delayMs)
  child.kill()
  const exit = await child.closed
  log.push(child.stderr())
  if (how !== 'line') throw new RunFailure(`the child ${how} before its first ack: ${JSON.stringify(exit)}`)
  if (exit.signal !== 'SIGKILL')
    throw new RunFailure(`the child exited on its own (${JSON.stringify(exit)}) before the kill`)
  const acks = new Map<string, Ack[]>()
  for (const line of child.lines) {
    const ack = line as unknown as Ack
    const list = acks.get(ack.session) ?? []
    list.push(ack)
    acks.set(ack.session, list)
  }
  return acks
}

/**
 * Spawns a second child that cold-loads (so repairs) the killed run's sessions, with short
 * writes, and kills it `delayMs` after it is ready, maybe half-way through a repair.
 * Returns how many sessions it finished.
 */
async function killRepair(context: RunContext, delayMs: number, log: string[]): Promise<number> {
  const child = spawnChild({
    dir: context.dir,
    compression: context.compression,
    seed: deriveSeed(context.seed, 0x4e9a17),
    run: context.run,
    sessions: sessionsPerRun,
    windowMs,
    shortWrites: true,
    mode: 'repair',
    sessionIds: sessionIdsOf(context.run, sessionsPerRun),
  })
  const how = await started(child)
  if (how === 'line') await sleep(delayMs)
  child.kill()
  const exit = await child.closed
  log.push(child.stderr())
  if (how !== 'line') throw new RunFailure(`the repairing child ${how} before it was ready: ${JSON.stringify(exit)}`)
  if (exit.signal !== 'SIGKILL' && exit.code !== 0)
    throw new RunFailure(`the repairing child failed: ${JSON.stringify(exit)}`)
  const done = child.lines.filter((line) => typeof line['repaired'] === 'string')
  const failed = done.filter(
    (line) => line['failure'] !== undefined && !String(line['failure']).startsWith('SESSION_NOT_FOUND'),
  )
  if (failed.length > 0) throw new RunFailure(`the repairing child's load failed: ${JSON.stringify(failed)}`)
  return done.length
}

/** The files of a run, read right after the kill (before any repair), for failure reports. */
async function snapshotOf(context: RunContext): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>()
  const prefix = `run${context.run}-`
  for (const name of await readdir(context.dir)) {
    if (!name.startsWith(prefix)) continue
    try {
      files.set(name, await readFile(join(context.dir, name)))
    } catch {
      // A temp file may vanish; only the logs matter.
    }
  }
  return files
}

async function keepSnapshot(context: RunContext, files: Map<string, Buffer>, details: unknown): Promise<string> {
  const target = join(
    tmpdir(),
    'yoke-crash-failures',
    `${baseSeed}-${context.compression}-run${context.run}-${randomBytes(3).toString('hex')}`,
  )
  await mkdir(target, { recursive: true })
  for (const [name, bytes] of files) await writeFile(join(target, name), bytes)
  await writeFile(join(target, 'details.json'), JSON.stringify(details, null, 2))
  return target
}

/** Reopens every session of a killed run in a fresh harness and checks what persistence promises after a crash. */
async function verifyRun(context: RunContext, acks: Map<string, Ack[]>): Promise<RunOutcome> {
  const outcome: RunOutcome = {
    loaded: 0,
    missing: 0,
    torn: {},
    salvaged: 0,
    closed: 0,
    takeovers: 0,
    repairKills: {},
    acks: 0,
    unacked: 0,
  }
  const persistence = jsonlPersistence({ dir: context.dir, compression: context.compression, zstdEncoder })
  // A second instance only observes the raw state (torn tails) for the statistics; it never writes.
  const observer = jsonlPersistence({ dir: context.dir })
  const logger = recordingLogger()
  const harness = await createHarness({ persistence, logger, writeBehind: { windowMs } })
  const before = (await readdir(context.dir)).filter((name) => name.startsWith(`run${context.run}-`))
  const describeFile = async (name: string): Promise<string> => {
    const text =
      name.endsWith('.takeover') || name.endsWith('.lock')
        ? await readFile(join(context.dir, name), 'utf8').catch(() => '(gone)')
        : ''
    return text === '' ? name : `${name} ${text}`
  }
  const listing = await Promise.all(before.map(describeFile))
  try {
    for (const id of sessionIdsOf(context.run, sessionsPerRun)) {
      const sessionAcks = acks.get(id) ?? []
      let raw: Awaited<ReturnType<typeof observer.load>> | undefined
      try {
        raw = await observer.load(id)
      } catch (error) {
        if (!(PersistenceError.is(error) && error.code === 'SESSION_NOT_FOUND')) throw error
      }
      let loaded: Awaited<ReturnType<typeof harness.persistence.load>>
      try {
        loaded = await harness.persistence.load(id)
      } catch (error) {
        if (
          sessionAcks.length === 0 &&
          raw === undefined &&
          PersistenceError.is(error) &&
          error.code === 'SESSION_NOT_FOUND'
        ) {
          outcome.missing++
          continue
        }
        const files = (await readdir(context.dir)).filter((name) => name.startsWith(`${id}.`))
        const retry = await harness.persistence.load(id).then(
          () => 'a retry of the load succeeded',
          (again: unknown) => `a retry failed too: ${String(again)}`,
        )
        throw new RunFailure(
          `${id}: load failed (${sessionAcks.length} acks, last ${JSON.stringify(sessionAcks.at(-1))}): ${String(error)}; files before the parent's first load: ${JSON.stringify(listing)}; after it: ${JSON.stringify(files)}; ${retry}`,
          { cause: error },
        )
      }
      outcome.loaded++
      if (raw?.torn !== undefined) outcome.torn[raw.torn.defect] = (outcome.torn[raw.torn.defect] ?? 0) + 1
      if ((raw?.torn?.recovered.length ?? 0) > 0) outcome.salvaged++
      const events: readonly SessionEvent[] = loaded.events
      events.forEach((event, index) => {
        if (event.seq !== index)
          throw new RunFailure(`${id}: event ${index} has seq ${event.seq}: the log is not contiguous`)
      })
      for (const ack of sessionAcks) {
        if (ack.acked >= events.length) {
          throw new RunFailure(
            `${id}: seq ${ack.acked} was acknowledged as durable, but the loaded log has ${events.length} events`,
          )
        }
        const digest = digestOf(events, ack.acked + 1)
        if (digest !== ack.digest)
          throw new RunFailure(`${id}: events 0..${ack.acked} differ from what was acknowledged`)
        outcome.acks++
      }
      const lastAcked = sessionAcks.at(-1)?.acked ?? -1
      const synthetic = events.filter(
        (event) => (event.data as { meta?: { synthetic?: boolean } }).meta?.synthetic === true,
      ).length
      if (synthetic > 0) outcome.closed++
      outcome.unacked += Math.max(0, events.length - synthetic - lastAcked - 1)
      const seeded = createSession({ id, seed: events })
      if (seeded.turnState().openTurn !== null)
        throw new RunFailure(`${id}: turn ${seeded.turnState().openTurn} is still open after load`)
      const again = await harness.persistence.load(id)
      if (again.revision !== loaded.revision)
        throw new RunFailure(`${id}: a second load changed the revision (${loaded.revision} → ${again.revision})`)
      if (JSON.stringify(again.events) !== JSON.stringify(events))
        throw new RunFailure(`${id}: a second load returned other events`)
      const inspected = await harness.persistence.inspect(id)
      if (inspected.repairPending) throw new RunFailure(`${id}: a repair is still pending after load`)
      const base = join(context.dir, id)
      if (existsSync(`${base}.lock`)) throw new RunFailure(`${id}: the load left ${base}.lock behind`)
    }
  } finally {
    await harness.close()
    await observer.close()
  }
  const tookOver = (record: LogRecord): boolean =>
    record.level === 'warn' && /took over the stale lock/.test(record.message)
  const unexpected = logger.records.filter(
    (record) => record.level !== 'debug' && record.level !== 'info' && !tookOver(record),
  )
  if (unexpected.length > 0) throw new RunFailure(`unexpected log records: ${JSON.stringify(unexpected)}`)
  // The dead children's locks (same host, dead pid) were taken over as stale, each with a warning.
  for (const name of before.filter((entry) => entry.endsWith('.lock'))) {
    const id = name.slice(0, -'.lock'.length)
    if (!logger.records.some((record) => tookOver(record) && record.fields?.['sessionId'] === id)) {
      throw new RunFailure(`${id}: its stale lock ${name} was not taken over with a warning`)
    }
    outcome.takeovers++
  }
  return outcome
}

async function crashRun(context: RunContext): Promise<RunOutcome> {
  let acks = new Map<string, Ack[]>()
  const stderr: string[] = []
  let files = new Map<string, Buffer>()
  let repaired: number | undefined
  try {
    acks = await killChild(context, stderr)
    files = await snapshotOf(context)
    if (context.repairKillMs !== undefined) repaired = await killRepair(context, context.repairKillMs, stderr)
    const outcome = await verifyRun(context, acks)
    if (repaired !== undefined) outcome.repairKills[String(repaired)] = 1
    return outcome
  } catch (error) {
    const failing = /^(run\d+-s\d+)/.exec(error instanceof Error ? error.message : '')?.[1]
    const log = failing === undefined ? undefined : files.get(`${failing}${extensions[context.compression]}`)
    const childLog = stderr.join('').trim()
    const kept = await keepSnapshot(context, files, {
      run: describeRun(context),
      error: String(error),
      acks: [...acks],
      repaired,
      stderr: childLog,
    }).catch((keepError: unknown) => `(snapshot failed: ${String(keepError)})`)
    throw new RunFailure(
      `${describeRun(context)}\n${error instanceof Error ? error.message : String(error)}\n` +
        `${repaired === undefined ? '' : `(a repairing child was killed after finishing ${repaired} of ${sessionsPerRun} sessions)\n`}` +
        `${log === undefined ? '' : `tail of ${failing}${extensions[context.compression]} after the kill (${log.length} bytes): ${tailOf(log, context.compression)}\n`}` +
        `files as the writer left them: ${kept}${childLog === '' ? '' : `\nchild stderr:\n${childLog}`}`,
      { cause: error },
    )
  }
}

describe('crash: SIGKILL of a real child process at random points', () => {
  const totals = { kills: 0, ms: 0 }

  afterAll(() => {
    if (totals.kills > 0)
      console.log(`crash tests: ${totals.kills} kills in ${(totals.ms / 1000).toFixed(1)} s (seed ${baseSeed})`)
  })

  it.each(compressions.map((compression, index) => [compression, index] as const))(
    '%s: every acknowledged event survives, logs load balanced, a second load changes nothing',
    async (compression, compressionIndex) => {
      const selected =
        only === undefined
          ? Array.from({ length: runsPerCompression }, (_, run) => run)
          : only.startsWith(`${compression}:`)
            ? [Number(only.slice(compression.length + 1))]
            : []
      if (selected.length === 0) return
      const started = performance.now()
      const dir = await mkdtemp(join(tmpdir(), `yoke-crash-${compression}-`))
      const failures: string[] = []
      const sum: RunOutcome = {
        loaded: 0,
        missing: 0,
        torn: {},
        salvaged: 0,
        closed: 0,
        takeovers: 0,
        repairKills: {},
        acks: 0,
        unacked: 0,
      }
      const queue = [...selected]
      const lane = async (): Promise<void> => {
        for (let run = queue.shift(); run !== undefined; run = queue.shift()) {
          const seed = deriveSeed(baseSeed, compressionIndex, run)
          const random = mulberry32(seed)
          // Mostly 20–150 ms after the first ack; one run in eight right at it, while the other sessions may still be materializing.
          const delayMs = random() < 0.125 ? between(random, 0, 3) : between(random, 20, 150)
          const shortWrites = random() < 0.5
          // One run in six also kills a second child while it repairs the logs the first one left.
          const repairKillMs = random() < repairKillRatio ? between(random, 0, 300) : undefined
          const context: RunContext = { compression, dir, run, seed, delayMs, shortWrites, repairKillMs }
          try {
            const outcome = await crashRun(context)
            sum.loaded += outcome.loaded
            sum.missing += outcome.missing
            sum.closed += outcome.closed
            sum.salvaged += outcome.salvaged
            for (const [done, count] of Object.entries(outcome.repairKills))
              sum.repairKills[done] = (sum.repairKills[done] ?? 0) + count
            sum.takeovers += outcome.takeovers
            sum.acks += outcome.acks
            sum.unacked += outcome.unacked
            for (const [defect, count] of Object.entries(outcome.torn))
              sum.torn[defect] = (sum.torn[defect] ?? 0) + count
          } catch (error) {
            failures.push(error instanceof Error ? error.message : String(error))
          }
          totals.kills++
        }
      }
      await Promise.all(Array.from({ length: Math.min(lanes, selected.length) }, lane))

      // Every log in the dir, reopened once more by a fresh instance: listed, undamaged, nothing left to repair.
      let leftovers = 0
      if (failures.length === 0) {
        leftovers = (await readdir(dir)).filter(
          (name) => name.endsWith('.tmp') || name.endsWith('.lock') || name.endsWith('.takeover'),
        ).length
        const final = jsonlPersistence({ dir, compression, zstdEncoder })
        try {
          const listing = await final.list()
          expect(listing.damaged, `seed ${baseSeed}, ${compression}`).toEqual([])
          expect(listing.headers.length, `seed ${baseSeed}, ${compression}`).toBe(sum.loaded)
          for (const header of listing.headers) {
            const log = await final.load(header.id)
            expect(log.torn, `seed ${baseSeed}, ${compression}, ${header.id}`).toBeUndefined()
          }
        } finally {
          await final.close()
        }
      }
      const ms = performance.now() - started
      totals.ms += ms
      console.log(
        `crash ${compression}: ${selected.length} kills in ${(ms / 1000).toFixed(1)} s; ${sum.loaded} logs loaded, ${sum.missing} never written, ` +
          `torn tails ${JSON.stringify(sum.torn)} (${sum.salvaged} salvaged), ${sum.closed} with closers, ${sum.takeovers} stale locks taken over, repairing children killed after finishing n sessions ${JSON.stringify(sum.repairKills)}, ${leftovers} temp/lock files of killed children left, ${sum.acks} acks checked, ${sum.unacked} durable events beyond the last ack`,
      )
      await rm(dir, { recursive: true, force: true })
      expect(failures, `${failures.length} of ${selected.length} runs failed:\n\n${failures.join('\n\n')}`).toEqual([])
    },
    240_000,
  )
})
