/**
 * Crash tests of the PostgreSQL adapter with real processes: a child writes seeded sessions
 * through a harness with a tiny write-behind window, reports each acknowledged flush on a pipe, and
 * is killed with SIGKILL at a seeded random moment (mid-append, mid-turn). The parent then ends the
 * dead child's leases (as `yoke unlock --force` would), reopens every session of the run in a fresh
 * harness and asserts: it loads, every acknowledged prefix is there byte for byte, the seqs are
 * contiguous, no turn is left open after the load's repair, and a second load changes nothing.
 *
 * Knobs (environment): `YOKE_PG_CRASH_SEED` (base seed), `YOKE_PG_CRASH_RUNS` (kills, default 20).
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createHarness, createSession, PersistenceError, type SessionEvent } from '../../../src/index.js'
import type { PersistenceAdapter } from '../../../src/persistence/persistence-adapter.js'
import { postgresPersistence } from '../../../src/postgres/index.js'
import { type Bundle, bundle } from '../../helpers/child-process.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../../helpers/postgres.js'
import { recordingLogger } from '../../helpers/recording-logger.js'
import type { PostgresChildOptions } from './postgres-child.js'
import { type Ack, deriveSeed, digestOf, mulberry32, sessionIdsOf } from './workload.js'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..', '..')
const baseSeed = Number(process.env['YOKE_PG_CRASH_SEED'] ?? 0x9e5eed) >>> 0
const runs = Number(process.env['YOKE_PG_CRASH_RUNS'] ?? 20)
const sessionsPerRun = 2
const lanes = 2
const windowMs = 2

let child: Bundle | undefined
let schema: TestSchema | undefined

beforeAll(async () => {
  if (skipPostgres) return
  child = await bundle('test/persistence/crash/postgres-child.ts', { external: ['pg'] })
  schema = await createTestSchema('crash')
}, 60_000)

afterAll(async () => {
  await child?.remove()
  await schema?.drop()
})

interface Killed {
  readonly acks: Map<string, Ack[]>
  readonly stderr: string
}

/** Spawns the child, waits for its first ack and `delayMs` more, kills it with SIGKILL, and collects its acks. */
async function killChild(options: PostgresChildOptions, delayMs: number): Promise<Killed> {
  const env = { ...process.env }
  delete env['NODE_OPTIONS']
  const process_: ChildProcess = spawn(process.execPath, [child!.file, JSON.stringify(options)], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  })
  const acks = new Map<string, Ack[]>()
  let stderr = ''
  let pending = ''
  let firstAck: (() => void) | undefined
  const acked = new Promise<void>((resolve) => {
    firstAck = resolve
  })
  process_.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  process_.stdio[3]?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
      const ack = JSON.parse(pending.slice(0, newline)) as Ack
      pending = pending.slice(newline + 1)
      acks.set(ack.session, [...(acks.get(ack.session) ?? []), ack])
      firstAck?.()
    }
  })
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    process_.once('close', (code, signal) => resolve({ code, signal }))
  })
  let timer: NodeJS.Timeout | undefined
  const how = await Promise.race([
    acked.then(() => 'ack' as const),
    closed.then(() => 'exited' as const),
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), 20_000)
    }),
  ])
  clearTimeout(timer)
  if (how === 'ack') await new Promise((resolve) => setTimeout(resolve, delayMs))
  process_.kill('SIGKILL')
  const exit = await closed
  if (how !== 'ack') throw new Error(`the child ${how} before its first ack (${JSON.stringify(exit)}): ${stderr}`)
  if (exit.signal !== 'SIGKILL') throw new Error(`the child ended on its own (${JSON.stringify(exit)}): ${stderr}`)
  return { acks, stderr }
}

/** Reopens the run's sessions in a fresh harness and checks every acknowledged event is there. */
async function verify(run: number, killed: Killed, stats: { acks: number; closed: number }): Promise<void> {
  const { connectionString } = schema!
  // The dead child's leases are live until their TTL; end them as an operator would.
  const operator = postgresPersistence({ connectionString, schema: schema!.schema })
  const logger = recordingLogger()
  const harness = await createHarness({
    persistence: postgresPersistence({ connectionString, schema: schema!.schema }),
    logger,
  })
  try {
    for (const id of sessionIdsOf(run, sessionsPerRun)) {
      await (operator as Required<PersistenceAdapter>).breakLease(id)
      const acks = killed.acks.get(id) ?? []
      let loaded: Awaited<ReturnType<typeof harness.persistence.load>>
      try {
        loaded = await harness.persistence.load(id)
      } catch (error) {
        if (acks.length === 0 && PersistenceError.is(error) && error.code === 'SESSION_NOT_FOUND') continue
        throw error
      }
      const events: readonly SessionEvent[] = loaded.events
      expect(
        events.map((event) => event.seq),
        `${id}: contiguous seqs`,
      ).toEqual(events.map((_, index) => index))
      for (const ack of acks) {
        expect(ack.acked, `${id}: acknowledged seq ${ack.acked} is stored`).toBeLessThan(events.length)
        expect(digestOf(events, ack.acked + 1), `${id}: events 0..${ack.acked} as acknowledged`).toBe(ack.digest)
        stats.acks++
      }
      if (events.some((event) => (event.data as { meta?: { synthetic?: boolean } }).meta?.synthetic === true))
        stats.closed++
      expect(createSession({ id, seed: events }).turnState().openTurn, `${id}: no open turn after load`).toBeNull()
      const again = await harness.persistence.load(id)
      expect(again.revision, `${id}: a second load changes nothing`).toBe(loaded.revision)
      expect(JSON.stringify(again.events)).toBe(JSON.stringify(events))
    }
  } finally {
    await harness.close()
    await operator.close()
  }
  const unexpected = logger.records.filter((record) => record.level === 'error')
  expect(unexpected, 'no error logged by the reopening harness').toEqual([])
}

describe.skipIf(skipPostgres)('SIGKILL of a process writing to PostgreSQL', () => {
  test(`${runs} kills at random moments: every acknowledged event survives and every log reopens balanced`, async () => {
    const random = mulberry32(baseSeed)
    const stats = { acks: 0, closed: 0 }
    const plans = Array.from({ length: runs }, (_, run) => ({ run, delayMs: Math.floor(random() * 250) }))
    const crashRun = async ({ run, delayMs }: { run: number; delayMs: number }): Promise<void> => {
      const options: PostgresChildOptions = {
        connectionString: schema!.connectionString,
        schema: schema!.schema,
        seed: deriveSeed(baseSeed, run),
        run,
        sessions: sessionsPerRun,
        windowMs,
      }
      const killed = await killChild(options, delayMs)
      try {
        await verify(run, killed, stats)
      } catch (error) {
        throw new Error(
          `run ${run} (seed ${baseSeed}, kill ${delayMs} ms after the first ack; rerun with YOKE_PG_CRASH_SEED=${baseSeed}): ${String(error)}\nchild stderr:\n${killed.stderr}`,
          { cause: error },
        )
      }
    }
    // Two lanes: runs use their own session ids, so they share the schema without meeting.
    const lane = async (first: number): Promise<void> => {
      for (let index = first; index < plans.length; index += lanes) await crashRun(plans[index]!)
    }
    await Promise.all(Array.from({ length: lanes }, (_, first) => lane(first)))
    // The kills landed mid-turn at least sometimes: some loads had a turn to close.
    expect(stats.acks).toBeGreaterThan(runs)
    expect(stats.closed).toBeGreaterThan(0)
  }, 60_000)
})
