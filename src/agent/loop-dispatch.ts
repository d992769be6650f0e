import type { EventNameOfMode, PayloadOf, ResultOf } from '../kernel/yoke-events.js'
import type { LoopHost } from './loop-host.js'
import { raceTurnSignal } from './race-turn-signal.js'

/**
 * A waterfall of the loop (`agent/pre-step`, `agent/request`, `agent/request-error`), routed to the
 * agent's scope. With no listener registered the result is `inner(payload)`, computed now, with
 * no dispatch, no promise and no race: nothing could have answered differently. With listeners it
 * is dispatched in the agent's initiator frame (a listener's `initiator.current()` is the agent)
 * and raced against the turn signal: a listener that ignores the signal cannot hold a cancel up.
 *
 * @param host - the agent's loop host
 * @param name - the waterfall
 * @param payload - its payload
 * @param inner - the innermost default (synchronous)
 * @param signal - the turn signal
 * @returns the result, or a promise of it when a listener ran
 * @internal
 */
export function loopWaterfall<N extends EventNameOfMode<'waterfall'>>(
  host: LoopHost,
  name: N,
  payload: PayloadOf<N>,
  inner: (payload: PayloadOf<N>) => ResultOf<N>,
  signal: AbortSignal,
): ResultOf<N> | Promise<ResultOf<N>> {
  if (!host.ctx.listens(name, 'waterfall')) return inner(payload)
  return raceTurnSignal(
    host.frame(() => host.ctx.waterfall(name, payload, inner, { scope: host.agent })),
    signal,
  )
}

/**
 * A serial event of the loop (`agent/turn-stopping`): with no listener nothing runs and the result
 * is `undefined` at once; else like {@link loopWaterfall}.
 *
 * @param host - the agent's loop host
 * @param name - the serial event
 * @param payload - its payload
 * @param signal - the turn signal
 * @returns `undefined`, or a promise of the first listener result
 * @internal
 */
export function loopSerial<N extends EventNameOfMode<'serial'>>(
  host: LoopHost,
  name: N,
  payload: PayloadOf<N>,
  signal: AbortSignal,
): undefined | Promise<ResultOf<N> | undefined> {
  if (!host.ctx.listens(name, 'serial')) return undefined
  return raceTurnSignal(
    host.frame(() => host.ctx.serial(name, payload, { scope: host.agent })),
    signal,
  )
}
