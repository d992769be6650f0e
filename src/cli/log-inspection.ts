/**
 * What a cold log looks like to `inspect`, `repair --dry-run` and `export`:
 * the coordinator's `inspect` (read gates, closers in memory, no lease, no write), split into the
 * stored events and the closers a repair would append.
 *
 * @module
 */
import type { Harness } from '../harness/harness.js'
import type { SessionEvent } from '../session/session-event.js'
import type { SessionHeader } from '../session/session-header.js'
import type { SessionTarget } from './session-target.js'

/** A log as `inspect` reads it. */
export interface LogInspection {
  /** The stored header. */
  readonly header: SessionHeader
  /** The events as stored (salvaged ones included), before any closer. */
  readonly stored: readonly SessionEvent[]
  /** The closers a repair would append (`[]` when no turn is open). */
  readonly closers: readonly SessionEvent[]
  /** `stored ++ closers`: the log as a repair would leave it. */
  readonly events: readonly SessionEvent[]
  /** Whether a `load` would repair (persistence `repairPending`). */
  readonly repairPending: boolean
  /** The bytes a repair would drop (`0` when none). */
  readonly droppedBytes: number
}

/** Reads attempted when the log changes between the two reads of one inspection. */
const attempts = 3

/**
 * Inspects a cold log without changing it. A log needing repair is read a second time through
 * the adapter (also read-only) to tell the stored events from the
 * closers; both reads must see the same revision.
 *
 * @param harness - a harness over the log's directory
 * @param target - the session
 * @returns the inspection
 * @throws what persistence `inspect` throws (`SESSION_NOT_FOUND`, `PersistenceCorruptionError`,
 *   `SessionFormatUnsupportedError`, …)
 */
export async function inspectLog(harness: Harness, target: SessionTarget): Promise<LogInspection> {
  for (let attempt = 1; ; attempt++) {
    const inspected = await harness.persistence.inspect(target.id)
    const droppedBytes = inspected.droppedBytes ?? 0
    const base = {
      header: inspected.header,
      events: inspected.events,
      repairPending: inspected.repairPending,
      droppedBytes,
    }
    if (!inspected.repairPending) return { ...base, stored: inspected.events, closers: [] }
    const raw = await harness.persistence.adapter.load(target.id)
    if (raw.revision === inspected.revision || attempt === attempts) {
      const storedLength = Math.min(raw.events.length, inspected.events.length)
      return { ...base, stored: inspected.events.slice(0, storedLength), closers: inspected.events.slice(storedLength) }
    }
  }
}
