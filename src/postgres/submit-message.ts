/**
 * `submit`: one message into a session's durable inbox, in one transaction that also wakes the
 * workers (`NOTIFY`, ids only).
 *
 * @module
 */
import { normalizeUserMessage, type UserMessageInput } from '../agent/user-message-input.js'
import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { MessageTooLargeError } from '../errors/message-too-large-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { randomHex } from '../persistence/random-hex.js'
import { assertStorableId } from '../persistence/session-file-name.js'
import type { SqlExecutor, SqlQuery } from '../persistence/sql/sql-executor.js'
import { INBOX_ID_PREFIX, PG_NOW_MS, type WorkerTables } from './worker-tables.js'

/**
 * What happens to a message submitted while its session is busy (a turn running, or earlier
 * messages waiting): `'queue'` runs it as a later turn; `'steer'` hands it to the running turn as
 * steering (`agent.steer`), or runs it as a turn when none is running; `'reject'` refuses it with
 * `SessionBusyError` and writes nothing.
 */
export type BusyPolicy = 'queue' | 'steer' | 'reject'

/** Options of `submit`. */
export interface SubmitOptions {
  /**
   * Makes the submit idempotent: a second submit with the same key for the same session is the
   * same message (`duplicate: true`, the first one's `messageId`), whatever its input. A
   * non-empty string of at most 1024 characters.
   *
   * @defaultValue none (every submit is a new message)
   */
  readonly idempotencyKey?: string
  /**
   * What happens when the session is busy: see {@link BusyPolicy}.
   *
   * @defaultValue 'queue'
   */
  readonly busy?: BusyPolicy
  /**
   * Whether a session that does not exist yet is created by the worker that picks the message up
   * (with the worker's `agent` overrides). Without it, a submit for an unknown session is refused.
   *
   * @defaultValue false
   */
  readonly create?: boolean
}

/** What `submit` resolves with, once the message is durable. */
export interface SubmitResult {
  /** The message id: the id of its `user/message` in the session log once a turn runs it. */
  readonly messageId: string
  /** The session. */
  readonly sessionId: string
  /** `true` when the idempotency key named a message submitted before (nothing new was written). */
  readonly duplicate: boolean
}

/** A submit checked and ready to write. @internal */
export interface PreparedSubmit {
  readonly sessionId: string
  readonly messageId: string
  readonly body: string
  readonly idempotencyKey: string | undefined
  readonly busy: BusyPolicy
  readonly create: boolean
}

const busyPolicies: ReadonlySet<unknown> = new Set(['queue', 'steer', 'reject'])
const optionKeys: ReadonlySet<string> = new Set(['idempotencyKey', 'busy', 'create'])

/**
 * Checks a submit before anything connects: the session id, the options, the message and its
 * size. The message gets its id here, with the inbox prefix.
 *
 * @param sessionId - the session
 * @param input - the message: a string or `{ content, source? }`
 * @param options - the idempotency key, the busy policy, `create`
 * @param maxMessageBytes - the size limit
 * @returns the checked submit
 * @throws `PersistenceError` `INVALID_SESSION_ID`, `InvalidMessageError`, `InvalidArgumentError`, `MessageTooLargeError`
 * @internal
 */
export function prepareSubmit(
  sessionId: string,
  input: UserMessageInput,
  options: SubmitOptions | undefined,
  maxMessageBytes: number,
): PreparedSubmit {
  assertStorableId(sessionId)
  const { idempotencyKey, busy, create } = checkSubmitOptions(options)
  const messageId = `${INBOX_ID_PREFIX}${randomHex(16)}`
  const message = normalizeUserMessage(input, messageId)
  const body = JSON.stringify({ content: message.content, source: message.source })
  const bytes = Buffer.byteLength(body, 'utf8')
  if (bytes > maxMessageBytes) throw new MessageTooLargeError({ sessionId, bytes, limit: maxMessageBytes })
  return { sessionId, messageId, body, idempotencyKey, busy, create }
}

/**
 * Writes a checked submit in one transaction: finds a message with the same idempotency key,
 * refuses an unknown or (for `'reject'`) busy session, inserts the inbox row and the session's
 * runnable row, and sends `NOTIFY` with the session id.
 *
 * @param executor - the database
 * @param tables - the worker's tables
 * @param prepared - from {@link prepareSubmit}
 * @returns the message id, the session, whether it was a duplicate
 * @throws `PersistenceError` `SESSION_NOT_FOUND`, `SessionBusyError`, the database's errors
 * @internal
 */
export async function writeSubmit(
  executor: SqlExecutor,
  tables: WorkerTables,
  prepared: PreparedSubmit,
): Promise<SubmitResult> {
  const { sessionId, messageId, body, idempotencyKey, busy, create } = prepared
  const { inbox, runnable, sessions, channel } = tables
  return executor.transaction(async (tx) => {
    if (idempotencyKey !== undefined) {
      const earlier = await findByKey(tx, inbox, sessionId, idempotencyKey)
      if (earlier !== undefined) return { messageId: earlier, sessionId, duplicate: true }
    }
    if (!create) {
      // A session made by a worker for an earlier `create: true` submit counts as known.
      const known = await tx.query(
        `SELECT 1 FROM ${sessions} WHERE id = $1 UNION ALL SELECT 1 FROM ${inbox} WHERE session = $1 AND create_session LIMIT 1`,
        [sessionId],
      )
      if (known.length === 0) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_NOT_FOUND,
          sessionId,
          detail: 'no such session; nothing was submitted (submit with create: true to have a worker create it)',
        })
      }
    }
    if (busy === 'reject') {
      // The runnable row exists while a worker drives the session or messages wait: inserting it
      // here is the busy test, and holds off a second rejecting submit until this one commits.
      const inserted = await tx.query(
        `INSERT INTO ${runnable} (session, since) VALUES ($1, ${PG_NOW_MS}) ON CONFLICT (session) DO NOTHING RETURNING session`,
        [sessionId],
      )
      if (inserted.length === 0) throw new SessionBusyError({ sessionId })
      const waiting = await tx.query(`SELECT 1 FROM ${inbox} WHERE session = $1 AND consumed_at IS NULL LIMIT 1`, [
        sessionId,
      ])
      if (waiting.length > 0) throw new SessionBusyError({ sessionId })
    } else {
      await tx.query(
        `INSERT INTO ${runnable} (session, since) VALUES ($1, ${PG_NOW_MS}) ON CONFLICT (session) DO UPDATE SET wake = ${runnable}.wake + 1`,
        [sessionId],
      )
    }
    const stored = await tx.query(
      `INSERT INTO ${inbox} (id, session, body, busy, create_session, idempotency_key, submitted_at) VALUES ($1, $2, $3, $4, $5, $6, ${PG_NOW_MS}) ON CONFLICT (session, idempotency_key) DO NOTHING RETURNING id`,
      [messageId, sessionId, body, busy, create, idempotencyKey ?? null],
    )
    if (stored.length === 0 && idempotencyKey !== undefined) {
      // A concurrent submit with the same key committed first: this one is that message.
      const earlier = await findByKey(tx, inbox, sessionId, idempotencyKey)
      if (earlier !== undefined) return { messageId: earlier, sessionId, duplicate: true }
    }
    // Ids only: the payload limit is 8000 bytes, and a message body must not travel through it.
    await tx.query('SELECT pg_notify($1, $2)', [channel, sessionId])
    return { messageId, sessionId, duplicate: false }
  })
}

async function findByKey(tx: SqlQuery, inbox: string, sessionId: string, key: string): Promise<string | undefined> {
  const rows = await tx.query(`SELECT id FROM ${inbox} WHERE session = $1 AND idempotency_key = $2`, [sessionId, key])
  const id = rows[0]?.['id']
  return typeof id === 'string' ? id : undefined
}

/** The checked submit options, defaults filled. */
function checkSubmitOptions(options: SubmitOptions | undefined): {
  readonly idempotencyKey: string | undefined
  readonly busy: BusyPolicy
  readonly create: boolean
} {
  if (options === undefined) return { idempotencyKey: undefined, busy: 'queue', create: false }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError({
      argument: 'options',
      reason: 'must be { idempotencyKey?, busy?, create? }',
      value: options,
    })
  }
  for (const key of Object.keys(options)) {
    if (!optionKeys.has(key)) {
      throw new InvalidArgumentError({
        argument: `options.${key}`,
        reason: 'is not a submit option (idempotencyKey, busy, create)',
        value: (options as Record<string, unknown>)[key],
      })
    }
  }
  const key: unknown = options.idempotencyKey
  if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 1024)) {
    throw new InvalidArgumentError({
      argument: 'options.idempotencyKey',
      reason: 'must be a non-empty string of at most 1024 characters',
      value: key,
    })
  }
  const busy: unknown = options.busy ?? 'queue'
  if (!busyPolicies.has(busy)) {
    throw new InvalidArgumentError({
      argument: 'options.busy',
      reason: "must be 'queue', 'steer' or 'reject'",
      value: options.busy,
    })
  }
  const create: unknown = options.create ?? false
  if (typeof create !== 'boolean') {
    throw new InvalidArgumentError({ argument: 'options.create', reason: 'must be a boolean', value: create })
  }
  return { idempotencyKey: key as string | undefined, busy: busy as BusyPolicy, create }
}
