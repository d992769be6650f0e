/**
 * The notification of every committed PostgreSQL append, heard by a raw `LISTEN` client: one per
 * commit (the single-statement append, the full transaction of a first append, a repair), ids only
 * (`[schema, sessionId, nextSeq]`), none for a write that did not commit or with `notify: false`,
 * and a payload too long for PostgreSQL replaced by a "re-check" one.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { SeqConflictError } from '../../src/index.js'
import {
  APPEND_CHANNEL,
  announceStatement,
  appendPayload,
  parseAppendNotification,
} from '../../src/postgres/append-notification.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { eventsFrom, headerOf, note, turnEnd } from '../../src/testing/conformance/conformance-events.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'

let schema: TestSchema | undefined
let listener: pg.Client | undefined
const heard: string[] = []

beforeAll(async () => {
  if (skipPostgres) return
  schema = await createTestSchema('notify')
  listener = new pg.Client({ connectionString: schema.connectionString })
  await listener.connect()
  listener.on('notification', (message) => {
    // Other test files share the server and the channel: only this schema's count.
    if (message.payload?.includes(schema!.schema) === true) heard.push(message.payload)
  })
  await listener.query(`LISTEN ${APPEND_CHANNEL}`)
}, 60_000)

afterAll(async () => {
  await listener?.end()
  await schema?.drop()
})

/** What was heard after `body`, once a round trip on the listener proved every notification came. */
async function heardDuring(body: () => Promise<unknown>): Promise<unknown[]> {
  heard.splice(0)
  await body()
  // Notifications are sent at commit, before the writer's reply; a query of the listener's own
  // after that reads everything queued for it before its own result.
  await new Promise((resolve) => setTimeout(resolve, 50))
  await listener!.query('SELECT 1')
  return heard.splice(0).map((payload) => JSON.parse(payload) as unknown)
}

describe.skipIf(skipPostgres)('the notification of a PostgreSQL append', () => {
  test('each committed append sends one, naming the schema, the session and its new next seq', async () => {
    const adapter = postgresPersistence({ connectionString: schema!.connectionString, schema: schema!.schema })
    try {
      await adapter.create(headerOf('n1'))
      const lease = await adapter.acquire('n1')
      // The first append stores the session in a full transaction; the next ones are one statement.
      expect(
        await heardDuring(() => adapter.append('n1', eventsFrom(0, [note('a'), note('b')]), { expectedSeq: 0, lease })),
      ).toEqual([[schema!.schema, 'n1', 2]])
      expect(
        await heardDuring(async () => {
          await adapter.append('n1', eventsFrom(2, [note('c')]), { expectedSeq: 2, lease })
          await adapter.append('n1', eventsFrom(3, [note('d'), note('e'), note('f')]), { expectedSeq: 3, lease })
        }),
      ).toEqual([
        [schema!.schema, 'n1', 3],
        [schema!.schema, 'n1', 6],
      ])
      // A repair's closers are an append too; where the log ends is for the listeners to read.
      expect(await heardDuring(() => adapter.commitRepair('n1', undefined, eventsFrom(6, [turnEnd(1)])))).toEqual([
        [schema!.schema, 'n1'],
      ])
    } finally {
      await adapter.close()
    }
  })

  test('an append that does not commit sends none', async () => {
    const adapter = postgresPersistence({ connectionString: schema!.connectionString, schema: schema!.schema })
    try {
      await adapter.create(headerOf('n2'))
      const lease = await adapter.acquire('n2')
      expect(
        await heardDuring(() => adapter.append('n2', eventsFrom(0, [note('a')]), { expectedSeq: 0, lease })),
      ).toHaveLength(1)
      const outcome = await heardDuring(async () => {
        const error = await rejectionOf(adapter.append('n2', eventsFrom(5, [note('x')]), { expectedSeq: 5, lease }))
        expect(error).toBeInstanceOf(SeqConflictError)
      })
      expect(outcome).toEqual([])
    } finally {
      await adapter.close()
    }
  })

  test('with notify: false, appends send nothing', async () => {
    const adapter = postgresPersistence({
      connectionString: schema!.connectionString,
      schema: schema!.schema,
      notify: false,
    })
    try {
      await adapter.create(headerOf('n3'))
      const lease = await adapter.acquire('n3')
      const outcome = await heardDuring(async () => {
        await adapter.append('n3', eventsFrom(0, [note('a')]), { expectedSeq: 0, lease })
        await adapter.append('n3', eventsFrom(1, [note('b')]), { expectedSeq: 1, lease })
      })
      expect(outcome).toEqual([])
    } finally {
      await adapter.close()
    }
  })

  test('a payload that would pass the 8000-byte limit is sent as a re-check of the schema', async () => {
    const long = 'x'.repeat(9000)
    expect(appendPayload(schema!.schema, long, 12)).toBe(JSON.stringify([schema!.schema]))
    const outcome = await heardDuring(() => listener!.query(announceStatement(appendPayload(schema!.schema, long, 12))))
    expect(outcome).toEqual([[schema!.schema]])
    const quoted = await heardDuring(() => listener!.query(announceStatement(JSON.stringify([schema!.schema, "it's"]))))
    expect(quoted).toEqual([[schema!.schema, "it's"]])
  })
})

describe('parseAppendNotification', () => {
  test.each([
    ['["app","s-1",4]', { schema: 'app', sessionId: 's-1', nextSeq: 4 }],
    ['["app", "s-1", 4]', { schema: 'app', sessionId: 's-1', nextSeq: 4 }],
    ['["app","s-1"]', { schema: 'app', sessionId: 's-1' }],
    ['["app"]', { schema: 'app' }],
  ])('reads %s', (payload, expected) => {
    expect(parseAppendNotification(payload)).toEqual(expected)
  })

  test.each([
    [undefined],
    [''],
    ['not json'],
    ['{"schema":"app"}'],
    ['[1,"s",2]'],
    ['["app","s",1,2]'],
    ['["app",7,2]'],
    ['["app","s",1.5]'],
    ['["app","s","2"]'],
  ])('ignores %s (no Yoke sent it)', (payload) => {
    expect(parseAppendNotification(payload)).toBeUndefined()
  })
})
