/**
 * A way to learn, without I/O and without building an error, that no log is stored under an id.
 *
 * Creating an agent without an id draws one and asks persistence whether a log is stored under it.
 * Asked through `readFrom`, the answer "no" is a `SESSION_NOT_FOUND` error whose message and stack
 * are built only to be dropped, on every creation. An adapter that keeps its logs in this process
 * can answer at once instead; everything else still goes through `readFrom`.
 *
 * @module
 */

/**
 * The key of the check on an adapter or a coordinator: a function of the id returning `true` only
 * when no log is stored under it for certain (`false` means "ask `readFrom`").
 *
 * @internal
 */
export const absentCheck: unique symbol = Symbol('yoke.absentCheck')

/** Something that may carry the check. @internal */
export interface MaybeKnowsAbsent {
  readonly [absentCheck]?: (sessionId: string) => boolean
}

/**
 * Whether `target` knows at once that no log is stored under `sessionId`.
 *
 * @param target - an adapter or a coordinator
 * @param sessionId - the id
 * @returns `true` only when the target carries the check and it answers "certainly absent"
 * @internal
 */
export function knownAbsent(target: object, sessionId: string): boolean {
  const check = (target as MaybeKnowsAbsent)[absentCheck]
  return typeof check === 'function' && check(sessionId) === true
}
