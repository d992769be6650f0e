import type { DispatchOptions } from '../kernel/context.js'
import type { Clock, IdSource } from '../kernel/host-services.js'
import type { ToolCallBlock } from '../session/content-block.js'
import type { ToolCallInfo } from './tool-call-info.js'
import type { ToolRegistry } from './tool-registry.js'
import type { ToolResult } from './tool-result.js'
import type { ToolStepContext } from './tool-step-context.js'

/**
 * The registry members the scheduler uses (the `tools` entry's {@link ToolRegistry}).
 *
 * @internal
 */
export type SchedulerToolLookup = Pick<ToolRegistry, 'resolve' | 'executionMode' | 'guardsFor'>

/**
 * Where one call is: not started yet, in its pre-execute phase, dispatched,
 * settled (a result waits for its commit), committed (its `tool/result` is logged), or failed
 * (the scheduler's own machinery threw while starting it).
 *
 * @internal
 */
export type CallSlotState = 'waiting' | 'pre-execute' | 'running' | 'settled' | 'committed' | 'failed'

/**
 * The scheduler's bookkeeping for one tool-call block: O(1) per call, no log scans (the
 * `tool/call` seq is kept from the append's return value).
 *
 * @internal
 */
export interface CallSlot {
  /** The block's position in model order. */
  readonly index: number
  /** The model's tool-call block. */
  readonly block: ToolCallBlock
  /** Where the call is. */
  state: CallSlotState
  /** The seq of its `tool/call`, once logged. */
  callSeq: number | undefined
  /** The call as listeners see it (frozen; replaced once the arguments parsed). */
  call: ToolCallInfo
  /** The dispatch outcome (live `tools/result`), once settled. */
  result: ToolResult | undefined
  /** Whether its live `tools/result` fired. */
  announced: boolean
}

/**
 * What every stage of the pipeline reads: the step, the harness services, and the scheduler's
 * callbacks.
 *
 * @internal
 */
export interface SchedulerEnvironment {
  /** The step the calls belong to. */
  readonly step: ToolStepContext
  /** The tool registry. */
  readonly tools: SchedulerToolLookup
  /** The harness clock. */
  readonly clock: Clock
  /** The harness id source. */
  readonly ids: IdSource
  /** The routing of every dispatch (the step's scope, so agent-scoped listeners hear it). */
  readonly dispatch: DispatchOptions | undefined
  /** Called synchronously right before a call's body is launched (it counts as in flight from then). */
  readonly onDispatched: (slot: CallSlot) => void
  /** Called once when a dispatched call settles (its `result` is set). */
  readonly onSettled: (slot: CallSlot) => void
  /** Records a failure of the scheduler's own machinery met outside the scheduler loop. */
  readonly onInternalError: (error: unknown) => void
}
