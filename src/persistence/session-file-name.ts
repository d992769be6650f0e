/**
 * Storable session ids and their file names.
 *
 * @module
 */
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { isSessionId, SESSION_ID_RULE } from '../session/session-header.js'

const deviceName = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i
const allowedCharacters = /^[A-Za-z0-9_.@:+-]*$/
/** What a file name may hold: the id characters, `:` replaced by `=`, and a leading `~`. */
const fileNameCharacters = /^~?[A-Za-z0-9_.@=+-]+$/

function reasonOf(sessionId: unknown): string {
  if (typeof sessionId !== 'string') return `must be a string (got ${typeof sessionId})`
  if (sessionId.length === 0) return 'must not be empty'
  if (sessionId.length > 128) return `must be at most 128 characters (got ${sessionId.length})`
  if (sessionId.startsWith('.')) return 'must not start with "."'
  if (!allowedCharacters.test(sessionId)) return 'may only contain the characters [A-Za-z0-9_.@:+-]'
  return 'is not a valid session id'
}

function describe(sessionId: unknown): string {
  if (typeof sessionId !== 'string') return String(sessionId)
  return JSON.stringify(sessionId.length > 140 ? `${sessionId.slice(0, 140)}…` : sessionId)
}

/**
 * Checks that an adapter may store `sessionId`: 1–128 characters of `[A-Za-z0-9_.@:+-]`, not
 * starting with `.` — exactly the registry's ids. Call it before any I/O.
 *
 * @param sessionId - the id to check
 * @throws {@link PersistenceError} `INVALID_SESSION_ID` (`sessionId` when it is a string, `reason`)
 */
export function assertStorableId(sessionId: unknown): asserts sessionId is string {
  if (isSessionId(sessionId)) return
  const reason = reasonOf(sessionId)
  throw new PersistenceError({
    code: ErrorCode.INVALID_SESSION_ID,
    sessionId: typeof sessionId === 'string' ? sessionId : undefined,
    detail: `session id ${describe(sessionId)} cannot be stored: it ${reason}; use ${SESSION_ID_RULE}`,
    reason,
  })
}

function isDeviceName(name: string): boolean {
  const dot = name.indexOf('.')
  return deviceName.test(dot === -1 ? name : name.slice(0, dot))
}

/**
 * The file base name of a session id, without any suffix. Safe on Linux, macOS and Windows, and
 * injective (two ids never share a name):
 *
 * - `:` (refused by Windows, shown as `/` by the macOS Finder) becomes `=`, which no id contains;
 *   one character for one, so a 128-character id stays a 128-character name;
 * - a name whose part before the first `.` is a Windows device name (`con`, `prn`, `aux`, `nul`,
 *   `com0`–`com9`, `lpt0`–`lpt9`, any case) gets a `~` prefix, which no id contains;
 * - every other character (`[A-Za-z0-9_.@+-]`) is kept, so the names of ids without `:` are the
 *   ids themselves, as they always were. An id never starts with `.`, so no name is hidden, `.` or
 *   `..`; a suffix (`.jsonl`) always follows, so no name ends with `.`.
 *
 * @param sessionId - a session id
 * @returns the base name, e.g. `'s1'` → `'s1'`, `'tenant:user'` → `'tenant=user'`,
 *   `'alice@example.com'` → `'alice@example.com'`, `'con'` → `'~con'`, `'NUL.x'` → `'~NUL.x'`
 * @throws {@link PersistenceError} `INVALID_SESSION_ID` for an id that cannot be stored
 * @example
 * ```ts
 * const file = join(dir, `${fileNameOf(id)}.jsonl`)
 * ```
 */
export function fileNameOf(sessionId: string): string {
  assertStorableId(sessionId)
  const name = sessionId.replaceAll(':', '=')
  return isDeviceName(name) ? `~${name}` : name
}

/**
 * The session id whose {@link fileNameOf} is `name`, or `undefined` when no id maps to it.
 * `name` is the base name with its suffix (`.jsonl`, `.jsonl.gz`, …) already removed.
 *
 * @param name - a file base name
 * @returns the id, e.g. `'~con'` → `'con'`, `'tenant=user'` → `'tenant:user'`; `undefined` for
 *   `'con'`, `'~s1'`, `'.x'`, `'a:b'`
 */
export function sessionIdOfFileName(name: string): string | undefined {
  if (!fileNameCharacters.test(name)) return undefined
  const id = (name.startsWith('~') ? name.slice(1) : name).replaceAll('=', ':')
  // The one name of that id, or none: a name fileNameOf never writes maps to no id.
  return isSessionId(id) && fileNameOf(id) === name ? id : undefined
}
