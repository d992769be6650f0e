import type { ZodType } from 'zod'
import { ErrorCode } from '../errors/codes.js'
import { EventTypeError } from '../errors/event-type-error.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { coreEventTypes, type SessionEventTypeDefinition } from './core-event-types.js'

/** Where a registered event type may appear. */
export type EventEnclosure = 'none' | 'turn' | 'step'

/** Options of {@link SessionCatalog.registerEventType}. */
export interface EventTypeOptions {
  /** Checks `data` on append and in seeds; the parse result is discarded. */
  readonly schema?: ZodType
  /** Plugin types are always log-only; `true` is refused with `SURFACE_NOT_ALLOWED`. */
  readonly surface?: false
  /**
   * Whether the event needs an open turn or step.
   *
   * @default 'none'
   */
  readonly enclosure?: EventEnclosure
}

const typeNamePattern = /^[a-z][a-z0-9-]*(\/[a-z][a-z0-9-]*)+$/

/**
 * The session event catalog of one harness: the core types plus the types plugins register.
 * Every session of the harness checks appends and seeds against it. `harness.sessions.catalog`;
 * {@link createSessionCatalog} builds a stand-alone one.
 */
export interface SessionCatalog {
  /**
   * Registers a plugin event type. Registers nothing on failure.
   *
   * @param type - `noun/verb` name, `^[a-z][a-z0-9-]*(/[a-z][a-z0-9-]*)+$`
   * @param options - schema, enclosure
   * @returns a function that unregisters the type (committed events are untouched)
   * @throws {@link EventTypeError} `INVALID_EVENT_TYPE_NAME`, `DUPLICATE_EVENT_TYPE` or `SURFACE_NOT_ALLOWED`;
   *   {@link InvalidArgumentError} for options that are not an object, an unknown option, a bad `enclosure` or `schema`
   */
  registerEventType(type: string, options?: EventTypeOptions): () => void
  /**
   * The definition of a type, core or registered.
   *
   * @param type - the type name
   * @returns its definition, or `undefined` when unknown
   */
  get(type: string): SessionEventTypeDefinition | undefined
  /**
   * Every known type, core and registered, sorted.
   *
   * @returns a frozen list
   */
  eventTypes(): readonly string[]
}

/**
 * A new catalog that knows the core event types.
 *
 * @returns the catalog
 */
export function createSessionCatalog(): SessionCatalog {
  return new EventTypeCatalog()
}

/** The {@link SessionCatalog} {@link createSessionCatalog} builds: a map of type definitions. */
class EventTypeCatalog implements SessionCatalog {
  readonly #types: Map<string, SessionEventTypeDefinition>
  #sorted: readonly string[] | undefined

  constructor() {
    this.#types = new Map(coreEventTypes())
  }

  /**
   * Registers a plugin event type. Registers nothing on failure.
   *
   * @param type - `noun/verb` name, `^[a-z][a-z0-9-]*(/[a-z][a-z0-9-]*)+$`
   * @param options - schema, enclosure
   * @returns a function that unregisters the type (committed events are untouched)
   * @throws {@link EventTypeError} `INVALID_EVENT_TYPE_NAME`, `DUPLICATE_EVENT_TYPE` or `SURFACE_NOT_ALLOWED`;
   *   {@link InvalidArgumentError} for options that are not an object, an unknown option, a bad `enclosure` or `schema`
   */
  registerEventType(type: string, options: EventTypeOptions = {}): () => void {
    if (typeof type !== 'string' || !typeNamePattern.test(type)) {
      throw new EventTypeError({
        code: ErrorCode.INVALID_EVENT_TYPE_NAME,
        detail: `event type name ${JSON.stringify(type)} must match ${typeNamePattern}`,
        eventType: String(type),
      })
    }
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw new InvalidArgumentError({
        argument: 'options',
        reason: `event type "${type}": options must be { schema?, enclosure? }`,
        value: options,
      })
    }
    for (const key of Object.keys(options)) {
      if (key !== 'schema' && key !== 'surface' && key !== 'enclosure') {
        throw new InvalidArgumentError({
          argument: `options.${key}`,
          reason: `event type "${type}": not an option (schema, enclosure)`,
          value: (options as Record<string, unknown>)[key],
        })
      }
    }
    if (this.#types.has(type)) {
      throw new EventTypeError({
        code: ErrorCode.DUPLICATE_EVENT_TYPE,
        detail: `event type "${type}" is already ${this.#types.get(type)?.core === true ? 'a core type' : 'registered'}`,
        eventType: type,
      })
    }
    if ((options as { surface?: unknown }).surface !== undefined && options.surface !== false) {
      throw new EventTypeError({
        code: ErrorCode.SURFACE_NOT_ALLOWED,
        detail: `event type "${type}" cannot be a surface type: only user/message, assistant/message and tool/result are`,
        eventType: type,
      })
    }
    const enclosure = options.enclosure ?? 'none'
    if (enclosure !== 'none' && enclosure !== 'turn' && enclosure !== 'step') {
      throw new InvalidArgumentError({
        argument: 'options.enclosure',
        reason: `event type "${type}": enclosure must be 'none', 'turn' or 'step'`,
        value: enclosure,
      })
    }
    const schema: unknown = options.schema
    if (
      schema !== undefined &&
      (typeof schema !== 'object' ||
        schema === null ||
        typeof (schema as { safeParse?: unknown }).safeParse !== 'function')
    ) {
      throw new InvalidArgumentError({
        argument: 'options.schema',
        reason: `event type "${type}": schema must be a zod schema`,
        value: schema,
      })
    }
    const definition: SessionEventTypeDefinition = Object.freeze({
      type,
      schema: options.schema,
      surface: false,
      core: false,
      enclosure,
    })
    this.#types.set(type, definition)
    this.#sorted = undefined
    return () => {
      if (this.#types.get(type) !== definition) return
      this.#types.delete(type)
      this.#sorted = undefined
    }
  }

  /**
   * The definition of a type, core or registered.
   *
   * @param type - the type name
   * @returns its definition, or `undefined` when unknown
   */
  get(type: string): SessionEventTypeDefinition | undefined {
    return this.#types.get(type)
  }

  /**
   * Every known type, core and registered, sorted.
   *
   * @returns a frozen list
   */
  eventTypes(): readonly string[] {
    this.#sorted ??= Object.freeze([...this.#types.keys()].sort())
    return this.#sorted
  }
}
