/**
 * Bad input to `createPostgresTail` and its tails: each is a typed error naming the offending
 * value: factory options when it is called, a tail's options when `tail()` is called, and what
 * only the database can tell (an unknown session, a start past the log's end) when the iteration
 * starts, with nothing yielded.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { InvalidArgumentError, InvalidOptionsError, LastEventIdError, PersistenceError } from '../../src/index.js'
import { createPostgresTail, type PostgresTail, postgresPersistence } from '../../src/postgres/index.js'
import { eventsFrom, headerOf, note, turnEnd } from '../../src/testing/conformance/conformance-events.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'

const url = 'postgresql://app@127.0.0.1:1/app'

describe('createPostgresTail options', () => {
  const cases: readonly [string, unknown, string, RegExp][] = [
    ['no options', undefined, '', /options object/],
    ['neither pool nor connectionString', {}, 'connectionString', /is required \(or give a pool\)/],
    [
      'both pool and connectionString',
      { pool: new pg.Pool({ connectionString: url }), connectionString: url },
      'pool',
      /not both/,
    ],
    ['a pool that is no pool', { pool: { query() {} } }, 'pool', /pg Pool/],
    ['a bad schema', { connectionString: url, schema: 'a-b' }, 'schema', /plain identifier/],
    ['listen that is no boolean', { connectionString: url, listen: 'yes' }, 'listen', /boolean/],
    ['a pollMs of 0', { connectionString: url, pollMs: 0 }, 'pollMs', /positive safe integer/],
    ['a fractional pollMs', { connectionString: url, pollMs: 2.5 }, 'pollMs', /positive safe integer/],
    ['an unknown key', { connectionString: url, notify: true }, 'notify', /unknown option/],
  ]
  for (const [name, options, field, message] of cases) {
    test(`${name}: InvalidOptionsError naming ${field === '' ? 'the options' : field}`, () => {
      let caught: unknown
      try {
        createPostgresTail(options as Parameters<typeof createPostgresTail>[0])
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(InvalidOptionsError)
      expect((caught as InvalidOptionsError).field).toBe(field)
      expect((caught as InvalidOptionsError).message).toMatch(message)
    })
  }

  test('notify on postgresPersistence must be a boolean', () => {
    expect(() => postgresPersistence({ connectionString: url, notify: 'on' as unknown as boolean })).toThrow(
      /options\.notify: must be a boolean/,
    )
  })
})

describe('tail() arguments, checked before anything is read', () => {
  const tails = createPostgresTail({ connectionString: url })
  afterAll(() => tails.close())

  test.each([
    ['a negative fromSeq', { fromSeq: -1 }, 'options.fromSeq', -1],
    ['a fractional fromSeq', { fromSeq: 1.5 }, 'options.fromSeq', 1.5],
    ['a fromSeq that is a string', { fromSeq: '3' }, 'options.fromSeq', '3'],
    ['an unsafe fromSeq', { fromSeq: 2 ** 60 }, 'options.fromSeq', 2 ** 60],
    ['an unknown until', { until: 'dispose' }, 'options.until', 'dispose'],
    ['a signal that is none', { signal: {} }, 'options.signal', {}],
    ['a lastEventId object', { lastEventId: { seq: 1 } }, 'options.lastEventId', { seq: 1 }],
    ['a pollMs of 0', { pollMs: 0 }, 'options.pollMs', 0],
    ['a waitForSession that is no boolean', { waitForSession: 1 }, 'options.waitForSession', 1],
    ['an unknown option', { from: 3 }, 'options.from', 3],
    ['options that are no object', 'abc', 'options', 'abc'],
  ])('%s: InvalidArgumentError naming %s and the value', (_name, options, argument, value) => {
    let caught: unknown
    try {
      tails.tail('s1', options as Parameters<PostgresTail['tail']>[1])
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(InvalidArgumentError)
    expect(caught).toMatchObject({ argument, value })
  })

  test.each([[''], ['has space'], ['.hidden'], ['x'.repeat(129)]])(
    'a session id no adapter stores (%j): PersistenceError INVALID_SESSION_ID',
    (sessionId) => {
      let caught: unknown
      try {
        tails.tail(sessionId)
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(PersistenceError)
      expect(caught).toMatchObject({ code: 'INVALID_SESSION_ID' })
    },
  )
})

describe.skipIf(skipPostgres)('what the first read refuses', () => {
  let schema: TestSchema | undefined
  let tails: PostgresTail | undefined

  beforeAll(async () => {
    schema = await createTestSchema('tail_bad')
    const adapter = postgresPersistence({ connectionString: schema.connectionString, schema: schema.schema })
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    await adapter.append('s1', eventsFrom(0, [note('a'), note('b'), turnEnd(1)]), { expectedSeq: 0, lease })
    await adapter.close()
    tails = createPostgresTail({ connectionString: schema.connectionString, schema: schema.schema })
  }, 60_000)

  afterAll(async () => {
    await tails?.close()
    await schema?.drop()
  })

  /** The first `next()` of a tail. */
  const first = (tail: AsyncIterable<unknown>) => tail[Symbol.asyncIterator]().next()

  test('an unknown session: PersistenceError SESSION_NOT_FOUND naming it', async () => {
    const error = await rejectionOf(first(tails!.tail('nobody-here')))
    expect(error).toBeInstanceOf(PersistenceError)
    expect(error).toMatchObject({ code: 'SESSION_NOT_FOUND', sessionId: 'nobody-here' })
    expect(String(error)).toContain('nobody-here')
  })

  test('a fromSeq past the end: InvalidArgumentError naming the value and the next seq', async () => {
    const error = await rejectionOf(first(tails!.tail('s1', { fromSeq: 4 })))
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error).toMatchObject({ argument: 'options.fromSeq', value: 4 })
    expect(String(error)).toMatch(/past the end of the log of session "s1" \(its next seq is 3\)/)
  })

  test('a fromSeq at the end waits for the next append; abort ends it with nothing yielded', async () => {
    const controller = new AbortController()
    const pending = first(tails!.tail('s1', { fromSeq: 3, signal: controller.signal }))
    setTimeout(() => controller.abort(), 100)
    expect(await pending).toEqual({ value: undefined, done: true })
  })

  test.each([
    ['abc', 'not-a-seq'],
    ['01', 'not-a-seq'],
    ['-1', 'not-a-seq'],
    ['3', 'beyond-log'],
    [7, 'beyond-log'],
  ])('a lastEventId %j: LastEventIdError %s with the last seq', async (lastEventId, problem) => {
    const error = await rejectionOf(first(tails!.tail('s1', { lastEventId })))
    expect(error).toBeInstanceOf(LastEventIdError)
    expect(error).toMatchObject({
      code: 'INVALID_LAST_EVENT_ID',
      problem,
      value: lastEventId,
      sessionId: 's1',
      lastSeq: 2,
    })
  })

  test('a lastEventId at the last event reads on from the next seq; null reads from fromSeq', async () => {
    const controller = new AbortController()
    const tail = tails!.tail('s1', { lastEventId: '1', signal: controller.signal })
    const iterator = tail[Symbol.asyncIterator]()
    expect((await iterator.next()).value).toMatchObject({ seq: 2, type: 'turn/end' })
    controller.abort()
    const fromNull = tails!.tail('s1', { lastEventId: null, fromSeq: 2, until: 'turn-end' })
    const seqs: number[] = []
    for await (const event of fromNull) seqs.push(event.seq)
    expect(seqs).toEqual([2])
  })

  test('a tail is iterated once; tail() after close is PersistenceError CLOSED', async () => {
    const tail = tails!.tail('s1', { until: 'turn-end' })
    const seqs: number[] = []
    for await (const event of tail) seqs.push(event.seq)
    expect(seqs).toEqual([0, 1, 2])
    expect(() => tail[Symbol.asyncIterator]()).toThrow(InvalidArgumentError)
    const closing = createPostgresTail({ connectionString: schema!.connectionString, schema: schema!.schema })
    await closing.close()
    expect(() => closing.tail('s1')).toThrow(expect.objectContaining({ code: 'CLOSED' }))
  })

  test('close() ends the tails that are open: their iterations finish', async () => {
    const closing = createPostgresTail({ connectionString: schema!.connectionString, schema: schema!.schema })
    const iterator = closing.tail('s1', { fromSeq: 3 })[Symbol.asyncIterator]()
    const pending = iterator.next()
    await new Promise((resolve) => setTimeout(resolve, 100))
    await closing.close()
    expect(await pending).toEqual({ value: undefined, done: true })
  })
})
