import { definePlugin, type PluginDefinition } from '../../kernel/plugin.js'
import { ClockKey, IdsKey } from '../../kernel/host-keys.js'
import { SessionsKey } from '../../session/sessions-key.js'
import type { Session } from '../../session/session.js'
import { retryDelay, waitDelay } from './retry-delay.js'
import {
  type RequestErrorPayload,
  type RequestErrorResult,
  type RetryEventData,
  type RetryStartedEventData,
  requestErrorEvents,
  retryEventTypes,
} from './retry-events.js'
import { fitsRetryBudget, isRetryable, type RetryPolicy, retryPolicySchema } from './retry-policy.js'

interface StepRef {
  readonly turn: number
  readonly step: number
}

function isStep(data: unknown, turn: number, step: number): boolean {
  const ref = data as StepRef
  return ref.turn === turn && ref.step === step
}

/**
 * Counts the `llm/retry` events of one step and sums their waits, scanning back from the end of the
 * log to that step's `step/start`: O(events of the step), never O(log), and no copy of the log. The
 * log is the truth, so a resumed step keeps the count and the budget it had.
 */
function retriesInStep(session: Session, turn: number, step: number): { count: number; waitedMs: number } {
  let count = 0
  let waitedMs = 0
  for (let seq = session.length - 1; seq >= 0; seq--) {
    const event = session.at(seq)
    if (event === undefined) break
    if (event.type === 'llm/retry' && isStep(event.data, turn, step)) {
      count++
      waitedMs += (event.data as { readonly delayMs: number }).delayMs
    } else if (event.type === 'step/start' && isStep(event.data, turn, step)) break
  }
  return { count, waitedMs }
}

/**
 * The `retry` entry of the default bundle: on `agent/request-error` it retries
 * a retryable failure inside the same step, with exponential backoff and deterministic jitter,
 * logging `llm/retry` before the wait and `llm/retry-started` after it. Its config is a
 * {@link RetryPolicy} (every field optional; patch it with `{ id: 'retry', merge: { maxRetries: 2 } }`).
 *
 * Per failure: the turn signal already aborted → no opinion; not retryable under the policy, more
 * than `maxRetries` retries in the step, a `retryAfterMs` above `maxDelayMs`, or a wait that would
 * bring the step's waits above `maxTotalDelayMs` → `next()` (the
 * failure stands); otherwise append `llm/retry`, wait on the harness clock (cancelled by the turn
 * signal or by the plugin's disposal: nothing more is appended, no opinion), append
 * `llm/retry-started` and return `{ kind: 'retry' }`. "No opinion" is `undefined` without calling
 * `next()`, which the kernel passes through exactly as `next()` would.
 *
 * @returns a plugin definition
 * @example
 * ```ts
 * const harness = await createHarness({ patches: [{ id: 'retry', merge: { maxRetries: 2, jitter: 0 } }] })
 * ```
 */
export function retryPlugin(): PluginDefinition<RetryPolicy> {
  return definePlugin({
    name: 'retry',
    inject: [SessionsKey],
    events: [requestErrorEvents],
    config: retryPolicySchema.prefault({}),
    apply(ctx, config) {
      const policy: RetryPolicy = Object.freeze({ ...config })
      const sessions = ctx.get(SessionsKey)
      for (const [type, options] of Object.entries(retryEventTypes)) sessions.registerEventType(type, options)
      const clock = ctx.get(ClockKey)
      const ids = ctx.get(IdsKey)
      ctx.on('agent/request-error', async (payload: RequestErrorPayload, next): Promise<RequestErrorResult> => {
        const { agent, turn, step, failure, signal } = payload
        if (signal.aborted) return undefined
        if (!isRetryable(policy, failure)) return next()
        const session = agent.session
        const earlier = retriesInStep(session, turn, step)
        const attempt = 1 + earlier.count
        if (attempt > policy.maxRetries) return next()
        const delayMs = retryDelay(policy, {
          retry: attempt,
          seed: `${session.id}:${turn}:${step}:${attempt}`,
          ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
        })
        if (delayMs === undefined || !fitsRetryBudget(policy, earlier.waitedMs, delayMs)) return next()
        const retryId = ids('retry')
        const retry: RetryEventData = { retryId, turn, step, attempt, maxRetries: policy.maxRetries, delayMs, failure }
        session.append('llm/retry', retry)
        const elapsed = await waitDelay(clock, delayMs, [signal, ctx.signal])
        if (!elapsed || session.disposed) return undefined
        const started: RetryStartedEventData = { retryId, turn, step, attempt }
        session.append('llm/retry-started', started)
        return { kind: 'retry' }
      })
    },
  })
}
