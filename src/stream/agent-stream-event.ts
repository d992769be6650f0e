import type { CoreEventData } from '../session/core-event-types.js'
import type { JsonValue } from '../session/json-value.js'
import type { SessionEvent } from '../session/session-event.js'

/**
 * The payload type of each session event type that the type system knows, keyed by type: the
 * core types, plus whatever a plugin merges in for the types it registers.
 *
 * @example
 * ```ts
 * declare module 'yoke' {
 *   interface SessionEventDataMap {
 *     'acme/audit': { readonly note: string }
 *   }
 * }
 * ```
 */
export interface SessionEventDataMap extends CoreEventData {}

/** A session event type name declared in {@link SessionEventDataMap}. */
export type DeclaredEventType = keyof SessionEventDataMap & string

/**
 * A committed session event of a declared type, its `data` typed by its `type`: a union over
 * `T` that narrows on `event.type`.
 */
export type TypedSessionEvent<T extends DeclaredEventType = DeclaredEventType> = {
  [K in T]: SessionEvent<K, SessionEventDataMap[K]> & SessionEvent
}[T]

declare const undeclaredEventType: unique symbol

/**
 * The `type` of an event whose type no one declared in {@link SessionEventDataMap}. At run time
 * it is the event's real type name (a string); the type system keeps it apart from every declared
 * name, so that testing `event.type` against a declared name also narrows `event.data`. Read it
 * as a string (`event.type.startsWith('acme/')`); to compare it with a literal, declare the type.
 */
export type UndeclaredEventType = '(undeclared)' & {
  /** A brand that exists only in the type system. */
  readonly [undeclaredEventType]: true
}

/** A committed session event of a type not declared in {@link SessionEventDataMap}: any JSON data. */
export type UndeclaredSessionEvent = SessionEvent<UndeclaredEventType, JsonValue>

/**
 * What `agent.stream()` and the session streams yield: a committed session event, discriminated by
 * `type`. For each declared type, narrowing on `event.type` types `event.data`; an event of any
 * other type (a plugin's that is not declared) is an {@link UndeclaredSessionEvent}.
 *
 * @example
 * ```ts
 * for await (const event of agent.stream('hi')) {
 *   if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') process.stdout.write(event.data.chunk.text)
 *   else if (event.type === 'tool/call') console.log(event.data.name, event.data.arguments)
 * }
 * ```
 */
export type AgentStreamEvent = TypedSessionEvent | UndeclaredSessionEvent

/**
 * Views a committed session event as an {@link AgentStreamEvent}. Sound because the session's
 * catalog checks every declared type's data on append.
 *
 * @param event - a committed event
 * @returns the same object
 */
export function asStreamEvent(event: SessionEvent): AgentStreamEvent {
  return event as AgentStreamEvent
}
