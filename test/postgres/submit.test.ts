/**
 * `submit` from any process: one durable inbox row per message (one per idempotency key), the
 * busy policies, unknown sessions, the size limit, and bad input refused with nothing written.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import {
  ErrorCode,
  InvalidArgumentError,
  InvalidMessageError,
  InvalidOptionsError,
  MessageTooLargeError,
  PersistenceError,
  SessionBusyError,
} from '../../src/index.js'
import { createPostgresClient, createWorker, type PostgresClient, type Worker } from '../../src/postgres/index.js'
import { skipPostgres } from '../helpers/postgres.js'
import { answeringModel, eventually, type WorkerSchema, workerSchema } from './worker-fixtures.js'

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe.skipIf(skipPostgres)('submit', () => {
  let db: WorkerSchema
  let client: PostgresClient
  const workers: Worker[] = []

  beforeAll(async () => {
    db = await workerSchema('submit')
    client = createPostgresClient({
      connectionString: db.schema.connectionString,
      schema: db.schema.schema,
      maxMessageBytes: 2048,
    })
  })
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.close()
  })
  afterAll(async () => {
    await client?.close()
    await db?.close()
  })

  const startWorker = async (delayMs = 0): Promise<Worker> => {
    const worker = await createWorker({
      model: answeringModel(delayMs),
      persistence: db.adapter(),
      pollMs: 100,
    })
    workers.push(worker)
    return worker
  }

  test('an unknown session is refused naming it, with nothing written; create: true queues it', async () => {
    const error = await rejectionOf(client.submit('nobody', 'hello'))
    expect(PersistenceError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: ErrorCode.SESSION_NOT_FOUND, sessionId: 'nobody' })
    expect((error as Error).message).toContain('"nobody"')
    expect(await db.inbox('nobody')).toEqual([])
    expect(await db.runnableCount()).toBe(0)

    const result = await client.submit('created', 'hello', { create: true })
    expect(result).toMatchObject({ sessionId: 'created', duplicate: false })
    expect(result.messageId).toMatch(/^inbox:[0-9a-f]{32}$/)
    // A second message needs no create: a worker will make the session.
    await client.submit('created', 'again')
    await startWorker()
    await eventually(async () => (await db.runnableCount()) === 0, 'the session to be done')
    const messages = await db.userMessages('created')
    expect(messages.map((message) => message.text)).toEqual(['hello', 'again'])
    expect(messages[0]?.id).toBe(result.messageId)
  })

  test('the same idempotency key for the same session is one message', async () => {
    const first = await client.submit('keyed', 'charge the card', { create: true, idempotencyKey: 'order-7' })
    const second = await client.submit('keyed', 'charge the card (retry)', { idempotencyKey: 'order-7' })
    expect(second).toEqual({ messageId: first.messageId, sessionId: 'keyed', duplicate: true })
    const [third, fourth] = await Promise.all([
      client.submit('keyed', 'x', { idempotencyKey: 'order-8' }),
      client.submit('keyed', 'x', { idempotencyKey: 'order-8' }),
    ])
    expect(third?.messageId).toBe(fourth?.messageId)
    expect([third?.duplicate, fourth?.duplicate].sort()).toEqual([false, true])
    // The same key in another session is another message.
    const other = await client.submit('keyed-2', 'charge', { create: true, idempotencyKey: 'order-7' })
    expect(other.duplicate).toBe(false)
    expect((await db.inbox('keyed')).map((row) => row.id)).toEqual([first.messageId, third?.messageId])
    await startWorker()
    await eventually(async () => (await db.runnableCount()) === 0, 'the sessions to be done')
    expect((await db.userMessages('keyed')).map((message) => message.id)).toEqual([first.messageId, third?.messageId])
  })

  test("busy: 'reject' refuses while messages wait or a turn runs, with nothing written", async () => {
    await client.submit('busy', 'first', { create: true })
    const error = await rejectionOf(client.submit('busy', 'second', { busy: 'reject' }))
    expect(SessionBusyError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: ErrorCode.SESSION_BUSY, sessionId: 'busy' })
    expect(await db.inbox('busy')).toHaveLength(1)
    // A duplicate of an accepted message is still answered as one.
    const keyed = await client.submit('busy', 'keyed', { idempotencyKey: 'k' })
    expect(await client.submit('busy', 'keyed', { idempotencyKey: 'k', busy: 'reject' })).toEqual({
      ...keyed,
      duplicate: true,
    })
    const worker = await startWorker(400)
    // Mid-turn: the runnable row stays while the worker drives the session.
    await eventually(() => worker.driving.includes('busy'), 'the worker to drive the session')
    expect(SessionBusyError.is(await rejectionOf(client.submit('busy', 'third', { busy: 'reject' })))).toBe(true)
    await eventually(async () => (await db.runnableCount()) === 0, 'the session to be done')
    // Idle again: accepted.
    const accepted = await client.submit('busy', 'fourth', { busy: 'reject' })
    await eventually(async () => (await db.runnableCount()) === 0, 'the last message to run')
    expect((await db.userMessages('busy')).map((message) => message.text)).toEqual(['first', 'keyed', 'fourth'])
    expect((await db.userMessages('busy')).at(-1)?.id).toBe(accepted.messageId)
  })

  test("busy: 'steer' joins the running turn; when idle it runs as a turn", async () => {
    const worker = await startWorker(500)
    await client.submit('steered', 'start a long task', { create: true })
    await eventually(
      async () => (await db.eventTypes('steered').catch((): readonly string[] => [])).includes('turn/start'),
      'the turn',
    )
    await client.submit('steered', 'also do this', { busy: 'steer' })
    await eventually(async () => (await db.runnableCount()) === 0 && worker.driving.length === 0, 'the turn to end')
    const types = await db.eventTypes('steered')
    expect(types.filter((type) => type === 'turn/start')).toHaveLength(1)
    expect((await db.userMessages('steered')).map((message) => message.text)).toEqual([
      'start a long task',
      'also do this',
    ])
    // Idle: a steering message is a turn of its own.
    await client.submit('steered', 'later', { busy: 'steer' })
    await eventually(async () => (await db.runnableCount()) === 0, 'the second turn')
    expect((await db.eventTypes('steered')).filter((type) => type === 'turn/start')).toHaveLength(2)
  })

  test('a message over maxMessageBytes is refused with its size and the limit; nothing written', async () => {
    await client.submit('sized', 'fits', { create: true })
    const error = await rejectionOf(client.submit('sized', 'x'.repeat(3000)))
    expect(MessageTooLargeError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: ErrorCode.MESSAGE_TOO_LARGE, sessionId: 'sized', limit: 2048 })
    expect((error as MessageTooLargeError).bytes).toBeGreaterThan(3000)
    expect(await db.inbox('sized')).toHaveLength(1)
  })

  test.each([
    [
      'a session id that cannot be stored',
      () => client.submit('a b', 'hi'),
      PersistenceError,
      { code: ErrorCode.INVALID_SESSION_ID },
    ],
    ['an empty session id', () => client.submit('', 'hi'), PersistenceError, { code: ErrorCode.INVALID_SESSION_ID }],
    [
      'an input that is not a message',
      () => client.submit('s', 42 as never),
      InvalidMessageError,
      { field: '', value: 42 },
    ],
    [
      'a message with an unknown field',
      () => client.submit('s', { content: [], role: 'user' } as never),
      InvalidMessageError,
      { field: 'role' },
    ],
    [
      'a content block of the wrong type',
      () => client.submit('s', { content: [{ type: 'text', text: 1 }] } as never),
      InvalidMessageError,
      { field: 'content[0].text', value: 1 },
    ],
    [
      'an unknown busy policy',
      () => client.submit('s', 'hi', { busy: 'later' as never }),
      InvalidArgumentError,
      { argument: 'options.busy', value: 'later' },
    ],
    [
      'an empty idempotency key',
      () => client.submit('s', 'hi', { idempotencyKey: '' }),
      InvalidArgumentError,
      { argument: 'options.idempotencyKey', value: '' },
    ],
    [
      'an over-long idempotency key',
      () => client.submit('s', 'hi', { idempotencyKey: 'k'.repeat(1025) }),
      InvalidArgumentError,
      { argument: 'options.idempotencyKey' },
    ],
    [
      'a create that is not a boolean',
      () => client.submit('s', 'hi', { create: 'yes' as never }),
      InvalidArgumentError,
      { argument: 'options.create', value: 'yes' },
    ],
    [
      'an unknown option',
      () => client.submit('s', 'hi', { priority: 1 } as never),
      InvalidArgumentError,
      { argument: 'options.priority', value: 1 },
    ],
    [
      'options that are not an object',
      () => client.submit('s', 'hi', 'queue' as never),
      InvalidArgumentError,
      { argument: 'options', value: 'queue' },
    ],
  ] as const)('%s is a typed error naming the value, with nothing written', async (_name, call, type, fields) => {
    const before = await db.inbox()
    const error = await rejectionOf(call())
    expect((type as { is(value: unknown): boolean }).is(error)).toBe(true)
    expect(error).toMatchObject(fields)
    expect(await db.inbox()).toEqual(before)
  })

  test('bad client and worker options are InvalidOptionsError naming the option', async () => {
    expect(() => createPostgresClient({ schema: 'x' })).toThrow(InvalidOptionsError)
    expect(() => createPostgresClient({ connectionString: db.schema.connectionString, maxMessageBytes: 0 })).toThrow(
      /maxMessageBytes/,
    )
    expect(() => createPostgresClient({ persistence: {} as never })).toThrow(/persistence/)
    const worker = await rejectionOf(createWorker({ persistence: {} as never }))
    expect(InvalidOptionsError.is(worker)).toBe(true)
    expect((worker as Error).message).toMatch(/persistence/)
    const concurrency = await rejectionOf(createWorker({ persistence: db.adapter(), concurrency: 0 }))
    expect((concurrency as Error).message).toMatch(/concurrency/)
    const discard = await rejectionOf(createWorker({ persistence: db.adapter(), agent: { queued: 'discard' } }))
    expect((discard as Error).message).toMatch(/queued must be 'keep'/)
  })
})
