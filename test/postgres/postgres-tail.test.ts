/**
 * `createPostgresTail` against a real PostgreSQL, with the appends made by a writer in a child
 * process through `postgresPersistence`: stored then live events exactly once and in order, a
 * start in the middle, notifications that coalesce under a slow reader, polling alone, an abort
 * that gives the connection back, and a `LISTEN` connection cut and restored.
 */
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import type { SessionEvent } from '../../src/index.js'
import { createPostgresTail, postgresPersistence } from '../../src/postgres/index.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'
import { serverOf, startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js'
import { collect, seqBreaks } from './tail-collector.js'
import { removeTailWriter, startTailWriter, type TailWriter } from './tail-writer.js'

let schema: TestSchema | undefined
const cleanups: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  if (skipPostgres) return
  schema = await createTestSchema('tail')
}, 60_000)

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

afterAll(async () => {
  await removeTailWriter()
  await schema?.drop()
})

let sessions = 0
/** A writer over a new session of the test schema, exited after the test. */
async function writer(options: { readonly notify?: boolean } = {}): Promise<TailWriter & { sessionId: string }> {
  const sessionId = `tail-${++sessions}`
  const started = await startTailWriter({
    connectionString: schema!.connectionString,
    schema: schema!.schema,
    sessionId,
    ...options,
  })
  cleanups.push(async () => {
    if (started.process.exitCode === null) await started.exit()
  })
  return Object.assign(started, { sessionId })
}

/** A pool of the test's own, named so its connections can be found in pg_stat_activity. */
function pool(applicationName: string, connectionString = schema!.connectionString): pg.Pool {
  const made = new pg.Pool({ connectionString, max: 4, application_name: applicationName })
  cleanups.push(() => made.end())
  return made
}

/** The stored log, as another process reads it. */
async function stored(sessionId: string): Promise<readonly SessionEvent[]> {
  const adapter = postgresPersistence({ connectionString: schema!.connectionString, schema: schema!.schema })
  try {
    return (await adapter.load(sessionId)).events
  } finally {
    await adapter.close()
  }
}

/** The connections of `applicationName` and the last statement of each. */
async function activity(applicationName: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: schema!.connectionString })
  await client.connect()
  try {
    const result = await client.query<{ query: string }>(
      'SELECT query FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    )
    return result.rows.map((row) => row.query)
  } finally {
    await client.end()
  }
}

async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe.skipIf(skipPostgres)('createPostgresTail', () => {
  test('yields the stored events, then the live ones another process appends, each once and in order', async () => {
    const written = await writer()
    const before = await written.turns(2)
    const tails = createPostgresTail({ connectionString: schema!.connectionString, schema: schema!.schema })
    cleanups.push(() => tails.close())
    const controller = new AbortController()
    const reading = collect(tails.tail(written.sessionId, { signal: controller.signal }))
    await reading.waitFor(before)
    const after = await written.turns(3)
    await reading.waitFor(after)
    controller.abort()
    expect(await reading.ended).toBeUndefined()
    expect(seqBreaks(reading.events, 0)).toEqual([])
    expect(reading.events).toEqual(await stored(written.sessionId))
  }, 30_000)

  test('starts at fromSeq in the middle of the log, and ends after a turn/end with until turn-end', async () => {
    const written = await writer()
    const length = await written.turns(2)
    const log = await stored(written.sessionId)
    const middle = Math.floor(length / 3)
    const tails = createPostgresTail({ connectionString: schema!.connectionString, schema: schema!.schema })
    cleanups.push(() => tails.close())
    const tail = tails.tail(written.sessionId, { fromSeq: middle, until: 'turn-end' })
    const reading = collect(tail)
    expect(await reading.ended).toBeUndefined()
    const firstEnd = log.findIndex((event) => event.seq >= middle && event.type === 'turn/end')
    expect(reading.events).toEqual(log.slice(middle, firstEnd + 1))
    expect(tail.nextSeq).toBe(firstEnd + 1)
  }, 30_000)

  test('a tail started right after a turn/end with until turn-end ends at once; at the end it waits for the next turn', async () => {
    const written = await writer()
    const length = await written.turns(1)
    const tails = createPostgresTail({ connectionString: schema!.connectionString, schema: schema!.schema })
    cleanups.push(() => tails.close())
    const done = collect(tails.tail(written.sessionId, { lastEventId: String(length - 1), until: 'turn-end' }))
    expect(await done.ended).toBeUndefined()
    expect(done.events).toEqual([])
    const next = collect(tails.tail(written.sessionId, { fromSeq: length, until: 'turn-end' }))
    const after = await written.turns(1)
    expect(await next.ended).toBeUndefined()
    expect(next.events.map((event) => event.seq)).toEqual(Array.from({ length: after - length }, (_, i) => length + i))
    expect(next.events.at(-1)?.type).toBe('turn/end')
  }, 30_000)

  test('many appends under a slow reader: coalesced notifications lose nothing and repeat nothing', async () => {
    const written = await writer()
    await written.turns(1)
    const tails = createPostgresTail({
      connectionString: schema!.connectionString,
      schema: schema!.schema,
      // Long enough that only the notifications could deliver the events in time.
      pollMs: 60_000,
    })
    cleanups.push(() => tails.close())
    const controller = new AbortController()
    const readers = [
      collect(tails.tail(written.sessionId, { signal: controller.signal })),
      collect(tails.tail(written.sessionId, { signal: controller.signal }), 2),
    ]
    const length = await written.turns(12)
    for (const reading of readers) await reading.waitFor(length)
    controller.abort()
    const log = await stored(written.sessionId)
    for (const reading of readers) {
      expect(await reading.ended).toBeUndefined()
      expect(seqBreaks(reading.events, 0)).toEqual([])
      expect(reading.events).toEqual(log)
    }
  }, 40_000)

  test('waitForSession: a tail opened before the session is stored starts with its first append', async () => {
    const written = await writer()
    const tails = createPostgresTail({
      connectionString: schema!.connectionString,
      schema: schema!.schema,
      pollMs: 60_000,
    })
    cleanups.push(() => tails.close())
    const reading = collect(tails.tail(written.sessionId, { waitForSession: true, until: 'turn-end' }))
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(reading.events).toEqual([])
    await written.turns(1)
    expect(await reading.ended).toBeUndefined()
    expect(reading.events).toEqual(await stored(written.sessionId))
  }, 30_000)

  test('a notification naming only the schema wakes every tail of it; one of another schema wakes none', async () => {
    // Appends that send nothing: only the hand-made notifications below can wake the tail.
    const written = await writer({ notify: false })
    const first = await written.turns(1)
    const name = `tail-recheck-${process.pid}`
    const given = pool(name)
    const tails = createPostgresTail({ pool: given, schema: schema!.schema, pollMs: 60_000 })
    cleanups.push(() => tails.close())
    const controller = new AbortController()
    const reading = collect(tails.tail(written.sessionId, { signal: controller.signal }))
    await reading.waitFor(first)
    // Listening, and the read that a new connection triggers done: from here only a notification wakes it.
    await eventually(async () => (await activity(name)).includes('LISTEN yoke_append'), 'the tail listens')
    await eventually(() => given.totalCount - given.idleCount === 1, 'no read is running')
    const notifier = pool(`tail-notifier-${process.pid}`)
    const second = await written.turns(1)
    await notifier.query(`SELECT pg_notify('yoke_append', $1)`, [JSON.stringify(['some_other_schema'])])
    await notifier.query(`SELECT pg_notify('yoke_append', $1)`, [JSON.stringify([schema!.schema, 'someone-else', 99])])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(reading.events).toHaveLength(first)
    await notifier.query(`SELECT pg_notify('yoke_append', $1)`, [JSON.stringify([schema!.schema])])
    await reading.waitFor(second, 5000)
    controller.abort()
    expect(await reading.ended).toBeUndefined()
    expect(reading.events).toEqual(await stored(written.sessionId))
  }, 30_000)

  test('listen: false reads by polling alone, with no LISTEN connection, and sees appends sent without notifications', async () => {
    const written = await writer({ notify: false })
    await written.turns(1)
    const name = `tail-poll-${process.pid}`
    const tails = createPostgresTail({ pool: pool(name), schema: schema!.schema, listen: false, pollMs: 50 })
    cleanups.push(() => tails.close())
    const controller = new AbortController()
    const reading = collect(tails.tail(written.sessionId, { signal: controller.signal }))
    const length = await written.turns(3)
    await reading.waitFor(length)
    expect((await activity(name)).filter((query) => query.startsWith('LISTEN'))).toEqual([])
    controller.abort()
    expect(await reading.ended).toBeUndefined()
    expect(reading.events).toEqual(await stored(written.sessionId))
  }, 30_000)

  test('an abort ends the iteration cleanly and gives every connection back to the pool', async () => {
    const written = await writer()
    await written.turns(1)
    const name = `tail-abort-${process.pid}`
    const given = pool(name)
    const tails = createPostgresTail({ pool: given, schema: schema!.schema })
    cleanups.push(() => tails.close())
    const controller = new AbortController()
    const readers = [
      collect(tails.tail(written.sessionId, { signal: controller.signal })),
      collect(tails.tail(written.sessionId, { signal: controller.signal })),
    ]
    for (const reading of readers) await reading.waitFor(1)
    // The shared LISTEN connection is checked out while the tails wait.
    await eventually(async () => (await activity(name)).includes('LISTEN yoke_append'), 'the tails listen')
    // (A read woken by the new connection may hold a second one for a moment.)
    await eventually(() => given.totalCount - given.idleCount === 1, 'only the LISTEN connection is checked out')
    controller.abort()
    for (const reading of readers) expect(await reading.ended).toBeUndefined()
    await eventually(() => given.totalCount === given.idleCount, 'every connection is back in the pool')
    expect((await activity(name)).filter((query) => query === 'LISTEN yoke_append')).toEqual([])
  }, 30_000)

  test('a LISTEN connection that went silent does not hold close() up: it is closed after a few seconds', async () => {
    const written = await writer()
    await written.turns(1)
    const proxy = await startTcpProxy(serverOf(schema!.connectionString))
    cleanups.push(() => proxy.close())
    const name = `tail-silent-${process.pid}`
    const given = pool(name, throughProxy(schema!.connectionString, proxy))
    const tails = createPostgresTail({ pool: given, schema: schema!.schema })
    const reading = collect(tails.tail(written.sessionId))
    await reading.waitFor(1)
    await eventually(async () => (await activity(name)).includes('LISTEN yoke_append'), 'the tail listens')
    // The network hangs: nothing fails, nothing answers.
    proxy.freeze()
    const started = Date.now()
    await tails.close()
    expect(Date.now() - started).toBeLessThan(9000)
    expect(await reading.ended).toBeUndefined()
    expect(given.totalCount - given.idleCount).toBe(0)
    proxy.thaw()
  }, 30_000)

  test('a LISTEN connection cut mid-stream is replaced, and the tail misses nothing appended meanwhile', async () => {
    const written = await writer()
    const first = await written.turns(1)
    const proxy = await startTcpProxy(serverOf(schema!.connectionString))
    cleanups.push(() => proxy.close())
    const name = `tail-cut-${process.pid}`
    const tails = createPostgresTail({
      pool: pool(name, throughProxy(schema!.connectionString, proxy)),
      schema: schema!.schema,
      pollMs: 200,
    })
    cleanups.push(() => tails.close())
    const controller = new AbortController()
    const reading = collect(tails.tail(written.sessionId, { signal: controller.signal }))
    await reading.waitFor(first)
    await eventually(async () => (await activity(name)).includes('LISTEN yoke_append'), 'the tail listens')
    proxy.cut()
    // Appended while the tail can neither hear nor read.
    const during = await written.turns(2)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(reading.events.length).toBe(first)
    proxy.restore()
    await reading.waitFor(during)
    await eventually(async () => (await activity(name)).includes('LISTEN yoke_append'), 'the tail listens again')
    const after = await written.turns(1)
    await reading.waitFor(after)
    controller.abort()
    expect(await reading.ended).toBeUndefined()
    expect(seqBreaks(reading.events, 0)).toEqual([])
    expect(reading.events).toEqual(await stored(written.sessionId))
  }, 40_000)
})
