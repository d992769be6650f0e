import type { Disposer } from '../kernel/effect.js'
import type { FlushOptions } from './flush-checkpoint.js'
import type { EventTypeOptions, SessionCatalog } from './session-catalog.js'
import type { SessionHeader } from './session-header.js'
import type { CommitGuard } from './session-hooks.js'
import type { Session } from './session.js'

/** Options of {@link SessionRegistry.create}. */
export interface CreateOptions {
  /**
   * The session id.
   *
   * @default the harness id source's next `session` id
   */
  readonly id?: string
  /** Events to start from; each is fully validated and a `session/end-seed` marker follows. */
  readonly seed?: readonly unknown[]
  /** Header fields; `version`, `id` and `createdAt` are filled in. */
  readonly header?: Partial<SessionHeader>
}

/** Options of {@link SessionRegistry.fork}. */
export interface ForkOptions {
  /**
   * The last seq to copy (inclusive).
   *
   * @default the source's last seq
   */
  readonly at?: number
  /**
   * The child's id.
   *
   * @default the harness id source's next `session` id
   */
  readonly id?: string
}

/** Options of {@link SessionRegistry.addCommitGuard}. */
export interface CommitGuardOptions {
  /**
   * Names the guard in `APPEND_VETOED` errors.
   *
   * @default 'guard'
   */
  readonly label?: string
}

/** A session built by {@link SessionRegistry.stage}, not registered yet. */
export interface StagedSession {
  /** The session: readable and appendable, unknown to the registry until published. */
  readonly session: Session
  /**
   * Registers the session, runs `registered` (a throw unregisters it and is rethrown), then
   * dispatches `session/created` (a synchronous listener throw vetoes: `SessionVetoError`
   * `CREATE_VETOED`, the session disposed).
   *
   * @param registered - runs right after the registration, before `session/created`
   * @throws `SessionRegistryError` `SESSION_EXISTS` when the id went live meanwhile or the session was published or discarded
   * @throws {@link InvalidArgumentError} (`argument: 'registered'`) when `registered` is given and not a function; nothing is published
   */
  publish(registered?: () => void): void
  /** Drops the unpublished session (its `append` then fails); a no-op once published. */
  discard(): void
}

/**
 * The `sessions` service: a harness's live sessions, its event catalog and commit guards, and the
 * `session/*` events.
 */
export interface SessionRegistry {
  /** The event catalog every session of this harness checks against. */
  readonly catalog: SessionCatalog
  /**
   * Creates a live session, then dispatches `session/created` (a synchronous throw there vetoes):
   * {@link SessionRegistry.stage} followed by `publish()`.
   *
   * @param options - id, seed, header
   * @returns the session
   * @throws `InvalidArgumentError` for a non-object options or an unknown option; `SessionRegistryError` (`INVALID_SESSION_ID`, `SESSION_EXISTS`), `SessionHeaderError`, a seed event's error, `SessionVetoError` `CREATE_VETOED`
   */
  create(options?: CreateOptions): Session
  /**
   * Builds a session without registering it, so an agent can finish its setup before anyone sees
   * it: it can be read and appended to, but `get` does not see it, its events are not broadcast on
   * `session/event`, and no one is told about it until `publish()` registers it and dispatches
   * `session/created` (persistence then writes it from seq 0). `discard()` drops an unpublished
   * session.
   *
   * @param options - id, seed, header
   * @returns the staged session
   * @throws `InvalidArgumentError` for a non-object options or an unknown option; `SessionRegistryError` (`INVALID_SESSION_ID`, `SESSION_EXISTS`), `SessionHeaderError`, a seed event's error
   */
  stage(options?: CreateOptions): StagedSession
  /**
   * The live session with this id.
   *
   * @param id - a session id
   * @returns the session, or `undefined`
   */
  get(id: string): Session | undefined
  /**
   * Every live session, in creation order.
   *
   * @returns a frozen list
   */
  list(): readonly Session[]
  /**
   * Copies the inclusive prefix `events[0..at]` of a live session into a new one.
   *
   * @param source - a live session or its id
   * @param options - `at`, `id`
   * @returns the child, ending in a `session/end-seed` marker
   * @throws `InvalidArgumentError` for a non-object options or an unknown option; `SessionForkError` (`SESSION_EXISTS`, `SESSION_NOT_FOUND`, `INVALID_BOUNDARY`, `OPEN_TURN`); any `create` error
   */
  fork(source: string | Session, options?: ForkOptions): Session
  /**
   * Asks every `session/flush` listener (persistence) to write the session out.
   *
   * @param source - a live session or its id
   * @param options - `checkpoint`: the turn checkpoint asking (persistence may then leave the
   *   sync to a later checkpoint, as its durability setting says); absent: durable now
   * @returns `true` when some listener handled it, `false` when none exists
   * @throws `SessionRegistryError` `SESSION_NOT_FOUND`, or `FLUSH_FAILED` (as a rejection) with every listener failure
   */
  flush(source: string | Session, options?: FlushOptions): Promise<boolean>
  /**
   * Disposes a live session: synchronously unusable (appends fail, `get` forgets it, the id is
   * free), then `session/disposed` to every listener in parallel.
   *
   * @param source - a live session or its id
   * @returns resolves after every listener settled
   * @throws `SessionRegistryError` `SESSION_NOT_FOUND`, or `DISPOSE_FAILED` (as a rejection) with every listener failure
   */
  dispose(source: string | Session): Promise<void>
  /**
   * Registers a plugin event type in this harness's catalog. Through a plugin's `ctx.get()`, the
   * registration is an effect of that plugin.
   *
   * @param type - the `noun/verb` name
   * @param options - schema, enclosure
   * @returns the disposer that unregisters it
   * @throws `EventTypeError`
   */
  registerEventType(type: string, options?: EventTypeOptions): Disposer
  /**
   * Every known type, core and registered, sorted.
   *
   * @returns a frozen list
   */
  eventTypes(): readonly string[]
  /**
   * Adds a pre-commit guard: synchronous, sees the frozen candidate, throws to veto. Runs for
   * live appends only, in registration order.
   *
   * @param guard - the guard
   * @param options - its label
   * @returns the disposer that removes it
   * @throws {@link InvalidArgumentError} for a guard that is not a function, or options that are not `{ label? }` with a string label
   */
  addCommitGuard(guard: CommitGuard, options?: CommitGuardOptions): Disposer
}
