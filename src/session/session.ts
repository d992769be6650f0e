import { ErrorCode } from '../errors/codes.js'
import type { ValidationIssue } from '../errors/issue.js'
import type { SessionErrorLocation } from '../errors/session-error.js'
import { SessionEventError } from '../errors/session-event-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { SessionVetoError } from '../errors/session-veto-error.js'
import type { Clock } from '../kernel/host-services.js'
import type { CoreEventData } from './core-event-types.js'
import type { JsonValue } from './json-value.js'
import type { Message } from './message.js'
import { fastPayloadChecks } from './fast-payload-checks.js'
import { accessPath, payloadIssues } from './payload-issues.js'
import { canonicalHeader, headerEquals, type RequestHeader } from './request-header.js'
import type { SessionCatalog } from './session-catalog.js'
import type { AppendOptions, SessionEvent } from './session-event.js'
import type { SessionHeader } from './session-header.js'
import type { SessionHooks } from './session-hooks.js'
import { snapshotJson } from './snapshot/snapshot-json.js'
import { copyDeltaPayload } from './snapshot/copy-stream-delta.js'
import { StructureState, type TurnState } from './structure-state.js'
import { type SurfacePlan, SurfaceState } from './surface-state.js'
import { deepFreeze } from './deep-freeze.js'

/** The `data` type `append` takes for an event type: the core payload, else any JSON. */
export type EventDataOf<T extends string> = T extends keyof CoreEventData ? CoreEventData[T] : unknown

/** The last `request/context` of a log. */
export type RequestContext = CoreEventData['request/context']

/** @internal How a session is built (by `createSession` and the registry). */
export interface SessionInit {
  readonly id: string
  readonly header: SessionHeader
  readonly catalog: SessionCatalog
  readonly clock: Clock
  readonly hooks: SessionHooks | undefined
}

/** The envelope keys, each with its place in the canonical order `buildEvent` writes. */
const envelopeKeyRanks: ReadonlyMap<string, number> = new Map(
  ['type', 'seq', 'time', 'data', 'ignorable', 'surfaceOp', 'sourceEventSeqs'].map((key, rank) => [key, rank]),
)
const optionKeys = ['surfaceOp', 'sourceEventSeqs', 'ignorable'] as const

/**
 * One session: an append-only event log with one synchronous commit point ({@link Session.append})
 * and incremental projections of it (model history, request header, turn state). Get one from
 * the `sessions` registry, or `createSession()` for an unregistered one.
 */
export class Session {
  /** The session id. */
  readonly id: string
  /** The header stored beside the log, deep-frozen. */
  readonly header: SessionHeader
  readonly #log: SessionEvent[] = []
  readonly #catalog: SessionCatalog
  readonly #clock: Clock
  readonly #hooks: SessionHooks | undefined
  readonly #structure = new StructureState()
  readonly #surface: SurfaceState
  #events: readonly SessionEvent[] | undefined
  #firstLiveSeq = 0
  #disposed = false
  /** Inside a guard or observer of this session: an append now is reentrant. */
  #busy = false
  /** Inside a `session/created` or `session/flush` dispatch: appends are allowed, a dispose waits. */
  #dispatching = false
  readonly #idle: (() => void)[] = []
  #requestHeader: RequestHeader | undefined
  #requestContext: RequestContext | undefined

  /** @internal */
  constructor(init: SessionInit) {
    this.id = init.id
    this.header = init.header
    this.#catalog = init.catalog
    this.#clock = init.clock
    this.#hooks = init.hooks
    this.#surface = new SurfaceState((seq) => this.#log[seq] as SessionEvent)
  }

  /** How many events the log holds. */
  get length(): number {
    return this.#log.length
  }

  /** The frozen log, the same array until the next commit; an array handed out never grows. */
  get events(): readonly SessionEvent[] {
    this.#events ??= Object.freeze(this.#log.slice())
    return this.#events
  }

  /** The first seq this process produced (the length after seeding). */
  get firstLiveSeq(): number {
    return this.#firstLiveSeq
  }

  /** `true` once disposed: appends then throw `SESSION_DISPOSED`. */
  get disposed(): boolean {
    return this.#disposed
  }

  /**
   * The event at `seq`.
   *
   * @param seq - an index into the log
   * @returns the frozen event, or `undefined`
   */
  at(seq: number): SessionEvent | undefined {
    // Only an index reads the log (`at('length')` is not an event).
    return Number.isSafeInteger(seq) && seq >= 0 ? this.#log[seq] : undefined
  }

  /**
   * A frozen copy of part of the log, like `Array.prototype.slice`.
   *
   * @param from - the first seq
   * @param to - one past the last seq (default: the end)
   * @returns the events
   */
  slice(from: number, to?: number): readonly SessionEvent[] {
    return Object.freeze(this.#log.slice(from, to))
  }

  /**
   * Whether a committed message event of this session already carries message id `id` (a new one
   * with it would fail `MESSAGE_ID_REUSED`).
   *
   * @param id - a message id
   * @returns `true` when it is taken
   */
  hasMessageId(id: string): boolean {
    return this.#structure.messageIds.has(id)
  }

  /** The turn state: open turn and step, next turn number, unanswered calls. */
  turnState(): TurnState {
    return this.#structure.turnState()
  }

  /** The surface nodes: the seqs of the message events that form model history (frozen). */
  surfaceNodes(): readonly number[] {
    return this.#surface.frozenNodes()
  }

  /**
   * The model history: a frozen array of the frozen messages stored in the log (shared, never
   * copied), the same array until the surface changes.
   */
  deriveMessages(): readonly Message[] {
    return this.#surface.derived()
  }

  /** The canonical form of the last `request/header`, deep-frozen, or `undefined`. */
  requestHeader(): RequestHeader | undefined {
    return this.#requestHeader
  }

  /** The data of the last `request/context`, or `undefined`. */
  requestContext(): RequestContext | undefined {
    return this.#requestContext
  }

  /**
   * Appends one event: the single, synchronous commit point. On any failure nothing changes and
   * nothing is dispatched.
   *
   * @param type - a catalog type (or any `noun/verb` with `ignorable: true`)
   * @param data - the payload, copied as lossless JSON
   * @param options - surface placement, provenance, `ignorable`
   * @returns the committed, frozen event
   * @throws {@link SessionStateError}, {@link SessionEventError}, `SurfaceError`, `StructureError`, {@link SessionVetoError}
   */
  append<T extends string>(type: T, data: EventDataOf<T>, options?: AppendOptions): SessionEvent<T> {
    const seq = this.#log.length
    if (this.#disposed) {
      throw new SessionStateError({
        code: ErrorCode.SESSION_DISPOSED,
        sessionId: this.id,
        type,
        seq,
        detail: 'the session is disposed',
      })
    }
    if (this.#busy) {
      throw new SessionStateError({
        code: ErrorCode.REENTRANT_APPEND,
        sessionId: this.id,
        type,
        seq,
        detail: 'append from inside a guard or observer of this session; defer it (queueMicrotask)',
      })
    }
    const where: SessionErrorLocation = { sessionId: this.id, type: typeof type === 'string' ? type : undefined, seq }
    if (typeof type !== 'string' || type.length === 0) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...where,
        detail: 'type must be a non-empty string',
        field: 'type',
      })
    }
    if (type === 'session/end-seed') {
      throw new SessionEventError({
        code: ErrorCode.RESERVED_EVENT_TYPE,
        ...where,
        detail: 'session/end-seed is written only by seeded construction',
      })
    }
    const copiedOptions = this.#copyOptions(options, where)
    const definition = this.#catalog.get(type)
    if (copiedOptions.ignorable === true && definition?.core === true) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...where,
        detail: `ignorable is not allowed on core type ${type}`,
        field: 'options.ignorable',
      })
    }
    if (definition === undefined && copiedOptions.ignorable !== true) {
      throw new SessionEventError({
        code: ErrorCode.UNKNOWN_EVENT_TYPE,
        ...where,
        detail: `unknown event type "${type}" (register it, or append with ignorable: true)`,
      })
    }
    // The payload may hold earlier snapshots (a chunk the model boundary admitted): kept, not re-copied.
    // A delta's payload, most of a streamed step's events, is copied field by field.
    const copiedData =
      (type === 'assistant/chunk' ? copyDeltaPayload(data) : undefined) ?? copyJson(data, 'data', where, true)
    const time = this.#clock.now()
    if (!Number.isSafeInteger(time)) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...where,
        detail: `clock.now() returned ${time}, not a safe integer`,
        field: 'time',
      })
    }
    const candidate = buildEvent(type, seq, time, copiedData, copiedOptions)
    const plan = this.#validate(candidate, where)
    if (this.#hooks === undefined) {
      this.#commit(candidate, plan)
      return candidate as SessionEvent<T>
    }
    try {
      this.#runGuards(candidate, where)
      this.#commit(candidate, plan)
      const outer = this.#busy
      this.#busy = true
      try {
        this.#hooks.observe(candidate)
      } finally {
        this.#busy = outer
      }
    } finally {
      if (!this.#busy && !this.#dispatching) this.#drainIdle()
    }
    return candidate as SessionEvent<T>
  }

  /**
   * Runs `action` now, or right after the running guard or observer dispatch of this session
   * returns (a dispose requested from inside a dispatch takes effect when it returns).
   *
   * @internal
   */
  whenIdle(action: () => void): void {
    if (!this.#busy && !this.#dispatching) action()
    else this.#idle.push(action)
  }

  /**
   * Runs `action` (the synchronous start of a `session/created` or `session/flush` dispatch) as a
   * dispatch of this session: a dispose requested inside it takes effect once it returns. Appends
   * inside it are not reentrant (only guards and observers are).
   *
   * @param action - the dispatch
   * @returns what `action` returns
   * @internal
   */
  asDispatch<T>(action: () => T): T {
    const outer = this.#dispatching
    this.#dispatching = true
    try {
      return action()
    } finally {
      this.#dispatching = outer
      if (!outer && !this.#busy) this.#drainIdle()
    }
  }

  #drainIdle(): void {
    if (this.#idle.length === 0) return
    const actions = this.#idle.splice(0)
    for (const action of actions) action()
  }

  #copyOptions(options: AppendOptions | undefined, where: SessionErrorLocation): AppendOptions {
    if (options === undefined) return {}
    const copied = copyJson(options, 'options', where)
    if (typeof copied !== 'object' || copied === null || Array.isArray(copied)) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...where,
        detail: 'options must be an object',
        field: 'options',
      })
    }
    for (const key of Object.keys(copied)) {
      if (!(optionKeys as readonly string[]).includes(key)) {
        throw new SessionEventError({
          code: ErrorCode.INVALID_ENVELOPE,
          ...where,
          detail: `unknown append option "${key}"`,
          field: `options.${key}`,
        })
      }
    }
    const record = copied as { readonly ignorable?: unknown }
    if (record.ignorable !== undefined && record.ignorable !== true) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...where,
        detail: 'ignorable may only be true',
        field: 'options.ignorable',
      })
    }
    return copied as AppendOptions
  }

  /** Steps 8–10 (payload, surface, structure), shared with seeds. */
  #validate(candidate: SessionEvent, where: SessionErrorLocation): SurfacePlan {
    const definition = this.#catalog.get(candidate.type)
    if (
      definition?.schema !== undefined &&
      !(definition.core && fastPayloadChecks.get(candidate.type)?.(candidate.data) === true)
    ) {
      const issues = payloadIssues(definition.schema, candidate.data)
      if (issues !== undefined) {
        const first = issues[0] as ValidationIssue
        const path = accessPath('data', first.path)
        throw new SessionEventError({
          code: ErrorCode.INVALID_PAYLOAD,
          ...where,
          detail: `invalid ${candidate.type} payload at ${path}: ${first.message}`,
          path,
          issues: issues.map((issue) => ({ path: ['data', ...issue.path], message: issue.message })),
        })
      }
    }
    const plan = this.#surface.check(candidate, where)
    if (definition !== undefined || candidate.ignorable !== true) {
      this.#structure.check(candidate, definition, where, () => {
        const next = (candidate.data as unknown as { readonly header: RequestHeader }).header
        return this.#requestHeader === undefined || !headerEquals(this.#requestHeader, next)
      })
    }
    return plan
  }

  #runGuards(candidate: SessionEvent, where: SessionErrorLocation): void {
    const guards = (this.#hooks as SessionHooks).guards()
    if (guards.length === 0) return
    const outer = this.#busy
    this.#busy = true
    try {
      for (const { label, guard } of guards) {
        let result: unknown
        try {
          result = guard(candidate, this)
        } catch (error) {
          throw new SessionVetoError({
            code: ErrorCode.APPEND_VETOED,
            ...where,
            detail: `commit guard "${label}" vetoed the append`,
            guard: label,
            cause: error,
          })
        }
        if (typeof (result as { then?: unknown } | null | undefined)?.then === 'function') {
          ;(result as PromiseLike<unknown>).then(undefined, () => {})
          throw new SessionVetoError({
            code: ErrorCode.APPEND_VETOED,
            ...where,
            detail: `commit guard "${label}" returned a promise; guards are synchronous, so the append is vetoed`,
            guard: label,
          })
        }
      }
    } finally {
      this.#busy = outer
    }
  }

  #commit(event: SessionEvent, plan: SurfacePlan): void {
    this.#log.push(event)
    this.#events = undefined
    this.#surface.apply(event, plan)
    this.#structure.apply(event)
    if (event.type === 'request/header') {
      this.#requestHeader = deepFreeze(
        canonicalHeader((event.data as unknown as { readonly header: RequestHeader }).header),
      )
    } else if (event.type === 'request/context') {
      this.#requestContext = event.data as unknown as RequestContext
    }
  }

  /**
   * Checks and pushes one seed event. No guards or observers run.
   *
   * @param raw - the seed event
   * @param index - its position in the seed
   * @param shared - `raw` is deep-frozen lossless JSON already (a recorded list): kept, not copied
   * @internal
   */
  seed(raw: unknown, index: number, shared = false): void {
    // Runs once per stored event on every load and resume: the error locations are built only on failure.
    const where = (): SessionErrorLocation => ({ sessionId: this.id, index })
    const invalid = (field: string, detail: string, expected?: unknown): SessionEventError =>
      new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...where(),
        detail,
        field,
        ...(expected === undefined ? {} : { expected }),
      })
    // An event of a recorded seed list (the coordinator adopted a load, adoptParsedJson) is kept as it is.
    const copied = shared ? (raw as JsonValue) : copyJson(raw, 'event', where())
    if (typeof copied !== 'object' || copied === null || Array.isArray(copied))
      throw invalid('event', 'a seed event must be an object')
    const record = copied as { readonly [key: string]: JsonValue }
    // Whether the keys come in the canonical order (as every stored event's do).
    let canonical = true
    let lastRank = -1
    for (const key of Object.keys(record)) {
      const rank = envelopeKeyRanks.get(key)
      if (rank === undefined) throw invalid(key, `unknown envelope key "${key}"`)
      if (rank < lastRank) canonical = false
      lastRank = rank
    }
    const type = record['type']
    if (typeof type !== 'string' || type.length === 0) throw invalid('type', 'type must be a non-empty string')
    const located = (): SessionErrorLocation => ({ sessionId: this.id, index, type })
    if (record['seq'] !== index) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...located(),
        detail: `seq must be ${index} (got ${JSON.stringify(record['seq'])})`,
        field: 'seq',
        expected: index,
      })
    }
    const time = record['time']
    if (typeof time !== 'number' || !Number.isSafeInteger(time)) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...located(),
        detail: 'time must be a safe integer',
        field: 'time',
      })
    }
    if (!Object.hasOwn(record, 'data')) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...located(),
        detail: 'data is missing',
        field: 'data',
      })
    }
    const ignorable = record['ignorable']
    const definition = this.#catalog.get(type)
    if (ignorable !== undefined && (ignorable !== true || definition?.core === true)) {
      throw new SessionEventError({
        code: ErrorCode.INVALID_ENVELOPE,
        ...located(),
        detail: ignorable !== true ? 'ignorable may only be true' : `ignorable is not allowed on core type ${type}`,
        field: 'ignorable',
      })
    }
    if (definition === undefined && ignorable !== true) {
      throw new SessionEventError({
        code: ErrorCode.UNKNOWN_EVENT_TYPE,
        ...located(),
        detail: `unknown event type "${type}"`,
      })
    }
    const options: { -readonly [K in keyof AppendOptions]: AppendOptions[K] } = {}
    if (ignorable === true) options.ignorable = true
    if (record['surfaceOp'] !== undefined)
      options.surfaceOp = record['surfaceOp'] as AppendOptions['surfaceOp'] & object
    if (record['sourceEventSeqs'] !== undefined)
      options.sourceEventSeqs = record['sourceEventSeqs'] as readonly number[]
    // A deep-frozen recorded event (an adopted load) whose keys are in order is the event
    // buildEvent would build: kept, so a load and its seeds share one object per event.
    const event =
      shared && canonical
        ? (record as unknown as SessionEvent)
        : buildEvent(type, index, time, record['data'] as JsonValue, options)
    const plan = this.#validate(event, located())
    this.#commit(event, plan)
  }

  /**
   * Appends the `session/end-seed` marker (clock time) and fixes `firstLiveSeq`.
   *
   * @internal
   */
  endSeed(seeded: boolean): void {
    const last = this.#log.at(-1)
    // The seed's length, before the marker: the marker is the first seq this process produces.
    this.#firstLiveSeq = this.#log.length
    if (seeded && last?.type !== 'session/end-seed') {
      const time = this.#clock.now()
      const where = { sessionId: this.id, type: 'session/end-seed', seq: this.#log.length }
      if (!Number.isSafeInteger(time)) {
        throw new SessionEventError({
          code: ErrorCode.INVALID_ENVELOPE,
          ...where,
          detail: `clock.now() returned ${time}, not a safe integer`,
          field: 'time',
        })
      }
      this.#commit(buildEvent('session/end-seed', this.#log.length, time, Object.freeze({}), {}), undefined)
    }
  }

  /**
   * Marks the session disposed: later appends throw `SESSION_DISPOSED`. The registry calls it
   * through {@link Session.whenIdle}, so it never lands inside a running dispatch.
   *
   * @internal
   */
  markDisposed(): void {
    this.#disposed = true
  }
}

/** Copies a value as lossless JSON (sharing earlier snapshots when asked), rethrowing `NOT_JSON` with the location. */
function copyJson(value: unknown, root: string, where: SessionErrorLocation, sharing = false): JsonValue {
  try {
    return snapshotJson(value, root, undefined, sharing)
  } catch (error) {
    if (!SessionEventError.is(error)) throw error
    const path = root === 'event' ? (error.path ?? '').replace(/^event\.?/, '') || 'event' : error.path
    throw new SessionEventError({
      code: ErrorCode.NOT_JSON,
      ...where,
      detail: `${path} is not lossless JSON${error.reason === undefined ? '' : ` (${error.reason})`}`,
      path,
      reason: error.reason,
    })
  }
}

/** Builds a frozen envelope with keys in canonical order. */
function buildEvent(type: string, seq: number, time: number, data: JsonValue, options: AppendOptions): SessionEvent {
  const event: { -readonly [K in keyof SessionEvent]: SessionEvent[K] } = { type, seq, time, data }
  if (options.ignorable === true) event.ignorable = true
  if (options.surfaceOp !== undefined) event.surfaceOp = options.surfaceOp
  if (options.sourceEventSeqs !== undefined) event.sourceEventSeqs = options.sourceEventSeqs
  return Object.freeze(event)
}
