import type { Clock } from '../kernel/host-services.js'
import type { CallConfig } from '../session/request-header.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import type { ModelRequest } from './model-request.js'
import type { RetryPolicy } from './retry/retry-policy.js'
import type { responseFormatInstruction } from './response-format-instruction.js'

/** What an adapter knows about one model. */
export interface ModelInfo {
  /** The context window in tokens. */
  readonly contextWindow?: number
  /** The output ceiling used when a call config names none. */
  readonly defaultMaxTokens?: number
  /** The reasoning efforts the model offers; absent means any. */
  readonly reasoningEfforts?: readonly string[]
  /** The effort used when a call config names none. */
  readonly defaultReasoningEffort?: string
  /** The input kinds the model accepts; absent means text and image. */
  readonly inputModalities?: readonly ('text' | 'image')[]
}

/** The options `stream()` receives; `signal === request.signal` always. */
export interface ModelStreamOptions {
  /** The request's abort signal. */
  readonly signal: AbortSignal
  /**
   * The harness clock, when the model registry calls: measure time with it (timeouts, `retry-after`
   * HTTP dates) so a fake clock drives the adapter too. Absent for a direct call.
   */
  readonly clock?: Clock
}

/**
 * Turns one {@link ModelRequest} into one stream of {@link StreamChunk}s. An
 * adapter never sees the session, never retries and never throws for a model or transport outcome:
 * every outcome is a terminal `finish` chunk. The model registry enforces the chunk protocol at the
 * boundary, so a misbehaving adapter cannot put an invalid stream in the log.
 *
 * @example
 * ```ts
 * const echo: ModelAdapter = {
 *   provider: 'echo',
 *   async *stream(request) {
 *     yield { type: 'text-delta', index: 0, text: 'hi' }
 *     yield { type: 'finish', reason: 'stop' }
 *   },
 * }
 * ```
 */
export interface ModelAdapter {
  /** The default route id. */
  readonly provider: string
  /** The model used when a route or call config names none. */
  readonly defaultModel?: string
  /**
   * Whether the adapter gives `request.responseFormat` to the provider itself (a wire field such
   * as `response_format`, or its own instruction). When it is not `true`, the registry appends
   * {@link responseFormatInstruction}'s text to `system` before calling the adapter, so every
   * adapter gets structured output; the logged request keeps the plain `system` and
   * `responseFormat`, and the instruction is rebuilt from them.
   *
   * @default false
   */
  readonly supportsResponseFormat?: boolean
  /**
   * Streams one call.
   *
   * @param request - the validated, frozen request
   * @param options - the request's signal
   * @returns the chunks, ending with exactly one `finish`
   */
  stream(request: ModelRequest, options: ModelStreamOptions): AsyncIterable<StreamChunk>
  /**
   * Describes a model.
   *
   * @param model - an adapter-owned model id
   * @returns what the adapter knows, or `undefined`
   */
  describeModel?(model: string): ModelInfo | undefined
}

/**
 * An adapter plus call-config defaults: registers `adapter` under
 * `provider ?? adapter.provider`; the other fields, with `model ?? adapter.defaultModel`, become
 * the agent's call-config defaults.
 */
export interface ModelRoute extends Partial<CallConfig> {
  /** The adapter to route. */
  readonly adapter: ModelAdapter
  /**
   * The retry policy of model requests, for the harness `model` option only (an agent's route
   * refuses it): the fields given override the `retry` entry's defaults, e.g.
   * `{ maxTotalDelayMs: 2000 }` to fail a dead endpoint after about 1.5 s of waiting, or
   * `{ maxRetries: 0 }` to never retry. Checked at `createHarness` (`InvalidOptionsError` at
   * `model.retry.<field>`).
   *
   * @default the `retry` entry's policy: 5 retries, 500 ms doubling to 10 s, about 15.5 s of waits
   */
  readonly retry?: Partial<RetryPolicy>
}
