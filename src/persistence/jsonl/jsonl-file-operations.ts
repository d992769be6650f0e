/**
 * File operations of the JSONL adapter shared by its writers: temp file names, whole writes
 * looping over partial ones, exclusive fsynced temp files, prefix copies for the repairs that
 * rewrite a log through a temp file, and directory fsync.
 *
 * @module
 */
import type { JsonlFileHandle, JsonlFileSystem } from './jsonl-file-system.js'
import { randomHex } from '../random-hex.js'

/**
 * `<file>.<12 hex>.tmp`: the name of a temp file beside `file`.
 *
 * @internal
 */
export function tempPathOf(path: string): string {
  return `${path}.${randomHex(6)}.tmp`
}

/**
 * The error code of a Node system error, if any.
 *
 * @internal
 */
export function errorCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { readonly code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}

/**
 * Writes `bytes` to a fresh exclusive temp file beside `path` (mode 0600) and fsyncs it (unless
 * `sync` is false: for files nothing needs after a machine crash).
 *
 * @internal
 */
export async function writeTempFile(
  fileSystem: JsonlFileSystem,
  path: string,
  chunks: readonly Uint8Array[],
  options: { readonly sync?: boolean } = {},
): Promise<string> {
  return fillTempFile(fileSystem, path, (handle) => writeChunks(fileSystem, handle, chunks, 0), options.sync !== false)
}

/** Creates an exclusive temp file beside `path` (mode 0600), fills it, fsyncs it; removes it again on failure. */
async function fillTempFile(
  fileSystem: JsonlFileSystem,
  path: string,
  fill: (handle: JsonlFileHandle) => Promise<unknown>,
  sync = true,
): Promise<string> {
  const tempPath = tempPathOf(path)
  const handle = await fileSystem.open(tempPath, 'wx', 0o600)
  try {
    await fill(handle)
    if (sync) await fileSystem.fsync(handle)
  } catch (error) {
    await fileSystem.close(handle).catch(() => undefined)
    await fileSystem.unlink(tempPath).catch(() => undefined)
    throw error
  }
  await fileSystem.close(handle)
  return tempPath
}

/** Writes `chunks` one after another from `position`; returns the position after them. */
async function writeChunks(
  fileSystem: JsonlFileSystem,
  handle: JsonlFileHandle,
  chunks: readonly Uint8Array[],
  position: number,
): Promise<number> {
  let next = position
  for (const chunk of chunks) {
    await writeFully(fileSystem, handle, chunk, next)
    next += chunk.byteLength
  }
  return next
}

/**
 * One logical write of `bytes` at `position`, looping over partial writes.
 *
 * @internal
 */
export async function writeFully(
  fileSystem: JsonlFileSystem,
  handle: JsonlFileHandle,
  bytes: Uint8Array,
  position: number,
): Promise<void> {
  let written = 0
  while (written < bytes.byteLength) {
    const { bytesWritten } = await fileSystem.write(
      handle,
      bytes,
      written,
      bytes.byteLength - written,
      position + written,
    )
    if (!(bytesWritten > 0)) throw new Error(`write made no progress at byte ${position + written}`)
    written += bytesWritten
  }
}

/**
 * Fsyncs a directory, so a `link`, `rename` or `unlink` in it is durable. Windows cannot open a
 * directory for fsync; its metadata operations are durable by themselves, so errors are ignored there.
 *
 * @internal
 */
export async function fsyncDirectory(fileSystem: JsonlFileSystem, path: string): Promise<void> {
  let handle: JsonlFileHandle
  try {
    handle = await fileSystem.open(path, 'r')
  } catch (error) {
    if (process.platform === 'win32') return
    throw error
  }
  try {
    await fileSystem.fsync(handle)
  } catch (error) {
    if (process.platform !== 'win32') throw error
  } finally {
    await fileSystem.close(handle).catch(() => undefined)
  }
}

/**
 * Reads up to `length` bytes from `position` into one buffer (shorter at EOF).
 *
 * @internal
 */
export async function readRange(
  fileSystem: JsonlFileSystem,
  handle: JsonlFileHandle,
  position: number,
  length: number,
): Promise<Uint8Array> {
  const buffer = new Uint8Array(length)
  let filled = 0
  while (filled < length) {
    const { bytesRead } = await fileSystem.read(handle, buffer, filled, length - filled, position + filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return filled === length ? buffer : buffer.subarray(0, filled)
}

const COPY_BYTES = 1_048_576

/**
 * A fresh exclusive temp file beside `path` (mode 0600): the first `keepBytes` bytes of `source`,
 * then `chunks`; fsynced. Removed again on failure.
 *
 * @internal
 */
export async function writePrefixedTemp(
  fileSystem: JsonlFileSystem,
  source: JsonlFileHandle,
  path: string,
  keepBytes: number,
  chunks: readonly Uint8Array[],
): Promise<string> {
  return fillTempFile(fileSystem, path, async (handle) => {
    let position = 0
    while (position < keepBytes) {
      const piece = await readRange(fileSystem, source, position, Math.min(COPY_BYTES, keepBytes - position))
      if (piece.length === 0)
        throw new Error(`${path} ended at byte ${position} while copying its first ${keepBytes} bytes`)
      await writeFully(fileSystem, handle, piece, position)
      position += piece.length
    }
    await writeChunks(fileSystem, handle, chunks, position)
  })
}

/**
 * Publishes a complete temp file as `path` without ever overwriting: `link`, or where hard
 * links are unsupported, `rename` after checking the target is absent.
 *
 * @internal
 * @throws the error of `exists()` when `path` is already there
 */
export async function publishFile(
  fileSystem: JsonlFileSystem,
  tempPath: string,
  path: string,
  exists: () => Error,
): Promise<void> {
  try {
    await fileSystem.link(tempPath, path)
    return
  } catch (error) {
    const code = errorCodeOf(error)
    if (code === 'EEXIST') throw exists()
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error
  }
  // No hard links here: the lease already excludes other writers, so check, then rename.
  let present = true
  try {
    await fileSystem.stat(path)
  } catch (error) {
    if (errorCodeOf(error) !== 'ENOENT') throw error
    present = false
  }
  if (present) throw exists()
  await fileSystem.rename(tempPath, path)
}
