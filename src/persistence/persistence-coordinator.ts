import type { SessionEvent } from '../session/session-event.js'
import type { SessionHeader } from '../session/session-header.js'
import type { PersistenceAdapter, StoredSuffix } from './persistence-adapter.js'

/** Options of every coordinator operation. */
export interface OperationOptions {
  /** Aborts the operation; an already aborted signal rejects with its reason before any I/O. */
  readonly signal?: AbortSignal
}

/** A balanced stored log, as `load` returns it. */
export interface LoadedLog {
  /** The stored header. */
  readonly header: SessionHeader
  /** The events, balanced (closers committed when a turn was open). */
  readonly events: readonly SessionEvent[]
  /** The storage revision read. */
  readonly revision: string
}

/** What `inspect` sees: the log as it would load, without changing storage. */
export interface InspectedLog extends LoadedLog {
  /** Whether a `load` would repair (a torn tail, or closers to append). */
  readonly repairPending: boolean
  /** How many bytes a repair would drop. */
  readonly droppedBytes?: number
}

/** A cold log loaded under a kept lease, reserved for `sessions.create({ id, seed })`. */
export interface SessionPreparation extends LoadedLog {
  /** Gives the lease and the id back (idempotent). */
  release(): Promise<void>
}

/** What `repair` did. */
export interface RepairReport {
  /** `none`, `repaired` (tail cut or closers appended) or `quarantined` (damage moved aside). */
  readonly action: 'none' | 'repaired' | 'quarantined'
  /** Events kept from storage. */
  readonly keptEvents: number
  /** The types of the closers appended. */
  readonly closers: readonly string[]
  /** Bytes dropped. */
  readonly droppedBytes?: number
  /** Where the damaged original went (`quarantined`). */
  readonly quarantine?: string
}

/**
 * The harness's access to stored sessions, provided as `services.persistence` and
 * `harness.persistence`: it is the only caller of the persistence adapter, runs every log read
 * cold through the checks of a loaded log and crash repair, and serializes operations per session.
 * Live sessions are written behind the scenes; these operations read, repair and delete logs.
 */
export interface PersistenceCoordinator {
  /** The adapter this coordinator writes to. */
  readonly adapter: PersistenceAdapter
  /**
   * Loads a session's log, balanced: a live session is flushed (and must not have an open turn);
   * a cold one is read under its lease, checked, and repaired at most once.
   *
   * @param id - the session id
   * @param options - `signal`
   * @returns header, events and revision
   * @throws `PersistenceError` (`SESSION_NOT_FOUND`, `LIVE_TURN_OPEN`, `REPAIR_INCOMPLETE`…), `PersistenceCorruptionError`, `SessionFormatUnsupportedError`, `SessionLockedError`
   */
  load(id: string, options?: OperationOptions): Promise<LoadedLog>
  /**
   * Reads a log as `load` would return it, changing nothing (no lease, no write).
   *
   * @param id - the session id
   * @param options - `signal`
   * @returns the log with its closers in memory, and whether a repair is pending
   */
  inspect(id: string, options?: OperationOptions): Promise<InspectedLog>
  /**
   * Loads a cold session and keeps its lease, reserving the id until `release()` or until a
   * session created with the prepared events binds it.
   *
   * @param id - the session id
   * @param options - `signal`
   * @returns the balanced log and `release()`
   * @throws `PersistenceError` `SESSION_LIVE` / `SESSION_RESERVED`, and every `load` error
   */
  prepare(id: string, options?: OperationOptions): Promise<SessionPreparation>
  /**
   * Reads what is durable now from `fromSeq` on (no flush, no lease, no closers).
   *
   * @param id - the session id
   * @param fromSeq - a non-negative integer
   * @param options - `signal`
   * @returns the header and the suffix
   * @throws `InvalidArgumentError` (`fromSeq`), and the read errors
   */
  readFrom(id: string, fromSeq: number, options?: OperationOptions): Promise<StoredSuffix>
  /**
   * Headers of every stored session, sorted by id; damaged headers are logged, not thrown.
   *
   * @param options - `signal`
   * @returns the headers
   */
  list(options?: OperationOptions): Promise<readonly SessionHeader[]>
  /**
   * Deletes a cold session's log.
   *
   * @param id - the session id
   * @param options - `signal`
   * @throws `PersistenceError` `SESSION_LIVE`, `SESSION_NOT_FOUND`; `SessionLockedError`
   */
  delete(id: string, options?: OperationOptions): Promise<void>
  /**
   * Repairs a cold session: cuts a torn tail, closes an interrupted turn, or (with
   * `truncateAtCorruption`) moves damage aside keeping the valid prefix.
   *
   * @param id - the session id
   * @param options - `truncateAtCorruption`, `signal`
   * @returns what was done
   */
  repair(id: string, options?: OperationOptions & { readonly truncateAtCorruption?: boolean }): Promise<RepairReport>
}
