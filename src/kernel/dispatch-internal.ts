import { kernelOf, type Context, type DispatchOptions } from './context.js'
import type { ListenerHome } from './event-bus.js'
import type { EventName } from './yoke-events.js'

/**
 * @internal The homes (contexts) of the listeners a dispatch reached, so that a follow-up dispatch
 * of another event reaches the listeners of the same contexts (`session/disposed` after a vetoed
 * `session/created` goes to those that saw the session).
 */
export type ReachedListeners = ReadonlySet<ListenerHome>

function admissionOf(ctx: Context, options: DispatchOptions | undefined) {
  return options?.scope === undefined ? undefined : kernelOf(ctx).scopes.admission(options.scope)
}

/**
 * @internal A synchronous dispatch of an `emit` event that stops at the first listener that
 * throws synchronously and hands the error back (for vetoes such as `session/created`). Async
 * rejections are contained and reported as usual.
 */
export function dispatchUntilThrow(
  ctx: Context,
  name: EventName,
  payload: unknown,
  options?: DispatchOptions,
): { readonly threw: boolean; readonly error: unknown; readonly reached: ReachedListeners } {
  const bus = kernelOf(ctx).bus
  const invalid = bus.validate(name, 'emit')
  if (invalid !== undefined) throw invalid
  if (ctx.state === 'disposed') return { threw: false, error: undefined, reached: new Set() }
  const outcome = bus.emitUntilThrow(name, payload, admissionOf(ctx, options), options?.subject)
  return { threw: outcome.threw, error: outcome.error, reached: new Set(outcome.reached.map((record) => record.home)) }
}

/**
 * @internal Starts every listener of a `parallel` event (or only those whose home is in `only`) and waits for all;
 * resolves with the failures in registration order and the number of listeners that ran.
 */
export async function dispatchParallel(
  ctx: Context,
  name: EventName,
  payload: unknown,
  only: ReachedListeners | undefined,
  options?: DispatchOptions,
): Promise<{ readonly errors: readonly unknown[]; readonly listeners: number }> {
  const bus = kernelOf(ctx).bus
  const invalid = bus.validate(name, 'parallel')
  if (invalid !== undefined) throw invalid
  return bus.parallelSettled(name, payload, admissionOf(ctx, options), only)
}
