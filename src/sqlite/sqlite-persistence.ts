/**
 * `sqlitePersistence`: the SQL session store on better-sqlite3, many sessions in one database
 * file, in WAL mode with `synchronous=FULL` by default.
 *
 * @module
 */
import { resolve } from 'node:path'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import { checkOptions, type OptionRule, optionRule } from '../kernel/option-issues.js'
import { type LeaseOptions, leaseOptionsIssue, leaseTiming } from '../persistence/lease-options.js'
import { loadPeer } from '../persistence/load-peer.js'
import type { PersistenceAdapter } from '../persistence/persistence-adapter.js'
import { createSqlPersistence } from '../persistence/sql/sql-persistence.js'
import type { BetterSqlite3Database } from './better-sqlite3-database.js'
import { retryBusy } from './retry-busy.js'
import { createSqliteExecutor } from './sqlite-executor.js'

/** Options of {@link sqlitePersistence}. Give exactly one of `path` and `database`. */
export interface SqlitePersistenceOptions {
  /** The database file, created when absent. */
  readonly path?: string
  /**
   * A better-sqlite3 `Database` the application opened; closing the adapter leaves it open. The
   * adapter sets its `journal_mode` (WAL) and `synchronous` as for a file it opens and keeps its
   * `busy_timeout`: a non-zero one waits inside better-sqlite3, blocking the event loop, before
   * the adapter's own `busyTimeoutMs` wait on timers begins.
   */
  readonly database?: BetterSqlite3Database
  /**
   * `'full'`: every committed append survives a power loss (an fsync per commit). `'normal'`: in
   * WAL mode, faster; a power cut (not a process crash) may lose the last commits, never corrupts.
   *
   * @defaultValue 'full'
   */
  readonly synchronous?: 'full' | 'normal'
  /**
   * How long a writer waits for another connection's write lock before failing, in milliseconds.
   * The wait is on timers (the event loop keeps running), not inside better-sqlite3.
   *
   * @defaultValue 5000
   */
  readonly busyTimeoutMs?: number
  /**
   * The lease timing, decided on the database's clock. `ttlMs` must be greater than
   * `heartbeatMs`.
   *
   * @defaultValue `{ ttlMs: 30000, heartbeatMs: 10000 }`
   */
  readonly lease?: LeaseOptions
}

/** The default busy timeout: 5 s. */
const DEFAULT_BUSY_TIMEOUT_MS = 5000

const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  path: optionRule.nonEmptyString,
  database: (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { prepare?: unknown }).prepare === 'function' &&
    typeof (value as { exec?: unknown }).exec === 'function' &&
    typeof (value as { pragma?: unknown }).pragma === 'function'
      ? undefined
      : 'must be a better-sqlite3 Database',
  synchronous: (value) => (value === 'full' || value === 'normal' ? undefined : "must be 'full' or 'normal'"),
  busyTimeoutMs: (value) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= 2_147_483_647
      ? undefined
      : 'must be a non-negative integer of milliseconds',
  lease: leaseOptionsIssue,
})

/** The better-sqlite3 constructor, as far as Yoke calls it. */
type DatabaseConstructor = new (path: string, options: { readonly timeout: number }) => BetterSqlite3Database

/**
 * Creates the SQLite adapter: sessions, events, leases and quarantined rows in tables of one
 * database file, shared by every process that opens it. Nothing is opened until the first
 * operation, which creates the file and its tables (or migrates them) and rejects, like every
 * later call, when that fails.
 *
 * @param options - `path` or `database`, durability and lease timing
 * @returns the adapter (named `'sqlite'`)
 * @throws `InvalidOptionsError` naming the option (neither or both of `path` and `database`, a bad
 *   `synchronous`, `busyTimeoutMs` or `lease`); `MissingPeerError` when better-sqlite3 is not
 *   installed (`npm install better-sqlite3@12`)
 * @example
 * ```ts
 * import { createHarness } from 'yoke'
 * import { sqlitePersistence } from 'yoke/sqlite'
 *
 * const harness = await createHarness({ persistence: sqlitePersistence({ path: './sessions.db' }) })
 * ```
 */
export function sqlitePersistence(options: SqlitePersistenceOptions): PersistenceAdapter {
  checkOptions(
    options,
    optionRules,
    '{ path | database, synchronous?, busyTimeoutMs?, lease? }',
    'sqlitePersistence options',
  )
  if ((options.path === undefined) === (options.database === undefined)) {
    throw new InvalidOptionsError({
      issues: [{ path: ['path'], message: 'give exactly one of path and database' }],
      value: options.path,
      subject: 'sqlitePersistence options',
    })
  }
  const Database = options.database === undefined ? peer() : undefined
  const path = options.path === undefined ? undefined : resolve(options.path)
  const synchronous = options.synchronous ?? 'full'
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS
  const location = `sqlite:${path ?? options.database!.name}`
  return createSqlPersistence({
    name: 'sqlite',
    location,
    lease: leaseTiming(options.lease),
    open: async () => {
      // No busy wait inside better-sqlite3's synchronous calls: the executor waits on timers. An
      // application's own connection keeps its busy timeout, which its other statements rely on.
      const database = options.database ?? new Database!(path!, { timeout: 0 })
      try {
        await retryBusy(() => database.pragma('journal_mode = WAL'), busyTimeoutMs)
        database.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
      } catch (error) {
        if (options.database === undefined) database.close()
        throw error
      }
      return createSqliteExecutor(database, options.database === undefined, busyTimeoutMs)
    },
  })
}

function peer(): DatabaseConstructor {
  return loadPeer({
    peer: 'better-sqlite3',
    subpath: 'yoke/sqlite',
    install: 'npm install better-sqlite3@12',
  }) as DatabaseConstructor
}
