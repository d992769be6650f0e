import { z } from 'zod'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import { type ValidationIssue, valueAt } from '../errors/issue.js'

/**
 * The driver's resolved settings: the call fields (which may also come from the
 * log or an `agent/request` listener) and the tool-layer settings. Validated by a strict schema
 * and frozen before an agent is published.
 */
export interface AgentOptions {
  /** The provider id of every request (else the log's header, the model route or `agent/request`). */
  readonly provider?: string
  /** The model of every request (else the log's header, the model route or `agent/request`). */
  readonly model?: string
  /**
   * The output token limit.
   *
   * @default the adapter's default
   */
  readonly maxTokens?: number
  /**
   * The reasoning effort.
   *
   * @default the adapter's default
   */
  readonly reasoningEffort?: string
  /** The sampling temperature, 0 to 2. */
  readonly temperature?: number
  /** The stop sequences. */
  readonly stop?: readonly string[]
  /**
   * How many tool calls run at once.
   *
   * @default the harness option (10)
   */
  readonly maxParallelToolCalls?: number
  /** The deadline of a tool without its own `timeoutMs`; none when absent. */
  readonly toolTimeoutMs?: number
  /**
   * How long an aborted tool body may take before it is abandoned.
   *
   * @default 10000
   */
  readonly toolAbortGraceMs?: number
  /**
   * The tool result size limit in UTF-8 bytes.
   *
   * @default 102400
   */
  readonly toolResultMaxBytes?: number
  /**
   * `'meta'` keeps the untruncated content in the result's meta.
   *
   * @default 'none'
   */
  readonly toolResultSpill?: 'none' | 'meta'
  /**
   * How unanswered approvals resolve.
   *
   * @default 'auto'
   */
  readonly approvalMode?: 'auto' | 'manual'
  /** `'manual'` only: deny an unanswered approval after this many milliseconds. */
  readonly approvalTimeoutMs?: number
  /**
   * How many model requests (steps) one turn may make: a positive integer, or `Infinity` for no
   * limit. The last allowed step keeps the tool schemas but forbids calls (`toolChoice: 'none'`),
   * so the model answers in text; the turn then ends `{ kind: 'max-steps', limit }`. Retries of a
   * failed attempt repeat their step and do not count. `agent.run(input, { maxSteps })` overrides
   * it for one turn.
   *
   * @default the harness option (25)
   */
  readonly maxSteps?: number
  /**
   * Check every loop request against `rebuildRequest` before the adapter.
   *
   * @default false
   */
  readonly verifyReconstruction?: boolean
}

const nonEmpty = z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' })
const positiveInteger = z
  .number({ error: 'must be a positive integer' })
  .refine((value) => Number.isSafeInteger(value) && value > 0, { error: 'must be a positive integer' })
const positiveFinite = z
  .number({ error: 'must be a positive finite number' })
  .refine((value) => Number.isFinite(value) && value > 0, { error: 'must be a positive finite number' })
/**
 * The step limit: a positive safe integer or `Infinity`.
 *
 * @internal
 */
export const maxStepsSchema = z.custom<number>(isMaxSteps, { error: 'must be a positive integer or Infinity' })
const nonNegativeFinite = z
  .number({ error: 'must be a non-negative finite number' })
  .refine((value) => Number.isFinite(value) && value >= 0, { error: 'must be a non-negative finite number' })

/**
 * Whether `value` is a step limit: a positive safe integer or `Infinity`.
 *
 * @param value - anything
 * @returns `true` for a step limit
 * @internal
 */
export function isMaxSteps(value: unknown): value is number {
  return value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && (value as number) > 0)
}

/** The strict schema of {@link AgentOptions}. */
export const agentOptionsSchema: z.ZodType<AgentOptions> = z
  .strictObject(
    {
      provider: nonEmpty.optional(),
      model: nonEmpty.optional(),
      maxTokens: positiveInteger.optional(),
      reasoningEffort: nonEmpty.optional(),
      temperature: z
        .number({ error: 'must be a finite number from 0 to 2' })
        .refine((value) => Number.isFinite(value) && value >= 0 && value <= 2, {
          error: 'must be a finite number from 0 to 2',
        })
        .optional(),
      stop: z.array(nonEmpty, { error: 'must be an array of non-empty strings' }).optional(),
      maxParallelToolCalls: positiveInteger.optional(),
      toolTimeoutMs: positiveFinite.optional(),
      toolAbortGraceMs: nonNegativeFinite.optional(),
      toolResultMaxBytes: z
        .number({ error: 'must be a safe integer of at least 1024' })
        .refine((value) => Number.isSafeInteger(value) && value >= 1024, {
          error: 'must be a safe integer of at least 1024',
        })
        .optional(),
      toolResultSpill: z.enum(['none', 'meta'], { error: "must be 'none' or 'meta'" }).optional(),
      approvalMode: z.enum(['auto', 'manual'], { error: "must be 'auto' or 'manual'" }).optional(),
      approvalTimeoutMs: positiveFinite.optional(),
      maxSteps: maxStepsSchema.optional(),
      verifyReconstruction: z.boolean({ error: 'must be a boolean' }).optional(),
    },
    { error: 'must be an options object' },
  )
  .superRefine((options, context) => {
    if (options.approvalTimeoutMs !== undefined && options.approvalMode !== 'manual') {
      context.addIssue({
        code: 'custom',
        path: ['approvalTimeoutMs'],
        message: "is allowed only with approvalMode 'manual'",
      })
    }
  }) as unknown as z.ZodType<AgentOptions>

/**
 * Validates agent options and returns a frozen copy (`stop` copied too), keys
 * with an `undefined` value dropped.
 *
 * @param options - the candidate options (`undefined` means `{}`)
 * @returns the frozen options
 * @throws {@link InvalidOptionsError} `INVALID_OPTIONS` with every issue; an unknown key is
 *   `{ path: [key], message: 'unknown option' }`
 * @example
 * ```ts
 * const options = validateAgentOptions({ provider: 'mock', model: 'mock', maxParallelToolCalls: 4 })
 * ```
 */
export function validateAgentOptions(options: unknown): AgentOptions {
  const candidate = options === undefined ? {} : options
  const result = agentOptionsSchema.safeParse(candidate)
  if (!result.success) {
    const issues: ValidationIssue[] = []
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) issues.push({ path: [...issue.path.map(String), key], message: 'unknown option' })
        continue
      }
      issues.push({
        path: issue.path.map((part) => (typeof part === 'number' ? part : String(part))),
        message: issue.message,
      })
    }
    const first = issues[0]
    throw new InvalidOptionsError({
      issues,
      value: first === undefined ? candidate : valueAt(candidate, first.path),
      subject: 'agent options',
    })
  }
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(candidate as Record<string, unknown>)) {
    if (value === undefined) continue
    copy[key] = Array.isArray(value) ? Object.freeze([...value]) : value
  }
  return Object.freeze(copy) as AgentOptions
}
