import { InvalidArgumentError } from '../errors/invalid-argument-error.js'

/** How an event's listeners run; bound to the event by its definition. */
export type EventMode = 'emit' | 'parallel' | 'serial' | 'waterfall'

/** Type-level descriptor of an `emit` event (synchronous, failures contained). */
export interface Emit<P> {
  /** The mode. */
  readonly mode: 'emit'
  /** The payload type. */
  readonly payload: P
}

/** Type-level descriptor of a `parallel` event (all listeners awaited together). */
export interface Parallel<P> {
  /** The mode. */
  readonly mode: 'parallel'
  /** The payload type. */
  readonly payload: P
}

/** Type-level descriptor of a `serial` event (first non-`undefined` result wins). */
export interface Serial<P, R> {
  /** The mode. */
  readonly mode: 'serial'
  /** The payload type. */
  readonly payload: P
  /** The result type. */
  readonly result: R
}

/** Type-level descriptor of a `waterfall` event (middleware around a default). */
export interface Waterfall<P, R> {
  /** The mode. */
  readonly mode: 'waterfall'
  /** The payload type. */
  readonly payload: P
  /** The result type. */
  readonly result: R
}

/** Any event descriptor. */
export type EventDescriptor = Emit<unknown> | Parallel<unknown> | Serial<unknown, unknown> | Waterfall<unknown, unknown>

/** A map of event names to descriptors, as merged into `YokeEvents`. */
export type EventMap = { readonly [name: string]: EventDescriptor }

/** The descriptor interface of mode `M`. */
export type DescriptorOfMode<M extends EventMode> = M extends 'emit'
  ? Emit<unknown>
  : M extends 'parallel'
    ? Parallel<unknown>
    : M extends 'serial'
      ? Serial<unknown, unknown>
      : Waterfall<unknown, unknown>

/** The `next` a waterfall listener gets: calls everything further in, optionally with a replacement payload. */
export type WaterfallNext<P, R> = (replacement?: P) => Promise<R>

const catalogBrand = Symbol.for('yoke.eventCatalog')
const eventNamePattern = /^[a-z][a-z0-9-]*(\/[a-z0-9-]+)+$/
const modes: ReadonlySet<string> = new Set<EventMode>(['emit', 'parallel', 'serial', 'waterfall'])

/** A set of event definitions (name → mode); takes effect when registered on a context or plugin. */
export interface EventCatalog<M extends EventMap = EventMap> {
  /** Each defined name and its mode. */
  readonly modes: Readonly<Record<string, EventMode>>
  /** Type-level only: the event map. Never set at run time. */
  readonly __events?: M
}

/**
 * Declares a catalog of events, binding each name to its dispatch mode. Merge the same map into
 * `YokeEvents` so dispatches and listeners are typed.
 *
 * @param definitions - each event name (`noun/verb`, e.g. `'acme/order-placed'`) and its mode
 * @returns a frozen catalog
 * @throws {@link InvalidArgumentError} for a malformed name or an unknown mode
 * @example
 * ```ts
 * declare module 'yoke' {
 *   interface YokeEvents { 'acme/order-placed': Emit<{ id: string }> }
 * }
 * const events = defineEvents<{ 'acme/order-placed': Emit<{ id: string }> }>({ 'acme/order-placed': 'emit' })
 * ```
 */
export function defineEvents<M extends EventMap>(
  definitions: { readonly [K in keyof M]: M[K]['mode'] },
): EventCatalog<M> {
  if (typeof definitions !== 'object' || definitions === null) {
    throw new InvalidArgumentError({
      argument: 'definitions',
      reason: 'must be an object of name → mode',
      value: definitions,
    })
  }
  const checked: Record<string, EventMode> = {}
  for (const [name, mode] of Object.entries(definitions as Record<string, unknown>)) {
    if (!eventNamePattern.test(name)) {
      throw new InvalidArgumentError({
        argument: 'event name',
        reason: `${JSON.stringify(name)} must look like "noun/verb" (${eventNamePattern})`,
        value: name,
      })
    }
    if (typeof mode !== 'string' || !modes.has(mode)) {
      throw new InvalidArgumentError({
        argument: 'event mode',
        reason: `mode of "${name}" must be emit, parallel, serial or waterfall, not ${JSON.stringify(mode)}`,
        value: mode,
      })
    }
    checked[name] = mode as EventMode
  }
  return Object.freeze({ modes: Object.freeze(checked), [catalogBrand]: true }) as EventCatalog<M>
}

/** Whether `value` is a catalog made by {@link defineEvents} in any copy of Yoke. */
export function isEventCatalog(value: unknown): value is EventCatalog {
  return typeof value === 'object' && value !== null && catalogBrand in value
}
