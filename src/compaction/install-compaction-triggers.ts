import type { Agent } from '../agent/agent.js'
import type { Context } from '../kernel/context.js'
import type { CompactionEngine } from './compaction-engine.js'

/** Options of {@link installCompactionTriggers}. */
export interface CompactionTriggerOptions {
  /**
   * Overflow recoveries per `(agent, turn, step)`; `0` disables overflow recovery.
   *
   * @default 2
   */
  readonly maxOverflowRetries?: number
}

interface StepCount {
  readonly turn: number
  readonly step: number
  count: number
}

/**
 * Installs the automatic triggers (pressure and context overflow) for any {@link CompactionEngine}, on an
 * untagged child context of `ctx`: one `agent/pre-step` listener (pressure, before `next()`; the
 * step proceeds whatever happened) and one `agent/request-error` listener (a
 * `CONTEXT_WINDOW_EXCEEDED` failure on a live signal, at most `maxOverflowRetries` recoveries per
 * step; `{ kind: 'retry' }` iff the surface changed, else `next()`). Failures never escape a
 * trigger: an engine that throws is reported to the logger.
 *
 * @param ctx - the plugin context
 * @param engine - the engine to drive
 * @param options - `maxOverflowRetries`
 * @returns a function that removes the triggers (disposes their context)
 * @example
 * ```ts
 * apply(ctx) {
 *   const engine = createMyEngine(ctx)
 *   ctx.provide(services.compaction, engine)
 *   installCompactionTriggers(ctx, engine, { maxOverflowRetries: 1 })
 * }
 * ```
 */
export function installCompactionTriggers(
  ctx: Context,
  engine: CompactionEngine,
  options: CompactionTriggerOptions = {},
): () => Promise<void> {
  const maxOverflowRetries = options.maxOverflowRetries ?? 2
  const triggers = ctx.child('compaction-triggers')
  const counts = new WeakMap<object, StepCount>()
  const logFailure = (trigger: string, error: unknown): null => {
    triggers.logger.error(`compaction trigger ${trigger} failed`, { error })
    return null
  }
  triggers.on('agent/pre-step', async (payload, next) => {
    await engine
      .compactIfNeeded({ agent: payload.agent, trigger: 'pressure', signal: payload.signal, pending: payload.messages })
      .catch((error: unknown) => logFailure('pressure', error))
    return next()
  })
  triggers.on('agent/request-error', async (payload, next) => {
    const { failure, signal, turn, step } = payload
    if (failure.code !== 'CONTEXT_WINDOW_EXCEEDED' || signal.aborted) return next()
    // The loop hands the full agent handle; the payload type only names what the retry plugin reads.
    const agent = payload.agent as Agent
    const previous = counts.get(agent)
    const current =
      previous !== undefined && previous.turn === turn && previous.step === step ? previous : { turn, step, count: 0 }
    if (current.count >= maxOverflowRetries) return next()
    current.count++
    counts.set(agent, current)
    const report = await engine
      .compactIfNeeded({ agent, trigger: 'context-overflow', signal })
      .catch((error: unknown) => logFailure('context-overflow', error))
    if (report?.actions.some((action) => action.kind !== 'failed') === true) return { kind: 'retry' }
    return next()
  })
  return () => triggers.dispose().then(() => undefined)
}
