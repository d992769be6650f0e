import { CompactionError } from '../errors/compaction-error.js'
import { ErrorCode } from '../errors/codes.js'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import type { ValidationIssue } from '../errors/issue.js'
import { LlmError } from '../errors/llm-error.js'
import { type OptionRule, optionIssues, optionRule, throwOptionIssues } from '../kernel/option-issues.js'
import { ClockKey } from '../kernel/host-keys.js'
import { ModelsKey } from '../model/models-key.js'
import { resolveRetryPolicy, type RetryPolicy } from '../model/retry/retry-policy.js'
import { withRetry } from '../model/retry/with-retry.js'
import type { UserMessage } from '../session/message.js'
import { DEFAULT_SUMMARY_INSTRUCTION, type Summarizer } from './summarizer.js'
import { COMPACTION_PLUGIN } from './surface-index.js'

/** Options of {@link modelSummarizer}. */
export interface ModelSummarizerOptions {
  /** The provider to summarize with (default: the route of the input). */
  readonly provider?: string
  /** The model to summarize with (default: the route of the input). */
  readonly model?: string
  /**
   * The output ceiling of the summary request.
   *
   * @default 8192
   */
  readonly maxTokens?: number
  /** The instruction (default: a built-in instruction to summarize the conversation so far); the input's instruction is used when omitted. */
  readonly instruction?: string
  /** Retry policy overrides for `withRetry` (every omitted field takes its default). */
  readonly retry?: Partial<RetryPolicy>
}

/** The rules of `modelSummarizer` options (bad factory options throw an `InvalidOptionsError`). */
const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  provider: optionRule.nonEmptyString,
  model: optionRule.nonEmptyString,
  maxTokens: (value) =>
    Number.isSafeInteger(value) && (value as number) > 0 ? undefined : 'must be a positive integer',
  instruction: optionRule.nonEmptyString,
  retry: optionRule.plainObject,
})

/** The issues of `modelSummarizer` options: the shared check, then the retry policy's at `retry.<field>`. */
function summarizerIssues(options: ModelSummarizerOptions | undefined): ValidationIssue[] {
  const issues = optionIssues(options, optionRules, '{ provider?, model?, maxTokens?, instruction?, retry? }')
  if (issues.length > 0 || options?.retry === undefined) return issues
  try {
    resolveRetryPolicy(options.retry)
  } catch (error) {
    if (!InvalidOptionsError.is(error)) throw error
    return error.issues.map((issue) => ({ path: ['retry', ...issue.path], message: issue.message }))
  }
  return issues
}

/**
 * The default summarizer: one `withRetry(models, retry).complete()` call with
 * the head's messages plus an instruction message (never logged), `metadata.purpose 'compaction'`,
 * on the harness clock. Only text blocks are kept, joined with `"\n\n"` and trimmed.
 *
 * @param options - route, `maxTokens`, instruction and retry policy
 * @returns the summarizer
 * @throws `InvalidOptionsError` for bad options (not an object, an unknown key, an empty
 *   `provider`, `model` or `instruction`, a `maxTokens` that is not a positive integer, a `retry`
 *   that is not a valid partial retry policy, at `retry.<field>`)
 * @throws (from the summarizer, as a rejection) {@link CompactionError} `SUMMARY_EMPTY` for no text,
 *   `SUMMARY_FAILED` with the `LlmError` as `cause` for a model failure
 * @example
 * ```ts
 * const harness = await createHarness({ model, patches: [basicCompaction({ summarizer: modelSummarizer({ maxTokens: 2048 }) })] })
 * ```
 */
export function modelSummarizer(options: ModelSummarizerOptions = {}): Summarizer {
  throwOptionIssues(summarizerIssues(options), options, 'modelSummarizer options')
  const maxTokens = options.maxTokens ?? 8192
  return async (input) => {
    const { agent, signal } = input
    const instruction: UserMessage = {
      id: 'compaction-instruction',
      role: 'user',
      content: [{ type: 'text', text: options.instruction ?? input.instruction ?? DEFAULT_SUMMARY_INSTRUCTION }],
      source: { kind: 'plugin', plugin: COMPACTION_PLUGIN },
    }
    const provider = options.provider ?? input.route.provider
    const model = options.model ?? input.route.model
    const caller = withRetry(agent.ctx.get(ModelsKey), options.retry, { clock: agent.ctx.get(ClockKey) })
    let completion: Awaited<ReturnType<typeof caller.complete>>
    try {
      completion = await caller.complete(
        {
          provider,
          model,
          ...(input.system === undefined ? {} : { system: input.system }),
          ...(input.tools === undefined ? {} : { tools: input.tools }),
          messages: [...input.messages, instruction],
          maxTokens,
          metadata: { sessionId: agent.session.id, purpose: 'compaction' },
          signal,
        },
        { scope: agent },
      )
    } catch (error) {
      if (!LlmError.is(error)) throw error
      throw new CompactionError(ErrorCode.SUMMARY_FAILED, {
        sessionId: agent.session.id,
        detail: `the summary request failed: ${error.message}`,
        cause: error,
      })
    }
    const text = completion.content
      .flatMap((block) => (block.type === 'text' ? [block.text] : []))
      .join('\n\n')
      .trim()
    if (text === '')
      throw new CompactionError(ErrorCode.SUMMARY_EMPTY, {
        sessionId: agent.session.id,
        detail: 'the summary request returned no text',
      })
    return {
      text,
      provider: completion.provider,
      model: completion.model,
      ...(completion.usage === undefined ? {} : { usage: completion.usage }),
      attempts: completion.attempts,
    }
  }
}
