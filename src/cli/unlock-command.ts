/**
 * `yoke unlock <session> [--dir <path> | --sqlite <file> | --postgres <url> [--schema <name>]] [--json] [--force]`: shows who holds a session's lease
 * and how old its last heartbeat is, removes an expired one, and breaks a live one only with
 * `--force`.
 *
 * @module
 */
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionLockedError } from '../errors/session-locked-error.js'
import type { PersistenceAdapter, StoredLease } from '../persistence/persistence-adapter.js'
import type { CliCommand } from './cli-command.js'
import type { CliIo } from './cli-io.js'
import { CliUsageError } from './cli-usage-error.js'
import { ExitCode } from './exit-codes.js'
import { jsonDocument } from './format-text.js'
import { openStore, type StoreFlags } from './open-store.js'
import { booleanFlag, type ParsedCommand, stringFlag } from './parse-command.js'
import { defaultSessionDir, resolveSessionTarget } from './session-target.js'

/** The lease `yoke unlock` found, as its `--json` document shows it. */
export interface UnlockLeaseReport {
  /** The holder's owner id (random per process start), when its lock names one. */
  readonly owner: string | null
  /** The lease's fencing epoch. */
  readonly epoch: number
  /** The holder's process id (informational). */
  readonly pid: number
  /** The holder's host name (informational). */
  readonly host: string
  /** How long ago its last heartbeat was, in milliseconds. */
  readonly ageMs: number
  /** The TTL it had to renew within, in milliseconds. */
  readonly ttlMs: number
  /** Whether it was live when found. */
  readonly live: boolean
}

/** The `--json` document of `yoke unlock`. */
export interface UnlockCommandReport {
  /** The session id. */
  readonly id: string
  /**
   * `none`: no lease was held; `removed`: an expired lease (or one of a process of this host that
   * is gone) was removed; `broken`: a live lease was broken (`--force`).
   */
  readonly action: 'none' | 'removed' | 'broken'
  /** The lease found: `null` with `none`, and with `broken` for an unreadable lock (no holder to show). */
  readonly lease: UnlockLeaseReport | null
}

function leaseReport(stored: StoredLease): UnlockLeaseReport {
  const { holder } = stored
  return {
    owner: holder.owner ?? null,
    epoch: holder.epoch ?? 1,
    pid: holder.pid,
    host: holder.host,
    ageMs: stored.ageMs,
    ttlMs: holder.ttlMs ?? 0,
    live: stored.live,
  }
}

/**
 * A duration as people read it: `850 ms`, `42 s`, `5 min`, `3 h`.
 *
 * @param ms - milliseconds
 * @returns the text
 */
export function durationText(ms: number): string {
  if (ms < 1_000) return `${ms} ms`
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`
  return `${Math.round(ms / 3_600_000)} h`
}

/** The words naming a lease: owner, epoch, process, host, last heartbeat and TTL. */
function holderText(lease: UnlockLeaseReport): string {
  const owner = lease.owner === null ? '' : `owner ${lease.owner} (epoch ${lease.epoch}) · `
  return `${owner}process ${lease.pid} on ${lease.host} · last heartbeat ${durationText(lease.ageMs)} ago, TTL ${durationText(lease.ttlMs)}`
}

/**
 * The human-readable `unlock` output: one line.
 *
 * @param report - the report
 * @returns the text, ending with a newline
 */
export function unlockText(report: UnlockCommandReport): string {
  const { lease } = report
  if (lease === null) {
    return report.action === 'broken'
      ? `unlock ${report.id}: broke an unreadable lock (no holder to show)\n`
      : `unlock ${report.id}: no lease held, nothing to do\n`
  }
  if (report.action === 'broken') {
    return `unlock ${report.id}: broke a live lease · ${holderText(lease)}; its holder writes nothing more (LEASE_LOST)\n`
  }
  // Not expired by its heartbeat, yet not live: its process on this host is gone.
  const what = lease.ageMs < lease.ttlMs ? 'the lease of a process that is gone' : 'an expired lease'
  return `unlock ${report.id}: removed ${what} · ${holderText(lease)}\n`
}

/**
 * Removes a lease that is not live through the ordinary takeover (`acquire` takes only an expired
 * lease, atomically, then `release` removes it), so a holder that renewed meanwhile is refused, not
 * broken.
 */
async function removeExpired(adapter: PersistenceAdapter, id: string): Promise<void> {
  const lease = await adapter.acquire(id)
  await lease.release()
}

function refusal(id: string, stored: StoredLease): SessionLockedError {
  return new SessionLockedError({
    code: ErrorCode.SESSION_LOCKED,
    sessionId: id,
    detail: `the lease is live: ${holderText(leaseReport(stored))}; if that process no longer writes the session, "yoke unlock ${id} --force" breaks it`,
    holder: stored.holder,
  })
}

async function unlock(
  adapter: PersistenceAdapter,
  id: string,
  force: boolean,
  notFound: PersistenceError | undefined,
): Promise<UnlockCommandReport> {
  if (adapter.inspectLease === undefined || adapter.breakLease === undefined) {
    // Reachable only through a storage flag whose adapter lacks the two optional methods.
    throw new CliUsageError(`the ${adapter.name} storage cannot show or break leases`)
  }
  let stored: StoredLease | undefined
  try {
    stored = await adapter.inspectLease(id)
  } catch (error) {
    // An unreadable lock has no holder to show: only --force removes it.
    if (!(force && SessionLockedError.is(error) && error.holder === undefined)) throw error
    await adapter.breakLease(id)
    return { id, action: 'broken', lease: null }
  }
  if (stored === undefined) {
    if (notFound !== undefined) throw notFound
    return { id, action: 'none', lease: null }
  }
  if (stored.live && !force) throw refusal(id, stored)
  if (!stored.live) {
    await removeExpired(adapter, id)
    return { id, action: 'removed', lease: leaseReport(stored) }
  }
  const ended = await adapter.breakLease(id)
  return ended === undefined ? { id, action: 'none', lease: null } : { id, action: 'broken', lease: leaseReport(ended) }
}

/** The storage of a database flag, or `undefined` for the JSONL logs of `--dir`. */
function databaseStore(parsed: ParsedCommand): StoreFlags | undefined {
  const sqlite = stringFlag(parsed, 'sqlite')
  const postgres = stringFlag(parsed, 'postgres')
  const schema = stringFlag(parsed, 'schema')
  const given = [
    ['--dir', stringFlag(parsed, 'dir')],
    ['--sqlite', sqlite],
    ['--postgres', postgres],
  ].filter(([, value]) => value !== undefined)
  if (given.length > 1) {
    throw new CliUsageError(
      `"yoke unlock" takes one storage, not ${given.map(([name]) => name).join(' and ')}; run "yoke unlock --help"`,
    )
  }
  if (schema !== undefined && postgres === undefined) {
    throw new CliUsageError('--schema goes with --postgres; run "yoke unlock --help"')
  }
  if (sqlite !== undefined) return { kind: 'sqlite', path: sqlite }
  if (postgres !== undefined) return { kind: 'postgres', connectionString: postgres, schema }
  return undefined
}

/** The session of a database store: SESSION_NOT_FOUND when it has no stored log (read without its events). */
async function storedInDatabase(adapter: PersistenceAdapter, id: string): Promise<PersistenceError | undefined> {
  try {
    if (adapter.readFrom !== undefined) await adapter.readFrom(id, Number.MAX_SAFE_INTEGER)
    else await adapter.load(id)
    return undefined
  } catch (error) {
    if (PersistenceError.is(error) && error.code === ErrorCode.SESSION_NOT_FOUND) return error
    throw error
  }
}

async function run(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const argument = parsed.positionals[0] as string
  const database = databaseStore(parsed)
  let id = argument
  let store: StoreFlags | undefined = database
  let notFound: PersistenceError | undefined
  if (store === undefined) {
    const dir = stringFlag(parsed, 'dir')
    try {
      const target = await resolveSessionTarget(argument, dir, { writes: true })
      id = target.id
      store = { kind: 'jsonl', dir: target.dir }
    } catch (error) {
      // A session id without a log may still have a lock (its lease is taken before the first write).
      if (!(PersistenceError.is(error) && error.code === ErrorCode.SESSION_NOT_FOUND && error.sessionId !== undefined))
        throw error
      id = error.sessionId
      store = { kind: 'jsonl', dir: dir ?? defaultSessionDir }
      notFound = error
    }
  }
  const adapter = openStore(store)
  let report: UnlockCommandReport
  try {
    if (database !== undefined) notFound = await storedInDatabase(adapter, id)
    report = await unlock(adapter, id, booleanFlag(parsed, 'force'), notFound)
  } catch (error) {
    await adapter.close().catch(() => undefined)
    throw error
  }
  await adapter.close()
  io.stdout(booleanFlag(parsed, 'json') ? jsonDocument(report) : unlockText(report))
  return ExitCode.ok
}

/** `yoke unlock`. */
export const unlockCommand: CliCommand = {
  grammar: {
    name: 'unlock',
    flags: { dir: 'string', sqlite: 'string', postgres: 'string', schema: 'string', json: 'boolean', force: 'boolean' },
    positionals: ['session'],
  },
  synopsis:
    'yoke unlock  <session> [--dir <path> | --sqlite <file> | --postgres <url> [--schema <name>]] [--json] [--force]',
  help: [
    "Shows who holds a session's lease (owner id, epoch, process, host) and how old its last",
    'heartbeat is. An expired lease, or one of a process of this host that is gone, is removed. A',
    'live lease is left alone (exit 6) unless --force: then it is broken, and its holder writes',
    'nothing more (LEASE_LOST). No lease exits 0.',
    '',
    '  <session>          a log file, or a session id in --dir (or in the database)',
    '  --dir <path>       the log directory (default ./sessions)',
    '  --sqlite <file>    the SQLite database of yoke/sqlite (needs better-sqlite3)',
    '  --postgres <url>   the PostgreSQL database of yoke/postgres (needs pg)',
    '  --schema <name>    with --postgres: the schema of its tables (default public)',
    '  --json             print one JSON document',
    '  --force            break a live lease: only when its process no longer writes the session',
  ].join('\n'),
  run,
}
