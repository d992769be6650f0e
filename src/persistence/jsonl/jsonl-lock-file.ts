/**
 * Lock files of the JSONL adapter: one `<id>.lock` per leased session holding the lease's owner
 * id, fencing epoch, token and last heartbeat. A lock is created whole through a temp file and an
 * exclusive `link`; every later change (a heartbeat, a takeover) replaces it whole by `rename`
 * while holding the exclusive `<id>.lock.takeover` marker, so a heartbeat and a takeover never
 * cross. A lock is removed only while it still carries our token. Lock files are never synced
 * (see `writeLockTemp`): a lock only has to keep out live processes.
 *
 * Breaking a lease (`yoke unlock --force`) replaces its lock by a broken lock: an expired record
 * with the same epoch and a fresh token. Its holder's next check finds another token and writes
 * nothing, nobody reads it as a holder, and the next taker takes it over with the next epoch, so
 * epochs keep growing across a break.
 *
 * Whether a lock is live is decided by its heartbeat: one whose last heartbeat is a TTL old is
 * taken over whatever host or pid wrote it. A pid never keeps a lock alive (containers restart
 * with the same host name and PID 1); a pid of this host that no longer exists only lets a crashed
 * writer's lock go before its TTL.
 *
 * @module
 */
import type { BigIntStats } from 'node:fs'
import { hostname } from 'node:os'
import { ErrorCode } from '../../errors/codes.js'
import type { LockHolder } from '../../errors/lock-holder.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import { randomHex } from '../random-hex.js'
import type { JsonlFileHandle, JsonlFileSystem } from './jsonl-file-system.js'
import { errorCodeOf, tempPathOf, writeFully, writeTempFile } from './jsonl-file-operations.js'

/** More than a lock file ever holds (about 250 bytes). */
const LOCK_READ_BYTES = 4_096
/** How long a taker that finds another taker's marker waits before it looks again. */
const MARKER_WAIT_MS = 5
/** How often `takeLockFile` looks again before it gives up (about a second of live markers). */
const TAKE_ATTEMPTS = 200
const decoder = new TextDecoder()
const encoder = new TextEncoder()

/**
 * A lock file's content. Locks of older versions lack `owner`, `epoch`, `heartbeatAt` and
 * `ttlMs`: their heartbeat is their `acquiredAt`, their epoch 1.
 *
 * @internal
 */
export interface LockRecord extends LockHolder {
  readonly token: string
  /**
   * When the lease was broken (epoch ms): the lock then names who broke it and holds nothing. Its
   * heartbeat is a TTL old as well, so a Yoke that does not know this field takes it over too.
   */
  readonly brokenAt?: number
}

/** What the lock-file operations need. */
export interface LockFileContext {
  /** The file system. */
  readonly fileSystem: JsonlFileSystem
  /** The clock of heartbeats and expiry (epoch ms). */
  readonly now: () => number
  /** This adapter instance's owner id. */
  readonly owner: string
  /** Our TTL: written into our locks, and the TTL of foreign locks that carry none. */
  readonly ttlMs: number
}

/** A lock file this instance now holds. */
export interface TakenLock {
  /** What the lock file says. */
  readonly lock: LockRecord
  /** The expired holder replaced, if any. */
  readonly tookOver?: LockHolder
}

/**
 * The parsed lock at `path`: `null` when absent, `undefined` when unparsable.
 *
 * @internal
 */
export async function readLockFile(fileSystem: JsonlFileSystem, path: string): Promise<LockRecord | null | undefined> {
  // One open, one read and one close (a `readFile` adds an fstat and a second read).
  const handle = await openLockFile(fileSystem, path)
  if (handle === null) return null
  try {
    return await readOpenLock(fileSystem, handle)
  } finally {
    await fileSystem.close(handle).catch(() => undefined)
  }
}

/** The lock file at `path` opened for reading; `null` when there is none. */
async function openLockFile(fileSystem: JsonlFileSystem, path: string): Promise<JsonlFileHandle | null> {
  try {
    return await fileSystem.open(path, 'r')
  } catch (error) {
    if (errorCodeOf(error) === 'ENOENT') return null
    throw error
  }
}

/**
 * The parsed lock of an open lock file. A lock is published whole by `link` or `rename`, so one
 * read of up to LOCK_READ_BYTES sees all of it; a longer file is no lock of ours.
 */
async function readOpenLock(fileSystem: JsonlFileSystem, handle: JsonlFileHandle): Promise<LockRecord | undefined> {
  const buffer = new Uint8Array(LOCK_READ_BYTES)
  const { bytesRead } = await fileSystem.read(handle, buffer, 0, LOCK_READ_BYTES, 0)
  return bytesRead === LOCK_READ_BYTES ? undefined : parseLock(decoder.decode(buffer.subarray(0, bytesRead)))
}

/**
 * A lock file read and kept open: while its handle is open the file cannot be freed, so no other
 * file can take its device and inode numbers, and a `stat` of the lock path naming them (with the
 * same size and times) names this very file, unchanged.
 *
 * @internal
 */
export interface PinnedLock {
  /** The open lock file (close it when done). */
  readonly handle: JsonlFileHandle
  /** Its status when it was read. */
  readonly stats: BigIntStats
  /** What it said (`undefined` when unparsable). */
  readonly lock: LockRecord | undefined
}

/**
 * Opens and reads the lock at `path`, keeping it open: `null` when absent.
 *
 * @internal
 */
export async function pinLockFile(fileSystem: JsonlFileSystem, path: string): Promise<PinnedLock | null> {
  const handle = await openLockFile(fileSystem, path)
  if (handle === null) return null
  try {
    const [stats, lock] = await Promise.all([fileSystem.fstat(handle), readOpenLock(fileSystem, handle)])
    return { handle, stats, lock }
  } catch (error) {
    await fileSystem.close(handle).catch(() => undefined)
    throw error
  }
}

/**
 * Whether the lock path's status `now` names the pinned file, unchanged. Every change Yoke makes
 * to a lock puts a new file at its path (`link` or `rename`), so a new inode says it changed; the
 * size and times catch a file rewritten in place by anything else.
 *
 * @internal
 */
export function isPinnedFile(pinned: PinnedLock, now: BigIntStats): boolean {
  const { stats } = pinned
  return (
    stats.ino === now.ino &&
    stats.dev === now.dev &&
    stats.size === now.size &&
    stats.mtimeNs === now.mtimeNs &&
    stats.ctimeNs === now.ctimeNs
  )
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}

/**
 * What a lock file with no content (or only zero bytes) reads as. Yoke publishes a lock whole, so a
 * reader never sees one empty while its writer lives; only a machine crash that lost an unsynced
 * lock's content leaves it, and its writer is gone. It is a broken lock of nobody: expired, naming
 * no holder, taken over by the next `acquire` (with epoch 2).
 */
const EMPTIED_LOCK: LockRecord = Object.freeze({
  pid: 1,
  host: '',
  token: '',
  acquiredAt: 0,
  heartbeatAt: 0,
  brokenAt: 0,
})

/**
 * Whether `lock` is what an empty lock file reads as.
 *
 * @internal
 */
export function isEmptiedLock(lock: LockRecord): boolean {
  return lock === EMPTIED_LOCK
}

function parseLock(text: string): LockRecord | undefined {
  if (/^\0*$/.test(text)) return EMPTIED_LOCK
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const { pid, host, token, acquiredAt, owner, epoch, heartbeatAt, ttlMs, brokenAt } = value as Record<string, unknown>
  if (!isPositiveInteger(pid)) return undefined
  if (typeof host !== 'string' || typeof token !== 'string' || typeof acquiredAt !== 'number') return undefined
  if (owner !== undefined && typeof owner !== 'string') return undefined
  if (epoch !== undefined && !isPositiveInteger(epoch)) return undefined
  if (heartbeatAt !== undefined && typeof heartbeatAt !== 'number') return undefined
  if (ttlMs !== undefined && !isPositiveInteger(ttlMs)) return undefined
  if (brokenAt !== undefined && typeof brokenAt !== 'number') return undefined
  return {
    pid,
    host,
    token,
    acquiredAt,
    ...(owner === undefined ? {} : { owner }),
    ...(epoch === undefined ? {} : { epoch }),
    ...(heartbeatAt === undefined ? {} : { heartbeatAt }),
    ...(ttlMs === undefined ? {} : { ttlMs }),
    ...(brokenAt === undefined ? {} : { brokenAt }),
  }
}

/**
 * The holder a lock names (its token stays private).
 *
 * @internal
 */
export function holderOf(lock: LockRecord): LockHolder {
  const { token: _token, brokenAt: _brokenAt, ...holder } = lock
  return holder
}

/**
 * Whether the lease of `lock` has expired at `now`: its last heartbeat (its `acquiredAt` for a lock
 * of an older version) is at least its TTL (ours when it names none) old.
 *
 * @internal
 */
export function isExpired(lock: LockRecord, now: number, ttlMs: number): boolean {
  if (lock.brokenAt !== undefined) return true
  return (lock.heartbeatAt ?? lock.acquiredAt) + (lock.ttlMs ?? ttlMs) <= now
}

/**
 * The words naming a holder in messages: its owner id, epoch, pid and host.
 *
 * @internal
 */
export function describeHolder(lock: LockHolder): string {
  const owner = lock.owner === undefined ? '' : `owner ${lock.owner} (epoch ${lock.epoch ?? 1}), `
  return `${owner}process ${lock.pid} on ${lock.host}`
}

function lockedError(sessionId: string, path: string, lock: LockRecord | undefined, now: number): SessionLockedError {
  const age = lock === undefined ? 0 : Math.max(0, now - (lock.heartbeatAt ?? lock.acquiredAt))
  return new SessionLockedError({
    code: ErrorCode.SESSION_LOCKED,
    sessionId,
    detail:
      lock === undefined
        ? `the lock ${path} is held (its content is unreadable); remove it only if no process writes the session`
        : `the lock ${path} is held by ${describeHolder(lock)}, last heartbeat ${age} ms ago`,
    ...(lock === undefined ? {} : { holder: holderOf(lock) }),
    location: path,
  })
}

/**
 * A temp file beside `path` holding `lock`, not synced. A lock only has to exclude live
 * processes. A killed process's lock stays in the page cache and is read by every later process;
 * only a machine crash (power loss, kernel panic) can lose an unsynced lock, and no process lives
 * through that, so a lost lock excludes no one. What such a crash can leave instead is a lock
 * file with no content: that reads as a lock of nobody (see `parseLock`). Markers are written the
 * same way: an unreadable marker is stale already. So taking a lease, a heartbeat, a takeover and
 * a break make no sync.
 */
function writeLockTemp(fileSystem: JsonlFileSystem, path: string, lock: LockRecord): Promise<string> {
  return writeTempFile(fileSystem, path, [encoder.encode(JSON.stringify(lock))], { sync: false })
}

/** {@link writeLockTemp}, its handle left open (removed again on failure). */
async function openLockTemp(
  fileSystem: JsonlFileSystem,
  path: string,
  lock: LockRecord,
): Promise<{ readonly tempPath: string; readonly handle: JsonlFileHandle }> {
  const tempPath = tempPathOf(path)
  const handle = await fileSystem.open(tempPath, 'wx', 0o600)
  try {
    await writeFully(fileSystem, handle, encoder.encode(JSON.stringify(lock)), 0)
  } catch (error) {
    await fileSystem.close(handle).catch(() => undefined)
    await fileSystem.unlink(tempPath).catch(() => undefined)
    throw error
  }
  return { tempPath, handle }
}

function newLock(context: LockFileContext, epoch: number): LockRecord {
  const at = context.now()
  return {
    owner: context.owner,
    epoch,
    token: randomHex(16),
    pid: process.pid,
    host: hostname(),
    acquiredAt: at,
    heartbeatAt: at,
    ttlMs: context.ttlMs,
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Creates the lock file at `path` for `sessionId`, or takes over an expired one (whatever host or
 * pid wrote it) with the next epoch. When two instances race, exactly one wins; the other's
 * `SessionLockedError` names the winner.
 *
 * @internal
 * @throws {@link SessionLockedError} when a live holder has it (or its content is unreadable)
 */
export async function takeLockFile(context: LockFileContext, sessionId: string, path: string): Promise<TakenLock> {
  const { fileSystem } = context
  const fresh = newLock(context, 1)
  const tempPath = await writeLockTemp(fileSystem, path, fresh)
  try {
    for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt += 1) {
      try {
        await fileSystem.link(tempPath, path)
        return { lock: fresh }
      } catch (error) {
        if (errorCodeOf(error) !== 'EEXIST') throw error
      }
      const existing = await readLockFile(fileSystem, path)
      if (existing === null) continue
      if (existing === undefined || !(isExpired(existing, context.now(), context.ttlMs) || isDeadHere(existing))) {
        throw lockedError(sessionId, path, existing, context.now())
      }
      const taken = await takeOver(context, sessionId, path, existing)
      // A broken lock holds nothing: there is no holder to name as taken over.
      if (taken !== undefined)
        return existing.brokenAt === undefined ? { lock: taken, tookOver: holderOf(existing) } : { lock: taken }
    }
    const current = await readLockFile(fileSystem, path)
    throw lockedError(sessionId, path, current ?? undefined, context.now())
  } finally {
    await fileSystem.unlink(tempPath).catch(() => undefined)
  }
}

/**
 * Runs `body` while holding the exclusive marker `<path>.takeover`: `'busy'` when another live
 * instance holds it. The marker is published like the lock (temp file + `link`); one that is
 * unreadable, older than the TTL, or left by a dead process on this host is stale and removed
 * (`'busy'` too: the caller looks again).
 */
async function underMarker<T>(context: LockFileContext, path: string, body: () => Promise<T>): Promise<T | 'busy'> {
  const { fileSystem } = context
  const markerPath = `${path}.takeover`
  const markerTemp = await writeLockTemp(fileSystem, markerPath, newLock(context, 1))
  try {
    try {
      await fileSystem.link(markerTemp, markerPath)
    } catch (error) {
      if (errorCodeOf(error) !== 'EEXIST') throw error
      const marker = await readLockFile(fileSystem, markerPath)
      // A marker left by a crashed taker (or a partial one from an older version) would block the id forever.
      if (marker === undefined || (marker !== null && isStaleMarker(marker, context))) {
        await fileSystem.unlink(markerPath).catch(() => undefined)
      }
      return 'busy'
    }
    try {
      return await body()
    } finally {
      await fileSystem.unlink(markerPath).catch(() => undefined)
    }
  } finally {
    await fileSystem.unlink(markerTemp).catch(() => undefined)
  }
}

function isStaleMarker(marker: LockRecord, context: LockFileContext): boolean {
  // A marker lives for the few milliseconds of one takeover or heartbeat: one as old as a TTL is a
  // crashed (or frozen) writer's.
  return isExpired(marker, context.now(), context.ttlMs) || isDeadHere(marker)
}

/**
 * Whether `lock` was written by a process of this host that is gone: a pid other than ours that
 * no longer exists. Only a shortcut before the TTL, for a crash on this machine; it never keeps a
 * lock alive. Our own pid proves nothing (a restarted container is PID 1 again), and neither does a
 * live pid (it may be reused). A host name shared by containers on different machines could make a
 * live writer look dead; the epoch fencing then stops that writer before it writes again.
 *
 * @internal
 */
export function isDeadHere(lock: LockRecord): boolean {
  if (lock.host !== hostname() || lock.pid === process.pid) return false
  try {
    process.kill(lock.pid, 0)
    return false
  } catch (error) {
    return errorCodeOf(error) === 'ESRCH'
  }
}

/**
 * Replaces the expired `existing` lock with ours (epoch + 1) under the marker; `undefined` when
 * the caller should look again (another taker or a heartbeat is at it, the lock changed or
 * vanished).
 */
async function takeOver(
  context: LockFileContext,
  sessionId: string,
  path: string,
  existing: LockRecord,
): Promise<LockRecord | undefined> {
  const { fileSystem } = context
  const ours = newLock(context, (existing.epoch ?? 1) + 1)
  const outcome = await underMarker(context, path, async () => {
    const current = await readLockFile(fileSystem, path)
    if (current === null) return undefined
    if (current === undefined) throw lockedError(sessionId, path, current, context.now())
    // Another taker won (or the holder renewed) since we read it: the next look names that holder.
    if (current.token !== existing.token || !(isExpired(current, context.now(), context.ttlMs) || isDeadHere(current)))
      return undefined
    const tempPath = await writeLockTemp(fileSystem, path, ours)
    try {
      await fileSystem.rename(tempPath, path)
    } catch (error) {
      await fileSystem.unlink(tempPath).catch(() => undefined)
      throw error
    }
    return ours
  })
  if (outcome === 'busy') {
    await sleep(MARKER_WAIT_MS)
    return undefined
  }
  return outcome
}

/** What {@link breakLockFile} found. */
export type BreakOutcome =
  | { readonly kind: 'broken'; readonly lock: LockRecord }
  | { readonly kind: 'none' }
  | { readonly kind: 'unreadable' }

/**
 * Breaks the lease of the lock at `path`, whoever holds it, live or not: replaces the lock under
 * the marker by a broken lock naming us, with the same epoch and a fresh token, so the next taker
 * gets the next epoch. An unreadable lock is replaced too (its epoch is lost: the broken lock
 * carries epoch 1).
 *
 * @returns the lock that was broken, `none` when there was no lease (no lock, or a broken one), or
 *   `unreadable`
 * @throws {@link SessionLockedError} when other takers keep the marker for about a second
 * @internal
 */
export async function breakLockFile(context: LockFileContext, sessionId: string, path: string): Promise<BreakOutcome> {
  const { fileSystem } = context
  // No lock, no marker: breaking nothing writes nothing (not even into a missing directory).
  if ((await readLockFile(fileSystem, path)) === null) return { kind: 'none' }
  for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt += 1) {
    const outcome = await underMarker(context, path, async (): Promise<BreakOutcome> => {
      const current = await readLockFile(fileSystem, path)
      if (current === null || current?.brokenAt !== undefined) return { kind: 'none' }
      const fresh = newLock(context, current?.epoch ?? 1)
      const broken: LockRecord = { ...fresh, heartbeatAt: fresh.acquiredAt - context.ttlMs, brokenAt: fresh.acquiredAt }
      const tempPath = await writeLockTemp(fileSystem, path, broken)
      try {
        await fileSystem.rename(tempPath, path)
      } catch (error) {
        await fileSystem.unlink(tempPath).catch(() => undefined)
        throw error
      }
      return current === undefined ? { kind: 'unreadable' } : { kind: 'broken', lock: current }
    })
    if (outcome !== 'busy') return outcome
    await sleep(MARKER_WAIT_MS)
  }
  throw lockedError(sessionId, path, (await readLockFile(fileSystem, path)) ?? undefined, context.now())
}

/** What {@link renewLockFile} found. */
export type RenewOutcome =
  | { readonly kind: 'renewed'; readonly lock: LockRecord; readonly pin?: PinnedLock }
  | { readonly kind: 'busy' }
  | { readonly kind: 'lost'; readonly current: LockRecord | null | undefined }

/**
 * The heartbeat: rewrites our lock with `heartbeatAt = now` under the marker, if it still carries
 * `lock.token`. The new lock comes back pinned (held open, with its status after the rename), so
 * the next check knows it without reading it; without a pin (its `fstat` failed) the next check
 * reads it.
 *
 * @internal
 */
export async function renewLockFile(context: LockFileContext, path: string, lock: LockRecord): Promise<RenewOutcome> {
  const { fileSystem } = context
  const outcome = await underMarker(context, path, async (): Promise<RenewOutcome> => {
    const current = await readLockFile(fileSystem, path)
    if (current === null || current === undefined || current.token !== lock.token) return { kind: 'lost', current }
    const renewed: LockRecord = { ...current, heartbeatAt: context.now() }
    const { tempPath, handle } = await openLockTemp(fileSystem, path, renewed)
    try {
      await fileSystem.rename(tempPath, path)
    } catch (error) {
      await fileSystem.close(handle).catch(() => undefined)
      await fileSystem.unlink(tempPath).catch(() => undefined)
      throw error
    }
    // Its status after the rename, which changes its ctime.
    const stats = await fileSystem.fstat(handle).catch(() => undefined)
    if (stats === undefined) {
      await fileSystem.close(handle).catch(() => undefined)
      return { kind: 'renewed', lock: renewed }
    }
    return { kind: 'renewed', lock: renewed, pin: { handle, stats, lock: renewed } }
  })
  return outcome === 'busy' ? { kind: 'busy' } : outcome
}

/**
 * Removes the lock at `path` if it still carries `token`, so a lease never removes its successor's
 * lock.
 *
 * @internal
 */
export async function removeLockFile(fileSystem: JsonlFileSystem, path: string, token: string): Promise<void> {
  if ((await readLockFile(fileSystem, path))?.token !== token) return
  try {
    await fileSystem.unlink(path)
  } catch (error) {
    if (errorCodeOf(error) !== 'ENOENT') throw error
  }
}
