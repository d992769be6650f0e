import type { PersistenceCoordinator } from './persistence-coordinator.js'

/**
 * Takes the lease of a new session id through the harness's persistence, when it has one, so that
 * `createAgent` resolves only once this harness holds the id: of two harnesses creating one id at
 * the same moment, exactly one wins and the other gets a `SessionLockedError` naming the winner.
 *
 * @param persistence - the harness's persistence coordinator, if any
 * @param id - the new session id
 * @returns the reservation's release (a no-op once the created session adopted the lease), or
 *   `undefined` without persistence
 * @throws `SessionLockedError`, `PersistenceError` `SESSION_EXISTS` / `SESSION_LIVE` / `SESSION_RESERVED`
 * @internal
 */
export async function reserveNewSession(
  persistence: PersistenceCoordinator | undefined,
  id: string,
): Promise<(() => Promise<void>) | undefined> {
  const reserve = (persistence as { reserveNew?: (id: string) => Promise<() => Promise<void>> } | undefined)?.reserveNew
  if (reserve === undefined) return undefined
  return reserve(id)
}
