import type { CompactionError } from '../errors/compaction-error.js'

/** What started a compaction: the triggers, plus `'range'` for `compactRange`. */
export type CompactionTrigger = 'pressure' | 'context-overflow' | 'manual' | 'range'

/** The triggers `CompactionEngine.compactIfNeeded` serves. */
export type AutomaticTrigger = 'pressure' | 'context-overflow'

/** A summary that replaced a span of the surface. */
export interface SummaryAction {
  /** Always `'summary'`. */
  readonly kind: 'summary'
  /** The bracket's id (`ids('compaction')`). */
  readonly compactionId: string
  /** What started it. */
  readonly trigger: CompactionTrigger
  /** The seq of `compaction/start`. */
  readonly startSeq: number
  /** The seq of `compaction/summary`. */
  readonly summarySeq: number
  /** The seq of the replacing `user/message` (the checkpoint). */
  readonly replacementSeq: number
  /** The seq of `compaction/end`. */
  readonly endSeq: number
  /** The surface nodes the checkpoint replaced, in surface order. */
  readonly shadowedSeqs: readonly number[]
  /** The per-message estimate of the shadowed nodes. */
  readonly shadowedTokens: number
  /** The per-message estimate of the checkpoint. */
  readonly summaryTokens: number
}

/** Tool results rewritten to a placeholder. */
export interface PruneAction {
  /** Always `'prune'`. */
  readonly kind: 'prune'
  /** The seqs of the rewritten `tool/result` nodes. */
  readonly prunedSeqs: readonly number[]
  /** The seqs of their replacements, in the same order. */
  readonly replacementSeqs: readonly number[]
  /** Heuristic tokens before minus after. */
  readonly savedTokens: number
}

/** A summary action that failed (its bracket closed with the error). */
export interface FailedAction {
  /** Always `'failed'`. */
  readonly kind: 'failed'
  /** The bracket's id; `''` when no bracket was opened. */
  readonly compactionId: string
  /** Why. */
  readonly error: CompactionError
}

/** What one automatic trigger did. */
export interface CompactionReport {
  /** The trigger. */
  readonly trigger: AutomaticTrigger
  /** The estimate before. */
  readonly before: number
  /** The estimate after. */
  readonly after: number
  /** Every action tried, in order. */
  readonly actions: readonly (SummaryAction | PruneAction | FailedAction)[]
}

/** Options of `agent.compact()`. */
export interface CompactOptions {
  /** Aborts the summary (besides `agent.cancel()`). */
  readonly signal?: AbortSignal
}
