/**
 * Workers over one schema: every submitted message runs exactly once and in submit order per
 * session, whichever worker drives it; polling alone works; the sweeper makes one job per session;
 * and an inbox row is marked consumed only by the transaction that logs its message.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { createHarness, type Harness, LeaseLostError } from '../../src/index.js'
import { createPostgresClient, createWorker, type PostgresClient, type Worker } from '../../src/postgres/index.js'
import { WorkerQueries } from '../../src/postgres/worker-queries.js'
import { workerTables } from '../../src/postgres/worker-tables.js'
import type { PostgresHandle } from '../../src/postgres/postgres-handle.js'
import { postgresHandleKey } from '../../src/postgres/postgres-handle.js'
import { skipPostgres } from '../helpers/postgres.js'
import { answeringModel, eventually, type WorkerSchema, workerSchema } from './worker-fixtures.js'

/** An error and its causes (`cause`, `errors`), depth first. */
function causesOf(error: unknown): unknown[] {
  if (typeof error !== 'object' || error === null) return []
  const { cause, errors } = error as { cause?: unknown; errors?: unknown }
  return [error, ...causesOf(cause), ...(Array.isArray(errors) ? errors.flatMap(causesOf) : [])]
}

describe.skipIf(skipPostgres)('workers', () => {
  let db: WorkerSchema
  let client: PostgresClient
  const workers: Worker[] = []
  const harnesses: Harness[] = []

  beforeAll(async () => {
    db = await workerSchema('worker')
    client = createPostgresClient({ connectionString: db.schema.connectionString, schema: db.schema.schema })
  })
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.close()
    // A fenced harness cannot write its last events at close: that failure is the point.
    for (const harness of harnesses.splice(0)) await harness.close().catch(() => undefined)
  })
  afterAll(async () => {
    await client?.close()
    await db?.close()
  })

  const startWorker = async (options: { listen?: boolean; pollMs?: number; delayMs?: number } = {}) => {
    const worker = await createWorker({
      model: answeringModel(options.delayMs ?? 5),
      persistence: db.adapter(),
      pollMs: options.pollMs ?? 200,
      concurrency: 3,
      ...(options.listen === undefined ? {} : { listen: options.listen }),
    })
    workers.push(worker)
    return worker
  }

  test('two workers: every message of every session runs once, in submit order', async () => {
    const first = await startWorker()
    const second = await startWorker({ listen: false, pollMs: 100 })
    const sessions = Array.from({ length: 6 }, (_, index) => `pair-${index}`)
    const submitted = new Map<string, string[]>()
    // Each session's messages go in order; the sessions race each other.
    await Promise.all(
      sessions.map(async (sessionId) => {
        const ids: string[] = []
        for (let index = 0; index < 5; index++) {
          const result = await client.submit(sessionId, `${sessionId} #${index}`, {
            create: true,
            idempotencyKey: `k${index}`,
          })
          ids.push(result.messageId)
          // A retry of the same key changes nothing.
          if (index % 2 === 0) await client.submit(sessionId, `${sessionId} #${index}`, { idempotencyKey: `k${index}` })
        }
        submitted.set(sessionId, ids)
      }),
    )
    await eventually(async () => (await db.runnableCount()) === 0, 'every session to be done', 40_000)
    for (const sessionId of sessions) {
      const messages = await db.userMessages(sessionId)
      expect(messages.map((message) => message.id)).toEqual(submitted.get(sessionId))
      expect(messages.map((message) => message.text)).toEqual([0, 1, 2, 3, 4].map((index) => `${sessionId} #${index}`))
      const rows = await db.inbox(sessionId)
      expect(rows.every((row) => row.consumed_seq !== null && row.failure === null)).toBe(true)
      // Each turn ran one message and answered it.
      const types = await db.eventTypes(sessionId)
      expect(types.filter((type) => type === 'turn/start')).toHaveLength(5)
      expect(types.filter((type) => type === 'assistant/message')).toHaveLength(5)
    }
    expect(first.delivered + second.delivered).toBe(30)
  })

  test('with LISTEN off a worker still picks messages up by polling', async () => {
    const worker = await startWorker({ listen: false, pollMs: 100 })
    const { messageId } = await client.submit('polled', 'hello', { create: true })
    await eventually(async () => (await db.userMessages('polled').catch(() => [])).length === 1, 'the message')
    expect((await db.userMessages('polled'))[0]?.id).toBe(messageId)
    expect(worker.delivered).toBe(1)
  })

  test('repeated sweeps make one runnable row per session with waiting messages', async () => {
    await client.submit('swept', 'one', { create: true })
    await client.submit('swept', 'two')
    await db.sql.query(`DELETE FROM ${db.table('yoke_runnable')} WHERE session = 'swept'`)
    const handle = (db.adapter() as unknown as Record<symbol, PostgresHandle>)[postgresHandleKey] as PostgresHandle
    const started = await handle.start()
    const queries = new WorkerQueries(started.executor, workerTables(db.schema.schema))
    const sweeps = await Promise.all([queries.sweep(), queries.sweep(), queries.sweep()])
    expect(sweeps.flat()).toEqual(['swept'])
    expect(await queries.sweep()).toEqual([])
    const rows = await db.sql.query(`SELECT session FROM ${db.table('yoke_runnable')}`)
    expect(rows.rows).toEqual([{ session: 'swept' }])
    // A session whose lease is live is not swept: its holder is on it.
    await db.sql.query(`DELETE FROM ${db.table('yoke_runnable')}`)
    await db.sql.query(
      `INSERT INTO ${db.table('yoke_leases')} (session, owner, token, epoch, pid, host, acquired_at, heartbeat_at, ttl_ms) VALUES ('swept', 'o', 't', 1, 1, 'h', 0, (extract(epoch from clock_timestamp()) * 1000)::bigint, 60000)`,
    )
    expect(await queries.sweep()).toEqual([])
    await db.sql.query(`DELETE FROM ${db.table('yoke_leases')} WHERE session = 'swept'`)
    // The worker's own sweep brings the session back, and it runs.
    await createWorkerWithSweep()
    await eventually(async () => (await db.userMessages('swept').catch(() => [])).length === 2, 'the swept messages')
  })

  const createWorkerWithSweep = async () => {
    const worker = await createWorker({
      model: answeringModel(),
      persistence: db.adapter(),
      pollMs: 100,
      sweepMs: 100,
    })
    workers.push(worker)
    return worker
  }

  test('close({ drainMs }) lets the running turn finish and hands the session over at once', async () => {
    const draining = await startWorker({ delayMs: 400 })
    const first = await client.submit('drained', 'long one', { create: true })
    await eventually(
      async () => (await db.eventTypes('drained').catch((): readonly string[] => [])).includes('turn/start'),
      'the turn to start',
    )
    const closing = draining.close({ drainMs: 10_000 })
    const second = await client.submit('drained', 'next one')
    // The default lease TTL is 30 s: a takeover this soon is the drained worker's release.
    const startedAt = Date.now()
    await startWorker()
    await closing
    await eventually(async () => (await db.runnableCount()) === 0, 'the handover')
    expect(Date.now() - startedAt).toBeLessThan(15_000)
    expect((await db.userMessages('drained')).map((message) => message.id)).toEqual([first.messageId, second.messageId])
    const stored = await db.adapter().load('drained')
    const ends = stored.events.filter((event) => event.type === 'turn/end')
    expect(ends.map((event) => (event.data as { reason: { kind: string } }).reason.kind)).toEqual([
      'completed',
      'completed',
    ])
  })

  test('messages of a session deleted before a worker came are marked failed, not retried for ever', async () => {
    await client.submit('deleted', 'hello', { create: true })
    await startWorker()
    await eventually(async () => (await db.runnableCount()) === 0, 'the session to run')
    await workers.splice(0)[0]?.close()
    await client.submit('deleted', 'anyone there?')
    const remover = db.adapter()
    await remover.delete?.('deleted')
    await remover.close()
    await startWorker()
    await eventually(async () => (await db.runnableCount()) === 0, 'the job to go')
    const rows = await db.inbox('deleted')
    expect(rows[1]).toMatchObject({ consumed_seq: null, failure: expect.stringContaining('does not exist') })
    expect(rows[1]?.consumed_at).not.toBeNull()
  })

  test('a message logged by a fenced writer stays unconsumed; the owner’s append marks it in the same transaction', async () => {
    const { messageId } = await client.submit('fenced', 'pay the invoice', { create: true })
    const adapter = db.adapter()
    const harness = await createHarness({ model: answeringModel(), persistence: adapter })
    harnesses.push(harness)
    const agent = await harness.openAgent('fenced')
    // Something logged first, so the log is stored and the lease fences an existing session.
    agent.inject('context')
    await harness.sessions.flush(agent.session)
    // Another instance breaks the lease: this harness's writes are fenced off from now on.
    const breaker = db.adapter()
    await breaker.breakLease?.('fenced')
    await breaker.close()
    agent.inject({ content: [{ type: 'text', text: 'pay the invoice' }] }, { id: messageId })
    const failure = await harness.sessions.flush(agent.session).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(causesOf(failure).some((cause) => LeaseLostError.is(cause))).toBe(true)
    expect((await db.inbox('fenced'))[0]).toMatchObject({ id: messageId, consumed_seq: null, consumed_at: null })
    const before = await adapter.load('fenced')
    expect(JSON.stringify(before.events)).not.toContain(messageId)

    // A live owner's append carries the mark: the row names the seq of the event that logged it.
    // Its last flush is refused too: the lease is gone.
    await agent.dispose().catch(() => undefined)
    const fresh = await createHarness({ model: answeringModel(), persistence: db.adapter() })
    harnesses.push(fresh)
    const owner = await fresh.resumeAgent('fenced', { queued: 'discard' })
    owner.inject('pay the invoice', { id: messageId })
    await fresh.sessions.flush(owner.session)
    const [row] = await db.inbox('fenced')
    expect(row?.consumed_seq).not.toBeNull()
    const stored = await adapter.load('fenced')
    const event = stored.events.find((candidate) => candidate.seq === Number(row?.consumed_seq))
    expect(event?.type).toBe('agent/inbox/spliced')
    expect(JSON.stringify(event?.data)).toContain(messageId)
  })
})
