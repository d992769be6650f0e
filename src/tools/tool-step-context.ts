import type { Context } from '../kernel/context.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import type { ToolCallBlock } from '../session/content-block.js'
import type { Session } from '../session/session.js'
import type { ApprovalBroker } from './approval-broker.js'
import type { ToolAgent } from './tool-call-info.js'
import type { ToolContextMessage, ToolStepOutcome } from './tool-result.js'

/** The agent options the tool layer reads, already validated. */
export interface ToolRunOptions {
  /** The rolling pool's cap (default 10). */
  readonly maxParallelToolCalls: number
  /** The deadline of a tool without its own `timeoutMs`; none when absent. */
  readonly toolTimeoutMs?: number
  /** How long an aborted body may take before it is abandoned (default 10000). */
  readonly toolAbortGraceMs: number
  /** The result size limit in UTF-8 bytes of text (default 102400). */
  readonly toolResultMaxBytes: number
  /** `'meta'` keeps the untruncated content in `meta["yoke:truncation"].full`. */
  readonly toolResultSpill?: 'meta'
  /** `'auto'` denies an unanswered approval; `'manual'` waits for `approve()`. */
  readonly approvalMode: 'auto' | 'manual'
  /** `'manual'` only: deny after this many milliseconds. */
  readonly approvalTimeoutMs?: number
}

/** The default {@link ToolRunOptions}. */
export const defaultToolRunOptions: ToolRunOptions = Object.freeze({
  maxParallelToolCalls: 10,
  toolAbortGraceMs: 10_000,
  toolResultMaxBytes: 102_400,
  approvalMode: 'auto',
})

/**
 * Everything the scheduler needs from the step that produced the calls. The agent loop builds one
 * per step; stand-alone callers build it by hand.
 */
export interface ToolStepContext {
  /** The context the step runs in (the agent's): events are dispatched and clocks read through it. */
  readonly ctx: Context
  /** The calling agent. */
  readonly agent: ToolAgent
  /** The agent's session, with the step open. */
  readonly session: Session
  /** The open turn. */
  readonly turn: number
  /** The open step. */
  readonly step: number
  /** The turn signal. */
  readonly signal: AbortSignal
  /** The scope tools are resolved from (the agent's); the global layer when absent. */
  readonly scope?: ScopeKey
  /** The agent's tool options. */
  readonly options: ToolRunOptions
  /** The durability checkpoint before a tool runs: resolves once `tool/call` is stored. */
  checkpoint(): Promise<void>
  /**
   * Inserts an additional context into the agent's next-step inbox, right after the call's
   * `tool/result`.
   *
   * @param message - the context message
   */
  insertContext(message: ToolContextMessage): void
  /** The agent's approvals. */
  readonly approvals: ApprovalBroker
}

/** What {@link ToolStepContext} produces for the loop. */
export interface ToolStepReport {
  /** `concluded` or `owed`. */
  readonly outcome: ToolStepOutcome
  /** The first internal failure: the turn then ends `error`. */
  readonly failure?: unknown
}

/** The scheduler's entry point, as the agent loop calls it. */
export type RunToolCalls = (calls: readonly ToolCallBlock[], step: ToolStepContext) => Promise<ToolStepReport>
