/**
 * Lock files of the JSONL adapter: created whole through a temp file and an exclusive `link`,
 * replaced only when stale under an exclusive `.takeover` file, and removed only while they still
 * carry our token.
 *
 * @module
 */
import { hostname } from 'node:os'
import { ErrorCode } from '../../errors/codes.js'
import type { LockHolder } from '../../errors/lock-holder.js'
import { SessionLockedError } from '../../errors/session-locked-error.js'
import type { JsonlFileHandle, JsonlFileSystem } from './jsonl-file-system.js'
import { errorCodeOf, writeTempFile } from './jsonl-file-operations.js'
import { randomHex } from '../random-hex.js'

/** More than a lock file ever holds (`{"pid","host","token","acquiredAt"}` is about 150 bytes). */
const LOCK_READ_BYTES = 4_096
const decoder = new TextDecoder()

/** A lock file's content. */
interface LockRecord extends LockHolder {
  readonly token: string
}

/** What {@link takeLockFile} needs. */
export interface LockFileContext {
  /** The file system. */
  readonly fileSystem: JsonlFileSystem
  /** The clock of `acquiredAt`. */
  readonly now: () => number
}

/** A lock file this process now holds. */
export interface TakenLock {
  /** Our token, written into the lock file. */
  readonly token: string
  /** The stale holder replaced, if any. */
  readonly tookOver?: LockHolder
}

/**
 * The parsed lock at `path`: `null` when absent, `undefined` when unparsable.
 *
 * @internal
 */
export async function readLockFile(fileSystem: JsonlFileSystem, path: string): Promise<LockRecord | null | undefined> {
  // Every append re-reads the lock to check its token, so this is one open, one read and one close
  // (a `readFile` adds an fstat and a second read). A lock is published whole by `link` and never
  // rewritten, so one read of up to LOCK_READ_BYTES sees all of it; a longer file is no lock of
  // ours.
  let handle: JsonlFileHandle
  try {
    handle = await fileSystem.open(path, 'r')
  } catch (error) {
    if (errorCodeOf(error) === 'ENOENT') return null
    throw error
  }
  try {
    const buffer = new Uint8Array(LOCK_READ_BYTES)
    const { bytesRead } = await fileSystem.read(handle, buffer, 0, LOCK_READ_BYTES, 0)
    return bytesRead === LOCK_READ_BYTES ? undefined : parseLock(decoder.decode(buffer.subarray(0, bytesRead)))
  } finally {
    await fileSystem.close(handle).catch(() => undefined)
  }
}

function parseLock(text: string): LockRecord | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const { pid, host, token, acquiredAt } = value as Record<string, unknown>
  if (!(typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0)) return undefined
  if (typeof host !== 'string' || typeof token !== 'string' || typeof acquiredAt !== 'number') return undefined
  return { pid, host, token, acquiredAt }
}

function holderOf(lock: LockRecord): LockHolder {
  return { pid: lock.pid, host: lock.host, acquiredAt: lock.acquiredAt }
}

function isStale(lock: LockRecord): boolean {
  if (lock.host !== hostname() || lock.pid === process.pid) return false
  try {
    process.kill(lock.pid, 0)
    return false
  } catch (error) {
    return errorCodeOf(error) === 'ESRCH'
  }
}

function lockedError(sessionId: string, path: string, lock: LockRecord | undefined): SessionLockedError {
  return new SessionLockedError({
    code: ErrorCode.SESSION_LOCKED,
    sessionId,
    detail:
      lock === undefined
        ? `the lock ${path} is held (its content is unreadable); remove it only if no process writes the session`
        : `the lock ${path} is held by process ${lock.pid} on ${lock.host}`,
    ...(lock === undefined ? {} : { holder: holderOf(lock) }),
    location: path,
  })
}

function encodeLock(lock: LockRecord): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({ pid: lock.pid, host: lock.host, token: lock.token, acquiredAt: lock.acquiredAt }),
  )
}

/**
 * Creates the lock file at `path` for `sessionId`, replacing a stale one (our host, a pid that is
 * no longer alive).
 *
 * @internal
 * @throws {@link SessionLockedError} when another live holder has it
 */
export async function takeLockFile(context: LockFileContext, sessionId: string, path: string): Promise<TakenLock> {
  const { fileSystem } = context
  const ours: LockRecord = {
    pid: process.pid,
    host: hostname(),
    token: randomHex(16),
    acquiredAt: context.now(),
  }
  const tempPath = await writeTempFile(fileSystem, path, [encodeLock(ours)])
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await fileSystem.link(tempPath, path)
        return { token: ours.token }
      } catch (error) {
        if (errorCodeOf(error) !== 'EEXIST') throw error
      }
      const existing = await readLockFile(fileSystem, path)
      if (existing === null) continue
      if (existing === undefined || !isStale(existing)) throw lockedError(sessionId, path, existing)
      if (await takeOver(fileSystem, sessionId, path, existing, tempPath))
        return { token: ours.token, tookOver: holderOf(existing) }
    }
    throw lockedError(sessionId, path, (await readLockFile(fileSystem, path)) ?? undefined)
  } finally {
    await fileSystem.unlink(tempPath).catch(() => undefined)
  }
}

/**
 * Replaces the stale `existing` lock with the one in `tempPath` while holding `<lock>.takeover`;
 * `false` when the caller should try again (the lock vanished, or a dead taker's marker was
 * cleared). The marker is published like the lock (temp file + `link`), so a live process never
 * leaves a partial one: an unreadable or dead marker is stale and removed.
 */
async function takeOver(
  fileSystem: JsonlFileSystem,
  sessionId: string,
  path: string,
  existing: LockRecord,
  tempPath: string,
): Promise<boolean> {
  const takeoverPath = `${path}.takeover`
  const marker = encodeLock({
    pid: process.pid,
    host: hostname(),
    token: randomHex(16),
    acquiredAt: existing.acquiredAt,
  })
  const markerTemp = await writeTempFile(fileSystem, takeoverPath, [marker])
  try {
    try {
      await fileSystem.link(markerTemp, takeoverPath)
    } catch (error) {
      if (errorCodeOf(error) !== 'EEXIST') throw error
      const taker = await readLockFile(fileSystem, takeoverPath)
      if (taker === null) return false
      // A marker left by a crashed taker (or a partial one from an older version) would block the id forever.
      if (taker === undefined || isStale(taker)) {
        await fileSystem.unlink(takeoverPath).catch(() => undefined)
        return false
      }
      throw lockedError(sessionId, path, existing)
    }
    try {
      const current = await readLockFile(fileSystem, path)
      if (current === null) return false
      if (current === undefined || current.token !== existing.token) throw lockedError(sessionId, path, current)
      await fileSystem.rename(tempPath, path)
      return true
    } finally {
      await fileSystem.unlink(takeoverPath).catch(() => undefined)
    }
  } finally {
    await fileSystem.unlink(markerTemp).catch(() => undefined)
  }
}

/**
 * The token in the lock at `path`, or `undefined` when it is missing or unreadable.
 *
 * @internal
 */
export async function lockTokenAt(fileSystem: JsonlFileSystem, path: string): Promise<string | undefined> {
  return (await readLockFile(fileSystem, path))?.token
}

/**
 * Removes the lock at `path` if it still carries `token`, so a lease never removes its successor's
 * lock.
 *
 * @internal
 */
export async function removeLockFile(fileSystem: JsonlFileSystem, path: string, token: string): Promise<void> {
  if ((await lockTokenAt(fileSystem, path)) !== token) return
  try {
    await fileSystem.unlink(path)
  } catch (error) {
    if (errorCodeOf(error) !== 'ENOENT') throw error
  }
}
