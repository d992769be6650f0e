import type { IdSource } from '../kernel/host-services.js'
import type { Session } from '../session/session.js'

/**
 * The id source of an agent: `ids`, except that a `message` id the session already used is
 * skipped. A deterministic source (`fakeIds()`) in a new process starts again at `m1`, which a
 * resumed or forked log may hold; without this, the first new message would fail
 * `MESSAGE_ID_REUSED`.
 *
 * @param ids - the harness id source
 * @param session - the agent's session
 * @returns the agent's id source
 * @internal
 */
export function sessionMessageIds(ids: IdSource, session: Session): IdSource {
  return (kind) => {
    let id = ids(kind)
    if (kind !== 'message') return id
    // Bounded: a source that repeats itself forever would otherwise spin.
    for (let attempt = 0; attempt < 10_000 && session.hasMessageId(id); attempt++) id = ids(kind)
    return id
  }
}
