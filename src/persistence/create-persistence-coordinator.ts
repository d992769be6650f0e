import { systemClock } from '../kernel/host-services.js'
import type { SessionEvent } from '../session/session-event.js'
import type { Session } from '../session/session.js'
import type { FlushCheckpoint } from '../session/flush-checkpoint.js'
import type { CoordinatorHost } from './coordinator-host.js'
import { flushSyncs } from './durability.js'
import { absentCheck, knownAbsent, type MaybeKnowsAbsent } from './known-absent.js'
import { LiveSessionWriter } from './live-session-writer.js'
import type { PersistenceCoordinator } from './persistence-coordinator.js'
import { SessionLeases } from './session-leases.js'
import { StoredLogOperations } from './stored-log-operations.js'

/**
 * The coordinator as the `persistence` entry holds it: the public operations on stored logs, plus
 * the listeners that write live sessions and the close the harness calls when it stops.
 *
 * @internal
 */
export interface HarnessPersistence extends PersistenceCoordinator, MaybeKnowsAbsent {
  /** Binds a new live session to a write-behind queue (the `session/created` listener). */
  bind(session: Session): void
  /** Enqueues a committed event of a bound session (the `session/event` listener). */
  record(session: Session, event: SessionEvent): void
  /** The commit guard: refuses events while the session is back-pressured. */
  guard(event: SessionEvent, session: Session): void
  /**
   * Writes every pending event of a live session (the `session/flush` listener); syncs them
   * unless the asking turn checkpoint may leave that to a later one at this durability.
   */
  flushSession(session: Session, checkpoint?: FlushCheckpoint): Promise<void>
  /** Flushes, releases and forgets a disposed session. */
  unbind(session: Session): Promise<void>
  /** Drops a vetoed session's queued events and releases its lease. */
  discard(session: Session): Promise<void>
  /** Refuses new bindings, flushes and releases everything, then closes the adapter; idempotent. */
  close(): Promise<void>
  /** Takes the lease of a new id before its session exists (`createAgent`); returns its release. */
  reserveNew(id: string): Promise<() => Promise<void>>
}

/**
 * Builds the persistence coordinator of one harness: its stored-log operations and its live
 * writer share one adapter (errors wrapped), one queue of operations per session id and the
 * leases of prepared ids.
 *
 * @param host - what the coordinator needs from its harness
 * @returns the coordinator, with the listeners the `persistence` entry registers
 * @internal
 */
export function createPersistenceCoordinator(host: CoordinatorHost): HarnessPersistence {
  // Reads time out in real time, like writes: a hung disk does not speed up under a fake clock.
  const leases = new SessionLeases(host.adapter, host.logger, { clock: systemClock(), timeoutMs: host.writeTimeoutMs })
  const writer = new LiveSessionWriter(host, leases)
  const stored = new StoredLogOperations(host, leases, (session) => writer.flush(session))
  return {
    get adapter() {
      return host.adapter
    },
    // With nothing queued for the id, the adapter's own answer is the answer `readFrom` would give.
    [absentCheck]: (id: string) => !leases.busy(id) && knownAbsent(host.adapter, id),
    load: (id, options) => stored.load(id, options),
    inspect: (id, options) => stored.inspect(id, options),
    prepare: (id, options) => stored.prepare(id, options),
    readFrom: (id, fromSeq, options) => stored.readFrom(id, fromSeq, options),
    list: (options) => stored.list(options),
    delete: (id, options) => stored.delete(id, options),
    repair: (id, options) => stored.repair(id, options),
    bind: (session) => writer.bind(session),
    record: (session, event) => writer.record(session, event),
    guard: (event, session) => writer.guard(event, session),
    flushSession: (session, checkpoint) => writer.flush(session, flushSyncs(host.durability, checkpoint)),
    unbind: (session) => writer.unbind(session),
    discard: (session) => writer.discard(session),
    close: () => writer.close(),
    reserveNew: (id) => stored.reserveNew(id),
  }
}
