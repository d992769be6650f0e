import { ErrorCode } from '../errors/codes.js'
import { HarnessError } from '../errors/harness-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { type CallBound, boundedCall } from './bounded-call.js'
import type { PersistenceAdapter } from './persistence-adapter.js'

/**
 * An adapter error that is not a `HarnessError` becomes `PersistenceError` `WRITE_FAILED` with the
 * error as `cause`; a `HarnessError` passes unchanged.
 *
 * @param sessionId - the session concerned, when there is one
 * @param error - what the adapter threw
 * @param operation - the adapter method, for the message
 * @returns the error to throw
 * @internal
 */
export function wrapAdapterError(sessionId: string | undefined, error: unknown, operation: string): unknown {
  if (HarnessError.is(error)) return error
  return new PersistenceError({
    code: ErrorCode.WRITE_FAILED,
    sessionId,
    detail: `the storage adapter's ${operation} failed`,
    cause: error,
  })
}

/**
 * The adapter as the coordinator calls it: every method's raw failure (a throw or a rejection)
 * wrapped by {@link wrapAdapterError}. Optional methods stay absent when the adapter lacks them.
 *
 * With a `bound`, the reads (`load`, `readFrom`, `list`) also fail with `WRITE_TIMEOUT` once it
 * passes, so opening a session on a hung disk or database fails instead of waiting for ever. Only
 * reads: giving up on a read leaves nothing behind, while a write or a lease taken after its
 * caller gave up would still hold storage (the live writer bounds its own writes and waits for a
 * late one before retrying).
 *
 * @param adapter - the host's adapter
 * @param bound - the timeout of the reads, when there is one
 * @returns the guarded adapter
 * @internal
 */
export function wrapAdapterErrors(adapter: PersistenceAdapter, bound?: CallBound): PersistenceAdapter {
  const guard = async <T>(
    sessionId: string | undefined,
    operation: string,
    call: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> => {
    try {
      return await call()
    } catch (error) {
      // An abort rejects with the caller's reason itself, never wrapped.
      if (signal?.aborted === true && error === signal.reason) throw error
      throw wrapAdapterError(sessionId, error, operation)
    }
  }
  const read = <T>(sessionId: string | undefined, operation: 'load' | 'readFrom' | 'list', call: () => Promise<T>) =>
    bound === undefined ? call() : boundedCall(bound, call(), sessionId, operation)
  const readFrom = adapter.readFrom
  const remove = adapter.delete
  const inspectLease = adapter.inspectLease
  const breakLease = adapter.breakLease
  return {
    name: adapter.name,
    create: (header) =>
      guard(typeof header?.id === 'string' ? header.id : undefined, 'create', () => adapter.create(header)),
    append: (sessionId, events, options) =>
      guard(sessionId, 'append', () => adapter.append(sessionId, events, options)),
    load: (sessionId, options) =>
      guard(sessionId, 'load', () => read(sessionId, 'load', () => adapter.load(sessionId, options)), options?.signal),
    commitRepair: (sessionId, torn, closers) =>
      guard(sessionId, 'commitRepair', () => adapter.commitRepair(sessionId, torn, closers)),
    ...(readFrom === undefined
      ? {}
      : {
          readFrom: (sessionId: string, fromSeq: number, options?: Parameters<typeof readFrom>[2]) =>
            guard(
              sessionId,
              'readFrom',
              () => read(sessionId, 'readFrom', () => readFrom.call(adapter, sessionId, fromSeq, options)),
              options?.signal,
            ),
        }),
    list: (options) =>
      guard(undefined, 'list', () => read(undefined, 'list', () => adapter.list(options)), options?.signal),
    ...(remove === undefined
      ? {}
      : { delete: (sessionId: string) => guard(sessionId, 'delete', () => remove.call(adapter, sessionId)) }),
    acquire: (sessionId) => guard(sessionId, 'acquire', () => adapter.acquire(sessionId)),
    ...(inspectLease === undefined
      ? {}
      : {
          inspectLease: (sessionId: string, options?: Parameters<typeof inspectLease>[1]) =>
            guard(sessionId, 'inspectLease', () => inspectLease.call(adapter, sessionId, options), options?.signal),
        }),
    ...(breakLease === undefined
      ? {}
      : {
          breakLease: (sessionId: string) => guard(sessionId, 'breakLease', () => breakLease.call(adapter, sessionId)),
        }),
    close: () => guard(undefined, 'close', () => adapter.close()),
  }
}
