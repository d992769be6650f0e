/**
 * Where a `<session>` argument points: a path to an existing log file, or a
 * session id looked up in `--dir` (default `./sessions`) with the JSONL adapter's file layout.
 *
 * @module
 */
import { mkdtemp, open, realpath, rm, stat, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join, sep } from 'node:path'
import { ErrorCode } from '../errors/codes.js'
import { HarnessError } from '../errors/harness-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionFormatUnsupportedError } from '../errors/session-format-unsupported-error.js'
import { gzipCodec, zstdCodec } from '../persistence/jsonl/frame-codec.js'
import { nodeFileSystem } from '../persistence/jsonl/jsonl-file-system.js'
import { logExtensions } from '../persistence/jsonl/jsonl-log-files.js'
import { readLogHeader } from '../persistence/jsonl/jsonl-log-reader.js'
import { assertStorableId, fileNameOf, sessionIdOfFileName } from '../persistence/session-file-name.js'
import { CliUsageError } from './cli-usage-error.js'

/** The default log directory of every command. */
export const defaultSessionDir = 'sessions'

/** Longest first, so `x.jsonl.gz` is not read as the id `x.jsonl` plus `.gz`. */
const suffixes: readonly string[] = [logExtensions.zstd, logExtensions.gzip, logExtensions.none]

/** A resolved `<session>` argument. */
export interface SessionTarget {
  /** The session id. */
  readonly id: string
  /** The log directory, as given (the adapter makes it absolute). */
  readonly dir: string
  /** The log file, as shown to the user: the path given, or `<dir>/<name><suffix>`. */
  readonly file: string
  /**
   * A temporary directory holding a link to a log whose file name does not store its header's id
   * (`dir` is that directory); removed by {@link releaseSessionTarget}.
   */
  readonly staged?: string
}

/** What a command does with the log: `repair` writes it and needs it under its own name. */
export interface SessionTargetOptions {
  /** The command writes the log. @defaultValue false */
  readonly writes?: boolean
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile()
  } catch (error) {
    if ((error as { readonly code?: unknown }).code === 'ENOENT') return false
    throw error
  }
}

function looksLikePath(argument: string): boolean {
  return argument.includes('/') || argument.includes(sep) || suffixes.some((suffix) => argument.endsWith(suffix))
}

/** The codec a log's first bytes announce: a gzip or zstd frame, else plain JSONL. */
function codecOf(first: Uint8Array): 'none' | 'gzip' | 'zstd' {
  if (first[0] === 0x1f && first[1] === 0x8b) return 'gzip'
  if (first[0] === 0x28 && first[1] === 0xb5 && first[2] === 0x2f && first[3] === 0xfd) return 'zstd'
  return 'none'
}

/**
 * The id in the header of the log at `path`, or `undefined` when the file has no readable header;
 * a header of an unsupported format version throws its `SessionFormatUnsupportedError`.
 */
async function headerIdOf(
  path: string,
): Promise<{ readonly id: string; readonly compression: 'none' | 'gzip' | 'zstd' } | undefined> {
  const handle = await open(path, 'r')
  try {
    const first = new Uint8Array(4)
    await handle.read(first, 0, 4, 0)
    const compression = codecOf(first)
    const frames =
      compression === 'gzip'
        ? gzipCodec()
        : compression === 'zstd'
          ? zstdCodec({ onUnavailable: 'reject-writes' })
          : undefined
    const header = await readLogHeader(handle, {
      fileSystem: nodeFileSystem,
      sessionId: basename(path),
      path,
      frames,
      readChunkBytes: 64 * 1024,
    })
    return { id: header.id, compression }
  } catch (error) {
    // A header of a format this Yoke does not read: a log all the same, unreadable (exit code 4).
    if (SessionFormatUnsupportedError.is(error)) throw error
    // Not a header (CORRUPT_HEADER), no zstd decoder: not a readable log.
    if (HarnessError.is(error)) return undefined
    throw error
  } finally {
    await handle.close()
  }
}

/** The id a log's file name stores, if its name is a log name. */
function idOfFileName(path: string): { readonly id: string; readonly suffix: string } | undefined {
  const name = basename(path)
  const suffix = suffixes.find((candidate) => name.endsWith(candidate) && name.length > candidate.length)
  if (suffix === undefined) return undefined
  const id = sessionIdOfFileName(name.slice(0, -suffix.length))
  return id === undefined ? undefined : { id, suffix }
}

/**
 * A log file given by path: the id comes from its header. A file named for that id is read
 * in its own directory; one named otherwise is linked under its id's name into a temporary
 * directory (read-only commands only: `repair` rewrites the log in place and needs its own name).
 */
async function targetOfFile(path: string, options: SessionTargetOptions): Promise<SessionTarget | undefined> {
  const named = idOfFileName(path)
  let header: Awaited<ReturnType<typeof headerIdOf>>
  try {
    header = await headerIdOf(path)
  } catch (error) {
    // A log named for an id is read as usual (that read reports the version under the id).
    if (named === undefined || !SessionFormatUnsupportedError.is(error)) throw error
    header = undefined
  }
  if (header === undefined) {
    // No readable header: a log name lets the read report what is wrong; anything else is not a log.
    return named === undefined ? undefined : { id: named.id, dir: dirname(path), file: path }
  }
  if (named !== undefined && named.id === header.id) return { id: header.id, dir: dirname(path), file: path }
  const suffix = logExtensions[header.compression]
  const ownName = `${fileNameOf(header.id)}${suffix}`
  if (options.writes === true) {
    throw new CliUsageError(
      `${JSON.stringify(path)} holds session "${header.id}" under another name; rename it to ${ownName} to repair it`,
    )
  }
  const staged = await mkdtemp(join(tmpdir(), 'yoke-cli-'))
  try {
    await symlink(await realpath(path), join(staged, ownName))
  } catch (error) {
    await rm(staged, { recursive: true, force: true })
    throw error
  }
  return { id: header.id, dir: staged, file: path, staged }
}

/**
 * Resolves a `<session>` argument. An existing log file is read by path, `--dir` ignored, and
 * the id is the one its header names. Anything else is a session id in `dir`: an existing file
 * that is not a log (no readable header, no log name) does not shadow an id of the same name.
 *
 * @param argument - the `<session>` argument
 * @param dir - the `--dir` flag, if given
 * @param options - whether the command writes the log
 * @returns the id, the directory and the log file; release it with {@link releaseSessionTarget}
 * @throws `PersistenceError` `SESSION_NOT_FOUND` when no log exists (a path that does not exist,
 *   or an id with no log in `dir`), `INVALID_SESSION_ID` for an id that cannot be stored;
 *   {@link CliUsageError} for a file that is not a log, or a log to repair under another name;
 *   `SessionFormatUnsupportedError` for a log under another name whose format version this Yoke
 *   does not read
 */
export async function resolveSessionTarget(
  argument: string,
  dir: string | undefined,
  options: SessionTargetOptions = {},
): Promise<SessionTarget> {
  const path = looksLikePath(argument)
  if (await isFile(argument)) {
    const target = await targetOfFile(argument, options)
    if (target !== undefined) return target
    if (path)
      throw new CliUsageError(`${JSON.stringify(argument)} is not a session log: it has no readable session header`)
  } else if (path) {
    throw new PersistenceError({
      code: ErrorCode.SESSION_NOT_FOUND,
      detail: `no session log at ${JSON.stringify(argument)}`,
    })
  }
  assertStorableId(argument)
  const directory = dir ?? defaultSessionDir
  const name = fileNameOf(argument)
  for (const suffix of [logExtensions.none, logExtensions.gzip, logExtensions.zstd]) {
    const file = join(directory, `${name}${suffix}`)
    if (await isFile(file)) return { id: argument, dir: directory, file }
  }
  throw new PersistenceError({
    code: ErrorCode.SESSION_NOT_FOUND,
    sessionId: argument,
    detail: `no log in ${directory} (looked for ${name}.jsonl, .jsonl.gz and .jsonl.zst); pass --dir <path> or a log file`,
  })
}

/**
 * Removes the temporary directory of a target {@link resolveSessionTarget} staged, if any.
 *
 * @param target - the target
 */
export async function releaseSessionTarget(target: SessionTarget): Promise<void> {
  if (target.staged !== undefined) await rm(target.staged, { recursive: true, force: true })
}
