import { z } from 'zod'
import type { JsonValue } from './json-value.js'
import { jsonValueSchema, nonEmptyStringSchema, positiveSafeIntegerSchema, typedSchema } from './schema-primitives.js'

/**
 * How far a model call got when it failed: a retry policy uses it to tell whether output may
 * already have been streamed.
 */
export type LlmFailurePhase = 'pre-request' | 'connect' | 'response' | 'streaming'

/** A model or transport failure as data: what a `finish` chunk and `turn/end` carry. */
export interface LlmFailure {
  /** The failure code, e.g. `'RATE_LIMIT'`, `'HTTP_404'`, `'UNKNOWN'`; non-empty. */
  readonly code: string
  /** A human-readable description; never contains a credential. */
  readonly message: string
  /** Whether retrying may help; absent means `false`. */
  readonly retryable?: boolean
  /** The HTTP status, an integer from 100 to 599. */
  readonly status?: number
  /** How long the provider asked to wait before retrying, in milliseconds (a positive safe integer). */
  readonly retryAfterMs?: number
  /** The provider's request id, for support requests. */
  readonly requestId?: string
  /** How far the call got. */
  readonly phase?: LlmFailurePhase
  /** Provider facts, e.g. `{ providerCode, body }`; any JSON. */
  readonly detail?: JsonValue
}

/** The schema of {@link LlmFailurePhase}. */
export const llmFailurePhaseSchema = typedSchema<LlmFailurePhase>()(
  z.enum(['pre-request', 'connect', 'response', 'streaming']),
)

/** The strict schema of an {@link LlmFailure}. */
export const llmFailureSchema = typedSchema<LlmFailure>()(
  z.strictObject({
    code: nonEmptyStringSchema,
    message: z.string(),
    retryable: z.boolean().exactOptional(),
    status: z
      .int({ error: 'must be an HTTP status (an integer from 100 to 599)' })
      .min(100, { error: 'must be an HTTP status (an integer from 100 to 599)' })
      .max(599, { error: 'must be an HTTP status (an integer from 100 to 599)' })
      .exactOptional(),
    retryAfterMs: positiveSafeIntegerSchema.exactOptional(),
    requestId: z.string().exactOptional(),
    phase: llmFailurePhaseSchema.exactOptional(),
    detail: jsonValueSchema.exactOptional(),
  }),
)
