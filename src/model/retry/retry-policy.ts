import { z } from 'zod'
import { InvalidOptionsError } from '../../errors/invalid-options-error.js'
import { type ValidationIssue, valueAt } from '../../errors/issue.js'
import type { LlmFailure } from '../../session/llm-failure.js'
import { typedSchema } from '../../session/schema-primitives.js'

/**
 * When and how long to retry a failed model call. The `retry` plugin and
 * {@link withRetry} share it; every field but `retryableCodes` and `maxTotalDelayMs` has a default.
 *
 * The default budget: up to 5 retries per step, waiting 500, 1000, 2000, 4000 and 8000 ms (each
 * ±10 %), about 15.5 s of waiting in all, plus the failed attempts themselves; a `Retry-After` of
 * up to 10 s is waited exactly instead. So a dead endpoint (connection refused) fails the turn
 * after about 16 s. `maxTotalDelayMs` caps the waiting in one number.
 */
export interface RetryPolicy {
  /**
   * How many retries a step (or a `withRetry` call) may make; `0` never retries. An integer ≥ 0.
   *
   * @default 5
   */
  readonly maxRetries: number
  /**
   * The failure codes to retry. When given, it alone decides (a code not listed is not retried,
   * whatever `failure.retryable` says); when absent, `failure.retryable === true` decides.
   */
  readonly retryableCodes?: readonly string[]
  /**
   * The delay before the first retry, doubled for each further one. A positive integer.
   *
   * @default 500
   */
  readonly initialDelayMs: number
  /**
   * The longest delay; also the cap on an honoured `retryAfterMs`. A positive integer ≥ `initialDelayMs`.
   *
   * @default 10000
   */
  readonly maxDelayMs: number
  /**
   * The retry budget: the most time one step (or one `withRetry` call) may spend waiting between
   * attempts, in total. A retry whose delay would bring the waits above it is not made (the
   * failure stands), so `maxTotalDelayMs: 2000` gives up after the 500 ms and 1000 ms waits. A
   * positive integer.
   *
   * @default none (only `maxRetries` and `maxDelayMs` bound the waits)
   */
  readonly maxTotalDelayMs?: number
  /**
   * The relative spread of the computed delay: it is scaled by a deterministic factor in
   * `[1 − jitter, 1 + jitter)`. A number from 0 to 1.
   *
   * @default 0.1
   */
  readonly jitter: number
  /**
   * Whether a failure's `retryAfterMs` is used as the delay (exactly; above `maxDelayMs` the failure
   * stands). With `false` the provider's hint is ignored.
   *
   * @default true
   */
  readonly honorRetryAfter: boolean
}

const nonNegativeInteger = 'must be an integer ≥ 0'
const positiveInteger = 'must be a positive integer'
const positiveIntegerSchema = z.int({ error: positiveInteger }).min(1, { error: positiveInteger })

/**
 * The schema of a {@link RetryPolicy}: strict, every default applied, with these rules
 * (`maxRetries` an integer ≥ 0, delays and `maxTotalDelayMs` positive integers, `maxDelayMs ≥ initialDelayMs`,
 * `0 ≤ jitter ≤ 1`). It is the `retry` entry's config schema.
 */
export const retryPolicySchema: z.ZodType<RetryPolicy> = typedSchema<RetryPolicy>()(
  z
    .strictObject(
      {
        maxRetries: z.int({ error: nonNegativeInteger }).min(0, { error: nonNegativeInteger }).default(5),
        retryableCodes: z
          .array(z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }), {
            error: 'must be an array of failure codes',
          })
          .exactOptional(),
        initialDelayMs: positiveIntegerSchema.default(500),
        maxDelayMs: positiveIntegerSchema.default(10_000),
        maxTotalDelayMs: positiveIntegerSchema.exactOptional(),
        jitter: z
          .number({ error: 'must be a number from 0 to 1' })
          .min(0, { error: 'must be a number from 0 to 1' })
          .max(1, { error: 'must be a number from 0 to 1' })
          .default(0.1),
        honorRetryAfter: z.boolean({ error: 'must be a boolean' }).default(true),
      },
      { error: 'must be a retry policy object' },
    )
    .refine((policy) => policy.maxDelayMs >= policy.initialDelayMs, {
      error: 'must be ≥ initialDelayMs',
      path: ['maxDelayMs'],
    }),
)

/** The policy with every default: `{ maxRetries: 5, initialDelayMs: 500, maxDelayMs: 10000, jitter: 0.1, honorRetryAfter: true }`. */
export const defaultRetryPolicy: RetryPolicy = Object.freeze(retryPolicySchema.parse({}))

/**
 * Validates a partial policy and fills in the defaults.
 *
 * @param policy - the fields to override; `undefined` gives {@link defaultRetryPolicy}
 * @returns the frozen, complete policy
 * @throws {@link InvalidOptionsError} naming the first bad field (`field: 'maxDelayMs'`); the message starts with `policy.`
 */
export function resolveRetryPolicy(policy?: Partial<RetryPolicy>): RetryPolicy {
  if (policy === undefined) return defaultRetryPolicy
  const result = retryPolicySchema.safeParse(policy)
  if (result.success) {
    const resolved = result.data
    return Object.freeze({
      ...resolved,
      ...(resolved.retryableCodes === undefined ? {} : { retryableCodes: Object.freeze([...resolved.retryableCodes]) }),
    })
  }
  const issues: ValidationIssue[] = []
  for (const issue of result.error.issues) {
    const path = issue.path.map((part) => (typeof part === 'number' ? part : String(part)))
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ path: [...path, key], message: 'unknown option' })
    } else {
      issues.push({ path, message: issue.message })
    }
  }
  throw new InvalidOptionsError({ issues, value: valueAt(policy, issues[0]?.path ?? []), subject: 'policy' })
}

/**
 * Whether a retry waiting `delayMs` fits the budget, after `waitedMs` of waits already made.
 *
 * @param policy - the policy
 * @param waitedMs - the waits of the earlier retries of the step (or call), in total
 * @param delayMs - the wait of this retry
 * @returns `true` when there is no budget or the retry fits it
 * @internal
 */
export function fitsRetryBudget(
  policy: Pick<RetryPolicy, 'maxTotalDelayMs'>,
  waitedMs: number,
  delayMs: number,
): boolean {
  return policy.maxTotalDelayMs === undefined || waitedMs + delayMs <= policy.maxTotalDelayMs
}

/**
 * Whether a policy retries a failure: `retryableCodes`, when given, must list
 * its code; otherwise `failure.retryable` must be `true`. Counting and delays are not checked here.
 *
 * @param policy - the policy
 * @param failure - the failure
 * @returns `true` when the failure is retryable under the policy
 */
export function isRetryable(policy: Pick<RetryPolicy, 'retryableCodes'>, failure: LlmFailure): boolean {
  if (policy.retryableCodes !== undefined) return policy.retryableCodes.includes(failure.code)
  return failure.retryable === true
}
