import EventEmitter from 'eventemitter3'
import { EventConflictError } from '../errors/event-conflict-error.js'
import { EventModeError } from '../errors/event-mode-error.js'
import { UnknownEventError } from '../errors/unknown-event-error.js'
import { WaterfallNextError } from '../errors/waterfall-next-error.js'
import type { EventCatalog, EventMode } from './event-catalog.js'
import type { ScopeKey } from './scope-graph.js'

/** @internal Where a listener was registered: its context's state decides whether it still runs. */
export interface ListenerHome {
  readonly state: 'active' | 'disposing' | 'disposed'
  readonly parent: object | undefined
  readonly path: string
}

/** @internal One registered listener. */
export interface ListenerRecord {
  readonly name: string
  readonly fn: (...args: never[]) => unknown
  readonly home: ListenerHome
  readonly scope: ScopeKey | undefined
  readonly once: boolean
  dead: boolean
  /** Disposes the registration (set by the context that owns it). */
  dispose: () => void
}

type Invoker = ((payload: unknown, admission: ReadonlySet<ScopeKey> | undefined) => void) & {
  readonly record: ListenerRecord
}

type AnyListener = (...args: unknown[]) => unknown

interface Definition {
  readonly mode: EventMode
  count: number
}

/** @internal How the bus reports a contained listener failure. */
export type ListenerFailure = (
  name: string,
  error: unknown,
  record: ListenerRecord,
  subject: string | undefined,
) => void

const noop = (): void => {}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

/** Whether a listener may still be called: not disposed, and its context not disposing (the root excepted). */
function isLive(record: ListenerRecord): boolean {
  if (record.dead) return false
  const home = record.home
  return home.state === 'active' || (home.parent === undefined && home.state === 'disposing')
}

function admits(record: ListenerRecord, admission: ReadonlySet<ScopeKey> | undefined): boolean {
  return record.scope === undefined || admission?.has(record.scope) === true
}

function call(record: ListenerRecord, ...args: unknown[]): unknown {
  if (record.once) record.dispose()
  return (record.fn as AnyListener)(...args)
}

/** @internal The per-root event bus: definitions, listener storage (eventemitter3) and the four modes. */
export class EventBus {
  readonly #definitions = new Map<string, Definition>()
  readonly #emitter = new EventEmitter()
  readonly #onFailure: ListenerFailure

  constructor(onFailure: ListenerFailure) {
    this.#onFailure = onFailure
  }

  /** Registers a catalog atomically; returns the undo. */
  define(catalog: EventCatalog): () => void {
    const entries = Object.entries(catalog.modes)
    for (const [name, mode] of entries) {
      const existing = this.#definitions.get(name)
      if (existing !== undefined && existing.mode !== mode) {
        throw new EventConflictError({ event: name, existing: existing.mode, attempted: mode })
      }
    }
    for (const [name, mode] of entries) {
      const existing = this.#definitions.get(name)
      if (existing === undefined) this.#definitions.set(name, { mode, count: 1 })
      else existing.count++
    }
    let undone = false
    return () => {
      if (undone) return
      undone = true
      for (const [name] of entries) {
        const definition = this.#definitions.get(name)
        if (definition === undefined) continue
        if (--definition.count === 0) this.#definitions.delete(name)
      }
    }
  }

  /** Whether any listener (of any scope) is registered for `name`: a dispatch without one can skip its promise chain. */
  listens(name: string): boolean {
    return this.#emitter.listenerCount(name) > 0
  }

  isDefined(name: string): boolean {
    return this.#definitions.has(name)
  }

  /**
   * The check every dispatch makes before any listener runs (the name is defined, the mode is its
   * mode): `undefined` when a dispatch of `name` in `mode` may proceed.
   */
  validate(name: string, mode: EventMode): UnknownEventError | EventModeError | undefined {
    const definition = this.#definitions.get(name)
    if (definition === undefined) return new UnknownEventError({ event: name })
    if (definition.mode !== mode) return new EventModeError({ event: name, defined: definition.mode, attempted: mode })
    return undefined
  }

  add(record: ListenerRecord, prepend: boolean): void {
    const invoker = this.#invoker(record)
    if (!prepend) {
      this.#emitter.on(record.name, invoker)
      return
    }
    const current = this.#emitter.listeners(record.name)
    this.#emitter.removeAllListeners(record.name)
    this.#emitter.on(record.name, invoker)
    for (const listener of current) this.#emitter.on(record.name, listener)
  }

  remove(record: ListenerRecord): void {
    record.dead = true
    for (const listener of this.#emitter.listeners(record.name) as Invoker[]) {
      if (listener.record === record) {
        this.#emitter.removeListener(record.name, listener)
        return
      }
    }
  }

  emit(name: string, payload: unknown, admission: ReadonlySet<ScopeKey> | undefined, subject?: string): void {
    if (this.#emitter.listenerCount(name) === 0) return
    this.#emitter.emit(name, payload, admission, subject)
  }

  /**
   * A synchronous dispatch that stops at the first listener that throws synchronously (async
   * rejections are contained and reported). Returns the listeners it reached, the thrower included.
   */
  emitUntilThrow(
    name: string,
    payload: unknown,
    admission: ReadonlySet<ScopeKey> | undefined,
    subject: string | undefined,
  ): { threw: boolean; error: unknown; reached: ListenerRecord[] } {
    const reached: ListenerRecord[] = []
    for (const record of this.#snapshot(name, admission)) {
      if (!isLive(record)) continue
      reached.push(record)
      let result: unknown
      try {
        result = call(record, payload)
      } catch (error) {
        return { threw: true, error, reached }
      }
      if (isThenable(result)) result.then(undefined, (error: unknown) => this.#onFailure(name, error, record, subject))
    }
    return { threw: false, error: undefined, reached }
  }

  /**
   * Starts every admitted listener (or only those whose home is in `only`) at once and waits for all; returns
   * the failures in registration order and how many listeners ran.
   */
  async parallelSettled(
    name: string,
    payload: unknown,
    admission: ReadonlySet<ScopeKey> | undefined,
    only: ReadonlySet<ListenerHome> | undefined,
  ): Promise<{ errors: unknown[]; listeners: number }> {
    const started: Promise<unknown>[] = []
    for (const record of this.#snapshot(name, admission)) {
      if (!isLive(record) || (only !== undefined && !only.has(record.home))) continue
      try {
        started.push(Promise.resolve(call(record, payload)))
      } catch (error) {
        started.push(Promise.reject(error))
      }
    }
    if (started.length === 0) return { errors: [], listeners: 0 }
    const settled = await Promise.allSettled(started)
    const errors = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []))
    return { errors, listeners: started.length }
  }

  async parallel(name: string, payload: unknown, admission: ReadonlySet<ScopeKey> | undefined): Promise<void> {
    const started: Promise<unknown>[] = []
    for (const record of this.#snapshot(name, admission)) {
      if (!isLive(record)) continue
      try {
        started.push(Promise.resolve(call(record, payload)))
      } catch (error) {
        started.push(Promise.reject(error))
      }
    }
    if (started.length === 0) return
    const settled = await Promise.allSettled(started)
    const errors = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []))
    if (errors.length > 0) throw new AggregateError(errors, `${errors.length} "${name}" listener(s) failed`)
  }

  async serial(name: string, payload: unknown, admission: ReadonlySet<ScopeKey> | undefined): Promise<unknown> {
    for (const record of this.#snapshot(name, admission)) {
      if (!isLive(record)) continue
      const result = await call(record, payload)
      if (result !== undefined) return result
    }
    return undefined
  }

  waterfall(
    name: string,
    payload: unknown,
    inner: (payload: unknown) => unknown,
    admission: ReadonlySet<ScopeKey> | undefined,
    each?: (value: unknown) => unknown,
  ): Promise<unknown> {
    const records = this.#snapshot(name, admission)
    const run = (from: number, current: unknown): Promise<unknown> => {
      let index = from
      while (index < records.length && !isLive(records[index]!)) index++
      const record = records[index]
      if (record === undefined) {
        try {
          return Promise.resolve(inner(current))
        } catch (error) {
          return Promise.reject(error)
        }
      }
      let called = false
      let settled = false
      let further: Promise<unknown> | undefined
      const next = (replacement?: unknown): Promise<unknown> => {
        if (settled) throw new WaterfallNextError({ event: name, reason: 'after-settle' })
        if (called) throw new WaterfallNextError({ event: name, reason: 'called-twice' })
        called = true
        further = run(index + 1, replacement === undefined ? current : replacement)
        further.catch(noop)
        return further
      }
      let returned: unknown
      try {
        returned = call(record, current, next)
      } catch (error) {
        settled = true
        return Promise.reject(error)
      }
      return Promise.resolve(returned).then(
        (value) => {
          settled = true
          if (value !== undefined) return each === undefined ? value : each(value)
          if (further !== undefined) return further
          called = true
          return run(index + 1, current)
        },
        (error: unknown) => {
          settled = true
          throw error
        },
      )
    }
    return run(0, payload)
  }

  /** Each defined event with its mode and listener count, for `inspect()`. */
  describe(): { name: string; mode: EventMode; listeners: number }[] {
    const events: { name: string; mode: EventMode; listeners: number }[] = []
    for (const [name, definition] of this.#definitions) {
      events.push({ name, mode: definition.mode, listeners: this.#emitter.listenerCount(name) })
    }
    return events
  }

  #snapshot(name: string, admission: ReadonlySet<ScopeKey> | undefined): ListenerRecord[] {
    if (this.#emitter.listenerCount(name) === 0) return []
    const records: ListenerRecord[] = []
    for (const listener of this.#emitter.listeners(name) as Invoker[]) {
      if (admits(listener.record, admission)) records.push(listener.record)
    }
    return records
  }

  #invoker(record: ListenerRecord): Invoker {
    const onFailure = this.#onFailure
    const invoke = (payload: unknown, admission: ReadonlySet<ScopeKey> | undefined, subject?: string): void => {
      if (!isLive(record) || !admits(record, admission)) return
      try {
        const result = call(record, payload)
        if (isThenable(result))
          result.then(undefined, (error: unknown) => onFailure(record.name, error, record, subject))
      } catch (error) {
        onFailure(record.name, error, record, subject)
      }
    }
    return Object.assign(invoke, { record })
  }
}
