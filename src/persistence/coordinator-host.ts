import type { Clock, Logger } from '../kernel/host-services.js'
import type { SessionCatalog } from '../session/session-catalog.js'
import type { Session } from '../session/session.js'
import type { PersistenceAdapter } from './persistence-adapter.js'
import type { Durability } from './durability.js'
import type { WriteBehindOptions } from './write-behind.js'

/**
 * What the persistence coordinator needs from its harness.
 *
 * @internal
 */
export interface CoordinatorHost {
  /** The storage backend, called only through the coordinator. */
  readonly adapter: PersistenceAdapter
  /** The batching options of every live session's write-behind queue. */
  readonly writeBehind: WriteBehindOptions
  /**
   * How long one storage call of a live session may take before it counts as failed
   * (`WRITE_TIMEOUT`), in milliseconds of real time; `0` waits for ever.
   */
  readonly writeTimeoutMs: number
  /** When a live session's writes sync: at every checkpoint (`'step'`) or at turn ends (`'turn'`). */
  readonly durability: Durability
  /** Drives the write-behind windows (not the write timeouts: see `writeTimeoutMs`). */
  readonly clock: Clock
  /** Where failed background writes and taken-over locks are reported. */
  readonly logger: Logger
  /** The event types a stored log may hold. */
  readonly catalog: SessionCatalog
  /** The live session with this id, if any. */
  live(id: string): Session | undefined
  /** Reports a failed background write (`session/write-failed`). */
  writeFailed(sessionId: string, error: unknown, pendingEvents: number): void
}
