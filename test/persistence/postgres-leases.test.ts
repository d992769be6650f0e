/**
 * PostgreSQL leases across real processes: two processes opening one new id at the same instant
 * (exactly one wins, the loser's error names the winner), and a writer whose own clock is ten
 * minutes slow or fast: expiry is judged by the database's clock, so a live lease stays live and a
 * dead holder's lease expires after its TTL, whatever the writer's clock said.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { SessionLockedError } from '../../src/index.js'
import type { PersistenceAdapter } from '../../src/persistence/persistence-adapter.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { type Bundle, bundle, root } from '../helpers/child-process.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'
import type { LeaseChildOptions } from './postgres-lease-child.js'

let child: Bundle | undefined
let schema: TestSchema | undefined

beforeAll(async () => {
  if (skipPostgres) return
  child = await bundle('test/persistence/postgres-lease-child.ts', { external: ['pg'] })
  schema = await createTestSchema('leases')
}, 60_000)

afterAll(async () => {
  await child?.remove()
  await schema?.drop()
})

interface ChildLine {
  readonly won: boolean
  readonly owner?: string
  readonly code?: string
  readonly message?: string
  readonly holderOwner?: string
}

interface Running {
  readonly line: Promise<ChildLine>
  readonly exited: Promise<number | null>
  readonly process: ChildProcess
}

function start(options: Omit<LeaseChildOptions, 'connectionString' | 'schema'>): Running {
  const env = { ...process.env }
  delete env['NODE_OPTIONS']
  const spawned = spawn(
    process.execPath,
    [child!.file, JSON.stringify({ connectionString: schema!.connectionString, schema: schema!.schema, ...options })],
    { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  spawned.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const line = new Promise<ChildLine>((resolve, reject) => {
    spawned.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const newline = stdout.indexOf('\n')
      if (newline !== -1) resolve(JSON.parse(stdout.slice(0, newline)) as ChildLine)
    })
    spawned.once('close', (code) => reject(new Error(`the child exited ${code} without a line: ${stderr}`)))
  })
  const exited = new Promise<number | null>((resolve) => spawned.once('close', (code) => resolve(code)))
  return { line, exited, process: spawned }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe.skipIf(skipPostgres)('PostgreSQL leases across processes', () => {
  test('two processes open one new id at the same instant: exactly one wins, the loser names the winner', async () => {
    for (let round = 0; round < 3; round++) {
      const id = `race-${round}`
      const startAt = Date.now() + 1500
      const children = [start({ id, startAt, holdMs: 500 }), start({ id, startAt, holdMs: 500 })]
      const lines = await Promise.all(children.map((running) => running.line))
      await Promise.all(children.map((running) => running.exited))
      const winners = lines.filter((line) => line.won)
      const losers = lines.filter((line) => !line.won)
      expect(winners, JSON.stringify(lines)).toHaveLength(1)
      expect(losers[0]).toMatchObject({ code: 'SESSION_LOCKED', holderOwner: winners[0]?.owner })
      expect(winners[0]?.owner).toMatch(/^[0-9a-f]{32}$/)
    }
  }, 30_000)

  test.each([
    ['ten minutes slow', -600_000],
    ['ten minutes fast', 600_000],
  ])(
    'a writer whose clock is %s: its live lease stays live and its dead lease expires after the TTL, by the database clock',
    async (_name, skewMs) => {
      const lease = { ttlMs: 1500, heartbeatMs: 300 }
      const id = `skew-${skewMs}`
      const writer = start({ id, startAt: 0, holdMs: 60_000, skewMs, lease })
      const line = await writer.line
      expect(line.won).toBe(true)
      const other: PersistenceAdapter = postgresPersistence({
        connectionString: schema!.connectionString,
        schema: schema!.schema,
        lease,
      })
      try {
        // Live: two TTLs later (its heartbeats keep it so), whatever its own clock says.
        await sleep(2 * lease.ttlMs)
        const stored = await other.inspectLease?.(id)
        expect(stored).toMatchObject({ live: true, holder: { owner: line.owner } })
        expect(stored?.ageMs).toBeLessThan(lease.ttlMs)
        const refused = await rejectionOf(other.acquire(id))
        expect(refused).toBeInstanceOf(SessionLockedError)
        expect((refused as SessionLockedError).holder?.owner).toBe(line.owner)
        // Dead: killed without releasing; its lease expires one TTL after its last heartbeat.
        writer.process.kill('SIGKILL')
        await writer.exited
        await sleep(lease.ttlMs + 300)
        const taken = await other.acquire(id)
        expect(taken.tookOver?.owner).toBe(line.owner)
        await taken.release()
      } finally {
        writer.process.kill('SIGKILL')
        await other.close()
      }
    },
    30_000,
  )
})
