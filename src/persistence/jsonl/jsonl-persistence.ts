/**
 * The JSONL file adapter: one append-only file per session in `dir` (plain, gzip or zstd frames), a
 * lock file per leased session, crash-safe first writes and repairs (temp file, `link`/`rename`,
 * directory fsync), and the tail rule on every read.
 *
 * @module
 */
import { resolve } from 'node:path'
import { ErrorCode } from '../../errors/codes.js'
import { PersistenceCorruptionError } from '../../errors/persistence-corruption-error.js'
import { PersistenceError } from '../../errors/persistence-error.js'
import { SeqConflictError } from '../../errors/seq-conflict-error.js'
import { SessionFormatUnsupportedError } from '../../errors/session-format-unsupported-error.js'
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import { assertSeqArgument, compareIds, headerToCreate } from '../adapter-arguments.js'
import type {
  AppendBatchOptions,
  Lease,
  LoadOptions,
  PersistenceAdapter,
  ReadOptions,
  RepairCommit,
  StoredLease,
  StoredListing,
  StoredLog,
  TornTail,
  StoredSuffix,
} from '../persistence-adapter.js'
import { assertStorableId } from '../session-file-name.js'
import { zstdCodec } from './frame-codec.js'
import { checkEventBatch } from './check-event-batch.js'
import { batchCheckLine } from './batch-check.js'
import { concatBytes } from './concat-bytes.js'
import { encodeBatch, encodeHeaderLine } from './jsonl-codec.js'
import type { JsonlFileHandle, JsonlFileSystem } from './jsonl-file-system.js'
import { errorCodeOf, fsyncDirectory, publishFile, writeFully, writeTempFile } from './jsonl-file-operations.js'
import { JsonlLeases, type LeaseRecord } from './jsonl-leases.js'
import { newLeaseOwner } from '../lease-options.js'
import { matchesStoredBatch } from '../matches-stored-batch.js'
import { type FoundLog, JsonlLogFiles } from './jsonl-log-files.js'
import { JsonlOpenLogs } from './jsonl-open-logs.js'
import { type ReadLog, type RepairPlan, readLogFile, readLogHeader, revisionOf } from './jsonl-log-reader.js'
import {
  type JsonlPersistenceOptions,
  type ValidatedJsonlOptions,
  validateJsonlOptions,
} from './jsonl-persistence-options.js'
import { type Compression, type LogState, rewriteTail } from './jsonl-repair.js'

export type { JsonlPersistenceOptions } from './jsonl-persistence-options.js'

/** The JSONL adapter: the full {@link PersistenceAdapter} contract. */
export interface JsonlPersistence extends PersistenceAdapter {
  /** The absolute directory of the logs. */
  readonly dir: string
  /**
   * Committed events with `seq ≥ fromSeq` (never salvaged ones); no mutation.
   *
   * @param sessionId - the session id
   * @param fromSeq - a non-negative safe integer
   * @param options - `signal`
   * @returns the header and the suffix
   * @throws `InvalidArgumentError` (`fromSeq`), `PersistenceError SESSION_NOT_FOUND`, `PersistenceCorruptionError`
   */
  readFrom(sessionId: string, fromSeq: number, options?: ReadOptions): Promise<StoredSuffix>
  /**
   * Removes a stored log, its index and (when this instance leases it) the lease.
   *
   * @param sessionId - the session id
   * @throws `PersistenceError SESSION_NOT_FOUND`; `SessionLockedError` while another holder has the lock
   */
  delete(sessionId: string): Promise<void>
  /**
   * Reads the lease of a session from its lock file without taking it. A lock written by a process
   * of this host that no longer exists is not live (`acquire` takes it over at once).
   *
   * @param sessionId - the session id
   * @param options - `signal`
   * @returns the lease, or `undefined` when there is no lock (or a broken one)
   * @throws `SessionLockedError` when the lock file is unreadable (only `breakLease` removes it)
   */
  inspectLease(sessionId: string, options?: ReadOptions): Promise<StoredLease | undefined>
  /**
   * Ends the lease of a session whoever holds it: its lock becomes a broken lock (same epoch, new
   * token), so the holder's next append or heartbeat fails with `LeaseLostError` and the next
   * `acquire` gets a greater epoch.
   *
   * @param sessionId - the session id
   * @returns the lease that was ended, or `undefined` when there was none (or its lock was unreadable)
   */
  breakLease(sessionId: string): Promise<StoredLease | undefined>
}

const encoder = new TextEncoder()

interface CachedPlan {
  readonly revision: string
  readonly header: SessionHeader
  readonly plan: RepairPlan
}

/**
 * Creates the JSONL file adapter: `<dir>/<id>.jsonl` (or `.jsonl.gz`, `.jsonl.zst`), one line (or
 * frame) per batch, a `<id>.lock` per leased session.
 *
 * @param options - the directory, codec and knobs
 * @returns the adapter
 * @throws `InvalidOptionsError` for options that are not an object or hold an unknown key;
 *   `ConfigError` `CONFIG_INVALID` naming the option for a bad value; `ZSTD_UNAVAILABLE` for
 *   `'zstd'` without an encoder
 * @example
 * ```ts
 * const harness = await createHarness({ persistence: jsonlPersistence({ dir: './sessions', compression: 'gzip' }) })
 * ```
 */
export function jsonlPersistence(options: JsonlPersistenceOptions): JsonlPersistence {
  return new JsonlAdapter(validateJsonlOptions(options))
}

let idsHeldBy: (adapter: JsonlAdapter) => string[]

/**
 * @internal The ids a JSONL adapter keeps any per-id state for (registrations, remembered logs and
 * repair plans, failures, write queues, read generations), sorted; for tests that a deleted
 * session leaves nothing behind.
 */
export function jsonlIdsHeld(adapter: JsonlPersistence): string[] {
  return adapter instanceof JsonlAdapter ? idsHeldBy(adapter) : []
}

class JsonlAdapter implements JsonlPersistence {
  readonly name = 'jsonl'
  readonly dir: string
  readonly #fileSystem: JsonlFileSystem
  readonly #compression: Compression
  readonly #packChunks: boolean
  readonly #checksum: 'none' | 'batch'
  readonly #lock: boolean
  readonly #readChunkBytes: number
  readonly #now: () => number
  readonly #files: JsonlLogFiles
  readonly #registrations = new Map<string, SessionHeader>()
  readonly #logs = new Map<string, LogState>()
  readonly #plans = new Map<string, CachedPlan>()
  readonly #failures = new Map<string, PersistenceError>()
  readonly #leases: JsonlLeases
  readonly #openLogs: JsonlOpenLogs
  readonly #queues = new Map<string, Promise<unknown>>()
  /**
   * The ids a `load` is reading now, with a generation bumped around every write of the id, so a
   * read that overlapped a write is not remembered. Only a reader needs the generation: the entry
   * is made by the first reader and goes with the last, so an id nobody reads costs nothing.
   */
  readonly #generations = new Map<string, { generation: number; readers: number }>()
  #closed = false

  static {
    idsHeldBy = (adapter) => {
      const maps = [
        adapter.#registrations,
        adapter.#logs,
        adapter.#plans,
        adapter.#failures,
        adapter.#queues,
        adapter.#generations,
      ]
      const ids = [...maps.flatMap((map) => [...map.keys()]), ...adapter.#openLogs.ids()]
      return [...new Set(ids)].sort(compareIds)
    }
  }

  constructor(options: ValidatedJsonlOptions) {
    this.dir = resolve(options.dir)
    this.#fileSystem = options.fileSystem
    this.#compression = options.compression
    this.#packChunks = options.packChunks
    this.#checksum = options.checksum
    this.#lock = options.lock
    this.#readChunkBytes = options.readChunkBytes
    this.#now = options.now
    this.#files = new JsonlLogFiles({
      dir: this.dir,
      fileSystem: this.#fileSystem,
      zstdEncoder: options.zstdEncoder,
      // 'zstd' without a usable encoder throws ZSTD_UNAVAILABLE here, at construction.
      ...(options.compression === 'zstd'
        ? { zstd: zstdCodec(options.zstdEncoder === undefined ? {} : { zstdEncoder: options.zstdEncoder }) }
        : {}),
    })
    this.#openLogs = new JsonlOpenLogs(this.#fileSystem)
    this.#leases = new JsonlLeases({
      fileSystem: this.#fileSystem,
      lock: this.#lock,
      now: this.#now,
      lockPathOf: (sessionId) => this.#files.lockPath(sessionId),
      owner: newLeaseOwner(),
      timing: options.lease,
      // What this instance remembers of a log serves only its own lease (`acquire` forgets it and
      // trusts a fresh read), so it goes with the lease: ids whose agents are gone cost nothing.
      onEnd: (sessionId) => {
        this.#registrations.delete(sessionId)
        this.#logs.delete(sessionId)
        this.#plans.delete(sessionId)
        this.#failures.delete(sessionId)
        // The log's handle is kept only under the lease; a write step still running may hold it.
        void this.#openLogs.drop(sessionId, this.#queues.get(sessionId))
      },
    })
  }

  async create(header: SessionHeader): Promise<void> {
    this.#ensureOpen()
    const checked = headerToCreate(header)
    const sessionId = checked.id
    const stored = this.#logs.has(sessionId) || (await this.#files.existing(sessionId)).length > 0
    if (stored || this.#registrations.has(sessionId)) {
      throw new PersistenceError({
        code: ErrorCode.SESSION_EXISTS,
        sessionId,
        detail: `a log is already ${stored ? 'stored' : 'registered'} (${this.#files.logPath(sessionId, this.#compression)})`,
      })
    }
    this.#registrations.set(sessionId, checked)
  }

  async append(sessionId: string, events: readonly SessionEvent[], options: AppendBatchOptions): Promise<void> {
    this.#ensureOpen()
    assertStorableId(sessionId)
    const record = this.#leases.require(sessionId, options.lease)
    const sync = options.sync !== false
    if (events.length === 0) {
      // An empty synced append makes the unsynced writes before it durable.
      if (sync && this.#logs.get(sessionId)?.unsynced === true)
        await this.#serial(sessionId, () => this.#syncLog(sessionId))
      return
    }
    const expectedSeq = options.expectedSeq
    assertSeqArgument('expectedSeq', expectedSeq)
    checkEventBatch(events, expectedSeq, 'events')
    await this.#serial(sessionId, () => this.#appendBatch(sessionId, events, expectedSeq, record, options.texts, sync))
  }

  async load(sessionId: string, options: LoadOptions = {}): Promise<StoredLog> {
    this.#ensureOpen()
    assertStorableId(sessionId)
    options.signal?.throwIfAborted()
    const watch = this.#generations.get(sessionId) ?? { generation: 0, readers: 0 }
    this.#generations.set(sessionId, watch)
    watch.readers++
    const generation = watch.generation
    let found: FoundLog
    let read: ReadLog
    try {
      found = await this.#files.find(sessionId)
      read = await this.#read(sessionId, found, {
        truncateAtCorruption: options.truncateAtCorruption === true,
        signal: options.signal,
      })
    } finally {
      if (--watch.readers === 0) this.#generations.delete(sessionId)
    }
    // Remembered only under this instance's lease: a read without one (an inspection) would be
    // forgotten by the next `acquire` anyway, and must not stay behind for an id never leased here.
    const leased = this.#leases.current(sessionId) !== undefined
    if (leased && !this.#queues.has(sessionId) && watch.generation === generation) {
      this.#failures.delete(sessionId)
      this.#remember(sessionId, found, read)
    }
    const log: { -readonly [K in keyof StoredLog]: StoredLog[K] } = {
      header: read.header,
      events: read.events,
      revision: read.revision,
      location: found.path,
      // Fresh JSON.parse results: the coordinator may adopt them rather than have each copied again.
      freshlyParsed: true,
    }
    if (read.tail !== undefined) log.torn = { ...read.tail, recovered: read.recovered, revision: read.revision }
    return log
  }

  async commitRepair(
    sessionId: string,
    torn: TornTail | undefined,
    closers: readonly SessionEvent[],
  ): Promise<RepairCommit | undefined> {
    this.#ensureOpen()
    assertStorableId(sessionId)
    const record = this.#leases.require(sessionId, undefined)
    if (torn === undefined && closers.length === 0) return undefined
    return this.#serial(sessionId, async (): Promise<RepairCommit | undefined> => {
      if (torn === undefined) {
        const first = closers[0]!
        checkEventBatch(closers, first.seq, 'closers')
        await this.#appendBatch(sessionId, closers, first.seq, record, undefined)
        return undefined
      }
      return this.#repair(sessionId, torn, closers, record)
    })
  }

  async readFrom(sessionId: string, fromSeq: number, options: ReadOptions = {}): Promise<StoredSuffix> {
    this.#ensureOpen()
    assertStorableId(sessionId)
    assertSeqArgument('fromSeq', fromSeq)
    options.signal?.throwIfAborted()
    const found = await this.#files.find(sessionId)
    const read = await this.#read(sessionId, found, { truncateAtCorruption: false, signal: options.signal, fromSeq })
    const committed = read.events.length - read.recovered.length
    const events: SessionEvent[] = []
    for (let index = 0; index < committed; index++) {
      const event = read.events[index]!
      if (event.seq >= fromSeq) events.push(event)
    }
    return { header: read.header, events }
  }

  async list(options: ReadOptions = {}): Promise<StoredListing> {
    this.#ensureOpen()
    options.signal?.throwIfAborted()
    const logs = await this.#files.list()
    const headers: SessionHeader[] = []
    const damaged: PersistenceCorruptionError[] = []
    const unreadable: SessionFormatUnsupportedError[] = []
    for (const sessionId of [...logs.keys()].sort(compareIds)) {
      options.signal?.throwIfAborted()
      const found = logs.get(sessionId)!
      if (found.length > 1) {
        damaged.push(this.#files.duplicate(sessionId, found))
        continue
      }
      const log = found[0]!
      try {
        const header = await this.#readHeader(sessionId, log)
        if (header === undefined) continue
        if (header.id !== sessionId) {
          damaged.push(
            new PersistenceCorruptionError({
              code: ErrorCode.IDENTITY_MISMATCH,
              sessionId,
              detail: `the header of ${log.path} names session "${header.id}"`,
              location: log.path,
              line: 1,
              expected: sessionId,
              actual: header.id,
            }),
          )
          continue
        }
        headers.push(header)
      } catch (error) {
        if (PersistenceCorruptionError.is(error)) damaged.push(error)
        else if (SessionFormatUnsupportedError.is(error)) unreadable.push(error)
        else throw error
      }
    }
    // Absent when there are none, as from adapters that never meet such logs.
    return unreadable.length === 0 ? { headers, damaged } : { headers, damaged, unreadable }
  }

  async delete(sessionId: string): Promise<void> {
    this.#ensureOpen()
    assertStorableId(sessionId)
    await this.#serial(sessionId, async () => {
      const record = this.#leases.current(sessionId)
      if (record !== undefined) await this.#leases.checkToken(record)
      else
        await this.#leases
          .assertUnlocked(sessionId)
          .catch((error: unknown) => Promise.reject(this.#files.dirError(error)))
      const found = await this.#files.existing(sessionId)
      const registered = this.#registrations.delete(sessionId)
      if (found.length === 0 && !registered) throw this.#files.notFound(sessionId)
      await this.#openLogs.drop(sessionId)
      for (const log of found) await this.#fileSystem.unlink(log.path)
      // The auxiliary files go with the log (readers see the whole log or nothing, so after it).
      const leftovers = found.length > 0 ? await this.#files.leftovers(sessionId) : []
      for (const path of leftovers) {
        await this.#fileSystem.unlink(path).catch((error: unknown) => {
          if (errorCodeOf(error) !== 'ENOENT') throw error
        })
      }
      if (found.length > 0) await fsyncDirectory(this.#fileSystem, this.dir)
      this.#logs.delete(sessionId)
      this.#plans.delete(sessionId)
      this.#failures.delete(sessionId)
      if (record !== undefined) await this.#leases.release(record, 'released')
    })
  }

  async acquire(sessionId: string): Promise<Lease> {
    this.#ensureOpen()
    assertStorableId(sessionId)
    await this.#files.ensure()
    // Another holder may have written since this instance last looked: trust only a fresh read.
    this.#logs.delete(sessionId)
    this.#plans.delete(sessionId)
    return this.#leases.acquire(sessionId)
  }

  async inspectLease(sessionId: string, options: ReadOptions = {}): Promise<StoredLease | undefined> {
    this.#ensureOpen()
    assertStorableId(sessionId)
    options.signal?.throwIfAborted()
    return this.#leases.inspect(sessionId).catch((error: unknown) => Promise.reject(this.#files.dirError(error)))
  }

  async breakLease(sessionId: string): Promise<StoredLease | undefined> {
    this.#ensureOpen()
    assertStorableId(sessionId)
    return this.#leases.break(sessionId).catch((error: unknown) => Promise.reject(this.#files.dirError(error)))
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await Promise.allSettled([...this.#queues.values()])
    const errors = await this.#leases.releaseAll()
    await this.#openLogs.closeAll()
    this.#registrations.clear()
    this.#logs.clear()
    this.#plans.clear()
    if (errors.length > 0) {
      throw new PersistenceError({
        code: ErrorCode.CLOSE_FAILED,
        detail: `releasing ${errors.length} lock file(s) failed`,
        errors,
        cause: errors[0],
      })
    }
  }

  // ---- writes -------------------------------------------------------------------------------

  async #appendBatch(
    sessionId: string,
    events: readonly SessionEvent[],
    expectedSeq: number,
    record: LeaseRecord,
    texts: readonly string[] | undefined,
    sync = true,
  ): Promise<void> {
    const failure = this.#failures.get(sessionId)
    if (failure !== undefined) throw failure
    let log = this.#logs.get(sessionId)
    if (log === undefined) {
      const registered = this.#registrations.get(sessionId)
      if (registered !== undefined) {
        await this.#materialize(sessionId, registered, events, expectedSeq, record, texts)
        return
      }
      log = await this.#scanForAppend(sessionId)
    }
    if (expectedSeq < log.nextSeq) {
      // A batch sent again after its reply was lost: already stored as it is, it succeeds. The
      // lease is checked first, so a writer that lost it learns that rather than a success.
      await this.#leases.checkToken(record)
      const found = await this.#files.find(sessionId)
      const read = await this.#read(sessionId, found, {
        truncateAtCorruption: false,
        signal: undefined,
        fromSeq: expectedSeq,
      })
      // Only plain logs skip the events before `fromSeq` while reading; frames yield them all.
      const committed = read.events
        .slice(0, read.events.length - read.recovered.length)
        .filter((event) => event.seq >= expectedSeq)
      if (matchesStoredBatch(committed, events, texts)) return
    }
    if (expectedSeq !== log.nextSeq) {
      throw new SeqConflictError({
        code: ErrorCode.SEQ_CONFLICT,
        sessionId,
        detail: `expected seq ${expectedSeq}, but the stored log ${log.path} continues at seq ${log.nextSeq}${expectedSeq < log.nextSeq ? ` and holds other events from seq ${expectedSeq}` : ''}; nothing was written`,
        expectedSeq,
        storedSeq: log.nextSeq,
      })
    }
    const bytes = await this.#encode(log.compression, encodeBatch(events, { packChunks: this.#packChunks, texts }))
    // The lock check (is the lease still ours?) is independent of the log's size check (is the
    // file as long as our last write left it?): it runs beside it. Its verdict comes first: a
    // writer that lost its lease learns that (not a size mismatch a successor's writes caused),
    // and it comes right before the write.
    const token = this.#leases.readToken(record)
    token.catch(() => undefined)
    try {
      const { handle, size: actual } = await this.#logHandle(sessionId, log.path)
      this.#leases.confirmToken(record, await token)
      if (actual !== log.size) {
        throw new SeqConflictError({
          code: ErrorCode.SEQ_CONFLICT,
          sessionId,
          detail: `the log ${log.path} is ${actual} bytes, not the ${log.size} this adapter last wrote or read; nothing was written`,
          expectedBytes: log.size,
          actualBytes: actual,
        })
      }
      await this.#writeDurably(sessionId, handle, log, bytes, events.length, sync)
    } catch (error) {
      // A failed step keeps no handle: the next one opens the log afresh.
      await this.#openLogs.drop(sessionId)
      throw error
    }
  }

  /**
   * The log's kept handle (opened at the lease's first write) and the size of the file it names.
   * A file no longer linked at all was removed or replaced behind this adapter's back: the handle
   * is let go and the path opened again, so the write and its checks meet the file an open by
   * path would.
   */
  async #logHandle(sessionId: string, path: string): Promise<{ handle: JsonlFileHandle; size: number }> {
    let handle = await this.#openLogs.handle(sessionId, path)
    let stats = await this.#fileSystem.fstat(handle)
    if (stats.nlink === 0n) {
      await this.#openLogs.drop(sessionId)
      handle = await this.#openLogs.handle(sessionId, path)
      stats = await this.#fileSystem.fstat(handle)
    }
    return { handle, size: Number(stats.size) }
  }

  /**
   * Syncs what appends with `sync: false` wrote to a session's log and nothing synced since: one
   * `fdatasync` of the file, which covers every earlier write to it.
   */
  async #syncLog(sessionId: string): Promise<void> {
    const log = this.#logs.get(sessionId)
    if (log?.unsynced !== true) return
    try {
      await this.#fileSystem.fdatasync(await this.#openLogs.handle(sessionId, log.path))
      log.unsynced = false
    } catch (error) {
      await this.#openLogs.drop(sessionId)
      throw error
    }
  }

  /**
   * One write and one `fdatasync` (none when `sync` is false: a later synced append covers it);
   * on failure cut back to the remembered size.
   */
  async #writeDurably(
    sessionId: string,
    handle: JsonlFileHandle,
    log: LogState,
    bytes: Uint8Array,
    count: number,
    sync = true,
  ): Promise<void> {
    try {
      await writeFully(this.#fileSystem, handle, bytes, log.size)
      if (sync) await this.#fileSystem.fdatasync(handle)
    } catch (writeError) {
      try {
        await this.#fileSystem.ftruncate(handle, log.size)
        await this.#fileSystem.fsync(handle)
      } catch (rollbackError) {
        const failure = new PersistenceError({
          code: ErrorCode.ROLLBACK_FAILED,
          sessionId,
          detail: `a write to ${log.path} failed and cutting it back to ${log.size} bytes failed too; load the session to re-scan it before appending`,
          errors: [writeError, rollbackError],
          cause: writeError,
        })
        this.#failures.set(sessionId, failure)
        this.#logs.delete(sessionId)
        throw failure
      }
      throw writeError
    }
    log.size += bytes.length
    log.nextSeq += count
    log.unsynced = !sync
  }

  /** The first append of an id this instance never read scans the file as `load` does. */
  async #scanForAppend(sessionId: string): Promise<LogState> {
    const found = await this.#files.find(sessionId)
    const read = await this.#read(sessionId, found, { truncateAtCorruption: false, signal: undefined })
    this.#remember(sessionId, found, read)
    if (read.tail !== undefined) {
      throw new PersistenceError({
        code: ErrorCode.REPAIR_REQUIRED,
        sessionId,
        detail: `the stored log ${found.path} has a torn tail at byte ${read.tail.offset}; load and repair it before appending`,
      })
    }
    return this.#logs.get(sessionId)!
  }

  /** First write of a log: header + first batch into an exclusive temp file, published with `link`. */
  async #materialize(
    sessionId: string,
    header: SessionHeader,
    events: readonly SessionEvent[],
    expectedSeq: number,
    record: LeaseRecord,
    texts: readonly string[] | undefined,
  ): Promise<void> {
    if (expectedSeq !== 0) {
      throw new SeqConflictError({
        code: ErrorCode.SEQ_CONFLICT,
        sessionId,
        detail: `expected seq ${expectedSeq}, but nothing is stored yet (next seq 0); nothing was written`,
        expectedSeq,
        storedSeq: 0,
      })
    }
    const compression = this.#compression
    const path = this.#files.logPath(sessionId, compression)
    const batch = encodeBatch(events, { packChunks: this.#packChunks, texts })
    const chunks =
      compression === 'none'
        ? [this.#plainWithHeader(encodeHeaderLine(header), batch)]
        : [await this.#encode(compression, encodeHeaderLine(header)), await this.#encode(compression, batch)]
    await this.#files.ensure()
    // As in an append, the lock is re-read beside the existence check; the lease's verdict first.
    const token = this.#leases.readToken(record)
    token.catch(() => undefined)
    const existing = await this.#files.existing(sessionId)
    this.#leases.confirmToken(record, await token)
    if (existing.length > 0) throw this.#exists(sessionId, path)
    const tempPath = await writeTempFile(this.#fileSystem, path, chunks)
    try {
      // The temp file may have taken long to write: the lease is checked again right before the
      // log appears, so a writer that lost it meanwhile publishes nothing.
      this.#leases.confirmToken(record, await this.#leases.readToken(record))
      await publishFile(this.#fileSystem, tempPath, path, () => this.#exists(sessionId, path))
      try {
        await fsyncDirectory(this.#fileSystem, this.dir)
      } catch (error) {
        await this.#fileSystem.unlink(path).catch(() => undefined)
        throw error
      }
    } finally {
      await this.#fileSystem.unlink(tempPath).catch(() => undefined)
    }
    let size = 0
    for (const chunk of chunks) size += chunk.length
    this.#registrations.delete(sessionId)
    this.#logs.set(sessionId, { path, compression, nextSeq: events.length, size })
  }

  /**
   * Commits a repair under a live lease, only if the log is still at the revision `torn` was read
   * at: cuts or rewrites the tail and stores the recovered records and the closers as one batch.
   */
  async #repair(
    sessionId: string,
    torn: TornTail,
    closers: readonly SessionEvent[],
    record: LeaseRecord,
  ): Promise<RepairCommit | undefined> {
    // A repair may rewrite the log through a temp file: the next append opens what it leaves.
    await this.#openLogs.drop(sessionId)
    const found = await this.#files.find(sessionId)
    const handle = await this.#fileSystem.open(found.path, 'r+')
    try {
      const stats = await this.#fileSystem.fstat(handle)
      const revision = revisionOf(stats)
      if (revision !== torn.revision) {
        throw new SeqConflictError({
          code: ErrorCode.SEQ_CONFLICT,
          sessionId,
          detail: `the log ${found.path} changed since it was read (revision ${revision}, expected ${torn.revision}); nothing was changed`,
          expectedRevision: torn.revision,
        })
      }
      let cached = this.#plans.get(sessionId)
      if (cached?.revision !== revision) {
        const read = await readLogFile(
          handle,
          this.#readOptions(sessionId, found, { truncateAtCorruption: torn.kind === 'corrupt', signal: undefined }),
        )
        cached = { revision, header: read.header, plan: read.plan }
      }
      checkEventBatch(closers, cached.plan.nextSeq, 'closers')
      const context = {
        fileSystem: this.#fileSystem,
        dir: this.dir,
        now: this.#now,
        packChunks: this.#packChunks,
        encode: (compression: Compression, text: string) => this.#encode(compression, text),
        checkToken: () => this.#leases.checkToken(record),
        cut: (log: LogState) => {
          this.#plans.delete(sessionId)
          this.#logs.set(sessionId, log)
        },
        writeDurably: (target: JsonlFileHandle, log: LogState, bytes: Uint8Array, count: number) =>
          this.#writeDurably(sessionId, target, log, bytes, count),
      }
      const target = {
        handle,
        path: found.path,
        compression: found.compression,
        header: cached.header,
        plan: cached.plan,
        kind: torn.kind,
        closers,
      }
      const { quarantine, ...repaired } = await rewriteTail(context, target)
      this.#plans.delete(sessionId)
      this.#failures.delete(sessionId)
      this.#logs.set(sessionId, repaired)
      return quarantine === undefined ? undefined : { quarantine }
    } finally {
      await this.#fileSystem.close(handle).catch(() => undefined)
    }
  }

  async #encode(compression: Compression, text: string): Promise<Uint8Array> {
    const bytes = encoder.encode(text)
    const codec = this.#files.codecOf(compression)
    if (codec !== undefined) return await codec.encode(bytes)
    if (this.#checksum !== 'batch' || bytes.length === 0) return bytes
    return concatBytes([encoder.encode(batchCheckLine(bytes)), bytes])
  }

  /** A new plain log's bytes: the header line, its check line when checksums are on, the batch. */
  #plainWithHeader(headerLine: string, batch: string): Uint8Array {
    if (this.#checksum !== 'batch') return encoder.encode(headerLine + batch)
    const header = encoder.encode(headerLine)
    const body = encoder.encode(batch)
    return concatBytes([header, encoder.encode(batchCheckLine(body, header)), body])
  }

  // ---- reads --------------------------------------------------------------------------------

  #readOptions(
    sessionId: string,
    found: FoundLog,
    options: { truncateAtCorruption: boolean; signal: AbortSignal | undefined; fromSeq?: number },
  ) {
    return {
      fileSystem: this.#fileSystem,
      sessionId,
      path: found.path,
      frames: this.#files.codecOf(found.compression),
      readChunkBytes: this.#readChunkBytes,
      truncateAtCorruption: options.truncateAtCorruption,
      signal: options.signal,
      ...(options.fromSeq === undefined ? {} : { fromSeq: options.fromSeq }),
    }
  }

  async #read(
    sessionId: string,
    found: FoundLog,
    options: { truncateAtCorruption: boolean; signal: AbortSignal | undefined; fromSeq?: number },
  ): Promise<ReadLog> {
    let handle: JsonlFileHandle
    try {
      handle = await this.#fileSystem.open(found.path, 'r')
    } catch (error) {
      if (errorCodeOf(error) === 'ENOENT') throw this.#files.notFound(sessionId)
      throw this.#files.dirError(error)
    }
    try {
      return await readLogFile(handle, this.#readOptions(sessionId, found, options))
    } finally {
      await this.#fileSystem.close(handle).catch(() => undefined)
    }
  }

  /** After a full read: remember the committed state, or the repair plan of a tail. */
  #remember(sessionId: string, found: FoundLog, read: ReadLog): void {
    if (read.tail === undefined) {
      this.#plans.delete(sessionId)
      this.#logs.set(sessionId, {
        path: found.path,
        compression: found.compression,
        nextSeq: read.plan.nextSeq,
        size: read.size,
      })
    } else {
      this.#logs.delete(sessionId)
      this.#plans.set(sessionId, { revision: read.revision, header: read.header, plan: read.plan })
    }
  }

  /** Only the first line (or frame) of a log; `undefined` when it vanished meanwhile. */
  async #readHeader(sessionId: string, log: FoundLog): Promise<SessionHeader | undefined> {
    let handle: JsonlFileHandle
    try {
      handle = await this.#fileSystem.open(log.path, 'r')
    } catch (error) {
      if (errorCodeOf(error) === 'ENOENT') return undefined
      throw error
    }
    try {
      return await readLogHeader(handle, {
        fileSystem: this.#fileSystem,
        sessionId,
        path: log.path,
        frames: this.#files.codecOf(log.compression),
        readChunkBytes: this.#readChunkBytes,
      })
    } finally {
      await this.#fileSystem.close(handle).catch(() => undefined)
    }
  }

  // ---- plumbing -----------------------------------------------------------------------------

  #ensureOpen(): void {
    if (this.#closed)
      throw new PersistenceError({
        code: ErrorCode.CLOSED,
        detail: `the jsonl persistence adapter over ${this.dir} is closed`,
      })
  }

  #serial<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(sessionId) ?? Promise.resolve()
    const bump = (): void => {
      const watch = this.#generations.get(sessionId)
      if (watch !== undefined) watch.generation++
    }
    const guarded = async (): Promise<T> => {
      bump()
      try {
        return await task()
      } finally {
        bump()
      }
    }
    const run = previous.then(guarded, guarded)
    const settled = run.then(
      () => undefined,
      () => undefined,
    )
    this.#queues.set(sessionId, settled)
    void settled.then(() => {
      if (this.#queues.get(sessionId) === settled) this.#queues.delete(sessionId)
    })
    return run
  }

  #exists(sessionId: string, path: string): PersistenceError {
    return new PersistenceError({
      code: ErrorCode.SESSION_EXISTS,
      sessionId,
      detail: `another writer stored ${path} first; nothing was written`,
    })
  }
}
