import type { IdSource } from '../kernel/host-services.js'
import type { Session } from '../session/session.js'

/**
 * The id source of an agent: `ids`, except that a `message` id the session already used is
 * skipped. A deterministic source (`fakeIds()`) in a new process starts again at `m1`, which a
 * resumed or forked log may hold; without this, the first new message would fail
 * `MESSAGE_ID_REUSED`. An id still queued in the resumed inbox is skipped too, or the first
 * prompt sent after a restart would fail `DUPLICATE_MESSAGE_ID`.
 *
 * @param ids - the harness id source
 * @param session - the agent's session
 * @param queued - whether an id is pending in the agent's inbox
 * @returns the agent's id source
 * @internal
 */
export function sessionMessageIds(ids: IdSource, session: Session, queued?: (id: string) => boolean): IdSource {
  return (kind) =>
    kind === 'message'
      ? untaken(
          () => ids(kind),
          (id) => session.hasMessageId(id) || queued?.(id) === true,
        )
      : ids(kind)
}

/**
 * Draws ids until one is not taken (bounded: a source that repeats itself forever would otherwise
 * spin; the last draw is returned and fails where it is used).
 *
 * @param draw - the id source
 * @param taken - whether an id is in use
 * @returns the first free id drawn
 * @internal
 */
export function untaken(draw: () => string, taken: (id: string) => boolean): string {
  let id = draw()
  for (let attempt = 0; attempt < 10_000 && taken(id); attempt++) id = draw()
  return id
}
