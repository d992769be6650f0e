import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { checkOptions, type OptionRule, optionRule } from '../kernel/option-issues.js'
import type {
  AppendBatchOptions,
  Lease,
  LoadOptions,
  PersistenceAdapter,
  ReadOptions,
  StoredListing,
  StoredLog,
  TornTail,
} from '../persistence/persistence-adapter.js'
import { isPersistenceAdapter } from '../persistence/persistence-plugin.js'
import type { SessionEvent } from '../session/session-event.js'
import type { SessionHeader } from '../session/session-header.js'

/** One call a {@link FaultyPersistence} saw. */
export interface PersistenceCall {
  /** The adapter method. */
  readonly method: 'create' | 'append' | 'load' | 'commitRepair' | 'readFrom' | 'list' | 'delete' | 'acquire' | 'close'
  /** The session concerned, if any. */
  readonly sessionId: string | undefined
  /** The seqs written (`append`, `commitRepair`), else empty. */
  readonly seqs: readonly number[]
  /** 1-based count of calls of this method so far, this one included. */
  readonly count: number
}

/** Options of {@link faultyPersistence}. */
export interface FaultyPersistenceOptions {
  /** Returns an error to reject this call with (the inner adapter is not called), or `undefined`. */
  readonly fail?: (call: PersistenceCall) => Error | undefined
  /** Returns a promise the call waits for before it runs (to hold a write in flight). */
  readonly hold?: (call: PersistenceCall) => Promise<void> | undefined
}

/** The rules of `faultyPersistence` options (factory options → `InvalidOptionsError`). */
const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  fail: optionRule.function,
  hold: optionRule.function,
})

/** A {@link PersistenceAdapter} wrapper that records calls and injects failures and delays. */
export interface FaultyPersistence extends PersistenceAdapter {
  /** Every call so far, in order. */
  readonly calls: readonly PersistenceCall[]
  /** The wrapped adapter. */
  readonly inner: PersistenceAdapter
}

/**
 * Wraps an adapter to count its calls and fail or hold any of them.
 *
 * @param inner - the adapter to wrap
 * @param options - `fail` and `hold` hooks
 * @returns the wrapper
 * @throws `InvalidArgumentError` (`argument: 'inner'`) when `inner` is not a persistence adapter;
 *   `InvalidOptionsError` for bad options (not an object, an unknown key, a `fail` or `hold` that
 *   is not a function)
 * @example
 * ```ts
 * const adapter = faultyPersistence(memoryPersistence(), {
 *   fail: (call) => (call.method === 'append' && call.count === 2 ? new Error('disk full') : undefined),
 * })
 * ```
 */
export function faultyPersistence(
  inner: PersistenceAdapter,
  options: FaultyPersistenceOptions = {},
): FaultyPersistence {
  if (!isPersistenceAdapter(inner))
    throw new InvalidArgumentError({ argument: 'inner', reason: 'must be a PersistenceAdapter', value: inner })
  checkOptions(options, optionRules, '{ fail?, hold? }', 'faultyPersistence options')
  const calls: PersistenceCall[] = []
  const counts = new Map<string, number>()
  const intercept = async <T>(
    method: PersistenceCall['method'],
    sessionId: string | undefined,
    seqs: readonly number[],
    run: () => Promise<T>,
  ): Promise<T> => {
    const count = (counts.get(method) ?? 0) + 1
    counts.set(method, count)
    const call: PersistenceCall = Object.freeze({ method, sessionId, seqs: Object.freeze([...seqs]), count })
    calls.push(call)
    const held = options.hold?.(call)
    if (held !== undefined) await held
    const error = options.fail?.(call)
    if (error !== undefined) throw error
    return run()
  }
  const seqsOf = (events: readonly SessionEvent[]): number[] => events.map((event) => event.seq)
  const adapter: FaultyPersistence = {
    name: `faulty(${inner.name})`,
    calls,
    inner,
    create: (header: SessionHeader) => intercept('create', header.id, [], () => inner.create(header)),
    append: (sessionId: string, events: readonly SessionEvent[], appendOptions: AppendBatchOptions) =>
      intercept('append', sessionId, seqsOf(events), () => inner.append(sessionId, events, appendOptions)),
    load: (sessionId: string, loadOptions?: LoadOptions): Promise<StoredLog> =>
      intercept('load', sessionId, [], () => inner.load(sessionId, loadOptions)),
    commitRepair: (sessionId: string, torn: TornTail | undefined, closers: readonly SessionEvent[]) =>
      intercept('commitRepair', sessionId, seqsOf(closers), () => inner.commitRepair(sessionId, torn, closers)),
    list: (listOptions?: ReadOptions): Promise<StoredListing> =>
      intercept('list', undefined, [], () => inner.list(listOptions)),
    acquire: (sessionId: string): Promise<Lease> => intercept('acquire', sessionId, [], () => inner.acquire(sessionId)),
    close: () => intercept('close', undefined, [], () => inner.close()),
  }
  const readFrom = inner.readFrom?.bind(inner)
  if (readFrom !== undefined) {
    Object.assign(adapter, {
      readFrom: (sessionId: string, fromSeq: number, readOptions?: ReadOptions) =>
        intercept('readFrom', sessionId, [], () => readFrom(sessionId, fromSeq, readOptions)),
    })
  }
  const remove = inner.delete?.bind(inner)
  if (remove !== undefined) {
    Object.assign(adapter, {
      delete: (sessionId: string) => intercept('delete', sessionId, [], () => remove(sessionId)),
    })
  }
  return adapter
}
