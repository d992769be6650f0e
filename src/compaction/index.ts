/**
 * Compaction: the `CompactionEngine` service, the basic engine plugin, the
 * summarizer, the tool-result pruner and the triggers.
 *
 * @module
 */
export type {
  AutomaticTrigger,
  CompactionReport,
  CompactionTrigger,
  CompactOptions,
  FailedAction,
  PruneAction,
  SummaryAction,
} from './compaction-actions.js'
export type {
  CompactIfNeededInput,
  CompactNowInput,
  CompactRangeInput,
  CompactionEngine,
  EstimateInput,
} from './compaction-engine.js'
export {
  type AgentCompactionPayload,
  type CompactionEndData,
  type CompactionEvents,
  type CompactionPruneData,
  type CompactionSkipReason,
  type CompactionStartData,
  type CompactionSummaryData,
  compactionEndSchema,
  compactionEvents,
  compactionPruneSchema,
  compactionStartSchema,
  compactionSummarySchema,
} from './compaction-events.js'
export {
  type BasicCompactionOptions,
  type BasicCompactionPatch,
  BasicCompactionPlugin,
  basicCompaction,
} from './basic-compaction-plugin.js'
export { type EstimateContext, heuristicEstimate, type TokenEstimator } from './estimate-tokens.js'
export { type CompactionTriggerOptions, installCompactionTriggers } from './install-compaction-triggers.js'
export { type ModelSummarizerOptions, modelSummarizer } from './model-summarizer.js'
export { type PruneConfig, type PruneOptions, pruneToolResults } from './prune-tool-results.js'
export {
  DEFAULT_SUMMARY_INSTRUCTION,
  type Summarizer,
  type SummarizerInput,
  type SummarizerResult,
} from './summarizer.js'
export { CHECKPOINT_PREFIX, CHECKPOINT_SUFFIX, checkpointText } from './summary-action.js'
