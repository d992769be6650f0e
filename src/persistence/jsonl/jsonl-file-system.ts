/**
 * The file-system seam of the JSONL adapter: the few `node:fs/promises` operations it uses, as
 * plain functions so a test can replace one of them (a failing `fdatasync`, a short `write`).
 *
 * @module
 */
import * as fs from 'node:fs/promises'
import type { BigIntStats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'

/** An open file of a {@link JsonlFileSystem}: a `node:fs/promises` `FileHandle`. */
export type JsonlFileHandle = FileHandle

/** The result of {@link JsonlFileSystem.read}. */
export interface BytesRead {
  /** How many bytes were read. */
  readonly bytesRead: number
}

/** The result of {@link JsonlFileSystem.write}. */
export interface BytesWritten {
  /** How many bytes were written. */
  readonly bytesWritten: number
}

/**
 * The subset of `node:fs/promises` the JSONL adapter calls; pass one to `jsonlPersistence({
 * fileSystem })` to inject faults. Every function may reject with a Node system error (`code`
 * set); the adapter relies on `ENOENT`, `EEXIST` and `ENOTDIR`. The default is
 * `nodeFileSystem`.
 *
 * @example
 * ```ts
 * let failNext = true
 * const fileSystem: JsonlFileSystem = {
 *   ...nodeFileSystem,
 *   fdatasync: async (handle) => {
 *     if (failNext) { failNext = false; throw new Error('disk on fire') }
 *     await nodeFileSystem.fdatasync(handle)
 *   },
 * }
 * ```
 */
export interface JsonlFileSystem {
  /** Opens `path` with `fs.open` flags (`'r'`, `'r+'`, `'wx'`) and a creation mode. */
  open(path: string, flags: string, mode?: number): Promise<JsonlFileHandle>
  /** Closes a handle. */
  close(handle: JsonlFileHandle): Promise<void>
  /** Reads up to `length` bytes at file `position` into `buffer` at `offset`. */
  read(
    handle: JsonlFileHandle,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<BytesRead>
  /** Writes `length` bytes of `buffer` from `offset` at file `position`; may write fewer. */
  write(
    handle: JsonlFileHandle,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<BytesWritten>
  /** Flushes the file's data (`fdatasync`). */
  fdatasync(handle: JsonlFileHandle): Promise<void>
  /** Flushes the file's data and metadata (`fsync`); also used on directories. */
  fsync(handle: JsonlFileHandle): Promise<void>
  /** Cuts or extends the file to `length` bytes (`ftruncate`). */
  ftruncate(handle: JsonlFileHandle, length: number): Promise<void>
  /** The open file's status with bigint fields (`fstat`). */
  fstat(handle: JsonlFileHandle): Promise<BigIntStats>
  /** Creates the hard link `newPath` to `existingPath`; fails with `EEXIST` instead of overwriting. */
  link(existingPath: string, newPath: string): Promise<void>
  /** Renames `oldPath` to `newPath`, replacing it atomically. */
  rename(oldPath: string, newPath: string): Promise<void>
  /** Removes a file. */
  unlink(path: string): Promise<void>
  /** Creates a directory (and its missing parents) with `mode`. */
  mkdir(path: string, options: { readonly recursive: true; readonly mode: number }): Promise<string | undefined>
  /** The entries of a directory. */
  readdir(path: string): Promise<string[]>
  /** A whole (small) file's bytes. */
  readFile(path: string): Promise<Uint8Array>
  /** A path's status (follows links). */
  stat(path: string): Promise<BigIntStats>
}

/** The default {@link JsonlFileSystem}: `node:fs/promises` itself. */
export const nodeFileSystem: JsonlFileSystem = Object.freeze({
  open: (path: string, flags: string, mode?: number) => fs.open(path, flags, mode),
  close: (handle: JsonlFileHandle) => handle.close(),
  read: (handle: JsonlFileHandle, buffer: Uint8Array, offset: number, length: number, position: number) =>
    handle.read(buffer, offset, length, position),
  write: (handle: JsonlFileHandle, buffer: Uint8Array, offset: number, length: number, position: number) =>
    handle.write(buffer, offset, length, position),
  fdatasync: (handle: JsonlFileHandle) => handle.datasync(),
  fsync: (handle: JsonlFileHandle) => handle.sync(),
  ftruncate: (handle: JsonlFileHandle, length: number) => handle.truncate(length),
  fstat: (handle: JsonlFileHandle) => handle.stat({ bigint: true }),
  link: (existingPath: string, newPath: string) => fs.link(existingPath, newPath),
  rename: (oldPath: string, newPath: string) => fs.rename(oldPath, newPath),
  unlink: (path: string) => fs.unlink(path),
  mkdir: (path: string, options: { readonly recursive: true; readonly mode: number }) => fs.mkdir(path, options),
  readdir: (path: string) => fs.readdir(path),
  readFile: (path: string) => fs.readFile(path),
  stat: (path: string) => fs.stat(path, { bigint: true }),
})
