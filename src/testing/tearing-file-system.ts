import { hasMethods, optionIssues, type OptionRule, throwOptionIssues } from '../kernel/option-issues.js'
import { type JsonlFileHandle, type JsonlFileSystem, nodeFileSystem } from '../persistence/jsonl/jsonl-file-system.js'

/** Options of {@link tearingFileSystem}. */
export interface TearingFileSystemOptions {
  /**
   * Which `write` call to tear, counted from 1 over every file the adapter writes (with
   * `lock: true` its lock files too).
   */
  readonly write: number
  /**
   * How many bytes of that write reach the file (0 for none); a count at or past the write's
   * length writes it whole, a crash right after the write and before its sync.
   */
  readonly atByte: number
  /**
   * The file system the writes go through.
   *
   * @default nodeFileSystem
   */
  readonly base?: JsonlFileSystem
}

/** A {@link JsonlFileSystem} that dies in the middle of one write: see {@link tearingFileSystem}. */
export interface TearingFileSystem extends JsonlFileSystem {
  /** Whether the write was torn (from then on every call fails). */
  readonly torn: boolean
  /** How many `write` calls it has seen, the torn one included. */
  readonly writes: number
}

/** The methods of a {@link JsonlFileSystem}. */
const fileSystemMethods = Object.freeze([
  'open',
  'close',
  'read',
  'write',
  'fdatasync',
  'fsync',
  'ftruncate',
  'fstat',
  'link',
  'rename',
  'unlink',
  'mkdir',
  'readdir',
  'readFile',
  'stat',
])

const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  write: (value) =>
    Number.isSafeInteger(value) && (value as number) >= 1 ? undefined : 'must be a positive safe integer',
  atByte: (value) =>
    Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : 'must be a non-negative safe integer',
  base: (value) => (hasMethods(value, fileSystemMethods) ? undefined : 'must be a JsonlFileSystem'),
})

/**
 * A file system for `jsonlPersistence({ fileSystem })` that simulates a process killed in the
 * middle of a write (issue: "tear the Nth write at byte K"). Its `write`-th
 * `write` call puts only the first `atByte` bytes of that write in the file, and from then on
 * every call rejects, as if the process had died at that instant: the adapter can neither roll the
 * write back nor sync nor release its lock, so the torn bytes stay on disk (as after `kill -9`,
 * the page cache keeps what was written). Handles are still closed, so nothing leaks. Reopen the
 * directory with a fresh adapter (with `lock: false`, since this process still looks alive to the
 * lock file it left) to see what a restart sees: the torn tail, and the events acknowledged before.
 *
 * @param options - which write to tear, at which byte, and the file system underneath
 * @returns the file system, with `torn` and `writes`
 * @throws `InvalidOptionsError` for bad options (not an object, an unknown key, a `write` that is
 *   not a positive safe integer, an `atByte` that is not a non-negative safe integer, a `base` that
 *   is not a file system)
 * @example
 * ```ts
 * const fileSystem = tearingFileSystem({ write: 3, atByte: 10 })
 * const adapter = jsonlPersistence({ dir, fileSystem, lock: false })
 * // … the third write fails with a simulated crash after 10 bytes; then:
 * const restarted = await createHarness({ persistence: jsonlPersistence({ dir, lock: false }) })
 * await restarted.persistence.load('s1') // cuts the torn tail, closes the interrupted turn
 * ```
 */
export function tearingFileSystem(options: TearingFileSystemOptions): TearingFileSystem {
  throwOptionIssues(
    optionIssues(options, optionRules, '{ write, atByte, base? }', ['write', 'atByte']),
    options,
    'tearingFileSystem options',
  )
  const base = options.base ?? nodeFileSystem
  const crash = new Error(`simulated crash: write ${options.write} was torn after ${options.atByte} bytes`)
  let writes = 0
  let torn = false
  /** Runs `operation` unless the simulated process is dead. */
  const alive = async <T>(operation: () => Promise<T>): Promise<T> => {
    if (torn) throw crash
    return operation()
  }

  return {
    get torn() {
      return torn
    },
    get writes() {
      return writes
    },
    open: (path, flags, mode) => alive(() => base.open(path, flags, mode)),
    close: async (handle: JsonlFileHandle) => {
      await base.close(handle)
      if (torn) throw crash
    },
    read: (handle, buffer, offset, length, position) =>
      alive(() => base.read(handle, buffer, offset, length, position)),
    write: async (handle, buffer, offset, length, position) => {
      if (torn) throw crash
      writes++
      if (writes !== options.write) return base.write(handle, buffer, offset, length, position)
      torn = true
      const kept = Math.min(options.atByte, length)
      let written = 0
      while (written < kept) {
        const { bytesWritten } = await base.write(handle, buffer, offset + written, kept - written, position + written)
        if (bytesWritten === 0) break
        written += bytesWritten
      }
      throw crash
    },
    fdatasync: (handle) => alive(() => base.fdatasync(handle)),
    fsync: (handle) => alive(() => base.fsync(handle)),
    ftruncate: (handle, length) => alive(() => base.ftruncate(handle, length)),
    fstat: (handle) => alive(() => base.fstat(handle)),
    link: (existingPath, newPath) => alive(() => base.link(existingPath, newPath)),
    rename: (oldPath, newPath) => alive(() => base.rename(oldPath, newPath)),
    unlink: (path) => alive(() => base.unlink(path)),
    mkdir: (path, mkdirOptions) => alive(() => base.mkdir(path, mkdirOptions)),
    readdir: (path) => alive(() => base.readdir(path)),
    readFile: (path) => alive(() => base.readFile(path)),
    stat: (path) => alive(() => base.stat(path)),
  }
}
