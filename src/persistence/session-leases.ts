import type { Logger } from '../kernel/host-services.js'
import type { SessionEvent } from '../session/session-event.js'
import type { Lease, PersistenceAdapter } from './persistence-adapter.js'
import type { CallBound } from './bounded-call.js'
import { wrapAdapterErrors } from './wrap-adapter-errors.js'

/**
 * A cold log loaded under a kept lease (`prepare`), waiting for the session created from it.
 *
 * @internal
 */
export interface Reservation {
  /** The lease kept for the session. */
  readonly lease: Lease
  /** The balanced events the session must start with. */
  readonly events: readonly SessionEvent[]
  /** Set once the lease went back or passed to the bound session. */
  released: boolean
  /** A new id reserved by `createAgent`: nothing is stored yet, so the bound session creates its log. */
  readonly fresh?: boolean
}

/**
 * What the coordinator's stored-log operations and its live writer share: the adapter as called,
 * one queue of operations per session id, the leases of prepared ids, and the leases that
 * vetoed sessions are still giving back.
 *
 * @internal
 */
export class SessionLeases {
  /** The adapter as called: its raw errors wrapped into the documented ones. */
  readonly io: PersistenceAdapter
  /** Prepared ids and the leases they keep. */
  readonly reservations = new Map<string, Reservation>()
  /** Vetoed sessions whose lease is still being acquired or released, by id. */
  readonly discards = new Map<string, Promise<void>>()
  readonly #logger: Logger
  readonly #chains = new Map<string, Promise<unknown>>()

  /**
   * @param adapter - the storage backend
   * @param logger - where a taken-over stale lock is reported
   * @param bound - the timeout of the adapter's reads (`load`, `readFrom`, `list`)
   */
  constructor(adapter: PersistenceAdapter, logger: Logger, bound?: CallBound) {
    this.io = wrapAdapterErrors(adapter, bound)
    this.#logger = logger
  }

  /**
   * Takes the lease of `id`, logging a stale holder it replaced.
   *
   * @param id - the session id
   * @returns the lease
   * @throws `SessionLockedError` when another writer holds it
   */
  async acquire(id: string): Promise<Lease> {
    // A vetoed session of this id may still hold (or be taking) the lease: let it go first.
    await this.discards.get(id)?.catch(() => {})
    const lease = await this.io.acquire(id)
    const holder = lease.tookOver
    if (holder !== undefined) {
      const owner = holder.owner === undefined ? '' : `owner ${holder.owner}, epoch ${holder.epoch ?? 1}, `
      this.#logger.warn(
        `session "${id}": took over the stale lock of pid ${holder.pid} on ${holder.host} (${owner}acquired at ${holder.acquiredAt}, last heartbeat at ${holder.heartbeatAt ?? holder.acquiredAt}); its writer can write nothing more`,
        { sessionId: id, holder },
      )
    }
    return lease
  }

  /**
   * Whether an operation on `id` is queued or running.
   *
   * @param id - the session id
   * @returns `true` while {@link SessionLeases.serial} has work for it
   */
  busy(id: string): boolean {
    return this.#chains.has(id)
  }

  /**
   * Runs `operation` after every earlier operation on `id` settled, whatever their outcome.
   *
   * @param id - the session id
   * @param operation - the operation
   * @returns its result
   */
  serial<T>(id: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.#chains.get(id) ?? Promise.resolve()
    const next = previous.then(operation, operation)
    const settled = next.then(
      () => {},
      () => {},
    )
    this.#chains.set(id, settled)
    void settled.then(() => {
      if (this.#chains.get(id) === settled) this.#chains.delete(id)
    })
    return next
  }
}
