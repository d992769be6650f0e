/**
 * Shared parts of the worker tests: a model that always answers, a reader of what a session's log
 * and the inbox hold, and polling until a condition holds.
 */
import pg from 'pg'
import type { LeaseOptions } from '../../src/persistence/lease-options.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { type ScriptedModel, scriptedModel, text } from '../../src/testing/index.js'
import { createTestSchema, type TestSchema } from '../helpers/postgres.js'

/**
 * A scripted model that answers every request with `ok`, after `delayMs`.
 *
 * @param delayMs - how long each answer takes
 * @param count - how many answers it has
 */
export function answeringModel(delayMs = 0, count = 2000): ScriptedModel {
  return scriptedModel(Array.from({ length: count }, () => text('ok', delayMs === 0 ? {} : { delayMs })))
}

/** A schema of the test's own, a pool for assertions, and adapters over it. */
export interface WorkerSchema {
  readonly schema: TestSchema
  readonly sql: pg.Pool
  table(name: string): string
  adapter(lease?: LeaseOptions): ReturnType<typeof postgresPersistence>
  /** The user messages of a session's stored log, in order: id and text. */
  userMessages(sessionId: string): Promise<readonly { readonly id: string; readonly text: string }[]>
  /** The stored log's event types. */
  eventTypes(sessionId: string): Promise<readonly string[]>
  /** The inbox rows of a session, in submit order. */
  inbox(sessionId?: string): Promise<readonly InboxRowView[]>
  /** How many runnable rows there are. */
  runnableCount(): Promise<number>
  close(): Promise<void>
}

/** An inbox row as the tests read it. */
export interface InboxRowView {
  readonly id: string
  readonly session: string
  readonly busy: string
  readonly consumed_seq: string | null
  readonly consumed_at: string | null
  readonly failure: string | null
}

/**
 * A fresh schema on the test server.
 *
 * @param label - a word for its name
 */
export async function workerSchema(label: string): Promise<WorkerSchema> {
  const schema = await createTestSchema(label)
  const sql = new pg.Pool({ connectionString: schema.connectionString, max: 2 })
  const table = (name: string): string => `"${schema.schema}"."${name}"`
  const adapter = (lease?: LeaseOptions) =>
    postgresPersistence({
      connectionString: schema.connectionString,
      schema: schema.schema,
      ...(lease === undefined ? {} : { lease }),
    })
  const reader = adapter()
  const load = async (sessionId: string) => (await reader.load(sessionId)).events
  return {
    schema,
    sql,
    table,
    adapter,
    userMessages: async (sessionId) =>
      (await load(sessionId))
        .filter((event) => event.type === 'user/message')
        .map((event) => {
          const data = event.data as { id: string; content: { type: string; text?: string }[] }
          return { id: data.id, text: data.content.map((block) => block.text ?? '').join('') }
        }),
    eventTypes: async (sessionId) => (await load(sessionId)).map((event) => event.type),
    inbox: async (sessionId) =>
      (
        await sql.query<InboxRowView>(
          `SELECT id, session, busy, consumed_seq, consumed_at, failure FROM ${table('yoke_inbox')} ${sessionId === undefined ? '' : 'WHERE session = $1'} ORDER BY position`,
          sessionId === undefined ? [] : [sessionId],
        )
      ).rows,
    runnableCount: async () =>
      Number((await sql.query<{ count: string }>(`SELECT count(*) FROM ${table('yoke_runnable')}`)).rows[0]?.count),
    close: async () => {
      await reader.close()
      await sql.end()
      await schema.drop()
    },
  }
}

/**
 * Polls `check` until it returns a value other than `undefined`/`false`.
 *
 * @param check - the condition
 * @param timeoutMs - how long to try
 * @param what - names the condition in the timeout error
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined && value !== false) return value
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`, { cause: last })
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
