import type { Agent } from '../agent/agent.js'
import type { UserMessage } from '../session/message.js'
import type { AutomaticTrigger, CompactionReport, SummaryAction } from './compaction-actions.js'

/** Input of {@link CompactionEngine.compactIfNeeded}. */
export interface CompactIfNeededInput {
  /** The agent whose session is compacted. */
  readonly agent: Agent
  /** Which trigger runs. */
  readonly trigger: AutomaticTrigger
  /** The turn signal. */
  readonly signal: AbortSignal
  /** Messages about to be entered (pressure: the pre-step proposal). */
  readonly pending?: readonly UserMessage[]
}

/** Input of {@link CompactionEngine.compactNow}. */
export interface CompactNowInput {
  /** The agent whose session is compacted. */
  readonly agent: Agent
  /** Aborts the summary. */
  readonly signal: AbortSignal
}

/** Input of {@link CompactionEngine.compactRange}. */
export interface CompactRangeInput {
  /** The agent whose session is compacted. */
  readonly agent: Agent
  /** The seq of the first surface node to replace. */
  readonly start: number
  /** The seq of the last surface node to replace. */
  readonly end: number
  /** Aborts the summary. */
  readonly signal: AbortSignal
}

/** Input of {@link CompactionEngine.estimate}. */
export interface EstimateInput {
  /** The agent. */
  readonly agent: Agent
  /** Messages about to be entered. */
  readonly pending?: readonly UserMessage[]
}

/**
 * The `services.compaction` service: any plugin may provide one. The default
 * is the engine of `BasicCompactionPlugin`.
 */
export interface CompactionEngine {
  /**
   * Runs an automatic trigger's plan (its cuts and the pruner, tried in order) when it applies. Never rejects for a compaction
   * failure: those are reported on `agent/compaction` and in the report.
   *
   * @param input - the agent, the trigger, the turn signal and the pending messages
   * @returns the report, or `null` when the trigger did not act
   */
  compactIfNeeded(input: CompactIfNeededInput): Promise<CompactionReport | null>
  /**
   * Manual compaction: the turn cut, then the step cut; stops at the first success.
   *
   * @param input - the agent and a signal
   * @returns the action, or `null` when nothing is usable (nothing appended)
   * @throws (as a rejection) {@link CompactionError} for a failed action, after `compaction/end {error}`
   */
  compactNow(input: CompactNowInput): Promise<SummaryAction | null>
  /**
   * Summarizes exactly the surface span `start..end`, trigger `'range'`.
   *
   * @param input - the agent, the span's seqs and a signal
   * @returns the action
   * @throws (as a rejection) {@link CompactionError} `INVALID_RANGE` (nothing appended) or the action's failure
   */
  compactRange(input: CompactRangeInput): Promise<SummaryAction>
  /**
   * The token estimate of the next request.
   *
   * @param input - the agent and the pending messages
   * @returns tokens
   */
  estimate(input: EstimateInput): number
}
