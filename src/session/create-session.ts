import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { SessionRegistryError } from '../errors/session-registry-error.js'
import { type Clock, systemClock } from '../kernel/host-services.js'
import { checkOptions, hasMethods, type OptionRule, optionRule } from '../kernel/option-issues.js'
import { createSessionCatalog, type SessionCatalog } from './session-catalog.js'
import { buildSessionHeader, isSessionId, SESSION_ID_RULE, type SessionHeader } from './session-header.js'
import type { SessionHooks } from './session-hooks.js'
import { Session } from './session.js'
import { isSharedSnapshot } from './snapshot/shared-snapshots.js'

/** Options of {@link createSession}. */
export interface CreateSessionOptions {
  /** The session id: 1–128 characters of `[A-Za-z0-9_.@:+-]`, not starting with `.`. */
  readonly id: string
  /** Events to start from (a stored log or a fork prefix); each is fully validated. */
  readonly seed?: readonly unknown[]
  /** Header fields; `version`, `id` and `createdAt` are filled in. */
  readonly header?: Partial<SessionHeader>
  /**
   * The event catalog.
   *
   * @default the core types only
   */
  readonly catalog?: SessionCatalog
  /**
   * The clock that stamps `time`.
   *
   * @default the system clock
   */
  readonly clock?: Clock
}

/** `id`, `seed` and `header` keep their own errors (`INVALID_SESSION_ID`, `options.seed`, `SessionHeaderError`). */
const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  id: optionRule.any,
  seed: optionRule.any,
  header: optionRule.any,
  catalog: (value) => (hasMethods(value, ['get', 'registerEventType']) ? undefined : 'must be a SessionCatalog'),
  clock: optionRule.clock,
})

/**
 * Builds a session outside any registry (no guards, no `session/*` events): for tools that read
 * or check logs. Applications use the `sessions` service.
 *
 * @param options - id, seed, header, catalog, clock
 * @returns the session; with a seed, ending in a `session/end-seed` marker
 * @throws {@link InvalidOptionsError} for options that are not an object, an unknown key, or a
 *   `catalog` / `clock` of the wrong shape; `SessionRegistryError` `INVALID_SESSION_ID`;
 *   `SessionHeaderError`; any append error of a seed event, with its `index`
 * @example
 * ```ts
 * const session = createSession({ id: 'check', seed: storedEvents })
 * console.log(session.deriveMessages().length)
 * ```
 */
export function createSession(options: CreateSessionOptions): Session {
  // `id` is required, so a missing options object is a root issue too.
  checkOptions(
    (options ?? null) as CreateSessionOptions,
    optionRules,
    '{ id, seed?, header?, catalog?, clock? }',
    'createSession options',
  )
  return buildSession(options, undefined)
}

/** @internal Builds a session with the registry's hooks. */
export function buildSession(options: CreateSessionOptions, hooks: SessionHooks | undefined): Session {
  const { id } = options
  if (!isSessionId(id)) {
    throw new SessionRegistryError({
      code: ErrorCode.INVALID_SESSION_ID,
      detail: `invalid session id ${JSON.stringify(id)}: use ${SESSION_ID_RULE}`,
    })
  }
  const clock = options.clock ?? systemClock()
  const header = buildSessionHeader(options.header, id, clock.now())
  const session = new Session({ id, header, catalog: options.catalog ?? createSessionCatalog(), clock, hooks })
  const seed = options.seed
  if (seed !== undefined) {
    if (!Array.isArray(seed)) {
      throw new InvalidArgumentError({
        argument: 'options.seed',
        reason: `session "${id}": seed must be an array of events`,
        value: seed,
      })
    }
    // A load the coordinator adopted (adoptParsedJson) is lossless JSON already: not copied again.
    const shared = isSharedSnapshot(seed)
    for (let index = 0; index < seed.length; index++) session.seed(seed[index], index, shared)
  }
  session.endSeed(seed !== undefined)
  return session
}
