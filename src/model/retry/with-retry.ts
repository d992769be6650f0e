import { InvalidArgumentError } from '../../errors/invalid-argument-error.js'
import { InvalidOptionsError } from '../../errors/invalid-options-error.js'
import type { ValidationIssue } from '../../errors/issue.js'
import { LlmError } from '../../errors/llm-error.js'
import { type Clock, systemClock } from '../../kernel/host-services.js'
import type { ScopeKey } from '../../kernel/scope-graph.js'
import type { AssistantContentBlock } from '../../session/content-block.js'
import type { LlmFailure } from '../../session/llm-failure.js'
import type { TokenUsage } from '../../session/stream-chunk.js'
import { createAssembler } from '../assembler.js'
import { modelFailure } from '../failure-defaults.js'
import type { ModelRegistry } from '../model-registry.js'
import type { ModelRequest } from '../model-request.js'
import { retryDelay, waitDelay } from './retry-delay.js'
import { fitsRetryBudget, isRetryable, type RetryPolicy, resolveRetryPolicy } from './retry-policy.js'

/** Options of {@link withRetry}. */
export interface WithRetryOptions {
  /**
   * The clock the backoff waits on (pass the harness clock, `ctx.get(services.clock)`).
   *
   * @default the system clock
   */
  readonly clock?: Clock
}

/** What `onRetry` is told before a retry is sent. */
export interface RetryNotice {
  /** The retry number, 1-based (equal to the number of the attempt that failed). */
  readonly attempt: number
  /** How long was waited before this retry, in milliseconds. */
  readonly delayMs: number
  /** The failure being retried. */
  readonly failure: LlmFailure
}

/** Options of {@link RetryingModel.complete}. */
export interface CompleteOptions {
  /** Resolve the provider's route from this scope's layer (as `models.stream(request, { scope })`). */
  readonly scope?: ScopeKey
  /**
   * Called after each backoff wait, right before the retry is sent. Synchronous; a throw rejects
   * `complete` with it and no further attempt is made.
   */
  readonly onRetry?: (notice: RetryNotice) => void
}

/** A successful call through {@link withRetry}. */
export interface ModelCompletion {
  /** The assembled content. */
  readonly content: readonly AssistantContentBlock[]
  /** `tool-calls` iff `content` has a tool call, `max-tokens` when the output was cut. */
  readonly finishReason: 'stop' | 'tool-calls' | 'max-tokens'
  /** The successful attempt's usage, when reported. */
  readonly usage?: TokenUsage
  /** How many model calls were made, the successful one included. */
  readonly attempts: number
  /** The request's provider. */
  readonly provider: string
  /** The request's model. */
  readonly model: string
}

/** A model registry wrapped with a retry policy (see {@link withRetry}). */
export interface RetryingModel {
  /**
   * Streams `request` to completion, retrying retryable failures under the policy.
   *
   * @param request - the request; its `signal` aborts the call and the backoff wait
   * @param options - the routing scope and the `onRetry` callback
   * @returns the completion
   * @throws {@link LlmError} (as a rejection) with the failure that stood and `attempts`; code
   *   `ABORTED` when `request.signal` aborted (also during a wait); {@link InvalidArgumentError}
   *   for a request that is not an object or has no `AbortSignal`, or a non-function `onRetry`;
   *   whatever `models.stream` itself throws (an `llm/stream` middleware bug) or `onRetry` throws, unchanged
   */
  complete(request: ModelRequest, options?: CompleteOptions): Promise<ModelCompletion>
}

const optionKeys: ReadonlySet<string> = new Set(['clock'])

function checkOptions(options: unknown): WithRetryOptions {
  if (options === undefined) return {}
  const issues: ValidationIssue[] = []
  if (typeof options !== 'object' || options === null) {
    issues.push({ path: [], message: 'must be an options object' })
  } else {
    const record = options as Readonly<Record<string, unknown>>
    for (const key of Object.keys(record))
      if (!optionKeys.has(key)) issues.push({ path: [key], message: 'unknown option' })
    const clock = record['clock'] as { readonly now?: unknown; readonly setTimer?: unknown } | null | undefined
    if (clock !== undefined && (typeof clock?.now !== 'function' || typeof clock.setTimer !== 'function')) {
      issues.push({ path: ['clock'], message: 'must be a Clock { now(), setTimer() }' })
    }
  }
  const first = issues[0]
  if (first === undefined) return options as WithRetryOptions
  const value =
    first.path.length === 0 ? options : (options as Readonly<Record<string, unknown>>)[String(first.path[0])]
  throw new InvalidOptionsError({ issues, value })
}

function abortedError(signal: AbortSignal, attempts: number, failure?: LlmFailure): LlmError {
  const standing =
    failure?.code === 'ABORTED' ? failure : modelFailure('ABORTED', 'request aborted', failure?.phase ?? 'pre-request')
  return new LlmError(standing, { attempts, cause: signal.reason })
}

/**
 * Gives direct model callers (compaction, titles, hosts) the retry policy of the `retry` plugin
 * (beyond dsh). Each attempt is a fresh `models.stream(request, { scope })` read
 * through an assembler. A failure the policy retries waits (the delay rule of the `retry` plugin,
 * jitter seeded by `"<sessionId>:<purpose>:<n>"`, `sessionId` `''` when the request has none), calls
 * `onRetry`, and tries again; any other failure, a retry beyond `maxRetries`, a `retryAfterMs`
 * above `maxDelayMs` or a wait beyond the `maxTotalDelayMs` budget rejects with `LlmError(failure)` carrying `attempts`. An abort of
 * `request.signal` rejects with `LlmError` `ABORTED`. It writes no session event.
 *
 * @param models - the registry, usually `ctx.get(services.models)`
 * @param policy - policy overrides; every omitted field takes its default
 * @param options - the clock
 * @returns the retrying caller
 * @throws {@link InvalidArgumentError} when `models` has no `stream` method; {@link InvalidOptionsError}
 *   for an invalid policy (message `policy.<field>: …`) or options
 * @example
 * ```ts
 * const model = withRetry(ctx.get(services.models), { maxRetries: 2 }, { clock: ctx.get(services.clock) })
 * const { content, attempts } = await model.complete(request, { onRetry: ({ attempt, delayMs }) => log(attempt, delayMs) })
 * ```
 */
export function withRetry(
  models: ModelRegistry,
  policy?: Partial<RetryPolicy>,
  options?: WithRetryOptions,
): RetryingModel {
  if (typeof models !== 'object' || models === null || typeof (models as { stream?: unknown }).stream !== 'function') {
    throw new InvalidArgumentError({
      argument: 'models',
      reason: 'must be a ModelRegistry (an object with a stream method)',
      value: models,
    })
  }
  const resolved = resolveRetryPolicy(policy)
  const clock = checkOptions(options).clock ?? systemClock()

  async function complete(request: ModelRequest, completeOptions: CompleteOptions = {}): Promise<ModelCompletion> {
    if (typeof request !== 'object' || request === null) {
      throw new InvalidArgumentError({ argument: 'request', reason: 'must be a ModelRequest object', value: request })
    }
    const signal: unknown = request.signal
    if (!(signal instanceof AbortSignal)) {
      throw new InvalidArgumentError({ argument: 'request.signal', reason: 'must be an AbortSignal', value: signal })
    }
    const onRetry: unknown = completeOptions.onRetry
    if (onRetry !== undefined && typeof onRetry !== 'function') {
      throw new InvalidArgumentError({ argument: 'options.onRetry', reason: 'must be a function', value: onRetry })
    }
    const streamOptions = completeOptions.scope === undefined ? {} : { scope: completeOptions.scope }
    if (signal.aborted) throw abortedError(signal, 0)
    let waitedMs = 0
    for (let attempts = 1; ; attempts++) {
      const assembler = createAssembler()
      for await (const chunk of models.stream(request, streamOptions)) assembler.push(chunk)
      const outcome = assembler.outcome()
      if (outcome.kind === 'message') {
        return Object.freeze({
          content: outcome.content,
          finishReason: outcome.finishReason,
          ...(outcome.usage === undefined ? {} : { usage: outcome.usage }),
          attempts,
          provider: request.provider,
          model: request.model,
        })
      }
      const failure = outcome.failure
      if (signal.aborted) throw abortedError(signal, attempts, failure)
      if (!isRetryable(resolved, failure) || attempts > resolved.maxRetries) throw new LlmError(failure, { attempts })
      const delayMs = retryDelay(resolved, {
        retry: attempts,
        seed: `${request.metadata.sessionId ?? ''}:${request.metadata.purpose}:${attempts}`,
        ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
      })
      if (delayMs === undefined || !fitsRetryBudget(resolved, waitedMs, delayMs))
        throw new LlmError(failure, { attempts })
      if (!(await waitDelay(clock, delayMs, [signal]))) throw abortedError(signal, attempts)
      waitedMs += delayMs
      ;(onRetry as CompleteOptions['onRetry'])?.({ attempt: attempts, delayMs, failure })
    }
  }

  return Object.freeze({ complete })
}
