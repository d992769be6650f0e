import { ErrorCode } from '../errors/codes.js'
import { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionFormatUnsupportedError } from '../errors/session-format-unsupported-error.js'
import { knownAbsent } from './known-absent.js'
import type { PersistenceCoordinator } from './persistence-coordinator.js'

/** How many generated ids {@link freshSessionId} draws before it reports the last one as taken. */
const MAX_ID_DRAWS = 100

/**
 * Whether a log is stored under `id`, so that creating or forking onto it is refused: persistence
 * `readFrom` past any seq (no lease, no closers, nothing written) resolves only for a stored log.
 *
 * @param persistence - the coordinator, or `undefined` without a persistence entry (then `false`)
 * @param id - a candidate session id; one that is not a storable id is never stored
 * @returns whether a stored log has this id, also one that is damaged or of an unsupported format
 * @throws (as a rejection) other read errors, unchanged
 * @internal
 */
export async function isStored(persistence: PersistenceCoordinator | undefined, id: string): Promise<boolean> {
  if (persistence === undefined || knownAbsent(persistence, id)) return false
  try {
    await persistence.readFrom(id, Number.MAX_SAFE_INTEGER)
  } catch (error) {
    if (
      PersistenceError.is(error) &&
      (error.code === ErrorCode.SESSION_NOT_FOUND || error.code === ErrorCode.INVALID_SESSION_ID)
    )
      return false
    // A damaged or too-new log is still a stored log: its id is taken, whatever is wrong inside.
    if (PersistenceCorruptionError.is(error) || SessionFormatUnsupportedError.is(error)) return true
    throw error
  }
  return true
}

/**
 * A generated session id that is neither live nor stored: a taken one is skipped rather than
 * refused, since the caller asked for no particular id (a deterministic generator such as
 * `fakeIds` starts again at `s1` over a directory that already holds `s1`). Random UUIDs take
 * one draw.
 *
 * @param draw - the id generator
 * @param isLive - whether an id is live in this harness
 * @param persistence - the coordinator, if any
 * @param taken - the error once {@link MAX_ID_DRAWS} draws were all taken (given the last one)
 * @returns the id
 * @internal
 */
export async function freshSessionId(
  draw: () => string,
  isLive: (id: string) => boolean,
  persistence: PersistenceCoordinator | undefined,
  taken: (id: string, stored: boolean) => Error,
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const id = draw()
    const live = isLive(id)
    const stored = !live && (await isStored(persistence, id))
    if (!live && !stored) return id
    if (attempt >= MAX_ID_DRAWS) throw taken(id, stored)
  }
}
