/**
 * A worker killed with SIGKILL mid-turn: another worker takes its sessions over once their leases
 * expire (a short TTL here), repairs the interrupted turn without running it again, and runs the
 * remaining messages once each, in submit order; also when the killed turn was the session's last
 * work, with no message left. And a worker cut off from the database stops driving before its
 * lease expires.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPostgresClient, createWorker, type PostgresClient } from '../../src/postgres/index.js'
import { type Bundle, bundle } from '../helpers/child-process.js'
import { skipPostgres } from '../helpers/postgres.js'
import { serverOf, startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { answeringModel, eventually, type WorkerSchema, workerSchema } from './worker-fixtures.js'
import type { WorkerChildOptions } from './worker-child.js'

const lease = { ttlMs: 1500, heartbeatMs: 300 }

describe.skipIf(skipPostgres)('a worker that dies or loses its database', () => {
  let db: WorkerSchema
  let client: PostgresClient
  let child: Bundle | undefined

  beforeAll(async () => {
    db = await workerSchema('worker_kill')
    client = createPostgresClient({ connectionString: db.schema.connectionString, schema: db.schema.schema })
    child = await bundle('test/postgres/worker-child.ts', { external: ['pg'] })
  })
  afterAll(async () => {
    await child?.remove()
    await client?.close()
    await db?.close()
  })

  const spawnWorker = async (): Promise<{ process: ChildProcess; stderr: () => string }> => {
    const options: WorkerChildOptions = {
      connectionString: db.schema.connectionString,
      schema: db.schema.schema,
      delayMs: 250,
      ...lease,
    }
    const worker = spawn(process.execPath, [child!.file, JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    worker.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    await new Promise<void>((resolve, reject) => {
      worker.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString('utf8').includes('ready')) resolve()
      })
      worker.on('exit', (code) => reject(new Error(`the worker child exited (${code}): ${stderr}`)))
    })
    return { process: worker, stderr: () => stderr }
  }

  test('SIGKILL mid-turn: the next worker takes over after the TTL; every message runs once, in order', async () => {
    const sessions = ['killed-a', 'killed-b', 'killed-c']
    const submitted = new Map<string, string[]>()
    for (const sessionId of sessions) {
      const ids: string[] = []
      for (let index = 0; index < 4; index++)
        ids.push((await client.submit(sessionId, `${sessionId} #${index}`, { create: true })).messageId)
      submitted.set(sessionId, ids)
    }
    const first = await spawnWorker()
    // Some messages ran, and turns are in flight (each answer takes 250 ms).
    await eventually(
      async () => (await db.inbox()).filter((row) => row.consumed_seq !== null).length >= 4,
      'the first worker to run some messages',
    )
    first.process.kill('SIGKILL')
    await new Promise((resolve) => first.process.once('exit', resolve))
    const killedAt = Date.now()

    const second = await createWorker({
      model: answeringModel(20),
      persistence: db.adapter(lease),
      pollMs: 100,
    })
    try {
      await eventually(
        async () => (await db.runnableCount()) === 0 && second.driving.length === 0,
        'the takeover',
        30_000,
      )
      // Nothing could be taken before the dead worker's leases expired.
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(lease.ttlMs - 300)
    } finally {
      await second.close()
    }
    for (const sessionId of sessions) {
      const messages = await db.userMessages(sessionId)
      expect(messages.map((message) => message.id)).toEqual(submitted.get(sessionId))
      const types = await db.eventTypes(sessionId)
      // Every turn closed (the interrupted one by the repair), and no message ran twice.
      expect(types.filter((type) => type === 'turn/start').length).toBe(
        types.filter((type) => type === 'turn/end').length,
      )
      expect(types.filter((type) => type === 'turn/start')).toHaveLength(4)
    }
    expect((await db.inbox()).every((row) => row.consumed_seq !== null)).toBe(true)
  }, 50_000)

  test('a worker killed during the last message: the next worker repairs the session with no new message', async () => {
    const { messageId } = await client.submit('orphan', 'the only question', { create: true })
    const first = await spawnWorker()
    await eventually(
      async () => (await db.eventTypes('orphan').catch((): readonly string[] => [])).includes('turn/start'),
      'the turn to start',
    )
    first.process.kill('SIGKILL')
    await new Promise((resolve) => first.process.once('exit', resolve))
    // The message is consumed and nothing waits in the inbox; the session's job row stays until
    // its worker saw it idle, so the next worker still takes it, to close the interrupted turn.
    expect((await db.inbox('orphan')).every((row) => row.consumed_seq !== null)).toBe(true)
    const second = await createWorker({
      model: answeringModel(),
      persistence: db.adapter(lease),
      pollMs: 100,
    })
    try {
      await eventually(
        async () => {
          const types = await db.eventTypes('orphan')
          const open =
            types.filter((type) => type === 'turn/start').length - types.filter((type) => type === 'turn/end').length
          return open === 0 && (await db.runnableCount()) === 0
        },
        'the repair',
        20_000,
      )
      // Released, so no sweep brings it back.
      const { rows } = await db.sql.query<{ token: string }>(
        `SELECT token FROM ${db.table('yoke_leases')} WHERE session = 'orphan'`,
      )
      await eventually(async () => {
        const again = await db.sql.query<{ token: string }>(
          `SELECT token FROM ${db.table('yoke_leases')} WHERE session = 'orphan'`,
        )
        return again.rows[0]?.token === ''
      }, 'the lease to be released')
      expect(rows).toHaveLength(1)
    } finally {
      await second.close()
    }
    const messages = await db.userMessages('orphan')
    expect(messages.map((message) => message.id)).toEqual([messageId])
    const types = await db.eventTypes('orphan')
    expect(types.filter((type) => type === 'turn/start')).toHaveLength(1)
    expect(types.filter((type) => type === 'turn/end')).toHaveLength(1)
    expect(second.delivered).toBe(0)
  }, 50_000)

  test('a worker whose database connection drops mid-turn stops driving before its lease expires', async () => {
    const proxy = await startTcpProxy(serverOf(db.schema.connectionString))
    const errors: unknown[] = []
    const cutOff = await createWorker({
      model: answeringModel(3000),
      persistence: postgresPersistence({
        connectionString: throughProxy(db.schema.connectionString, proxy),
        schema: db.schema.schema,
        lease,
      }),
      pollMs: 100,
      listen: false,
      onError: (error) => errors.push(error),
    })
    try {
      const { messageId } = await client.submit('cut-off', 'a long question', { create: true })
      await eventually(() => cutOff.driving.includes('cut-off'), 'the worker to drive the session')
      await eventually(
        async () => (await db.eventTypes('cut-off').catch((): readonly string[] => [])).includes('turn/start'),
        'the turn to start',
      )
      proxy.cut()
      // It lets the session go before the TTL has passed since its last renewal, by the database's clock.
      await eventually(() => !cutOff.driving.includes('cut-off'), 'the worker to stop driving', 10_000)
      const { rows } = await db.sql.query<{ now: string; expires: string }>(
        `SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now, heartbeat_at + ttl_ms AS expires FROM ${db.table('yoke_leases')} WHERE session = 'cut-off'`,
      )
      expect(Number(rows[0]?.now)).toBeLessThan(Number(rows[0]?.expires))
      proxy.restore()
      // The next owner repairs the interrupted turn; the message is not run again.
      const next = await createWorker({ model: answeringModel(), persistence: db.adapter(lease), pollMs: 100 })
      try {
        await client.submit('cut-off', 'and then?')
        await eventually(
          async () => (await db.eventTypes('cut-off')).filter((type) => type === 'turn/end').length === 2,
          'the next message to run',
          20_000,
        )
      } finally {
        await next.close()
      }
      const messages = await db.userMessages('cut-off')
      expect(messages.map((message) => message.text)).toEqual(['a long question', 'and then?'])
      expect(messages[0]?.id).toBe(messageId)
      const types = await db.eventTypes('cut-off')
      expect(types.filter((type) => type === 'turn/start').length).toBe(
        types.filter((type) => type === 'turn/end').length,
      )
    } finally {
      proxy.restore()
      await cutOff.close().catch(() => undefined)
      await proxy.close?.()
    }
  }, 50_000)
})
