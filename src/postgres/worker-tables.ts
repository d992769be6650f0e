/**
 * The tables of the worker's durable inbox in PostgreSQL, their migration, and the step that marks
 * inbox messages consumed inside the transaction that logs them.
 *
 * They are PostgreSQL's alone, with a version of their own (`yoke_worker_schema`): the SQL store's
 * shared schema (and its version, which SQLite shares) stays as it is, so SQLite is untouched and
 * a database from before the worker migrates forward by only adding these tables.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { SessionEvent } from '../session/session-event.js'
import type { SqlAppendMark, SqlExtension } from '../persistence/sql/sql-extension.js'
import type { SqlQuery } from '../persistence/sql/sql-executor.js'
import { quoteIdentifier } from './postgres-dialect.js'

/** The version of the worker's tables this Yoke writes. */
export const WORKER_SCHEMA_VERSION = 1

/**
 * The prefix of every inbox message id. The append step looks only at ids that carry it, so a
 * batch without inbox messages costs one string test per message.
 */
export const INBOX_ID_PREFIX = 'inbox:'

/** The database's clock in whole milliseconds (as the lease statements read it). */
export const PG_NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint'

/** The tables of one schema, quoted and qualified. @internal */
export interface WorkerTables {
  readonly schema: string
  readonly version: string
  readonly inbox: string
  readonly runnable: string
  readonly sessions: string
  readonly leases: string
  /** The `LISTEN`/`NOTIFY` channel of the schema's inbox. */
  readonly channel: string
}

/**
 * The worker's tables in `schema`.
 *
 * @param schema - a plain identifier
 * @returns the table names and the channel
 * @internal
 */
export function workerTables(schema: string): WorkerTables {
  const table = (name: string): string => `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`
  return Object.freeze({
    schema,
    version: table('yoke_worker_schema'),
    inbox: table('yoke_inbox'),
    runnable: table('yoke_runnable'),
    sessions: table('yoke_sessions'),
    leases: table('yoke_leases'),
    channel: inboxChannelOf(schema),
  })
}

/**
 * The channel name of a schema's inbox: a hash of the schema, since a channel name is an
 * identifier of at most 63 bytes and a schema name alone may take all of them.
 *
 * @param schema - the schema
 * @returns `yoke_inbox_` and 16 hex digits
 * @internal
 */
export function inboxChannelOf(schema: string): string {
  return `yoke_inbox_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`
}

/**
 * The migrations of the worker's tables, index `i` taking them to version `i + 1`. A released
 * step never changes.
 */
const migrations: readonly ((tables: WorkerTables) => readonly string[])[] = [
  ({ inbox, runnable }) => [
    // One row per submitted message. `position` orders a session's messages as submitted;
    // `consumed_at` is set in the transaction that logs the message (or when it cannot be
    // delivered, with `failure` saying why).
    `CREATE TABLE ${inbox} (id text PRIMARY KEY, session text NOT NULL, position bigint GENERATED ALWAYS AS IDENTITY, body text NOT NULL, busy text NOT NULL, create_session boolean NOT NULL, idempotency_key text, submitted_at bigint NOT NULL, consumed_seq bigint, consumed_at bigint, failure text)`,
    `CREATE UNIQUE INDEX yoke_inbox_key ON ${inbox} (session, idempotency_key)`,
    `CREATE INDEX yoke_inbox_pending ON ${inbox} (session, position) WHERE consumed_at IS NULL`,
    // One row per session with work for a worker, keyed by the session: repeated submits and
    // sweeps make one job. `wake` grows with every submit, so a worker deletes the row only if
    // nothing arrived since it looked; `claimed_*` keep two workers from opening it at once.
    `CREATE TABLE ${runnable} (session text PRIMARY KEY, since bigint NOT NULL, wake bigint NOT NULL DEFAULT 0, claimed_by text, claimed_until bigint)`,
  ],
]

/**
 * The SQL store extension of PostgreSQL: creates the worker's tables, and marks inbox messages
 * consumed in the transaction of the append that logs them.
 *
 * @param schema - the schema
 * @returns the extension
 * @internal
 */
export function workerExtension(schema: string): SqlExtension {
  const tables = workerTables(schema)
  const mark =
    `UPDATE ${tables.inbox} AS i SET consumed_seq = m.seq, consumed_at = ${PG_NOW_MS} ` +
    'FROM unnest($2::text[], $3::bigint[]) AS m (id, seq) WHERE i.id = m.id AND i.session = $1 AND i.consumed_at IS NULL'
  return Object.freeze({
    migrate: (tx: SqlQuery) => migrateWorkerTables(tx, tables),
    marksOf: inboxMarksOf,
    record: async (tx: SqlQuery, sessionId: string, marks: readonly SqlAppendMark[]) => {
      await tx.query(mark, [sessionId, marks.map((entry) => entry.id), marks.map((entry) => entry.seq)])
    },
  })
}

async function migrateWorkerTables(tx: SqlQuery, tables: WorkerTables): Promise<void> {
  await tx.query(`CREATE TABLE IF NOT EXISTS ${tables.version} (version bigint NOT NULL)`)
  const rows = await tx.query(`SELECT MAX(version) AS version FROM ${tables.version}`)
  const stored = Number(rows[0]?.['version'] ?? 0)
  // A newer Yoke's worker tables are left alone: the sessions stay readable, and that Yoke's
  // workers own the inbox.
  if (stored >= WORKER_SCHEMA_VERSION) return
  for (let step = stored; step < WORKER_SCHEMA_VERSION; step++) {
    for (const statement of migrations[step]!(tables)) await tx.query(statement)
  }
  await tx.query(`DELETE FROM ${tables.version}`)
  await tx.query(`INSERT INTO ${tables.version} (version) VALUES ($1)`, [WORKER_SCHEMA_VERSION])
}

/**
 * The inbox messages a batch logs: ids with {@link INBOX_ID_PREFIX} inserted by an
 * `agent/inbox/spliced` event, each once, at its first event. A message enters the log by its
 * splice (the turn that claims it later logs its `user/message` under the same id), so the
 * splice is where it is consumed; batches of a turn's own events keep the one-statement append.
 *
 * @param events - the batch
 * @returns the marks (empty for most batches)
 * @internal
 */
export function inboxMarksOf(events: readonly SessionEvent[]): readonly SqlAppendMark[] {
  let marks: SqlAppendMark[] | undefined
  for (const event of events) {
    if (event.type !== 'agent/inbox/spliced') continue
    const inserted = (event.data as { readonly inserted?: readonly { readonly id?: unknown }[] }).inserted
    if (inserted === undefined) continue
    for (const message of inserted) {
      const id = message.id
      if (typeof id !== 'string' || !id.startsWith(INBOX_ID_PREFIX)) continue
      marks ??= []
      if (!marks.some((entry) => entry.id === id)) marks.push({ id, seq: event.seq })
    }
  }
  return marks ?? []
}
