/**
 * The exit codes and error lines of the `yoke` CLI.
 *
 * @module
 */
import { ErrorCode } from '../errors/codes.js'
import { HarnessError } from '../errors/harness-error.js'
import { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionFormatUnsupportedError } from '../errors/session-format-unsupported-error.js'
import { SessionLockedError } from '../errors/session-locked-error.js'
import { CliUsageError } from './cli-usage-error.js'

/** The exit codes of the `yoke` CLI. */
export const ExitCode = {
  /** Success (also: nothing to repair), `--help`, `--version`. */
  ok: 0,
  /** An unexpected failure. */
  failure: 1,
  /** A usage error: unknown command or flag, missing argument, bad `--format`. */
  usage: 2,
  /** The session was not found (`SESSION_NOT_FOUND`). */
  notFound: 3,
  /** The log is unreadable: a format this Yoke does not read, or corruption. */
  unreadable: 4,
  /** `inspect --check`: a repair is needed. */
  repairNeeded: 5,
  /** The session is leased by another writer (`SESSION_LOCKED`). */
  locked: 6,
} as const

/**
 * The exit code of a failed command.
 *
 * @param error - what the command threw
 * @returns `2` for usage errors and invalid session ids, `3` not found, `4` unreadable logs,
 *   `6` locked sessions, else `1`
 */
export function exitCodeOf(error: unknown): number {
  if (CliUsageError.is(error)) return ExitCode.usage
  if (PersistenceError.is(error)) {
    if (error.code === ErrorCode.SESSION_NOT_FOUND) return ExitCode.notFound
    if (error.code === ErrorCode.INVALID_SESSION_ID) return ExitCode.usage
    return ExitCode.failure
  }
  if (SessionFormatUnsupportedError.is(error) || PersistenceCorruptionError.is(error)) return ExitCode.unreadable
  if (SessionLockedError.is(error)) return ExitCode.locked
  return ExitCode.failure
}

function codeOf(error: unknown): string {
  if (HarnessError.is(error)) return error.code
  const code = typeof error === 'object' && error !== null ? (error as { readonly code?: unknown }).code : undefined
  return typeof code === 'string' && code.length > 0 ? code : 'UNEXPECTED'
}

function messageOf(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ').trim()
  // A locked session names the command that shows its holder (unless the message comes from it).
  if (SessionLockedError.is(error) && error.sessionId !== undefined && !message.includes('yoke unlock')) {
    return `${message}; "yoke unlock ${error.sessionId}" shows its holder and removes the lease once it expired`
  }
  return message
}

/**
 * The one stderr line of a failed command: `yoke: <CODE>: <message>`, or with `--json`
 * `{"error":{"code":…,"message":…}}`; newlines in the message are folded into spaces, and a
 * locked session's message points to `yoke unlock <id>`.
 *
 * @param error - what the command threw
 * @param json - whether `--json` was given
 * @returns the line, ending with `\n`
 */
export function errorLine(error: unknown, json: boolean): string {
  const code = codeOf(error)
  const message = messageOf(error)
  if (json) return `${JSON.stringify({ error: { code, message } })}\n`
  return `yoke: ${code}: ${message}\n`
}
