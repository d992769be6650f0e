/**
 * The SQL store's executor over a `pg` pool: each statement and each transaction on a client of its
 * own, checked out for just that long.
 *
 * @module
 */
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { SqlExecutor, SqlQuery, SqlRow } from '../persistence/sql/sql-executor.js'
import { announceStatement, appendPayload } from './append-notification.js'
import type { PgPool, PgPoolClient } from './pg-pool.js'
import { postgresDialect } from './postgres-dialect.js'

/** What {@link createPostgresExecutor} needs. @internal */
export interface PostgresExecutorOptions {
  /** The pool to run on. */
  readonly pool: PgPool
  /** Whether the executor opened the pool (and so ends it on close). */
  readonly ownsPool: boolean
  /** The schema of Yoke's tables. */
  readonly schema: string
  /** Whether every committed append is announced (a notification) for tails. @defaultValue false */
  readonly notify?: boolean
  /** Where the pool connects, for messages: never with the password. */
  readonly target: string
  /** Strings to scrub from driver messages (the connection string's password). */
  readonly secrets: readonly string[]
}

/**
 * An executor over `options.pool`. A failure to connect is an error naming the server (never the
 * password) and the driver's reason, with the driver's error as cause; other driver errors pass
 * unchanged. Either way the store judges them (a unique violation is a lost race) and wraps the
 * rest as `PersistenceError` `WRITE_FAILED` naming the operation and the session.
 *
 * @param options - the pool and what it is
 * @returns the executor
 * @internal
 */
export function createPostgresExecutor(options: PostgresExecutorOptions): SqlExecutor {
  const { pool, ownsPool } = options
  // An idle connection that fails (a server restart, a network cut) is dropped by the pool and a
  // new one opened on the next checkout; unheard, Node would throw the error and end the process.
  const onIdleError = (): void => {}
  pool.on('error', onIdleError)
  let closing: Promise<void> | undefined

  const checkout = async (): Promise<PgPoolClient> => {
    if (closing !== undefined) throw closedError()
    try {
      return await pool.connect()
    } catch (error) {
      throw connectError(options, error)
    }
  }

  /**
   * Runs `body` on one checked-out client, with `run` for its statements. A client whose
   * connection failed (a statement failing without an SQL state, an 'error' event, a failed
   * ROLLBACK) is closed by the pool, not handed out again; an SQL error (a unique violation) or
   * the body's own error leaves a healthy connection to reuse.
   */
  const withClient = async <T>(
    body: (
      run: (sql: string, params?: readonly unknown[]) => Promise<readonly SqlRow[]>,
      markBroken: (error: Error) => void,
    ) => Promise<T>,
  ): Promise<T> => {
    const client = await checkout()
    let failure: Error | undefined
    const markBroken = (error: Error): void => {
      failure ??= error
    }
    // A connection that fails between statements emits 'error' on the client; while it is checked
    // out the pool does not listen, and an unheard 'error' would end the process.
    client.on('error', markBroken)
    const run = async (sql: string, params?: readonly unknown[]): Promise<readonly SqlRow[]> => {
      try {
        const result = await client.query(sql, params === undefined ? undefined : [...params])
        return result.rows as readonly SqlRow[]
      } catch (error) {
        if (!(error instanceof Error)) markBroken(new Error(String(error)))
        else if (isConnectionFailure(error)) markBroken(error)
        throw error
      }
    }
    try {
      return await body(run, markBroken)
    } finally {
      client.removeListener('error', markBroken)
      client.release(failure)
    }
  }

  /** Runs `body` between `begin` and COMMIT on one client; ROLLBACK when it rejects. */
  const inTransaction = <T>(begin: string, body: (tx: SqlQuery) => Promise<T>): Promise<T> =>
    withClient(async (run, markBroken) => {
      await run(begin)
      try {
        const result = await body({ query: run })
        await run('COMMIT')
        return result
      } catch (error) {
        // After a failed COMMIT the transaction is over already and ROLLBACK only warns; a
        // ROLLBACK that fails means the connection is gone or in an unknown state: the pool
        // must close it rather than hand it out again. The body's error is the one to report.
        try {
          await run('ROLLBACK')
        } catch (rollbackError) {
          markBroken(rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)))
        }
        throw error
      }
    })

  return Object.freeze({
    dialect: postgresDialect(options.schema),
    query: (sql: string, params?: readonly unknown[]) => withClient((run) => run(sql, params)),
    transaction: <T>(body: (tx: SqlQuery) => Promise<T>): Promise<T> => inTransaction('BEGIN', body),
    // One snapshot for the session row and its events, no row locks: a load never waits for a
    // writer, nor holds one up.
    readTransaction: <T>(body: (tx: SqlQuery) => Promise<T>): Promise<T> =>
      inTransaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', body),
    ...(options.notify === true
      ? {
          announce: async (sessionId: string, nextSeq: number | undefined): Promise<void> => {
            // A lost announcement costs listeners a poll interval, never an event; the write it
            // announces committed already, so its failure must not fail the write.
            const statement = announceStatement(appendPayload(options.schema, sessionId, nextSeq))
            await withClient(async (run, markBroken) => {
              try {
                await run(statement)
              } catch (error) {
                // Its transaction may be left open (aborted): the pool must not hand the connection out.
                markBroken(error instanceof Error ? error : new Error(String(error)))
                throw error
              }
            }).catch(() => {})
          },
        }
      : {}),
    close: () => {
      closing ??= (async () => {
        if (ownsPool) await pool.end()
        pool.removeListener('error', onIdleError)
      })()
      return closing
    },
  })
}

/**
 * Whether a driver error means the connection cannot be trusted any more: no SQLSTATE (a socket
 * error, a closed connection) or one of class 08 (connection exception) or 57P (operator
 * intervention: the server shut down or killed the backend).
 */
function isConnectionFailure(error: Error): boolean {
  const code = (error as { code?: unknown }).code
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true
  return code.startsWith('08') || code.startsWith('57P')
}

function closedError(): PersistenceError {
  return new PersistenceError({ code: ErrorCode.CLOSED, detail: 'the PostgreSQL adapter is closed' })
}

/**
 * The connect failure naming the server and the driver's reason, without secrets. Not a
 * `HarnessError`: the store wraps it with the operation and the session it failed.
 */
function connectError(options: PostgresExecutorOptions, error: unknown): Error {
  let reason = error instanceof Error ? error.message : String(error)
  for (const secret of options.secrets) if (secret !== '') reason = reason.replaceAll(secret, '***')
  return new Error(`could not connect to PostgreSQL at ${options.target}: ${reason}`, { cause: error })
}
