/**
 * The SQL store's executor over a `pg` pool: each statement and each transaction on a client of its
 * own, checked out for just that long.
 *
 * @module
 */
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { SqlExecutor, SqlQuery, SqlRow } from '../persistence/sql/sql-executor.js'
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

  /** Runs `body` on one checked-out client; a client whose connection failed is closed, not reused. */
  const withClient = async <T>(body: (client: PgPoolClient, markBroken: (error: Error) => void) => Promise<T>) => {
    const client = await checkout()
    let failure: Error | undefined
    // A connection that fails between statements emits 'error' on the client; while it is checked
    // out the pool does not listen, and an unheard 'error' would end the process.
    const onError = (error: Error): void => {
      failure ??= error
    }
    client.on('error', onError)
    try {
      return await body(client, (error) => {
        failure ??= error
      })
    } catch (error) {
      failure ??= error instanceof Error && isConnectionFailure(error) ? error : undefined
      throw error
    } finally {
      client.removeListener('error', onError)
      client.release(failure)
    }
  }

  const run = async (client: PgPoolClient, sql: string, params?: readonly unknown[]): Promise<readonly SqlRow[]> => {
    const result = await client.query(sql, params === undefined ? undefined : [...params])
    return result.rows as readonly SqlRow[]
  }

  return Object.freeze({
    dialect: postgresDialect(options.schema),
    query: (sql: string, params?: readonly unknown[]) => withClient((client) => run(client, sql, params)),
    transaction: <T>(body: (tx: SqlQuery) => Promise<T>): Promise<T> =>
      withClient(async (client, markBroken) => {
        await run(client, 'BEGIN')
        try {
          const result = await body({ query: (sql, params) => run(client, sql, params) })
          await run(client, 'COMMIT')
          return result
        } catch (error) {
          // After a failed COMMIT the transaction is over already and ROLLBACK only warns; a
          // ROLLBACK that fails means the connection is gone or in an unknown state: the pool
          // must close it rather than hand it out again. The body's error is the one to report.
          try {
            await run(client, 'ROLLBACK')
          } catch (rollbackError) {
            markBroken(rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)))
          }
          throw error
        }
      }),
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
