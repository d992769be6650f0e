/**
 * The SQL session store: one implementation of the adapter contract for every SQL database, over
 * an {@link SqlExecutor}. Many sessions share four tables; every write is one transaction that
 * checks the lease (token, epoch, expiry on the database's clock) together with the write.
 *
 * @module
 */
import { ErrorCode } from '../../errors/codes.js'
import { PersistenceCorruptionError } from '../../errors/persistence-corruption-error.js'
import { PersistenceError } from '../../errors/persistence-error.js'
import { performance } from 'node:perf_hooks'
import { SessionFormatUnsupportedError } from '../../errors/session-format-unsupported-error.js'
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import { assertSeqArgument, compareIds, headerToCreate } from '../adapter-arguments.js'
import { checkEventBatch } from '../jsonl/check-event-batch.js'
import { type LeaseTiming, newLeaseOwner } from '../lease-options.js'
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
  StoredSuffix,
  TornTail,
} from '../persistence-adapter.js'
import { assertStorableId } from '../session-file-name.js'
import type { SqlExecutor, SqlQuery } from './sql-executor.js'
import type { SqlExtension } from './sql-extension.js'
import { sqlFailure } from './sql-failure.js'
import { noLiveLease, type SqlLeaseRecord, SqlLeases } from './sql-leases.js'
import { SqlLogReader } from './sql-log-reader.js'
import { migrateSqlSchema } from './sql-schema.js'
import { SqlStatements } from './sql-statements.js'
import { SqlWrites } from './sql-writes.js'

/** What {@link createSqlPersistence} needs from a driver's factory. */
export interface SqlPersistenceOptions {
  /** The adapter's name (`'sqlite'`, `'postgres'`). */
  readonly name: string
  /** Where the database is, for messages (a file path, a schema). */
  readonly location: string
  /**
   * Opens the database; called by the first operation, and again by the next one after a failed
   * start (an `open` that fails must leave nothing open).
   */
  readonly open: () => SqlExecutor | Promise<SqlExecutor>
  /** The checked lease timing. */
  readonly lease: LeaseTiming
  /** A driver's own tables and append step (PostgreSQL: the worker's inbox). */
  readonly extension?: SqlExtension
}

/** What a driver's own code (a worker on the same database) reaches of a started store. */
export interface SqlStoreInternals {
  /** The started executor (migrated). */
  readonly executor: SqlExecutor
  /** The statements of its dialect. */
  readonly statements: SqlStatements
  /**
   * How long ago this instance's lease of `sessionId` was last renewed, by this machine's
   * monotonic clock; `undefined` when it holds no live lease of it.
   */
  leaseAgeMs(sessionId: string): number | undefined
  /** Ends this instance's lease of `sessionId` here at once, then gives it back in the database (best effort). */
  dropLease(sessionId: string): void
}

/** An SQL adapter: the whole contract, lease inspection included. */
export interface SqlPersistence extends PersistenceAdapter {
  readFrom(sessionId: string, fromSeq: number, options?: ReadOptions): Promise<StoredSuffix>
  delete(sessionId: string): Promise<void>
  inspectLease(sessionId: string, options?: ReadOptions): Promise<StoredLease | undefined>
  breakLease(sessionId: string): Promise<StoredLease | undefined>
  /** Starts the store (connects and migrates) and hands the driver's own code its internals. */
  internals(): Promise<SqlStoreInternals>
}

interface Started {
  readonly executor: SqlExecutor
  readonly statements: SqlStatements
  readonly reader: SqlLogReader
  readonly writes: SqlWrites
  readonly leases: SqlLeases
}

/**
 * Creates the SQL store over a driver's executor. Opening and migrating happen on the first
 * operation.
 *
 * @param options - the name, the database and the lease timing
 * @returns the adapter
 * @internal
 */
export function createSqlPersistence(options: SqlPersistenceOptions): SqlPersistence {
  return new SqlStore(options)
}

class SqlStore implements SqlPersistence {
  readonly name: string
  readonly #options: SqlPersistenceOptions
  readonly #owner = newLeaseOwner()
  /** Headers registered by `create` and not yet materialized. */
  readonly #registrations = new Map<string, SessionHeader>()
  #start: Promise<Started> | undefined
  #started: Started | undefined
  #closed = false

  constructor(options: SqlPersistenceOptions) {
    this.name = options.name
    this.#options = options
  }

  async create(header: SessionHeader): Promise<void> {
    const id = (header as { readonly id?: unknown } | null)?.id
    return this.#run('create', typeof id === 'string' ? id : undefined, async () => {
      const checked = headerToCreate(header)
      const { reader, executor } = await this.#ready()
      const stored = await reader.exists(executor, checked.id)
      if (stored || this.#registrations.has(checked.id)) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_EXISTS,
          sessionId: checked.id,
          detail: `a log is already ${stored ? 'stored' : 'registered'} (${reader.locationOf(checked.id)})`,
        })
      }
      this.#registrations.set(checked.id, checked)
    })
  }

  async append(sessionId: string, events: readonly SessionEvent[], options: AppendBatchOptions): Promise<void> {
    return this.#run('append', sessionId, async () => {
      assertStorableId(sessionId)
      const record = await this.#requireLease(sessionId, options.lease)
      if (events.length === 0) return
      const expectedSeq = options.expectedSeq
      assertSeqArgument('expectedSeq', expectedSeq)
      checkEventBatch(events, expectedSeq, 'events')
      const { writes } = await this.#ready()
      const registered = this.#registrations.get(sessionId)
      await writes.append({ sessionId, events, expectedSeq, record, registered, texts: options.texts })
      if (registered !== undefined) this.#registrations.delete(sessionId)
    })
  }

  async load(sessionId: string, options: LoadOptions = {}): Promise<StoredLog> {
    return this.#run(
      'load',
      sessionId,
      async () => {
        assertStorableId(sessionId)
        options.signal?.throwIfAborted()
        const { executor, reader } = await this.#ready()
        const rows = await this.#read(executor, (tx, lock) => reader.rows(tx, sessionId, 0, lock))
        options.signal?.throwIfAborted()
        if (rows === undefined) throw this.#notFound(reader, sessionId)
        const header = reader.header(sessionId, rows.session.header)
        const checked = reader.events(rows)
        const log: { -readonly [K in keyof StoredLog]: StoredLog[K] } = {
          header,
          events: checked.events,
          revision: rows.session.revision,
          location: reader.locationOf(sessionId),
          // Fresh JSON.parse results: the coordinator may adopt them rather than copy each again.
          freshlyParsed: true,
        }
        if (checked.damagedSeq !== undefined) {
          if (options.truncateAtCorruption !== true) throw reader.corruption(sessionId, checked.damagedSeq)
          log.torn = { kind: 'corrupt', defect: 'unparsable', recovered: [], revision: rows.session.revision }
        }
        return log
      },
      options.signal,
    )
  }

  async commitRepair(
    sessionId: string,
    torn: TornTail | undefined,
    closers: readonly SessionEvent[],
  ): Promise<RepairCommit | undefined> {
    return this.#run('commitRepair', sessionId, async () => {
      assertStorableId(sessionId)
      const record = await this.#requireLease(sessionId, undefined)
      if (torn === undefined && closers.length === 0) return undefined
      const { writes } = await this.#ready()
      return writes.repair({ sessionId, torn, closers, record })
    })
  }

  async readFrom(sessionId: string, fromSeq: number, options: ReadOptions = {}): Promise<StoredSuffix> {
    return this.#run(
      'readFrom',
      sessionId,
      async () => {
        assertStorableId(sessionId)
        assertSeqArgument('fromSeq', fromSeq)
        options.signal?.throwIfAborted()
        const { executor, reader } = await this.#ready()
        const rows = await this.#read(executor, (tx, lock) => reader.rows(tx, sessionId, fromSeq, lock))
        options.signal?.throwIfAborted()
        if (rows === undefined) throw this.#notFound(reader, sessionId)
        const header = reader.header(sessionId, rows.session.header)
        const checked = reader.events(rows, fromSeq)
        if (checked.damagedSeq !== undefined) throw reader.corruption(sessionId, checked.damagedSeq)
        return { header, events: checked.events }
      },
      options.signal,
    )
  }

  async list(options: ReadOptions = {}): Promise<StoredListing> {
    return this.#run(
      'list',
      undefined,
      async () => {
        options.signal?.throwIfAborted()
        const { executor, statements, reader } = await this.#ready()
        const rows = await executor.query(`SELECT id, header FROM ${statements.tables.sessions}`)
        options.signal?.throwIfAborted()
        const headers: SessionHeader[] = []
        const damaged: PersistenceCorruptionError[] = []
        const unreadable: SessionFormatUnsupportedError[] = []
        // Sorted here, in UTF-16 order, whatever the database's collation.
        const sorted = rows.map((row) => [String(row['id']), String(row['header'])] as const)
        sorted.sort((left, right) => compareIds(left[0], right[0]))
        for (const [sessionId, text] of sorted) {
          try {
            headers.push(reader.header(sessionId, text))
          } catch (error) {
            if (PersistenceCorruptionError.is(error)) damaged.push(error)
            else if (SessionFormatUnsupportedError.is(error)) unreadable.push(error)
            else throw error
          }
        }
        return unreadable.length === 0 ? { headers, damaged } : { headers, damaged, unreadable }
      },
      options.signal,
    )
  }

  async delete(sessionId: string): Promise<void> {
    return this.#run('delete', sessionId, async () => {
      assertStorableId(sessionId)
      const { writes, leases } = await this.#ready()
      const registered = this.#registrations.has(sessionId)
      await writes.remove(sessionId, registered)
      this.#registrations.delete(sessionId)
      const record = leases.current(sessionId)
      if (record !== undefined) await leases.release(record)
    })
  }

  async acquire(sessionId: string): Promise<Lease> {
    return this.#run('acquire', sessionId, async () => {
      assertStorableId(sessionId)
      const { leases } = await this.#ready()
      return leases.acquire(sessionId)
    })
  }

  async inspectLease(sessionId: string, options: ReadOptions = {}): Promise<StoredLease | undefined> {
    return this.#run(
      'inspectLease',
      sessionId,
      async () => {
        assertStorableId(sessionId)
        options.signal?.throwIfAborted()
        const { leases } = await this.#ready()
        return leases.inspect(sessionId)
      },
      options.signal,
    )
  }

  async breakLease(sessionId: string): Promise<StoredLease | undefined> {
    return this.#run('breakLease', sessionId, async () => {
      assertStorableId(sessionId)
      const { leases } = await this.#ready()
      return leases.break(sessionId)
    })
  }

  async internals(): Promise<SqlStoreInternals> {
    if (this.#closed) {
      throw new PersistenceError({ code: ErrorCode.CLOSED, detail: `the ${this.name} persistence adapter is closed` })
    }
    const { executor, statements, leases } = await this.#ready()
    return {
      executor,
      statements,
      leaseAgeMs: (sessionId) => {
        const record = leases.current(sessionId)
        return record === undefined || !record.live ? undefined : performance.now() - record.lastBeat
      },
      dropLease: (sessionId) => {
        const record = leases.current(sessionId)
        if (record !== undefined) void leases.release(record).catch(() => undefined)
      },
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    const start = this.#start
    if (start === undefined) return
    const started = await start.catch(() => undefined)
    if (started === undefined) return
    const errors = await started.leases.releaseAll()
    this.#registrations.clear()
    await started.executor.close().catch((error: unknown) => {
      errors.push(error)
    })
    if (errors.length > 0) {
      throw new PersistenceError({
        code: ErrorCode.CLOSE_FAILED,
        detail: `closing the ${this.name} adapter (${this.#options.location}) failed for ${errors.length} step(s)`,
        errors,
        cause: errors[0],
      })
    }
  }

  /** Runs an operation of an open adapter, driver errors mapped to typed ones. */
  async #run<T>(
    operation: string,
    sessionId: string | undefined,
    body: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (this.#closed) {
      throw new PersistenceError({ code: ErrorCode.CLOSED, detail: `the ${this.name} persistence adapter is closed` })
    }
    try {
      return await body()
    } catch (error) {
      // An abort rejects with the caller's reason itself, never wrapped.
      if (signal?.aborted === true && error === signal.reason) throw error
      throw sqlFailure(error, operation, sessionId, this.#options.location)
    }
  }

  /** This instance's live lease record for `sessionId` (checking `lease` when given). */
  async #requireLease(sessionId: string, lease: Lease | undefined): Promise<SqlLeaseRecord> {
    const started = this.#started
    if (started !== undefined) return await started.leases.require(sessionId, lease)
    // Never started: this instance cannot hold any lease yet.
    throw noLiveLease(sessionId, lease)
  }

  /**
   * Runs reads in one snapshot: the executor's read transaction (no row locks needed), else a
   * write transaction, where `body` locks the session row (`lock`) so it reads one commit.
   */
  #read<T>(executor: SqlExecutor, body: (tx: SqlQuery, lock: boolean) => Promise<T>): Promise<T> {
    return executor.readTransaction === undefined
      ? executor.transaction((tx) => body(tx, true))
      : executor.readTransaction((tx) => body(tx, false))
  }

  /**
   * Opens and migrates the database once; every operation waits for it. A start that failed is
   * forgotten once its waiters have its error, so the next operation tries again: a service that
   * starts before its database is up recovers when the database comes, without a restart.
   */
  #ready(): Promise<Started> {
    const start = (this.#start ??= this.#open().then(
      (started) => {
        this.#started = started
        return started
      },
      (error: unknown) => {
        if (this.#start === start) this.#start = undefined
        return Promise.reject(sqlFailure(error, 'start', undefined, this.#options.location))
      },
    ))
    return start
  }

  async #open(): Promise<Started> {
    const executor = await this.#options.open()
    const statements = new SqlStatements(executor.dialect)
    try {
      await migrateSqlSchema(executor, statements, this.#options.location, this.#options.extension)
    } catch (error) {
      await executor.close().catch(() => undefined)
      throw error
    }
    const reader = new SqlLogReader(statements)
    const leases = new SqlLeases({
      executor,
      statements,
      timing: this.#options.lease,
      owner: this.#owner,
      locationOf: (sessionId) => reader.locationOf(sessionId),
      // Its registration serves only its lease: ids whose agents are gone cost nothing.
      onEnd: (sessionId) => this.#registrations.delete(sessionId),
    })
    return {
      executor,
      statements,
      reader,
      leases,
      writes: new SqlWrites({ executor, statements, reader, leases, extension: this.#options.extension }),
    }
  }

  #notFound(reader: SqlLogReader, sessionId: string): PersistenceError {
    return new PersistenceError({
      code: ErrorCode.SESSION_NOT_FOUND,
      sessionId,
      detail: `no stored log (${reader.locationOf(sessionId)})`,
    })
  }
}
