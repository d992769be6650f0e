import { ErrorCode } from '../errors/codes.js'
import { SessionHeaderError } from '../errors/session-header-error.js'
import type { JsonObject } from './json-value.js'
import { snapshotJson } from './snapshot/snapshot-json.js'

/** The session format version this library writes and reads. */
export const SESSION_FORMAT_VERSION = 1

/** Stored beside the log, never in it; deep-frozen. */
export interface SessionHeader {
  /** The session format version; always `1` in this release. */
  readonly version: typeof SESSION_FORMAT_VERSION
  /** The session id. */
  readonly id: string
  /** Epoch milliseconds of creation. */
  readonly createdAt: number
  /** The working directory: an absolute POSIX, Windows drive or UNC path. */
  readonly cwd?: string
  /** The session this one was forked from. */
  readonly parentSession?: string
  /** How many events the fork copied (immutable). */
  readonly seedLength?: number
  /** `'subagent'` for a delegated session. */
  readonly origin?: 'subagent'
  /** How deep in a delegation chain this session is. */
  readonly delegationDepth?: number
  /** The preset the session's agent was made from. */
  readonly agentPreset?: string
  /** Free JSON for the embedder. */
  readonly metadata?: JsonObject
}

/** Every header key, in stored order: the three required ones, then the optional ones. */
export const headerKeys = [
  'version',
  'id',
  'createdAt',
  'cwd',
  'parentSession',
  'seedLength',
  'origin',
  'delegationDepth',
  'agentPreset',
  'metadata',
] as const
const sessionIdPattern = /^[A-Za-z0-9_@:+-][A-Za-z0-9_.@:+-]{0,127}$/

/**
 * The session id rule in words, for error messages.
 *
 * @internal
 */
export const SESSION_ID_RULE = '1–128 characters of [A-Za-z0-9_.@:+-], not starting with "."'
const absolutePath = /^(\/|[A-Za-z]:[\\/]|\\\\[^\\]+\\[^\\]+)/

/**
 * Whether `value` is a valid session id: 1–128 characters of `[A-Za-z0-9_.@:+-]`, not starting
 * with `.` — so an e-mail address (`alice@example.com`) or a `tenant:user` key is an id as it is.
 *
 * @param value - anything
 * @returns `true` for a valid id
 */
export function isSessionId(value: unknown): value is string {
  return typeof value === 'string' && sessionIdPattern.test(value)
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/**
 * Validates a header for session `id`, filling `version`, `id` and `createdAt`, and returns a
 * deep-frozen copy in canonical key order. With `complete` (an adapter's `create`) nothing is
 * filled in: a header without `version` is refused like a wrong one, since a writer never stores a
 * header it could not read back.
 *
 * @internal
 */
export function buildSessionHeader(input: unknown, id: string, createdAt: number, complete = false): SessionHeader {
  const invalid = (field: string, detail: string): SessionHeaderError =>
    new SessionHeaderError({ code: ErrorCode.INVALID_HEADER, sessionId: id, detail: `header ${detail}`, field })
  if (input === undefined) input = {}
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('header', 'must be an object')
  let copy: JsonObject
  try {
    copy = snapshotJson(input, 'header') as JsonObject
  } catch (error) {
    const path = (error as { readonly path?: string }).path ?? 'header'
    const field = path.replace(/^header\.?/, '').split(/[.[]/)[0] || 'header'
    throw invalid(field, `is not JSON at ${path}`)
  }
  for (const key of Object.keys(copy)) {
    if (!(headerKeys as readonly string[]).includes(key)) throw invalid(key, `has an unknown key "${key}"`)
  }
  const header: Record<string, unknown> = {
    version: copy['version'] ?? (complete ? undefined : SESSION_FORMAT_VERSION),
    id: copy['id'] ?? id,
    createdAt: copy['createdAt'] ?? createdAt,
  }
  for (const key of headerKeys.slice(3)) if (copy[key] !== undefined) header[key] = copy[key]
  if (header['version'] !== SESSION_FORMAT_VERSION)
    throw invalid('version', `version must be ${SESSION_FORMAT_VERSION}`)
  if (header['id'] !== id) throw invalid('id', `id must equal the session id "${id}"`)
  if (!isNonNegativeInteger(header['createdAt'])) throw invalid('createdAt', 'createdAt must be a non-negative integer')
  const cwd = header['cwd']
  if (cwd !== undefined && (typeof cwd !== 'string' || !absolutePath.test(cwd)))
    throw invalid('cwd', 'cwd must be an absolute path')
  if (header['parentSession'] !== undefined && !isSessionId(header['parentSession'])) {
    throw invalid('parentSession', 'parentSession must be a valid session id')
  }
  if (header['seedLength'] !== undefined && !isNonNegativeInteger(header['seedLength'])) {
    throw invalid('seedLength', 'seedLength must be a non-negative integer')
  }
  if (header['origin'] !== undefined && header['origin'] !== 'subagent')
    throw invalid('origin', "origin must be 'subagent'")
  if (header['delegationDepth'] !== undefined && !isNonNegativeInteger(header['delegationDepth'])) {
    throw invalid('delegationDepth', 'delegationDepth must be a non-negative integer')
  }
  const preset = header['agentPreset']
  if (preset !== undefined && (typeof preset !== 'string' || preset.length === 0)) {
    throw invalid('agentPreset', 'agentPreset must be a non-empty string')
  }
  const metadata = header['metadata']
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) {
    throw invalid('metadata', 'metadata must be a JSON object')
  }
  return Object.freeze(header) as unknown as SessionHeader
}
