import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { SessionForkError } from '../errors/session-fork-error.js'
import { SessionRegistryError } from '../errors/session-registry-error.js'
import { SessionVetoError } from '../errors/session-veto-error.js'
import { bindOwner } from '../kernel/bind-owner.js'
import type { Context } from '../kernel/context.js'
import { checkOptionsArgument, type OptionRule, optionRule } from '../kernel/option-issues.js'
import { dispatchParallel, dispatchUntilThrow } from '../kernel/dispatch-internal.js'
import type { Disposer } from '../kernel/effect.js'
import type { Clock, IdSource } from '../kernel/host-services.js'
import { buildSession } from './create-session.js'
import type { FlushOptions } from './flush-checkpoint.js'
import { planFork } from './plan-fork.js'
import { createSessionCatalog, type EventTypeOptions, type SessionCatalog } from './session-catalog.js'
import type { SessionEvent } from './session-event.js'
import { isSessionId, SESSION_ID_RULE } from './session-header.js'
import type { CommitGuard, GuardRecord, SessionHooks } from './session-hooks.js'
import type { Session } from './session.js'
import type {
  SessionRegistry,
  CommitGuardOptions,
  CreateOptions,
  ForkOptions,
  StagedSession,
} from './session-registry.js'

/** The values are checked where they are used (the id, the seed, the header, the fork boundary). */
const CREATE_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({
  id: optionRule.any,
  seed: optionRule.any,
  header: optionRule.any,
})

const FORK_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({ at: optionRule.any, id: optionRule.any })

const GUARD_RULES: Readonly<Record<string, OptionRule>> = Object.freeze({ label: optionRule.string })

interface LiveSession {
  readonly session: Session
  disposing: Promise<void> | undefined
  /** Set when a `session/created` listener vetoed it: the veto's own `session/disposed` is the only one. */
  vetoed?: true
}

/**
 * Builds the session registry of one harness (the `session` entry provides it as `services.sessions`).
 *
 * @param ctx - the `session` entry's context, which dispatches the `session/*` events
 * @param clock - the harness clock
 * @param ids - the harness id source
 * @returns the registry, with the `disposeAll` the entry runs when it stops
 */
export function createSessionRegistry(ctx: Context, clock: Clock, ids: IdSource): HarnessSessionRegistry {
  return new HarnessSessionRegistry(ctx, clock, ids)
}

/** The {@link SessionRegistry} {@link createSessionRegistry} builds. */
export class HarnessSessionRegistry implements SessionRegistry {
  /** The event catalog every session of this harness checks against. */
  readonly catalog: SessionCatalog = createSessionCatalog()
  readonly #ctx: Context
  readonly #clock: Clock
  readonly #ids: IdSource
  readonly #live = new Map<string, LiveSession>()
  readonly #guards: GuardRecord[] = []
  #bound: PropertyDescriptorMap | undefined
  #guardSnapshot: readonly GuardRecord[] = []

  /** */
  constructor(ctx: Context, clock: Clock, ids: IdSource) {
    this.#ctx = ctx
    this.#clock = clock
    this.#ids = ids
  }

  /**
   * Creates a live session, then dispatches `session/created` (a synchronous throw there vetoes):
   * {@link SessionRegistry.stage} followed by `publish()`.
   *
   * @param options - id, seed, header
   * @returns the session
   * @throws `InvalidArgumentError` for a non-object options or an unknown option; `SessionRegistryError` (`INVALID_SESSION_ID`, `SESSION_EXISTS`), `SessionHeaderError`, a seed event's error, `SessionVetoError` `CREATE_VETOED`
   */
  create(options?: CreateOptions): Session {
    const staged = this.stage(options)
    staged.publish()
    return staged.session
  }

  /**
   * Builds a session without registering it: it can be read and
   * appended to, but `get` does not see it, its events are not broadcast on `session/event`, and
   * no one is told about it until `publish()` registers it and dispatches `session/created`
   * (persistence then writes it from seq 0). `discard()` drops an unpublished session.
   *
   * @param options - id, seed, header
   * @returns the staged session
   * @throws `InvalidArgumentError` for a non-object options or an unknown option; `SessionRegistryError` (`INVALID_SESSION_ID`, `SESSION_EXISTS`), `SessionHeaderError`, a seed event's error
   */
  stage(options?: CreateOptions): StagedSession {
    options = checkOptionsArgument(options, CREATE_RULES, '{ id?, seed?, header? }')
    const id = options.id ?? this.#ids('session')
    if (!isSessionId(id)) {
      throw new SessionRegistryError({
        code: ErrorCode.INVALID_SESSION_ID,
        detail: `invalid session id ${JSON.stringify(id)}: use ${SESSION_ID_RULE}`,
      })
    }
    this.#checkFree(id)
    let live: LiveSession | undefined
    const hooks: SessionHooks = {
      guards: () => this.#guardSnapshot,
      observe: (event: SessionEvent) => {
        if (live !== undefined) this.#ctx.emit('session/event', { session: live.session, event }, { subject: id })
      },
    }
    const session = buildSession(
      {
        id,
        clock: this.#clock,
        catalog: this.catalog,
        ...(options.seed === undefined ? {} : { seed: options.seed }),
        ...(options.header === undefined ? {} : { header: options.header }),
      },
      hooks,
    )
    let state: 'staged' | 'published' | 'discarded' = 'staged'
    return Object.freeze({
      session,
      publish: (registered?: () => void): void => {
        if (registered !== undefined && typeof registered !== 'function') {
          throw new InvalidArgumentError({
            argument: 'registered',
            reason: 'must be a function when given',
            value: registered,
          })
        }
        if (state !== 'staged') {
          throw new SessionRegistryError({
            code: ErrorCode.SESSION_EXISTS,
            sessionId: id,
            detail: `the staged session was already ${state}`,
          })
        }
        this.#checkFree(id)
        const entry: LiveSession = { session, disposing: undefined }
        this.#live.set(id, entry)
        try {
          registered?.()
        } catch (error) {
          this.#live.delete(id)
          throw error
        }
        live = entry
        state = 'published'
        const outcome = session.asDispatch(() => {
          const dispatched = dispatchUntilThrow(this.#ctx, 'session/created', { session }, { subject: id })
          // Before a dispose requested inside the dispatch runs: it must not announce the session again.
          if (dispatched.threw) entry.vetoed = true
          return dispatched
        })
        if (outcome.threw) {
          this.#live.delete(id)
          session.markDisposed()
          void dispatchParallel(this.#ctx, 'session/disposed', { session, vetoed: true }, outcome.reached).catch(
            () => {},
          )
          throw new SessionVetoError({
            code: ErrorCode.CREATE_VETOED,
            sessionId: id,
            detail: 'a session/created listener vetoed the session',
            cause: outcome.error,
          })
        }
      },
      discard: (): void => {
        if (state !== 'staged') return
        state = 'discarded'
        session.markDisposed()
      },
    })
  }

  #checkFree(id: string): void {
    if (this.#live.has(id)) {
      throw new SessionRegistryError({
        code: ErrorCode.SESSION_EXISTS,
        sessionId: id,
        detail: 'a live session has this id',
      })
    }
  }

  /**
   * The live session with this id.
   *
   * @param id - a session id
   * @returns the session, or `undefined`
   */
  get(id: string): Session | undefined {
    return this.#live.get(id)?.session
  }

  /**
   * Every live session, in creation order.
   *
   * @returns a frozen list
   */
  list(): readonly Session[] {
    return Object.freeze([...this.#live.values()].map((live) => live.session))
  }

  /**
   * Copies the inclusive prefix `events[0..at]` of a live session into a new one.
   *
   * @param source - a live session or its id
   * @param options - `at`, `id`
   * @returns the child, ending in a `session/end-seed` marker
   * @throws `InvalidArgumentError` for a non-object options or an unknown option; `SessionForkError` (`SESSION_EXISTS`, `SESSION_NOT_FOUND`, `INVALID_BOUNDARY`, `OPEN_TURN`); any `create` error
   */
  fork(source: string | Session, options?: ForkOptions): Session {
    options = checkOptionsArgument(options, FORK_RULES, '{ at?, id? }')
    if (options.id !== undefined && this.#live.has(options.id)) {
      throw new SessionForkError({
        code: ErrorCode.SESSION_EXISTS,
        sessionId: options.id,
        detail: 'a live session has the fork id',
      })
    }
    const parent = this.#resolve(
      source,
      (id) =>
        new SessionForkError({
          code: ErrorCode.SESSION_NOT_FOUND,
          sessionId: id,
          detail: 'no live session to fork has this id',
        }),
    )
    const { seed, header } = planFork(
      {
        id: parent.id,
        header: parent.header,
        length: parent.length,
        at: (seq) => parent.at(seq),
        slice: (to) => parent.slice(0, to),
      },
      options.at,
    )
    return this.create({ ...(options.id === undefined ? {} : { id: options.id }), seed, header })
  }

  /**
   * Asks every `session/flush` listener (persistence) to write the session out.
   *
   * @param source - a live session or its id
   * @returns `true` when some listener handled it, `false` when none exists
   * @throws `SessionRegistryError` `SESSION_NOT_FOUND`, or `FLUSH_FAILED` (as a rejection) with every listener failure
   */
  async flush(source: string | Session, options?: FlushOptions): Promise<boolean> {
    const session = this.#resolve(source, notFound)
    const checkpoint = options?.checkpoint
    const payload = checkpoint === undefined ? { session } : { session, checkpoint }
    const outcome = await session.asDispatch(() => dispatchParallel(this.#ctx, 'session/flush', payload, undefined))
    if (outcome.errors.length > 0) {
      throw new SessionRegistryError({
        code: ErrorCode.FLUSH_FAILED,
        sessionId: session.id,
        detail: `${outcome.errors.length} session/flush listener(s) failed`,
        errors: outcome.errors,
        cause: outcome.errors[0],
      })
    }
    return outcome.listeners > 0
  }

  /**
   * Disposes a live session: synchronously unusable (appends fail, `get` forgets it, the id is
   * free), then `session/disposed` to every listener in parallel.
   *
   * @param source - a live session or its id
   * @returns resolves after every listener settled
   * @throws `SessionRegistryError` `SESSION_NOT_FOUND`, or `DISPOSE_FAILED` (as a rejection) with every listener failure
   */
  dispose(source: string | Session): Promise<void> {
    let session: Session
    try {
      session = this.#resolve(source, notFound)
    } catch (error) {
      return Promise.reject(error)
    }
    const live = this.#live.get(session.id) as LiveSession
    live.disposing ??= new Promise<void>((resolve) => {
      session.whenIdle(() => {
        if (this.#live.get(session.id) === live) this.#live.delete(session.id)
        session.markDisposed()
        resolve()
      })
    }).then(async () => {
      if (live.vetoed === true) return
      const outcome = await dispatchParallel(this.#ctx, 'session/disposed', { session }, undefined)
      if (outcome.errors.length > 0) {
        throw new SessionRegistryError({
          code: ErrorCode.DISPOSE_FAILED,
          sessionId: session.id,
          detail: `${outcome.errors.length} session/disposed listener(s) failed`,
          errors: outcome.errors,
          cause: outcome.errors[0],
        })
      }
    })
    return live.disposing
  }

  /**
   * Registers a plugin event type in this harness's catalog. Through a plugin's `ctx.get()`, the
   * registration is an effect of that plugin.
   *
   * @param type - the `noun/verb` name
   * @param options - schema, enclosure
   * @returns the disposer that unregisters it
   * @throws `EventTypeError`
   */
  registerEventType(type: string, options?: EventTypeOptions): Disposer {
    return this.#registerEventType(this.#ctx, type, options)
  }

  /**
   * Every known type, core and registered, sorted.
   *
   * @returns a frozen list
   */
  eventTypes(): readonly string[] {
    return this.catalog.eventTypes()
  }

  /**
   * Adds a pre-commit guard: synchronous, sees the frozen candidate, throws to veto. Runs for
   * live appends only, in registration order.
   *
   * @param guard - the guard
   * @param options - its label
   * @returns the disposer that removes it
   * @throws {@link InvalidArgumentError} for a guard that is not a function, or options that are not `{ label? }` with a string label
   */
  addCommitGuard(guard: CommitGuard, options?: CommitGuardOptions): Disposer {
    return this.#addCommitGuard(this.#ctx, guard, options)
  }

  /** Owner-bound facade: registrations become effects of `owner`. */
  [bindOwner](owner: Context): HarnessSessionRegistry {
    const facade = Object.create(this) as HarnessSessionRegistry
    // Every method reads private fields, so on the facade each runs on the registry itself (bound
    // once per registry, shared by every facade); the two registration methods become effects of `owner`.
    const methods: PropertyDescriptorMap = { ...this.#boundMethods() }
    methods['registerEventType'] = {
      value: (type: string, options?: EventTypeOptions) => this.#registerEventType(owner, type, options),
    }
    methods['addCommitGuard'] = {
      value: (guard: CommitGuard, options?: CommitGuardOptions) => this.#addCommitGuard(owner, guard, options),
    }
    Object.defineProperties(facade, methods)
    return facade
  }

  #boundMethods(): PropertyDescriptorMap {
    if (this.#bound === undefined) {
      const methods: PropertyDescriptorMap = {}
      for (const name of Object.getOwnPropertyNames(HarnessSessionRegistry.prototype)) {
        const method: unknown = Reflect.get(this, name)
        if (name !== 'constructor' && typeof method === 'function') methods[name] = { value: method.bind(this) }
      }
      this.#bound = methods
    }
    return this.#bound
  }

  #registerEventType(owner: Context, type: string, options: EventTypeOptions | undefined): Disposer {
    let unregister: (() => void) | undefined
    const disposer = owner.effect(() => {
      unregister = this.catalog.registerEventType(type, options)
      return unregister
    }, `session-event-type:${type}`)
    return disposer
  }

  #addCommitGuard(owner: Context, guard: CommitGuard, options: CommitGuardOptions | undefined): Disposer {
    if (typeof guard !== 'function') {
      throw new InvalidArgumentError({ argument: 'guard', reason: 'a commit guard must be a function', value: guard })
    }
    const { label = 'guard' } = checkOptionsArgument(options, GUARD_RULES, '{ label? }')
    const record: GuardRecord = { label, guard }
    return owner.effect(() => {
      this.#guards.push(record)
      this.#guardSnapshot = Object.freeze([...this.#guards])
      return () => {
        const index = this.#guards.indexOf(record)
        if (index !== -1) this.#guards.splice(index, 1)
        this.#guardSnapshot = Object.freeze([...this.#guards])
      }
    }, `commit-guard:${record.label}`)
  }

  #resolve(source: string | Session, error: (id: string) => Error): Session {
    const id = typeof source === 'string' ? source : source?.id
    const live = typeof id === 'string' ? this.#live.get(id) : undefined
    if (live === undefined || (typeof source !== 'string' && live.session !== source)) throw error(String(id))
    return live.session
  }

  /** Disposes every live session (the `session` entry stopping). */
  async disposeAll(): Promise<void> {
    const errors: unknown[] = []
    for (const session of [...this.#live.values()].reverse()) {
      try {
        await this.dispose(session.session)
      } catch (error) {
        errors.push(error)
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, `${errors.length} session(s) failed to dispose`)
  }
}

function notFound(id: string): SessionRegistryError {
  return new SessionRegistryError({
    code: ErrorCode.SESSION_NOT_FOUND,
    sessionId: id,
    detail: 'no live session has this id',
  })
}
