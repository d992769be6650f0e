import type { DescriptorOfMode, Emit, EventMode, Parallel, Serial, Waterfall, WaterfallNext } from './event-catalog.js'
import type { KernelEvents } from './kernel-events.js'

/**
 * The map of every typed event name to its descriptor. It starts with the kernel's own events;
 * each feature, and any plugin, adds its events by declaration merging
 * (`declare module 'yoke' { interface YokeEvents extends AcmeEvents {} }`), so a wrong-mode
 * dispatch fails to compile.
 */
export interface YokeEvents extends KernelEvents {}

/** Every event name known to the type system (core names plus those merged into {@link YokeEvents}). */
export type EventName = keyof YokeEvents & string

/** The event names whose mode is `M`. */
export type EventNameOfMode<M extends EventMode> = {
  [N in EventName]: YokeEvents[N] extends DescriptorOfMode<M> ? N : never
}[EventName]

/** The payload type of event `N`. */
export type PayloadOf<N extends EventName> =
  YokeEvents[N] extends Emit<infer P>
    ? P
    : YokeEvents[N] extends Parallel<infer P>
      ? P
      : YokeEvents[N] extends Serial<infer P, unknown>
        ? P
        : YokeEvents[N] extends Waterfall<infer P, unknown>
          ? P
          : never

/** The result type of the serial or waterfall event `N`. */
export type ResultOf<N extends EventName> =
  YokeEvents[N] extends Serial<unknown, infer R> ? R : YokeEvents[N] extends Waterfall<unknown, infer R> ? R : never

/** The listener signature of event `N`, by its mode. */
export type ListenerOf<N extends EventName> =
  YokeEvents[N] extends Waterfall<infer P, infer R>
    ? (payload: P, next: WaterfallNext<P, R>) => R | undefined | Promise<R | undefined>
    : YokeEvents[N] extends Serial<infer P, infer R>
      ? (payload: P) => R | undefined | Promise<R | undefined>
      : YokeEvents[N] extends Emit<infer P>
        ? (payload: P) => void
        : YokeEvents[N] extends Parallel<infer P>
          ? (payload: P) => void | Promise<void>
          : never
