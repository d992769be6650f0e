import { ErrorCode } from '../errors/codes.js'
import { HarnessError } from '../errors/harness-error.js'
import { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import { SessionEventError } from '../errors/session-event-error.js'
import { SessionFormatUnsupportedError } from '../errors/session-format-unsupported-error.js'
import { systemClock } from '../kernel/host-services.js'
import { createSession } from '../session/create-session.js'
import { accessPath, payloadIssues } from '../session/payload-issues.js'
import type { SessionCatalog } from '../session/session-catalog.js'
import { adoptParsedJson } from '../session/snapshot/shared-snapshots.js'
import type { StoredLog } from './persistence-adapter.js'

/**
 * Checks a log read cold from storage before anything uses it (the adapter checked its format
 * version already): the header names the requested session, every event type is known or
 * ignorable, and the events pass the session rules, in full as a seed or (`full: false`, a
 * suffix) each event alone.
 *
 * @internal
 */
export function checkStoredLog(
  sessionId: string,
  stored: StoredLog,
  catalog: SessionCatalog,
  options: { full: boolean },
): void {
  const location = stored.location ?? sessionId
  if (stored.header.id !== sessionId) {
    throw new PersistenceCorruptionError({
      code: ErrorCode.IDENTITY_MISMATCH,
      sessionId,
      detail: `the stored header of ${location} names session "${stored.header.id}"; nothing was changed`,
      location,
      expected: sessionId,
      actual: stored.header.id,
    })
  }
  for (const event of stored.events) {
    if (event.ignorable === true || catalog.get(event.type) !== undefined) continue
    throw new SessionFormatUnsupportedError({
      code: ErrorCode.UNKNOWN_EVENT_TYPE,
      sessionId,
      detail: `the log ${location} holds event type "${event.type}" at seq ${event.seq}, which this harness does not know; register it (or upgrade) to open the session`,
      storedVersion: stored.header.version,
      supportedVersion: stored.header.version,
      direction: 'newer',
      eventType: event.type,
      seq: event.seq,
      location,
    })
  }
  try {
    if (options.full) {
      // An adapter's fresh parse (JSONL, memory) is frozen in place here, so this seed and a
      // later resume seed of the same events keep them instead of copying each.
      if (stored.freshlyParsed === true) adoptParsedJson(stored.events)
      createSession({ id: sessionId, seed: stored.events, catalog, clock: systemClock() })
    } else for (const event of stored.events) checkEventAlone(sessionId, event, catalog)
  } catch (error) {
    if (!HarnessError.is(error)) throw error
    const located = error as { readonly index?: number; readonly seq?: number }
    const seq = options.full ? located.index : located.seq
    throw new PersistenceCorruptionError({
      code: ErrorCode.INVALID_EVENT,
      sessionId,
      detail: `the stored event at seq ${seq ?? '?'} of ${location} breaks the session rules: ${error.message}`,
      location,
      seq,
      cause: error,
    })
  }
}

/**
 * The per-event checks for a suffix (`readFrom`): the envelope rule on `ignorable` and the
 * payload schema. Relational checks (seqs from 0, surface, structure) need the prefix, so they are
 * skipped.
 */
function checkEventAlone(sessionId: string, event: StoredLog['events'][number], catalog: SessionCatalog): void {
  const where = { sessionId, type: event.type, seq: event.seq }
  const definition = catalog.get(event.type)
  if (event.ignorable === true && definition?.core === true) {
    throw new SessionEventError({
      code: ErrorCode.INVALID_ENVELOPE,
      ...where,
      detail: `ignorable is not allowed on core type ${event.type}`,
      field: 'ignorable',
    })
  }
  if (definition?.schema === undefined) return
  const issues = payloadIssues(definition.schema, event.data)
  const first = issues?.[0]
  if (issues === undefined || first === undefined) return
  const path = accessPath('data', first.path)
  throw new SessionEventError({
    code: ErrorCode.INVALID_PAYLOAD,
    ...where,
    detail: `invalid ${event.type} payload at ${path}: ${first.message}`,
    path,
    issues: issues.map((issue) => ({ path: ['data', ...issue.path], message: issue.message })),
  })
}
