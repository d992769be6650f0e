import { z } from 'zod'
import { defineEvents, type EventCatalog, type Waterfall } from '../../kernel/event-catalog.js'
import type { EventTypeOptions } from '../../session/session-catalog.js'
import { type LlmFailure, llmFailureSchema } from '../../session/llm-failure.js'
import {
  nonEmptyStringSchema,
  nonNegativeSafeIntegerSchema,
  positiveSafeIntegerSchema,
  typedSchema,
} from '../../session/schema-primitives.js'
import type { Session } from '../../session/session.js'

/**
 * Data of the durable `llm/retry` event (08-models.md §9): a failed attempt will be retried after
 * `delayMs`. Appended before the wait, inside the step.
 */
export interface RetryEventData {
  /** Pairs this event with its `llm/retry-started` (an id of kind `'retry'`). */
  readonly retryId: string
  /** The turn number. */
  readonly turn: number
  /** The step number. */
  readonly step: number
  /** The retry number within the step, 1-based. */
  readonly attempt: number
  /** The policy's `maxRetries` at the time. */
  readonly maxRetries: number
  /** How long the plugin waits before the retry, in milliseconds. */
  readonly delayMs: number
  /** The failure being retried. */
  readonly failure: LlmFailure
}

/** Data of the durable `llm/retry-started` event: the wait of the `llm/retry` with the same `retryId` ended and the request is re-sent. */
export interface RetryStartedEventData {
  /** The `retryId` of the matching `llm/retry`. */
  readonly retryId: string
  /** The turn number. */
  readonly turn: number
  /** The step number. */
  readonly step: number
  /** The retry number within the step, 1-based. */
  readonly attempt: number
}

/** The strict payload schema of `llm/retry`. */
export const retryEventDataSchema: z.ZodType<RetryEventData> = typedSchema<RetryEventData>()(
  z.strictObject({
    retryId: nonEmptyStringSchema,
    turn: positiveSafeIntegerSchema,
    step: positiveSafeIntegerSchema,
    attempt: positiveSafeIntegerSchema,
    maxRetries: nonNegativeSafeIntegerSchema,
    delayMs: nonNegativeSafeIntegerSchema,
    failure: llmFailureSchema,
  }),
)

/** The strict payload schema of `llm/retry-started`. */
export const retryStartedEventDataSchema: z.ZodType<RetryStartedEventData> = typedSchema<RetryStartedEventData>()(
  z.strictObject({
    retryId: nonEmptyStringSchema,
    turn: positiveSafeIntegerSchema,
    step: positiveSafeIntegerSchema,
    attempt: positiveSafeIntegerSchema,
  }),
)

/**
 * The durable event types the `retry` plugin registers in the harness's session catalog, with
 * their schemas and enclosure `'step'` (an open step is required).
 *
 * @internal
 */
export const retryEventTypes: Readonly<Record<'llm/retry' | 'llm/retry-started', EventTypeOptions>> = Object.freeze({
  'llm/retry': Object.freeze({ schema: retryEventDataSchema, enclosure: 'step' }),
  'llm/retry-started': Object.freeze({ schema: retryStartedEventDataSchema, enclosure: 'step' }),
})

/**
 * What `agent/request-error` listeners need of the agent: its id and its session (where the
 * `retry` plugin counts and appends). The full `Agent` handle (04-agent.md §2) satisfies it.
 */
export interface RequestErrorAgent {
  /** The agent id, equal to its session id. */
  readonly id: string
  /** The agent's session. */
  readonly session: Session
}

/** Payload of the `agent/request-error` waterfall (04-agent.md T16): a model attempt failed. */
export interface RequestErrorPayload {
  /** The agent whose request failed. */
  readonly agent: RequestErrorAgent
  /** The turn number. */
  readonly turn: number
  /** The step number. */
  readonly step: number
  /** The failed attempt within the step, 1-based. */
  readonly attempt: number
  /** The failure (an `aborted` finish not caused by the turn signal has code `ABORTED`). */
  readonly failure: LlmFailure
  /** The turn signal: a listener that waits must stop when it aborts. */
  readonly signal: AbortSignal
}

/** The decision a listener may return from `agent/request-error`: re-request inside the same step. */
export interface RequestErrorRetry {
  /** Always `'retry'`. */
  readonly kind: 'retry'
}

/** The result of `agent/request-error`: `{ kind: 'retry' }`, or `undefined` (no opinion: the failure stands). */
export type RequestErrorResult = RequestErrorRetry | undefined

/** The live events of the request-error hook. */
export type RequestErrorEvents = {
  /**
   * A model attempt failed (T16). Middleware around the default `undefined`; returning
   * `{ kind: 'retry' }` makes the loop re-request in the same step. A listener that throws rejects
   * the dispatch with that error; one that waits must stop when `signal` aborts.
   */
  readonly 'agent/request-error': Waterfall<RequestErrorPayload, RequestErrorResult>
}

/** The catalog of {@link RequestErrorEvents}, registered by the `retry` plugin (and the agent loop). */
export const requestErrorEvents: EventCatalog<RequestErrorEvents> = defineEvents<RequestErrorEvents>({
  'agent/request-error': 'waterfall',
})
