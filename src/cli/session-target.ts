/**
 * Where a `<session>` argument points (09-api.md L1): a path to an existing log file, or a
 * session id looked up in `--dir` (default `./sessions`) with the layout of 03-persistence.md §8.2.
 *
 * @module
 */
import { stat } from 'node:fs/promises'
import { basename, dirname, join, sep } from 'node:path'
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { logExtensions } from '../persistence/jsonl/jsonl-log-files.js'
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

function targetOfFile(path: string): SessionTarget {
  const name = basename(path)
  const suffix = suffixes.find((candidate) => name.endsWith(candidate) && name.length > candidate.length)
  if (suffix === undefined) {
    throw new CliUsageError(`${JSON.stringify(path)} is not a session log: its name must end with .jsonl, .jsonl.gz or .jsonl.zst`)
  }
  const id = sessionIdOfFileName(name.slice(0, -suffix.length))
  if (id === undefined) {
    throw new CliUsageError(`${JSON.stringify(path)} is not a session log: no session id is stored under the name ${JSON.stringify(name)}`)
  }
  return { id, dir: dirname(path), file: path }
}

/**
 * Resolves a `<session>` argument. An existing file is a log: its directory is used (`--dir` is
 * ignored) and the id is the one its name stores (J1), which the read then checks against the
 * header (`IDENTITY_MISMATCH` when they differ). Anything else is a session id in `dir`.
 *
 * @param argument - the `<session>` argument
 * @param dir - the `--dir` flag, if given
 * @returns the id, the directory and the log file
 * @throws `PersistenceError` `SESSION_NOT_FOUND` when no log exists (a path that does not exist,
 *   or an id with no log in `dir`), `INVALID_SESSION_ID` for an id that cannot be stored;
 *   {@link CliUsageError} for a file that is not named like a log
 */
export async function resolveSessionTarget(argument: string, dir: string | undefined): Promise<SessionTarget> {
  if (await isFile(argument)) return targetOfFile(argument)
  if (looksLikePath(argument)) {
    throw new PersistenceError({ code: ErrorCode.SESSION_NOT_FOUND, detail: `no session log at ${JSON.stringify(argument)}` })
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
