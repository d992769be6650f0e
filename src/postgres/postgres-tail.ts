/**
 * `createPostgresTail`: tails of sessions stored in PostgreSQL, readable in any process, woken by
 * the notifications appends send and by polling.
 *
 * @module
 */
import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { loadPeer } from '../persistence/load-peer.js'
import type { PersistenceAdapter } from '../persistence/persistence-adapter.js'
import { type AppendListener, createAppendListener } from './append-listener.js'
import type { PgModule, PgPool, PgQueryResult } from './pg-pool.js'
import { quoteIdentifier } from './postgres-dialect.js'
import { postgresPersistence } from './postgres-persistence.js'
import { type PostgresTailOptions, validateTailOptions, validateTailStart } from './postgres-tail-options.js'
import { notFound, type SessionTail, type SessionTailOptions, TailCursor, type TailSource } from './session-tail.js'

export type { PostgresTailOptions } from './postgres-tail-options.js'

/** Tails over one PostgreSQL schema, sharing one `LISTEN` connection. */
export interface PostgresTail {
  /**
   * A session's events from `fromSeq` (or after `lastEventId`) on: the stored ones, then each one
   * any process appends, every seq exactly once and in order. Nothing is read until the iteration
   * starts; iterate it once.
   *
   * @param sessionId - the session
   * @param options - where to start, when to end, the signal, the poll interval
   * @returns the tail
   * @throws `PersistenceError` `INVALID_SESSION_ID` / `CLOSED`; `InvalidArgumentError` for a bad
   *   option. The iteration rejects with `PersistenceError` `SESSION_NOT_FOUND` for a session not
   *   stored, `InvalidArgumentError` for a `fromSeq` past the log's end, `LastEventIdError` for a
   *   refused `lastEventId`, and the read's error for a damaged log.
   */
  tail(sessionId: string, options?: SessionTailOptions): SessionTail
  /** Ends every open tail (their iterations finish), gives the connections back, ends a pool it opened. */
  close(): Promise<void>
}

/** The peer this subpath needs. */
const pgPeer = Object.freeze({ peer: 'pg', subpath: 'yoke/postgres', install: 'npm install pg' })

/**
 * Creates tails over the sessions of one schema. Appends are heard through `LISTEN` on one
 * connection shared by every tail of the factory (opened with the first tail, given back after the
 * last); each tail also reads every `pollMs` when nothing woke it, so it sees every append even
 * when a notification is lost, the writers do not send them (`notify: false`), or `listen` is off.
 * A read that fails (the database unreachable) is tried again after `pollMs`: a tail outlives an
 * outage and misses nothing.
 *
 * @example
 * ```ts
 * import { createPostgresTail } from 'yoke/postgres'
 *
 * const tails = createPostgresTail({ connectionString: process.env.DATABASE_URL, schema: 'agents' })
 * for await (const event of tails.tail('support-42', { fromSeq: 0, until: 'turn-end', signal })) {
 *   console.log(event.seq, event.type)
 * }
 * await tails.close()
 * ```
 *
 * @param options - a pool or a connection string, the schema, whether to listen, the poll interval
 * @returns the factory of tails
 * @throws `InvalidOptionsError` for bad options; `MissingPeerError` when `pg` is not installed
 */
export function createPostgresTail(options: PostgresTailOptions): PostgresTail {
  const checked = validateTailOptions(options)
  const pg = loadPeer(pgPeer) as PgModule
  const pool: PgPool = checked.pool ?? new pg.Pool({ connectionString: checked.connectionString ?? '' })
  // Reads go through the adapter: the same checks (and typed errors) as every load.
  const adapter = postgresPersistence({ pool, schema: checked.schema, notify: false })
  const listener: AppendListener | undefined = checked.listen
    ? createAppendListener({ pool, schema: checked.schema, retryMs: checked.pollMs })
    : undefined
  const sessions = `${quoteIdentifier(checked.schema)}.${quoteIdentifier('yoke_sessions')}`
  const open = new Set<TailCursor>()
  let closing: Promise<void> | undefined

  const source: TailSource = {
    read: async (sessionId, fromSeq, signal) => (await readFrom(adapter, sessionId, fromSeq, signal)).events,
    nextSeqOf: async (sessionId) => {
      let result: PgQueryResult
      try {
        result = await pool.query(`SELECT next_seq FROM ${sessions} WHERE id = $1`, [sessionId])
      } catch (error) {
        throw new PersistenceError({
          code: ErrorCode.WRITE_FAILED,
          sessionId,
          detail: `reading its next seq failed in the database (postgres:${quoteIdentifier(checked.schema)}): ${error instanceof Error ? error.message : String(error)}`,
          operation: 'tail',
          cause: error,
        })
      }
      const row = result.rows[0] as { readonly next_seq?: unknown } | undefined
      return row === undefined ? undefined : Number(row.next_seq)
    },
    ...(listener === undefined ? {} : { subscribe: (sessionId, wake) => listener.subscribe(sessionId, wake) }),
    // A driver failure (the server unreachable, a connection cut) passes; a refusal does not.
    retryable: (error) => PersistenceError.is(error) && error.code === ErrorCode.WRITE_FAILED,
  }

  return Object.freeze({
    tail(sessionId: string, tailOptions?: SessionTailOptions): SessionTail {
      if (closing !== undefined) {
        throw new PersistenceError({ code: ErrorCode.CLOSED, sessionId, detail: 'the PostgreSQL tail is closed' })
      }
      const start = validateTailStart(sessionId, tailOptions, checked.pollMs)
      const cursor: TailCursor = new TailCursor(source, start, () => open.delete(cursor))
      open.add(cursor)
      let iterated = false
      return {
        get sessionId() {
          return cursor.sessionId
        },
        get nextSeq() {
          return cursor.nextSeq
        },
        [Symbol.asyncIterator]() {
          if (iterated) {
            throw new InvalidArgumentError({
              argument: 'iterator',
              reason: 'a SessionTail can be iterated once; open another with tail()',
              value: undefined,
            })
          }
          iterated = true
          return cursor
        },
      }
    },
    close() {
      closing ??= (async () => {
        for (const cursor of [...open]) await cursor.return()
        await listener?.close()
        await adapter.close()
        if (checked.pool === undefined) await pool.end()
      })()
      return closing
    },
  })
}

/** `adapter.readFrom`, which the SQL adapter always has. */
function readFrom(adapter: PersistenceAdapter, sessionId: string, fromSeq: number, signal: AbortSignal) {
  if (adapter.readFrom === undefined) throw notFound(sessionId)
  return adapter.readFrom(sessionId, fromSeq, { signal })
}
