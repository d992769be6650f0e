import type { LockHolder } from '../errors/lock-holder.js'
import type { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import type { SessionFormatUnsupportedError } from '../errors/session-format-unsupported-error.js'
import type { SessionEvent } from '../session/session-event.js'
import type { SessionHeader } from '../session/session-header.js'

/**
 * The exclusive, cross-process right to write one session. Read-only.
 *
 * Every adapter implements one model:
 * - a lease is held by an owner id ({@link Lease.owner}) drawn at random per adapter instance
 *   (so per process start), never a pid or a host name;
 * - it carries a fencing epoch that only grows while the session's lease record exists: a
 *   takeover gets the old epoch + 1;
 * - it expires unless its holder renews it every `lease.heartbeatMs` (a factory option); once its
 *   last heartbeat is `lease.ttlMs` old, any instance on any host may take it over, whatever pid
 *   or host wrote it;
 * - every append and repair checks the lease (token and epoch) together with the write, so a
 *   holder that lost it writes nothing and gets `LeaseLostError`; a holder whose own last
 *   heartbeat is `ttlMs` old refuses to write as well;
 * - `acquire` of a live lease rejects with `SessionLockedError` naming the holder; when two
 *   instances race for one free or expired lease, exactly one wins and the loser's error names
 *   the winner.
 */
export interface Lease {
  /** The session it covers. */
  readonly sessionId: string
  /** A random token identifying this lease. */
  readonly token: string
  /** The owner id of the adapter instance holding it (random per instance, never a pid). */
  readonly owner: string
  /** The fencing epoch: greater than the epoch of every lease it took over. */
  readonly epoch: number
  /** Aborts with a `LeaseLostError` once the adapter learns the lease is gone. */
  readonly signal: AbortSignal
  /** The expired holder this lease replaced, if any. */
  readonly tookOver?: LockHolder
  /** Releases the lease (idempotent); later writes under it fail with `LeaseLostError`. */
  release(): Promise<void>
}

/** A session's lease as stored, read without taking it (`yoke unlock` shows it). */
export interface StoredLease {
  /** The session it covers. */
  readonly sessionId: string
  /** Who holds it: owner id, epoch, pid, host, when it was acquired and last renewed, its TTL. */
  readonly holder: LockHolder
  /**
   * How long ago its last heartbeat was, in milliseconds, by the clock that decides expiry (the
   * database's for SQL adapters, this machine's for files).
   */
  readonly ageMs: number
  /**
   * Whether it is still live (`ageMs < holder.ttlMs`, and its holder is not known to be gone: the
   * JSONL adapter reports a lock of a process of this host that no longer exists as not live):
   * taking it needs `breakLease`.
   */
  readonly live: boolean
}

/** What a crash (or damage) left after the committed events of a stored log. */
export interface TornTail {
  /** `torn`: tolerated (nothing valid follows); `corrupt`: damage returned with `truncateAtCorruption`. */
  readonly kind: 'torn' | 'corrupt'
  /** The first defect. */
  readonly defect: 'unterminated' | 'unparsable' | 'nul' | 'frame'
  /** The byte offset of the defect (or its frame) in the stored file. */
  readonly offset?: number
  /** The 1-based line of the defect in the decoded text. */
  readonly line?: number
  /** How many bytes a repair drops. */
  readonly droppedBytes?: number
  /** Complete records salvaged from a torn last frame (unverified; included in `events`). */
  readonly recovered: readonly SessionEvent[]
  /** The revision the tail was read at; a repair must still see it. */
  readonly revision: string
}

/** A stored log as `load` returns it. */
export interface StoredLog {
  /** The stored header. */
  readonly header: SessionHeader
  /** Committed events seq 0…n−1, then `torn.recovered`: fresh, unaliased objects. */
  readonly events: readonly SessionEvent[]
  /** Present iff there is a tail to cut or rewrite. */
  readonly torn?: TornTail
  /** Opaque: equal for equal stored state, new after every append or repair. */
  readonly revision: string
  /** Where the log is (a file path, `<table>:<id>`). */
  readonly location?: string
  /**
   * `true` when `events` are fresh `JSON.parse` results this adapter keeps no reference to: the
   * coordinator may then freeze them in place for the session instead of copying every event.
   * Leave it out when in doubt; the events are copied then.
   */
  readonly freshlyParsed?: boolean
}

/** What `readFrom` returns: the header and the committed events from a seq on. */
export interface StoredSuffix {
  /** The stored header. */
  readonly header: SessionHeader
  /** The committed events with `seq ≥ fromSeq`. */
  readonly events: readonly SessionEvent[]
}

/** Options of {@link PersistenceAdapter.append}. */
export interface AppendBatchOptions {
  /** The seq the batch starts at: the stored next seq. */
  readonly expectedSeq: number
  /** A live lease of this adapter instance for the session. */
  readonly lease: Lease
  /**
   * The JSON text of each event, index for index (`texts[i] === JSON.stringify(events[i])`),
   * when the caller measured them already: an adapter that stores JSON text may write these
   * instead of stringifying every event again. Only passed for deep-frozen events, so the texts
   * cannot go stale; an adapter may ignore them.
   */
  readonly texts?: readonly string[]
  /**
   * `false`: the batch must be written in order (a killed process keeps it) but need not reach
   * stable storage before the promise resolves; the next append without `sync: false` makes it
   * durable together with its own batch. An empty batch with `sync` left on only does that:
   * it syncs what earlier `sync: false` appends wrote. An adapter whose every write is durable
   * may ignore this field (the memory, SQLite and Postgres adapters do).
   *
   * @default true
   */
  readonly sync?: boolean
}

/** Options of {@link PersistenceAdapter.load}. */
export interface LoadOptions {
  /** Return damage as `torn.kind 'corrupt'` after the valid prefix instead of rejecting. */
  readonly truncateAtCorruption?: boolean
  /** Aborts the read. */
  readonly signal?: AbortSignal
}

/** Options of the adapter's read operations. */
export interface ReadOptions {
  /** Aborts the read. */
  readonly signal?: AbortSignal
}

/** The result of {@link PersistenceAdapter.list}. */
export interface StoredListing {
  /** Headers of stored sessions, sorted by id. */
  readonly headers: readonly SessionHeader[]
  /** Damaged headers, reported instead of failing the listing. */
  readonly damaged: readonly PersistenceCorruptionError[]
  /**
   * Logs stored in a format this Yoke cannot read (written by a newer Yoke, or too old), reported
   * instead of dropped: each error names the file, its version and the supported one. Absent from
   * adapters that cannot meet such logs, and when there are none.
   */
  readonly unreadable?: readonly SessionFormatUnsupportedError[]
}

/** What {@link PersistenceAdapter.commitRepair} may report. */
export interface RepairCommit {
  /** Where the damaged original of a `corrupt` tail now is (a path or an adapter-specific name). */
  readonly quarantine?: string
}

/**
 * A storage backend for session logs. The coordinator is its only
 * caller; test an implementation with `runPersistenceConformance` from `yoke/testing`.
 */
export interface PersistenceAdapter {
  /** A short name for messages (`'jsonl'`, `'memory'`). */
  readonly name: string
  /**
   * Registers a header; writes nothing durable (the first append materializes it).
   *
   * @throws `PersistenceError` `SESSION_EXISTS` / `INVALID_SESSION_ID`; `SessionHeaderError`
   */
  create(header: SessionHeader): Promise<void>
  /**
   * Appends a batch; resolves only once it is durable. A rejection leaves storage as before.
   *
   * Checks, in this order: the lease (`LeaseLostError`), an empty batch (resolves, writes
   * nothing), the batch's seqs (contiguous from `expectedSeq`: `InvalidArgumentError`), the
   * session (`PersistenceError`), then `expectedSeq` against the stored next seq. The append is
   * **idempotent**: a batch that already committed and is sent again at its old `expectedSeq`
   * (after a timeout or a lost reply) resolves and writes nothing, when every one of its events is
   * stored at its seq with byte-for-byte the same JSON text (`options.texts` when given). Any
   * other stale `expectedSeq` (other events, a batch that only partly matches or reaches past the
   * stored log) and an `expectedSeq` ahead of the stored next seq are `SeqConflictError`, with
   * nothing written.
   *
   * @throws `LeaseLostError`, `InvalidArgumentError`, `PersistenceError`, `SeqConflictError`
   */
  append(sessionId: string, events: readonly SessionEvent[], options: AppendBatchOptions): Promise<void>
  /**
   * Reads a stored log; never mutates storage.
   *
   * @throws `PersistenceError` `SESSION_NOT_FOUND`, `PersistenceCorruptionError`, `SessionFormatUnsupportedError`
   */
  load(sessionId: string, options?: LoadOptions): Promise<StoredLog>
  /**
   * Cuts or rewrites `torn` and stores `recovered ++ closers` as one crash-safe batch.
   * Needs a live lease of this instance for the session.
   *
   * @returns where a `corrupt` tail's damaged original was quarantined, when the adapter can say
   *   (`RepairReport.quarantine`); adapters may resolve with nothing
   * @throws `LeaseLostError`, `SeqConflictError` (`expectedRevision`)
   */
  commitRepair(
    sessionId: string,
    torn: TornTail | undefined,
    closers: readonly SessionEvent[],
  ): Promise<RepairCommit | undefined | void>
  /** Committed events with `seq ≥ fromSeq` (never salvaged ones); no mutation. */
  readFrom?(sessionId: string, fromSeq: number, options?: ReadOptions): Promise<StoredSuffix>
  /** Headers of every stored session, sorted by id; damaged ones are reported, not thrown. */
  list(options?: ReadOptions): Promise<StoredListing>
  /** Removes a stored log and its auxiliary files (under this instance's live lease). */
  delete?(sessionId: string): Promise<void>
  /**
   * Takes the exclusive lease of a session id.
   *
   * @throws `SessionLockedError` when another writer holds it
   */
  acquire(sessionId: string): Promise<Lease>
  /**
   * Reads the current lease of a session without taking it.
   *
   * @returns the lease record, or `undefined` when nobody holds one (never held, released, broken)
   */
  inspectLease?(sessionId: string, options?: ReadOptions): Promise<StoredLease | undefined>
  /**
   * Ends the current lease of a session whoever holds it, live or not (what `yoke unlock --force`
   * does to a holder that is wrongly believed alive). Its holder's later writes and heartbeats fail
   * with `LeaseLostError`; the next `acquire` succeeds with a greater epoch.
   *
   * @returns the lease that was ended, or `undefined` when there was none
   */
  breakLease?(sessionId: string): Promise<StoredLease | undefined>
  /** Releases every lease, stops timers, closes handles; idempotent. */
  close(): Promise<void>
}
