/**
 * `createPostgresClient`: what any process (an HTTP handler, a cron job) uses to hand messages to
 * the workers, without a harness or a worker of its own.
 *
 * @module
 */
import type { PersistenceAdapter, UserMessageInput } from 'yoke'
import { hasMethods, optionIssues, optionRule, throwOptionIssues } from '../kernel/option-issues.js'
import { sqlFailure } from '../persistence/sql/sql-failure.js'
import type { PgPool } from './pg-pool.js'
import { postgresHandleOf } from './postgres-handle.js'
import { postgresPersistence } from './postgres-persistence.js'
import { prepareSubmit, type SubmitOptions, type SubmitResult, writeSubmit } from './submit-message.js'

/**
 * Options of {@link createPostgresClient}: the database as `postgresPersistence` takes it (exactly
 * one of `pool` / `connectionString`, and the schema), or an existing `postgresPersistence`
 * adapter as `persistence`.
 */
export interface PostgresClientOptions {
  /** A `pg` pool the application owns; `close()` leaves it open. */
  readonly pool?: PgPool
  /** Where to connect: the client opens a pool of its own and ends it on `close()`. */
  readonly connectionString?: string
  /**
   * The schema of Yoke's tables: the workers' schema.
   *
   * @defaultValue 'public'
   */
  readonly schema?: string
  /**
   * A `postgresPersistence(…)` adapter to share (instead of `pool` / `connectionString` /
   * `schema`); `close()` leaves it open.
   */
  readonly persistence?: PersistenceAdapter
  /**
   * The largest message `submit` takes, in bytes of its JSON (UTF-8): a positive integer.
   *
   * @defaultValue 1048576 (1 MiB)
   */
  readonly maxMessageBytes?: number
}

/** A client of the workers' database: submits messages; `close()` when done. */
export interface PostgresClient {
  /** The schema it submits to. */
  readonly schema: string
  /**
   * Writes a message to the session's durable inbox and wakes the workers, in one transaction;
   * resolves once it is durable, without waiting for a worker. A worker then runs it as a turn of
   * the session (or as steering, see `busy`), exactly once and in submit order per session; its
   * `user/message` in the log carries `messageId`.
   *
   * @param sessionId - the session id (as the harness takes it)
   * @param input - a string or `{ content, source? }`
   * @param options - `idempotencyKey`, `busy` (`'queue'` by default), `create`
   * @returns `{ messageId, sessionId, duplicate }`
   * @throws (as a rejection; nothing written) `PersistenceError` `INVALID_SESSION_ID` for a bad id
   *   and `SESSION_NOT_FOUND` for an unknown session without `create: true`;
   *   `InvalidMessageError` for a bad input; `InvalidArgumentError` for bad options;
   *   `MessageTooLargeError` over `maxMessageBytes`; `SessionBusyError` for `busy: 'reject'` while
   *   the session is busy; a `PersistenceError` when the database fails
   * @example
   * ```ts
   * const { messageId, duplicate } = await client.submit('support-42', 'Where is my order?', {
   *   idempotencyKey: request.headers['idempotency-key'],
   * })
   * ```
   */
  submit(sessionId: string, input: UserMessageInput, options?: SubmitOptions): Promise<SubmitResult>
  /** Closes what the client opened (its pool or adapter); a pool or adapter passed in stays open. Idempotent. */
  close(): Promise<void>
}

const rules = Object.freeze({
  pool: (value: unknown) =>
    hasMethods(value, ['connect', 'query', 'end', 'on', 'removeListener']) ? undefined : 'must be a pg Pool',
  connectionString: optionRule.nonEmptyString,
  schema: optionRule.nonEmptyString,
  persistence: (value: unknown) => (typeof value === 'object' && value !== null ? undefined : 'must be an adapter'),
  maxMessageBytes: (value: unknown) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? undefined : 'must be a positive integer',
})

/**
 * Creates a client that submits messages to the workers of a schema. Connects on the first
 * submit (creating or migrating the tables when needed, like the adapter).
 *
 * @example
 * ```ts
 * import { createPostgresClient } from 'yoke/postgres'
 *
 * const client = createPostgresClient({ connectionString: process.env.DATABASE_URL, schema: 'agents' })
 * await client.submit('support-42', 'Hello', { create: true })
 * ```
 *
 * @param options - the database (`pool` | `connectionString`, `schema`, or `persistence`) and `maxMessageBytes`
 * @returns the client
 * @throws `InvalidOptionsError` naming the first bad option; `MissingPeerError` without `pg`
 */
export function createPostgresClient(options: PostgresClientOptions): PostgresClient {
  const issues = optionIssues(
    options ?? null,
    rules,
    '{ pool | connectionString, schema?, persistence?, maxMessageBytes? }',
  )
  if (issues.length === 0 && options.persistence !== undefined) {
    const other = (['pool', 'connectionString', 'schema'] as const).find((key) => options[key] !== undefined)
    if (other !== undefined)
      issues.push({ path: [other], message: 'give either persistence or the database, not both' })
  }
  throwOptionIssues(issues, options, 'createPostgresClient options')
  const owned = options.persistence === undefined
  const adapter =
    options.persistence ??
    postgresPersistence({
      ...(options.pool === undefined ? {} : { pool: options.pool }),
      ...(options.connectionString === undefined ? {} : { connectionString: options.connectionString }),
      ...(options.schema === undefined ? {} : { schema: options.schema }),
    })
  const handle = postgresHandleOf(adapter, 'createPostgresClient options')
  const maxMessageBytes = options.maxMessageBytes ?? 1024 * 1024
  let closing: Promise<void> | undefined
  return Object.freeze({
    schema: handle.schema,
    submit: async (sessionId: string, input: UserMessageInput, submitOptions?: SubmitOptions) => {
      // Checked before anything connects: bad input is refused even while the database is down.
      const prepared = prepareSubmit(sessionId, input, submitOptions, maxMessageBytes)
      try {
        const started = await handle.start()
        return await writeSubmit(started.executor, started.tables, prepared)
      } catch (error) {
        throw sqlFailure(error, 'submit', sessionId, `postgres:${handle.schema}`)
      }
    },
    close: () => {
      closing ??= owned ? adapter.close() : Promise.resolve()
      return closing
    },
  })
}
