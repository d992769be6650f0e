import { ErrorCode } from '../errors/codes.js'
import { HarnessError } from '../errors/harness-error.js'
import { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import { SessionFormatUnsupportedError } from '../errors/session-format-unsupported-error.js'
import { systemClock } from '../kernel/host-services.js'
import { createSession } from '../session/create-session.js'
import type { SessionCatalog } from '../session/session-catalog.js'
import type { StoredLog } from './persistence-adapter.js'

/**
 * The read gates of a cold read (03-persistence.md §5.3), after the adapter's version check
 * (G1): identity (G2), unknown types (G3), then the full validation of a seed (G4).
 *
 * @internal
 */
export function checkStoredLog(sessionId: string, stored: StoredLog, catalog: SessionCatalog, options: { full: boolean }): void {
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
  if (!options.full) return
  try {
    createSession({ id: sessionId, seed: stored.events, catalog, clock: systemClock() })
  } catch (error) {
    if (!HarnessError.is(error)) throw error
    const seq = (error as { readonly index?: number }).index
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
