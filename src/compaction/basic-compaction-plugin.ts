import { z } from 'zod'
import type { PluginEntry } from '../kernel/compose-layers.js'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import { CompactionKey } from './compaction-key.js'
import { ModelsKey } from '../model/models-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import { createBasicCompactionEngine } from './basic-compaction-engine.js'
import { compactionEvents, compactionEventTypes } from './compaction-events.js'
import type { TokenEstimator } from './estimate-tokens.js'
import { installCompactionTriggers } from './install-compaction-triggers.js'
import { type ModelSummarizerOptions, modelSummarizer } from './model-summarizer.js'
import type { PruneConfig } from './prune-tool-results.js'
import type { Summarizer } from './summarizer.js'

/** Options of {@link basicCompaction}; violations fail the plugin config. */
export interface BasicCompactionOptions {
  /**
   * Pressure keeps the estimate at or under `floor(contextWindow × threshold)`; `0 < threshold ≤ 1`.
   *
   * @default 0.8
   */
  readonly threshold?: number
  /**
   * Turns the turn cut keeps (an integer ≥ 1; the current turn counts as one).
   *
   * @default 2
   */
  readonly keepRecentTurns?: number
  /**
   * A summarizer, or the options of {@link modelSummarizer}.
   *
   * @default modelSummarizer()
   */
  readonly summarizer?: Summarizer | ModelSummarizerOptions
  /**
   * Overflow recoveries per step (an integer ≥ 0; `0` disables overflow recovery only).
   *
   * @default 2
   */
  readonly maxOverflowRetries?: number
  /**
   * The pruner's bounds, or `false` to disable it.
   *
   * @default { minChars: 8192, keepHeadChars: 0 }
   */
  readonly prune?: PruneConfig | false
  /**
   * `false` installs no trigger listener; manual compaction still works.
   *
   * @default true
   */
  readonly auto?: boolean
  /** Replaces the heuristic estimator (and its calibration). */
  readonly estimator?: TokenEstimator
}

const isFunction = (value: unknown): boolean => typeof value === 'function'

const modelSummarizerOptionsSchema = z.strictObject({
  provider: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  maxTokens: z.int().min(1).optional(),
  instruction: z.string().min(1).optional(),
  retry: z.record(z.string(), z.unknown()).optional(),
})

const pruneSchema = z
  .strictObject({
    minChars: z.int().min(1, { error: 'must be a positive integer' }).optional(),
    keepHeadChars: z.int().min(0).optional(),
  })
  .refine((prune) => (prune.keepHeadChars ?? 0) <= (prune.minChars ?? 8192) - 200, {
    error: 'keepHeadChars must be at most minChars - 200',
    path: ['keepHeadChars'],
  })

const configSchema = z
  .strictObject({
    threshold: z.number().gt(0, { error: 'must be above 0' }).lte(1, { error: 'must be at most 1' }).optional(),
    keepRecentTurns: z.int().min(1, { error: 'must be an integer of at least 1' }).optional(),
    summarizer: z.union([z.custom<Summarizer>(isFunction), modelSummarizerOptionsSchema]).optional(),
    maxOverflowRetries: z.int().min(0, { error: 'must be a non-negative integer' }).optional(),
    prune: z.union([z.literal(false), pruneSchema]).optional(),
    auto: z.boolean().optional(),
    estimator: z
      .custom<TokenEstimator>(isFunction, { error: 'must be a function (messages, { system?, tools? }) => number' })
      .optional(),
  })
  .optional()

/**
 * The `compaction` entry of the default bundle: registers the durable
 * `compaction/*` types and the live `agent/compaction` event, provides `services.compaction` (the
 * basic engine) and, unless `auto: false`, installs the pressure and overflow triggers.
 *
 * @example
 * ```ts
 * const harness = await createHarness({ model, patches: [{ id: 'compaction', plugin: BasicCompactionPlugin, config: { threshold: 0.7 } }] })
 * ```
 */
export const BasicCompactionPlugin: PluginDefinition<BasicCompactionOptions | undefined> = definePlugin({
  name: 'compaction',
  inject: [SessionsKey, ModelsKey],
  provides: [CompactionKey],
  events: [compactionEvents],
  config: configSchema as z.ZodType<BasicCompactionOptions | undefined>,
  apply(ctx, config) {
    const options = config ?? {}
    const sessions = ctx.get(SessionsKey)
    for (const [type, typeOptions] of Object.entries(compactionEventTypes))
      sessions.registerEventType(type, typeOptions)
    const summarizer =
      typeof options.summarizer === 'function' ? options.summarizer : modelSummarizer(options.summarizer ?? {})
    const engine = createBasicCompactionEngine(ctx, {
      threshold: options.threshold ?? 0.8,
      keepRecentTurns: options.keepRecentTurns ?? 2,
      summarizer,
      prune: options.prune ?? {},
      ...(options.estimator === undefined ? {} : { estimator: options.estimator }),
    })
    ctx.provide(CompactionKey, engine)
    if (options.auto !== false)
      installCompactionTriggers(ctx, engine, { maxOverflowRetries: options.maxOverflowRetries ?? 2 })
  },
})

/** The patch {@link basicCompaction} returns: the `compaction` entry with the basic plugin. */
export interface BasicCompactionPatch extends PluginEntry {
  /** Always `'compaction'`. */
  readonly id: 'compaction'
}

/**
 * The entry patch that configures the default `compaction` entry.
 *
 * @param options - the engine's options
 * @returns `{ id: 'compaction', plugin: BasicCompactionPlugin, config: options }`
 * @example
 * ```ts
 * const harness = await createHarness({ model, patches: [basicCompaction({ keepRecentTurns: 3, prune: false })] })
 * ```
 */
export function basicCompaction(options: BasicCompactionOptions = {}): BasicCompactionPatch {
  return { id: 'compaction', plugin: BasicCompactionPlugin as PluginDefinition<unknown>, config: options }
}
