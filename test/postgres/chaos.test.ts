/**
 * The chaos test of the workers: three worker processes and two submitter processes over one
 * real PostgreSQL schema. 50 sessions × 10 messages are submitted at once, some twice with the same
 * idempotency key; meanwhile workers are killed with SIGKILL at random moments and started again,
 * and one is frozen with SIGSTOP past its lease and then let go; two of the three run with their
 * clocks two minutes off, one ahead and one behind. A client follows three sessions
 * over Server-Sent Events, reconnecting with `Last-Event-ID` to the other of two HTTP nodes after
 * every kill.
 *
 * Afterwards: every message ran exactly once, in submit order per session; each log's turns follow
 * one another (never two open at once) and every lease epoch only grew; every log loads valid
 * through a harness; the SSE client saw every event of its sessions exactly once, as stored.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { createParser } from 'eventsource-parser'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createHarness, type SessionEvent } from '../../src/index.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { type Bundle, bundle } from '../helpers/child-process.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'
import type { ChaosSubmitterOptions, ChaosSubmitterSummary } from './chaos-submitter-child.js'
import type { ChaosWorkerOptions } from './chaos-worker-child.js'
import { startTailNode } from './tail-node.js'

const SESSIONS = 50
const MESSAGES = 10
const WORKERS = 3
const LEASE = { ttlMs: 2_000, heartbeatMs: 500 }
/** How long the killing goes on at most; the run then settles without it. */
const CHAOS_MS = 40_000
const TAILED = ['chaos-0', 'chaos-17', 'chaos-33']
/** Each worker slot's clock error: two machines' clocks are off by two minutes, either way. */
const SKEW_MS = [0, 120_000, -120_000]
/** The chaos goes on at least until this many kills (and the freeze) happened. */
const MIN_KILLS = 4

let schema: TestSchema | undefined
let sql: pg.Pool | undefined
let workerBundle: Bundle | undefined
let submitterBundle: Bundle | undefined
const children = new Set<ChildProcess>()

beforeAll(async () => {
  if (skipPostgres) return
  schema = await createTestSchema('chaos')
  sql = new pg.Pool({ connectionString: schema.connectionString, max: 3 })
  ;[workerBundle, submitterBundle] = await Promise.all([
    bundle('test/postgres/chaos-worker-child.ts', { external: ['pg'] }),
    bundle('test/postgres/chaos-submitter-child.ts', { external: ['pg'] }),
  ])
}, 60_000)

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await workerBundle?.remove()
  await submitterBundle?.remove()
  await sql?.end()
  await schema?.drop()
})

/** A child process with its stdout read line by line. */
interface Child {
  readonly process: ChildProcess
  /** Resolves with the next line not taken yet. */
  line(): Promise<string>
  /** Resolves once the process exited (with its code, or its signal). */
  readonly exited: Promise<number | string | null>
  stderr(): string
}

function start(file: string, argument: unknown): Child {
  const spawned = spawn(process.execPath, [file, JSON.stringify(argument)], { stdio: ['pipe', 'pipe', 'pipe'] })
  children.add(spawned)
  let stderr = ''
  spawned.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const lines: string[] = []
  const waiting: ((line: string) => void)[] = []
  createInterface({ input: spawned.stdout! }).on('line', (line) => {
    const next = waiting.shift()
    if (next === undefined) lines.push(line)
    else next(line)
  })
  const exited = new Promise<number | string | null>((resolve) =>
    spawned.once('exit', (code, signal) => {
      children.delete(spawned)
      resolve(code ?? signal)
    }),
  )
  return {
    process: spawned,
    exited,
    stderr: () => stderr,
    line: () => {
      const line = lines.shift()
      if (line !== undefined) return Promise.resolve(line)
      return new Promise<string>((resolve, reject) => {
        waiting.push(resolve)
        void exited.then((how) => reject(new Error(`the child exited (${how}) before a line: ${stderr}`)))
      })
    },
  }
}

/** A worker slot: the process running in it now, started again after each kill. */
async function startWorker(slot: number, name: string): Promise<Child> {
  const options: ChaosWorkerOptions = {
    connectionString: schema!.connectionString,
    schema: schema!.schema,
    name,
    lease: LEASE,
    skewMs: SKEW_MS[slot] ?? 0,
  }
  const child = start(workerBundle!.file, options)
  expect(await child.line()).toBe('ready')
  return child
}

const table = (name: string): string => `"${schema!.schema}"."${name}"`

async function pendingMessages(): Promise<number> {
  const rows = await sql!.query<{ count: string }>(
    `SELECT count(*) AS count FROM ${table('yoke_inbox')} WHERE consumed_seq IS NULL`,
  )
  return Number(rows.rows[0]?.count ?? 0)
}

/** One SSE frame as the client parsed it. */
interface Frame {
  readonly id: string
  readonly data: string
}

/**
 * The browser of the test: follows one session over SSE, from one node; `reconnect()` drops the
 * connection and opens it again on the other node with the last id it has.
 */
function follow(origins: readonly string[], sessionId: string) {
  const frames: Frame[] = []
  let controller = new AbortController()
  let node = 0
  let stopped = false
  const errors: string[] = []
  const run = async (): Promise<void> => {
    while (!stopped) {
      const signal = controller.signal
      const lastId = frames.at(-1)?.id
      try {
        const response = await fetch(`${origins[node]}/sessions/${sessionId}/events`, {
          headers: lastId === undefined ? {} : { 'last-event-id': lastId },
          signal,
        })
        const parser = createParser({
          onEvent: (event) => {
            // A frame cut short by the disconnect never reaches here; one without an id is a failure.
            if (event.id === undefined) errors.push(event.data)
            else frames.push({ id: event.id, data: event.data })
          },
        })
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
        for (;;) {
          const chunk = await reader.read()
          if (chunk.done) break
          parser.feed(chunk.value)
        }
      } catch (error) {
        if (!signal.aborted) errors.push(String(error))
      }
      // The session may not exist yet (its first message not taken): try again shortly.
      if (!signal.aborted) await sleep(200)
    }
  }
  const running = run()
  return {
    frames,
    errors,
    reconnect(): void {
      node = (node + 1) % origins.length
      const old = controller
      controller = new AbortController()
      old.abort()
    },
    async stop(): Promise<void> {
      stopped = true
      controller.abort()
      await running
    },
  }
}

describe.skipIf(skipPostgres)('workers under chaos', () => {
  test('every message runs exactly once and in order, no log has two writers, and SSE readers miss nothing', async () => {
    const sessions = Array.from({ length: SESSIONS }, (_, index) => `chaos-${index}`)

    // Two stateless HTTP nodes, each with its own pool and tails.
    const nodes = await Promise.all(
      [0, 1].map(() =>
        startTailNode({
          connectionString: schema!.connectionString,
          schema: schema!.schema,
          pollMs: 250,
          heartbeatMs: 0,
        }),
      ),
    )

    // Lease epochs as the database holds them, sampled all along: each session's only grows.
    const epochs = new Map<string, number>()
    const shrunk: string[] = []
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        // Until the first process created the tables there is nothing to read.
        const rows = await sql!
          .query<{ session: string; epoch: string }>(`SELECT session, epoch FROM ${table('yoke_leases')}`)
          .catch(() => ({ rows: [] }))
        for (const row of rows.rows) {
          const epoch = Number(row.epoch)
          const before = epochs.get(row.session) ?? 0
          if (epoch < before) shrunk.push(`${row.session}: ${before} → ${epoch}`)
          epochs.set(row.session, Math.max(before, epoch))
        }
        await sleep(100)
      }
    })()

    const slots: Child[] = await Promise.all(
      Array.from({ length: WORKERS }, (_, index) => startWorker(index, `w${index}`)),
    )
    const origins = nodes.map((node) => node.origin)
    const readers = TAILED.map((sessionId) => follow(origins, sessionId))

    const half = SESSIONS / 2
    const allKeys = sessions.flatMap((session) =>
      Array.from({ length: MESSAGES }, (_, index) => `${session}:m${index}`),
    )
    const submitters = [sessions.slice(0, half), sessions.slice(half)].map((own, index) => {
      const options: ChaosSubmitterOptions = {
        connectionString: schema!.connectionString,
        schema: schema!.schema,
        sessions: own,
        messages: MESSAGES,
        pauseMs: [200, 1_400],
        // Later repeats of any key, every 5th key starting at a different one for each submitter.
        duplicates: allKeys.filter((_, at) => at % 5 === index),
      }
      return start(submitterBundle!.file, options)
    })

    // The chaos: a SIGKILL at a random moment every 0.7–2 s, the worker started again a little
    // later; once, a worker frozen for longer than its lease, then let go.
    const started = Date.now()
    let kills = 0
    let froze = false
    let settled = false
    const chaos = (async () => {
      while (!settled && Date.now() - started < CHAOS_MS) {
        await sleep(700 + Math.floor(Math.random() * 1_300))
        if (settled) break
        const index = Math.floor(Math.random() * WORKERS)
        const victim = slots[index]!
        if (!froze && kills >= 2) {
          froze = true
          victim.process.kill('SIGSTOP')
          await sleep(LEASE.ttlMs + 1_500)
          victim.process.kill('SIGCONT')
          continue
        }
        victim.process.kill('SIGKILL')
        await victim.exited
        kills++
        for (const reader of readers) reader.reconnect()
        await sleep(100 + Math.floor(Math.random() * 400))
        slots[index] = await startWorker(index, `w${index}-${kills}`)
      }
    })()

    for (const submitter of submitters) expect(await submitter.line()).toBe('submitted')
    for (const submitter of submitters) submitter.process.stdin!.write('repeat\n')
    const summaries = await Promise.all(
      submitters.map(async (submitter) => JSON.parse(await submitter.line()) as ChaosSubmitterSummary),
    )

    // Every message taken and the chaos had its kills and its freeze; then the killing stops.
    const deadline = Date.now() + 90_000
    while ((await pendingMessages()) > 0 || kills < MIN_KILLS || !froze) {
      if (Date.now() > deadline)
        throw new Error(`${await pendingMessages()} messages still waiting after ${kills} kills`)
      await sleep(250)
    }
    settled = true
    await chaos
    const harness = await createHarness({
      persistence: postgresPersistence({ connectionString: schema!.connectionString, schema: schema!.schema }),
    })
    const raw = postgresPersistence({ connectionString: schema!.connectionString, schema: schema!.schema })
    // The history as a resume would see it: a turn a kill interrupted ends with its repair closers.
    const settledLog = async (sessionId: string): Promise<readonly SessionEvent[]> => {
      for (;;) {
        const events = (await harness.persistence.inspect(sessionId)).events
        const open =
          events.filter((event) => event.type === 'turn/start').length -
          events.filter((event) => event.type === 'turn/end').length
        const users = events.filter((event) => event.type === 'user/message').length
        if (open === 0 && users === MESSAGES) return events
        if (Date.now() > deadline) throw new Error(`${sessionId} did not settle: ${users} messages, ${open} open turns`)
        await sleep(200)
      }
    }

    try {
      expect(summaries.flatMap((summary) => summary.wrong)).toEqual([])
      expect(summaries.map((summary) => summary.submitted)).toEqual([half * MESSAGES, half * MESSAGES])
      expect(kills).toBeGreaterThanOrEqual(MIN_KILLS)
      expect(froze).toBe(true)

      const inbox = await sql!.query<{ id: string; session: string; consumed_seq: string | null }>(
        `SELECT id, session, consumed_seq FROM ${table('yoke_inbox')} ORDER BY position`,
      )
      // One inbox row per key: the repeats made none.
      expect(inbox.rows).toHaveLength(SESSIONS * MESSAGES)

      let interrupted = 0
      for (const sessionId of sessions) {
        const events = await settledLog(sessionId)
        interrupted += events.filter(
          (event) =>
            event.type === 'turn/end' && (event.data as { reason: { kind: string } }).reason.kind === 'interrupted',
        ).length
        // Exactly once, in submit order: the user messages are m0…m9, with the inbox's ids.
        const users = events.filter((event) => event.type === 'user/message')
        const texts = users.map((event) =>
          (event.data as { content: { text?: string }[] }).content.map((block) => block.text ?? '').join(''),
        )
        expect(texts, sessionId).toEqual(Array.from({ length: MESSAGES }, (_, index) => `${sessionId}:m${index}`))
        const rows = inbox.rows.filter((row) => row.session === sessionId)
        expect(
          users.map((event) => (event.data as { id: string }).id),
          sessionId,
        ).toEqual(rows.map((row) => row.id))
        for (const row of rows) expect(row.consumed_seq, row.id).not.toBeNull()

        // One writer at a time: turns never overlap and are numbered 1, 2, 3, …
        let open: number | undefined
        let last = 0
        for (const event of events) {
          const turn = (event.data as { turn?: number }).turn
          if (event.type === 'turn/start') {
            expect(open, `${sessionId} seq ${event.seq}: a turn started inside turn ${open}`).toBeUndefined()
            expect(turn, `${sessionId} seq ${event.seq}`).toBe(last + 1)
            open = turn
            last = turn!
          } else if (event.type === 'turn/end') {
            expect(turn, `${sessionId} seq ${event.seq}`).toBe(open)
            open = undefined
          }
        }
        // Every event the log holds is there, checked (inspect runs the full checks of a load).
        expect((await raw.load(sessionId)).events.length, sessionId).toBeLessThanOrEqual(events.length)
      }
      // The kills did land mid-turn: some turns were cut short and closed by the next owner.
      expect(interrupted).toBeGreaterThan(0)
      expect(shrunk).toEqual([])
      expect(epochs.size).toBe(SESSIONS)

      // The SSE client: every event of its sessions once, in order, as stored.
      for (const [index, sessionId] of TAILED.entries()) {
        const reader = readers[index]!
        const stored = await raw.load(sessionId)
        const until = Date.now() + 20_000
        while (reader.frames.length < stored.events.length && Date.now() < until) await sleep(50)
        expect(
          reader.frames.map((frame) => Number(frame.id)),
          sessionId,
        ).toEqual(stored.events.map((event) => event.seq))
        expect(reader.frames.map((frame) => JSON.parse(frame.data) as unknown)).toEqual(stored.events)
      }
    } finally {
      sampling = false
      await sampler
      for (const reader of readers) await reader.stop()
      for (const slot of slots) slot.process.kill('SIGTERM')
      await Promise.all(slots.map((slot) => slot.exited))
      await harness.close()
      await raw.close()
      for (const node of nodes) await node.close()
    }
  }, 180_000)
})
