/**
 * SIGKILL crash tests of `sqlitePersistence` with real processes: a child writes seeded sessions
 * through a harness into one database file (tiny write-behind windows, acknowledging each flush on
 * a pipe) and is killed at a seeded random moment, mid-append or mid-turn. The parent then checks
 * that every session loads, holds every acknowledged event byte-exact, and repairs (after the dead
 * writer's lease is broken, as `yoke unlock --force` does) to a balanced log that a second load
 * leaves unchanged. Every run writes new sessions into the same file, so it also holds many
 * sessions, some of them repaired.
 *
 * Knobs (environment): `YOKE_CRASH_SEED` (base seed), `YOKE_SQLITE_CRASH_RUNS` (kills, default 24).
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createHarness, createSession, PersistenceError } from '../../../src/index.js'
import { sqlitePersistence } from '../../../src/sqlite/sqlite-persistence.js'
import { type Bundle, bundle, root } from '../../helpers/child-process.js'
import { type Ack, between, deriveSeed, digestOf, mulberry32, sessionIdsOf } from './workload.js'

const baseSeed = Number(process.env['YOKE_CRASH_SEED'] ?? 0x5eed) >>> 0
const runs = Number(process.env['YOKE_SQLITE_CRASH_RUNS'] ?? 24)
const sessionsPerRun = 3
const windowMs = 5

let child: Bundle | undefined
let dir = ''
let path = ''

beforeAll(async () => {
  child = await bundle('test/persistence/crash/sqlite-crash-child.ts', { external: ['better-sqlite3'] })
  dir = await mkdtemp(join(tmpdir(), 'yoke-sqlite-crash-'))
  path = join(dir, 'sessions.db')
}, 60_000)

afterAll(async () => {
  await child?.remove()
  if (dir !== '') await rm(dir, { recursive: true, force: true })
})

/** Runs the child until `delayMs` after its first ack, kills it with SIGKILL, and returns its acks by session. */
async function killedChild(run: number, seed: number, delayMs: number): Promise<Map<string, Ack[]>> {
  const env = { ...process.env }
  delete env['NODE_OPTIONS']
  const options = { path, seed, run, sessions: sessionsPerRun, windowMs }
  const process_: ChildProcess = spawn(process.execPath, [child!.file, JSON.stringify(options)], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  process_.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const acks = new Map<string, Ack[]>()
  let pending = ''
  let first: () => void = () => {}
  const firstAck = new Promise<void>((resolve) => {
    first = resolve
  })
  process_.stdio[3]!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    // A line is complete only with its newline; a kill cannot split a pipe write this small.
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
      const ack = JSON.parse(pending.slice(0, newline)) as Ack
      pending = pending.slice(newline + 1)
      acks.set(ack.session, [...(acks.get(ack.session) ?? []), ack])
      first()
    }
  })
  const closed = new Promise<NodeJS.Signals | null>((resolve) => {
    process_.once('close', (_code, signal) => resolve(signal))
  })
  const timeout = setTimeout(() => first(), 20_000)
  await Promise.race([firstAck, closed])
  clearTimeout(timeout)
  await new Promise((resolve) => setTimeout(resolve, delayMs))
  process_.kill('SIGKILL')
  const signal = await closed
  expect(signal, `run ${run}: the child ended on its own before the kill:\n${stderr}`).toBe('SIGKILL')
  expect(acks.size, `run ${run}: the child acknowledged nothing:\n${stderr}`).toBeGreaterThan(0)
  return acks
}

/** Checks what a crash must leave: acknowledged events present, a loadable log that repairs to a balanced one. */
async function verify(run: number, acks: Map<string, Ack[]>): Promise<{ acked: number; repaired: number }> {
  const what = (id: string) => `seed ${baseSeed}, run ${run}, ${id}`
  const adapter = sqlitePersistence({ path })
  const harness = await createHarness({ persistence: adapter, writeBehind: { windowMs } })
  let acked = 0
  let repaired = 0
  try {
    for (const id of sessionIdsOf(run, sessionsPerRun)) {
      const sessionAcks = acks.get(id) ?? []
      let raw: Awaited<ReturnType<typeof adapter.load>>
      try {
        raw = await adapter.load(id)
      } catch (error) {
        // A session killed before its first commit was never stored, and never acknowledged.
        if (sessionAcks.length === 0 && PersistenceError.is(error) && error.code === 'SESSION_NOT_FOUND') continue
        throw error
      }
      expect(raw.torn, what(id)).toBeUndefined()
      for (const ack of sessionAcks) {
        expect(ack.acked, `${what(id)}: an acknowledged seq is missing`).toBeLessThan(raw.events.length)
        expect(digestOf(raw.events, ack.acked + 1), `${what(id)}: events 0..${ack.acked}`).toBe(ack.digest)
        acked++
      }
      // The writer is dead (reaped), so its lease is ended by hand, as `yoke unlock --force` would.
      await adapter.breakLease?.(id)
      const loaded = await harness.persistence.load(id)
      if (loaded.events.length > raw.events.length) repaired++
      expect(JSON.stringify(loaded.events.slice(0, raw.events.length)), what(id)).toBe(JSON.stringify(raw.events))
      const seeded = createSession({ id, seed: loaded.events })
      expect(seeded.turnState().openTurn, `${what(id)}: a turn is still open after the repair`).toBeNull()
      const again = await harness.persistence.load(id)
      expect(again.revision, `${what(id)}: a second load changed the log`).toBe(loaded.revision)
    }
  } finally {
    await harness.close()
  }
  return { acked, repaired }
}

test(`${runs} SIGKILLs mid-append and mid-turn leave every acknowledged event and a log that repairs to balanced`, async () => {
  const random = mulberry32(baseSeed)
  let acked = 0
  let repaired = 0
  for (let run = 0; run < runs; run++) {
    const seed = deriveSeed(baseSeed, run)
    const acks = await killedChild(run, seed, between(random, 0, 250))
    const outcome = await verify(run, acks)
    acked += outcome.acked
    repaired += outcome.repaired
  }
  // The kills land while the children write: many acknowledgements checked, open turns repaired.
  expect(acked).toBeGreaterThan(runs)
  expect(repaired).toBeGreaterThan(0)
}, 120_000)
