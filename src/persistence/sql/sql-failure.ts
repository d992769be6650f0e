/**
 * Driver failures (connection refused, server gone, a busy database past its timeout, a full disk)
 * as the typed error the coordinator expects: `PersistenceError` `WRITE_FAILED` naming the
 * operation and the session, with the driver's error as `cause`.
 *
 * @module
 */
import { ErrorCode } from '../../errors/codes.js'
import { HarnessError } from '../../errors/harness-error.js'
import { PersistenceError } from '../../errors/persistence-error.js'

/**
 * `error` as the store throws it: a `HarnessError` unchanged, anything else (a driver error)
 * wrapped.
 *
 * @param error - what a statement or the store threw
 * @param operation - the adapter operation (`append`, `load`, …)
 * @param sessionId - the session concerned, when there is one
 * @param where - the database, for the message
 * @returns the error to throw
 * @internal
 */
export function sqlFailure(error: unknown, operation: string, sessionId: string | undefined, where: string): unknown {
  if (HarnessError.is(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new PersistenceError({
    code: ErrorCode.WRITE_FAILED,
    sessionId,
    detail: `${operation} failed in the database (${where}): ${message}`,
    operation,
    cause: error,
  })
}
