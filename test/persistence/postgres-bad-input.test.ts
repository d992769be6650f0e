/**
 * The PostgreSQL adapter against bad input, on the real test server: a server that does not answer
 * or refuses the login, a schema written by a newer Yoke, replicas starting together on a new
 * schema, a database that disappears or hangs mid-turn (a loopback TCP proxy between the adapter
 * and the server, cut or frozen, then restored), a COMMIT whose reply is lost, session ids outside the id alphabet, a
 * 10 MB event, and an injected pool that must outlive the harness.
 */
import { createServer } from 'node:net'
import pg from 'pg'
import { afterEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  type Harness,
  type PersistenceAdapter,
  PersistenceError,
  type SessionEvent,
  SessionFormatUnsupportedError,
} from '../../src/index.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { eventsFrom, headerOf, note } from '../../src/testing/conformance/conformance-events.js'
import { fakeIds, scriptedModel, text } from '../../src/testing/index.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { createTestSchema, postgresConnectionString, skipPostgres, type TestSchema } from '../helpers/postgres.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { serverOf, startTcpProxy, type TcpProxy, throughProxy } from '../helpers/tcp-proxy.js'
import { type PostgresTarget, postgresTarget } from './postgres-target.js'

/** Everything a test opened, closed after it whatever happened. */
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {})
})

async function target(label: string): Promise<PostgresTarget> {
  const made = await postgresTarget(label)
  cleanups.push(() => made.cleanup?.() ?? Promise.resolve())
  cleanups.push(() => made.adapter.close())
  return made
}

function adapterOver(connectionString: string, schema: string): PersistenceAdapter {
  const adapter = postgresPersistence({ connectionString, schema })
  cleanups.push(() => adapter.close())
  return adapter
}

async function harnessOver(persistence: PersistenceAdapter, replies = [text('one'), text('two')]): Promise<Harness> {
  const harness = await createHarness({
    model: scriptedModel(replies),
    persistence,
    ids: fakeIds(),
    logger: recordingLogger(),
  })
  cleanups.push(() => harness.close())
  return harness
}

/** A port on loopback that nothing listens on (the kernel's pick, closed again). */
async function refusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** The tables of `schema`, sorted. */
async function tablesOf(sql: pg.Pool, schema: string): Promise<string[]> {
  const result = await sql.query<{ table_name: string }>(
    'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
    [schema],
  )
  return result.rows.map((row) => row.table_name)
}

/** Every row of every Yoke table of `schema`, as JSON, for "nothing changed" checks. */
async function contentsOf(sql: pg.Pool, schema: string): Promise<string> {
  const parts: string[] = []
  for (const table of await tablesOf(sql, schema)) {
    const rows = await sql.query(`SELECT * FROM "${schema}"."${table}" ORDER BY 1`)
    parts.push(`${table}: ${JSON.stringify(rows.rows)}`)
  }
  return parts.join('\n')
}

const storedEvents = async (adapter: PersistenceAdapter, id: string): Promise<string[]> =>
  (await adapter.load(id)).events.map((event) => JSON.stringify(event))

describe.skipIf(skipPostgres)('the PostgreSQL adapter with bad input', () => {
  test('a refused port: every operation tries to start again and rejects with a PersistenceError WRITE_FAILED naming the server, never the password', async () => {
    const port = await refusedPort()
    const secret = 's3cr3t-Pässword'
    const adapter = adapterOver(`postgresql://yoke:${encodeURIComponent(secret)}@127.0.0.1:${port}/app`, 'app')
    const first = await rejectionOf(adapter.list())
    expect(first).toBeInstanceOf(PersistenceError)
    expect(first).toMatchObject({ code: 'WRITE_FAILED', operation: 'start' })
    const message = (first as Error).message
    expect(message).toContain(`yoke@127.0.0.1:${port}/app`)
    expect(message).toContain('ECONNREFUSED')
    expect(message).not.toContain(secret)
    expect(message).not.toContain(encodeURIComponent(secret))
    expect((first as Error).cause).toMatchObject({ cause: { code: 'ECONNREFUSED' } })
    // A failed start is not remembered: each later call makes its own attempt and its own error.
    for (const later of [await rejectionOf(adapter.acquire('s1')), await rejectionOf(adapter.load('s1'))]) {
      expect(later).not.toBe(first)
      expect(later).toBeInstanceOf(PersistenceError)
      expect(later).toMatchObject({ code: 'WRITE_FAILED', operation: 'start' })
      expect((later as Error).message).toContain('ECONNREFUSED')
      expect((later as Error).message).not.toContain(secret)
      expect((later as Error).message).not.toContain(encodeURIComponent(secret))
    }
  })

  test('a server unreachable at start: each call rejects with WRITE_FAILED, and the same adapter works once it is reachable', async () => {
    const schema = await createTestSchema('late_start')
    cleanups.push(() => schema.drop())
    const proxy = await startTcpProxy(serverOf(schema.connectionString))
    cleanups.push(() => proxy.close())
    const url = new URL(throughProxy(schema.connectionString, proxy))
    // The test server trusts loopback, so a password of our own is ignored by it; one it needs is kept.
    if (url.password === '') url.password = encodeURIComponent('late-Pässword-7')
    const secret = decodeURIComponent(url.password)
    const adapter = adapterOver(url.toString(), schema.schema)
    proxy.cut()
    const failures = [
      await rejectionOf(adapter.list()),
      await rejectionOf(adapter.create(headerOf('s1'))),
      await rejectionOf(adapter.acquire('s1')),
    ]
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(PersistenceError)
      expect(failure).toMatchObject({ code: 'WRITE_FAILED', operation: 'start' })
      expect((failure as Error).message).not.toContain(secret)
      expect((failure as Error).message).not.toContain(url.password)
    }
    expect(new Set(failures).size).toBe(failures.length)
    proxy.restore()
    expect((await adapter.list()).headers).toEqual([])
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    const events = eventsFrom(0, [note('after the outage')])
    await adapter.append('s1', events, { expectedSeq: 0, lease })
    expect(await storedEvents(adapter, 's1')).toEqual(events.map((event) => JSON.stringify(event)))
    await lease.release()
  })

  test('an unknown database: a typed error naming it with the driver reason, the password nowhere, nothing created', async () => {
    const secret = 'another-Secret-42'
    const url = new URL(postgresConnectionString())
    url.password = secret
    url.pathname = '/yoke_no_such_database'
    const adapter = adapterOver(url.toString(), 'app')
    const error = await rejectionOf(adapter.create(headerOf('s1')))
    expect(error).toBeInstanceOf(PersistenceError)
    expect(error).toMatchObject({ code: 'WRITE_FAILED', operation: 'start' })
    expect((error as Error).message).toMatch(/yoke_no_such_database.*does not exist/)
    expect((error as Error).message).not.toContain(secret)
    expect(JSON.stringify(error)).not.toContain(secret)
    const databases = await new pg.Pool({ connectionString: postgresConnectionString(), max: 1 })
    cleanups.push(() => databases.end())
    const found = await databases.query('SELECT 1 FROM pg_database WHERE datname = $1', ['yoke_no_such_database'])
    expect(found.rowCount).toBe(0)
  })

  test('a schema from a newer Yoke: SessionFormatUnsupportedError SCHEMA_TOO_NEW naming both versions, and nothing written', async () => {
    const made = await target('newer')
    // The first adapter migrates and stores a session.
    const writer = made.adapter
    await writer.create(headerOf('s1'))
    const lease = await writer.acquire('s1')
    await writer.append('s1', eventsFrom(0, [note('kept')]), { expectedSeq: 0, lease })
    await lease.release()
    await made.sql.query(`UPDATE ${made.table('yoke_schema')} SET version = 99`)
    const before = await contentsOf(made.sql, made.schema.schema)

    const newer = made.open()
    cleanups.push(() => newer.close())
    const error = await rejectionOf(newer.list())
    expect(error).toBeInstanceOf(SessionFormatUnsupportedError)
    expect(error).toMatchObject({
      code: 'SCHEMA_TOO_NEW',
      storedVersion: 99,
      supportedVersion: 1,
      direction: 'newer',
    })
    expect((error as Error).message).toMatch(/99/)
    expect((error as Error).message).toMatch(/\b1\b/)
    expect((error as SessionFormatUnsupportedError).location).toContain(made.schema.schema)
    // Every later call starts again and is refused again, with nothing written.
    for (const later of [await rejectionOf(newer.acquire('s2')), await rejectionOf(newer.create(headerOf('s2')))]) {
      expect(later).toBeInstanceOf(SessionFormatUnsupportedError)
      expect(later).toMatchObject({ code: 'SCHEMA_TOO_NEW', storedVersion: 99, supportedVersion: 1 })
    }
    expect(await contentsOf(made.sql, made.schema.schema)).toBe(before)
  })

  test('a schema holding only a newer version row: refused, and no table of this version is created', async () => {
    const made = await target('newer-empty')
    await made.sql.query(`CREATE TABLE ${made.table('yoke_schema')} (version bigint NOT NULL)`)
    await made.sql.query(`INSERT INTO ${made.table('yoke_schema')} (version) VALUES (2)`)
    const error = await rejectionOf(made.adapter.list())
    expect(error).toMatchObject({ code: 'SCHEMA_TOO_NEW', storedVersion: 2, supportedVersion: 1 })
    expect(await tablesOf(made.sql, made.schema.schema)).toEqual(['yoke_schema'])
  })

  test('four replicas starting at once on a schema that does not exist yet: each migrates or waits, all work', async () => {
    const base = await createTestSchema('replicas')
    const schema = `${base.schema}_new`
    const sql = new pg.Pool({ connectionString: base.connectionString, max: 1 })
    cleanups.push(async () => {
      await sql.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await sql.end()
      await base.drop()
    })
    const replicas = Array.from({ length: 4 }, () => adapterOver(base.connectionString, schema))
    const listings = await Promise.all(replicas.map((replica) => replica.list()))
    expect(listings.map((listing) => listing.headers.length)).toEqual([0, 0, 0, 0])
    expect(await tablesOf(sql, schema)).toEqual(
      expect.arrayContaining(['yoke_events', 'yoke_leases', 'yoke_schema', 'yoke_sessions']),
    )
    const versions = await sql.query(`SELECT version FROM "${schema}"."yoke_schema"`)
    expect(versions.rows).toEqual([{ version: '1' }])
    // Each of them writes: the schema is usable by all.
    for (const [index, replica] of replicas.entries()) {
      const id = `r${index}`
      await replica.create(headerOf(id))
      const lease = await replica.acquire(id)
      await replica.append(id, eventsFrom(0, [note(index)]), { expectedSeq: 0, lease })
    }
    expect((await replicas[0]!.list()).headers.map((header) => header.id)).toEqual(['r0', 'r1', 'r2', 'r3'])
  })

  describe('a database that disappears', () => {
    let proxy: TcpProxy
    let schema: TestSchema

    async function throughTheProxy(): Promise<{ adapter: PersistenceAdapter; reader: PersistenceAdapter }> {
      schema = await createTestSchema('proxy')
      proxy = await startTcpProxy(serverOf(schema.connectionString))
      cleanups.push(() => schema.drop())
      cleanups.push(() => proxy.close())
      return {
        adapter: adapterOver(throughProxy(schema.connectionString, proxy), schema.schema),
        reader: adapterOver(schema.connectionString, schema.schema),
      }
    }

    /** Runs `prompt`, cutting the line as the turn starts; returns what the turn rejected with. */
    async function runCut(agent: Awaited<ReturnType<Harness['createAgent']>>, harness: Harness, prompt: string) {
      const off = harness.on('session/event', ({ event }) => {
        if (event.type === 'turn/start') proxy.cut()
      })
      try {
        return await rejectionOf(agent.run(prompt))
      } finally {
        off()
      }
    }

    async function expectStoredOnce(
      reader: PersistenceAdapter,
      agent: { readonly session: { readonly id: string; readonly events: readonly SessionEvent[] } },
    ) {
      const stored = await storedEvents(reader, agent.session.id)
      expect(stored).toEqual(agent.session.events.map((event) => JSON.stringify(event)))
      expect(stored.map((line) => (JSON.parse(line) as SessionEvent).seq)).toEqual(
        agent.session.events.map((_, index) => index),
      )
    }

    test('mid-turn: the turn fails at its checkpoint with a typed error; once back, nothing is lost or doubled', async () => {
      const { adapter, reader } = await throughTheProxy()
      const harness = await harnessOver(adapter, [text('one'), text('two'), text('three')])
      const agent = await harness.createAgent()
      expect((await agent.run('first')).reason).toEqual({ kind: 'completed' })
      // The line goes down as the second turn starts, so its appends meet a dead connection.
      const error = await runCut(agent, harness, 'second')
      expect(error).toMatchObject({
        code: 'FLUSH_FAILED',
        cause: { code: 'WRITE_FAILED', sessionId: agent.session.id },
      })
      expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: { kind: 'error' } })
      proxy.restore()
      const third = await agent.run('third')
      expect(third.reason).toEqual({ kind: 'completed' })
      await expectStoredOnce(reader, agent)
    })

    test('a database that hangs mid-turn: the turn fails with WRITE_TIMEOUT; once it answers, the log completes, each seq once', async () => {
      const { adapter, reader } = await throughTheProxy()
      const harness = await createHarness({
        model: scriptedModel([text('one'), text('two'), text('three')]),
        persistence: adapter,
        ids: fakeIds(),
        logger: recordingLogger(),
        writeTimeoutMs: 300,
      })
      cleanups.push(() => harness.close())
      const agent = await harness.createAgent()
      expect((await agent.run('first')).reason).toEqual({ kind: 'completed' })
      const off = harness.on('session/event', ({ event }) => {
        if (event.type === 'turn/start') proxy.freeze()
      })
      const error = await rejectionOf(agent.run('second'))
      off()
      expect(error).toMatchObject({
        code: 'FLUSH_FAILED',
        cause: { code: 'WRITE_TIMEOUT', sessionId: agent.session.id, timeoutMs: 300 },
      })
      expect(agent.status).toBe('idle')
      proxy.thaw()
      expect((await agent.run('third')).reason).toEqual({ kind: 'completed' })
      await expectStoredOnce(reader, agent)
    })

    // The harness registers a new session (adapter.create, which for a SQL store asks the
    // database whether the id is stored) before its first write; a registration that failed
    // because storage was unreachable is tried again by the next write.
    test('during a new session’s first turn: the turn fails with a typed error; once back, the session registers and flushes', async () => {
      const { adapter, reader } = await throughTheProxy()
      const harness = await harnessOver(adapter)
      const agent = await harness.createAgent()
      const error = await runCut(agent, harness, 'first')
      expect(error).toMatchObject({
        code: 'FLUSH_FAILED',
        cause: { code: 'WRITE_FAILED', sessionId: agent.session.id },
      })
      proxy.restore()
      const second = await agent.run('second')
      expect(second.reason).toEqual({ kind: 'completed' })
      await expectStoredOnce(reader, agent)
    })

    test('a COMMIT whose reply is lost (a first append, one transaction): the append rejects, its retry succeeds, and the batch is stored once', async () => {
      const { adapter, reader } = await throughTheProxy()
      await adapter.create(headerOf('s1'))
      const lease = await adapter.acquire('s1')
      const first = eventsFrom(0, [note('one'), note('two')])
      const lost = proxy.loseReplyTo('COMMIT')
      const failure = await rejectionOf(adapter.append('s1', first, { expectedSeq: 0, lease }))
      await lost
      expect(failure).toBeInstanceOf(PersistenceError)
      expect(await storedEvents(reader, 's1')).toHaveLength(2)
      await adapter.append('s1', first, { expectedSeq: 0, lease })
      expect(await storedEvents(reader, 's1')).toEqual(first.map((event) => JSON.stringify(event)))
      const second = eventsFrom(2, [note('three')])
      await adapter.append('s1', second, { expectedSeq: 2, lease })
      expect(await storedEvents(reader, 's1')).toHaveLength(3)
    })

    // A later append is one statement that commits on its own: the reply lost is that statement's.
    test('an append whose reply is lost after it committed: the append rejects, its retry succeeds, and the batch is stored once', async () => {
      const { adapter, reader } = await throughTheProxy()
      await adapter.create(headerOf('s1'))
      const lease = await adapter.acquire('s1')
      const first = eventsFrom(0, [note('one'), note('two')])
      await adapter.append('s1', first, { expectedSeq: 0, lease })
      const second = eventsFrom(2, [note('three'), note('four'), note('five')])
      const lost = proxy.loseReplyTo('WITH fence AS')
      const failure = await rejectionOf(adapter.append('s1', second, { expectedSeq: 2, lease }))
      await lost
      expect(failure).toBeInstanceOf(PersistenceError)
      // The server committed: a reader sees the batch already.
      expect(await storedEvents(reader, 's1')).toHaveLength(5)
      await adapter.append('s1', second, { expectedSeq: 2, lease })
      expect(await storedEvents(reader, 's1')).toEqual([...first, ...second].map((event) => JSON.stringify(event)))
      // A batch that differs from what is stored at those seqs is a conflict, not a re-append.
      const other = eventsFrom(2, [note('THREE'), note('four'), note('five')])
      expect(await rejectionOf(adapter.append('s1', other, { expectedSeq: 2, lease }))).toMatchObject({
        code: 'SEQ_CONFLICT',
      })
    })
  })

  test('a session id outside the id alphabet is INVALID_SESSION_ID, with nothing written', async () => {
    const made = await target('ids')
    await made.adapter.list()
    const before = await contentsOf(made.sql, made.schema.schema)
    for (const id of ['é', 'a b', '🙂', 'a\u0000b', 'ｓ１']) {
      expect(await rejectionOf(made.adapter.create(headerOf(id)))).toMatchObject({ code: 'INVALID_SESSION_ID' })
      expect(await rejectionOf(made.adapter.acquire(id))).toMatchObject({ code: 'INVALID_SESSION_ID' })
    }
    expect(await contentsOf(made.sql, made.schema.schema)).toBe(before)
  })

  test('a 10 MB event of every kind of Unicode is stored and loaded byte for byte', async () => {
    const made = await target('big')
    const adapter = made.adapter
    const piece = 'aé🙂\u0000\u202e\uffff\ud800"\\\n'
    const body = piece.repeat(Math.ceil((10 * 1024 * 1024) / piece.length))
    const events = eventsFrom(0, [note('before'), note({ body }), note('after')])
    await adapter.create(headerOf('big'))
    const lease = await adapter.acquire('big')
    await adapter.append('big', events, { expectedSeq: 0, lease })
    const reader = made.open()
    cleanups.push(() => reader.close())
    const loaded = await reader.load('big')
    expect(loaded.events.length).toBe(3)
    expect(JSON.stringify(loaded.events)).toBe(JSON.stringify(events))
  }, 60_000)

  test('an injected pool is left open by harness.close(), and still serves the application', async () => {
    const schema = await createTestSchema('injected')
    cleanups.push(() => schema.drop())
    const pool = new pg.Pool({ connectionString: schema.connectionString, max: 2 })
    cleanups.push(() => pool.end())
    const harness = await harnessOver(postgresPersistence({ pool, schema: schema.schema }), [text('hi')])
    const agent = await harness.createAgent()
    await agent.run('hello')
    await harness.close()
    expect(pool.ending).toBe(false)
    const rows = await pool.query(`SELECT count(*)::int AS n FROM "${schema.schema}".yoke_events`)
    expect(rows.rows[0]?.n).toBeGreaterThan(0)
    // The lease was released on close: another adapter over the same pool opens the session.
    const again = postgresPersistence({ pool, schema: schema.schema })
    cleanups.push(() => again.close())
    const lease = await again.acquire(agent.id)
    await lease.release()
  })
})
