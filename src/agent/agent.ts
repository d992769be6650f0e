import type { CompactOptions, SummaryAction } from '../compaction/compaction-actions.js'
import type { Context } from '../kernel/context.js'
import type { UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { CancelCause } from '../session/turn-end-reason.js'
import type { AgentStreamEvent } from '../stream/agent-stream-event.js'
import type { ApprovalDecision, PendingApproval } from '../tools/approval-broker.js'
import type { AgentOptions } from './agent-options.js'
import type { InboxTarget, InboxView } from './agent-inbox.js'
import type { OutputOf, OutputSchema } from './structured-output.js'
import type { StructuredTurnResult, TurnResult } from './turn-result.js'
import type { UserMessageInput } from './user-message-input.js'

// Declared in their own file so the error hierarchy can name a turn result without importing the agent.
export type { StructuredTurnResult, TurnResult } from './turn-result.js'

/** The derived status of an agent. */
export type AgentStatus = 'idle' | 'running'

/** The private phase an agent is in; maintenance reads as status `idle`. */
export type AgentPhase = 'idle' | 'running' | 'maintenance'

/** Options of {@link Agent.cancel}. */
export interface CancelOptions {
  /**
   * Keep the queued messages (and the wake latch) instead of clearing them.
   *
   * @default false
   */
  readonly keepInbox?: boolean
}

/** Options of {@link Agent.send}, {@link Agent.followup}, {@link Agent.steer} and {@link Agent.inject}. */
export interface SendOptions {
  /**
   * The message id to give the message instead of a fresh one from the harness id source: a
   * non-empty string of at most 1024 characters, used by no message of the session (logged or
   * pending). A worker gives each inbox message its own id this way, so the log shows which
   * submitted message a turn ran.
   *
   * @default the next `message` id of the harness id source
   */
  readonly id?: string
}

/** Options of {@link Agent.run}. */
export interface RunOptions {
  /** Aborting it discards the queued prompt, or cancels its turn once claimed. */
  readonly signal?: AbortSignal
  /**
   * The step limit of this run's turn: a positive integer, or `Infinity` for no limit. Logged with
   * the prompt, so a resumed session runs the turn under the same limit.
   *
   * @default the agent's `maxSteps`
   */
  readonly maxSteps?: number
}

/** Options of a structured {@link Agent.run}: the answer must be JSON matching `output`. */
export interface OutputRunOptions<S extends OutputSchema = OutputSchema> extends RunOptions {
  /**
   * The answer's schema: a zod schema, or a JSON Schema object. Every request of the turn carries
   * it as `responseFormat`; the final answer is parsed and checked, and `result.output` holds it.
   */
  readonly output: S
  /**
   * How many repair steps an invalid answer gets (each counts in `maxSteps`): a non-negative
   * integer. A repair step shows the model the issues and asks again.
   *
   * @default 1
   */
  readonly outputRepairs?: number
}

/**
 * The handle of one agent: its id is its session id. Build one with
 * `harness.createAgent()`.
 *
 * @example
 * ```ts
 * const agent = await harness.createAgent()
 * agent.followup('hi')
 * await agent.whenIdle()
 * ```
 */
export interface Agent {
  /** The agent id, equal to `session.id`. */
  readonly id: string
  /** The session the agent drives. */
  readonly session: Session
  /** The validated, frozen options. */
  readonly options: AgentOptions
  /** The agent-scoped context; `ctx.agent === agent`. */
  readonly ctx: Context
  /** `'running'` while a driver runs, else `'idle'`. */
  readonly status: AgentStatus
  /** The private phase. */
  readonly phase: AgentPhase
  /** The pending messages. */
  readonly inbox: InboxView
  /** `true` once {@link Agent.dispose} was called. */
  readonly disposed: boolean
  /** The tool approvals waiting for a decision, in ask order. */
  readonly pendingApprovals: readonly PendingApproval[]
  /**
   * The routing primitive: queues the input and, with `wakeup`, starts a driver.
   *
   * @param input - a string or `{ content, source? }`
   * @param target - the inbox list
   * @param wakeup - whether to start a driver when idle
   * @param options - the message `id` (default: a fresh one)
   * @returns the queued frozen message
   * @throws {@link AgentDisposedError} after dispose; {@link InvalidMessageError} for bad input (an
   *   empty or over-long `id` is named at field `id`); {@link InvalidArgumentError} for options that
   *   are not `{ id? }`; {@link DuplicateMessageError} for an `id` a message of the session already
   *   carries (logged or pending); nothing is queued
   */
  send(input: UserMessageInput, target: InboxTarget, wakeup: boolean, options?: SendOptions): UserMessage
  /**
   * `send(input, 'next-turn', true)`: a prompt for its own turn.
   *
   * @param input - the prompt
   * @param options - the message `id` (as for {@link Agent.send})
   * @returns the queued message
   */
  followup(input: UserMessageInput, options?: SendOptions): UserMessage
  /**
   * `send(input, 'next-step', true)`: steering for the next step.
   *
   * @param input - the steering
   * @param options - the message `id` (as for {@link Agent.send})
   * @returns the queued message
   */
  steer(input: UserMessageInput, options?: SendOptions): UserMessage
  /**
   * `send(input, 'next-step', false)`: context for the next step, without waking.
   *
   * @param input - the context
   * @param options - the message `id` (as for {@link Agent.send})
   * @returns the queued message
   */
  inject(input: UserMessageInput, options?: SendOptions): UserMessage
  /**
   * Starts a driver when idle with pending work.
   *
   * @returns whether a driver started
   */
  wake(): boolean
  /**
   * Cancels: clears the inbox unless `keepInbox`, aborts the running turn.
   *
   * @param cause - why (default `{ kind: 'user' }`)
   * @param options - `keepInbox`
   * @throws {@link InvalidArgumentError} for an unknown cause
   */
  cancel(cause?: CancelCause, options?: CancelOptions): void
  /**
   * Resolves once the agent is idle with no driver pending. Never rejects.
   *
   * @returns the promise
   */
  whenIdle(): Promise<void>
  /**
   * Queues a prompt and resolves with the result of the turn that claims it; with `output`, the
   * turn's final answer must be JSON matching that schema, and the result carries it as `output`.
   *
   * @param input - the prompt
   * @param options - a signal, `maxSteps`, and `output` with `outputRepairs`
   * @returns the turn result (with `output` for a structured run)
   * @throws {@link InvalidArgumentError} (synchronously thrown as a rejection, nothing queued) for a
   *   bad `maxSteps`, `output` or `outputRepairs`
   * @throws (as a rejection) {@link OutputValidationError} `OUTPUT_INVALID` when a structured run's
   *   last answer is still not valid after its repair steps (its `result` and raw `text` kept);
   *   {@link RunDiscardedError} when no turn claims the prompt; the flush
   *   error when the turn-end checkpoint fails; the append error when a `turn/end` cannot be
   *   logged (also for the runs waiting then), and `StructureError` `TURN_OPEN` for later runs
   *   until a resume closes that turn
   * @example
   * ```ts
   * const { output } = await agent.run('Name three colors', { output: z.object({ colors: z.array(z.string()) }) })
   * ```
   */
  run<S extends OutputSchema>(
    input: UserMessageInput,
    options: OutputRunOptions<S>,
  ): Promise<StructuredTurnResult<OutputOf<S>>>
  /**
   * Queues a prompt and resolves with the result of the turn that claims it.
   *
   * @param input - the prompt
   * @param options - a signal and `maxSteps`
   * @returns the turn result
   */
  run(input: UserMessageInput, options?: RunOptions): Promise<TurnResult>
  /**
   * Queues a prompt like {@link Agent.run} and streams the claiming turn's durable events, from
   * `turn/start` to `turn/end`. At most `highWaterMark` undelivered events are
   * buffered; one more makes the next read throw {@link StreamOverflowError} after the buffered
   * ones. Breaking out of the loop unsubscribes without cancelling.
   *
   * @param input - the prompt
   * @param options - a signal, `highWaterMark` (default 1024), `maxSteps`, and `output` with `outputRepairs`
   * @returns the run: iterate it for the events; `result` settles like `run`
   * @throws {@link AgentDisposedError}, {@link InvalidMessageError} or {@link InvalidArgumentError}
   *   (`highWaterMark`, `maxSteps`, `output`, `outputRepairs`), nothing queued
   * @example
   * ```ts
   * const run = agent.stream('hi')
   * for await (const event of run) {
   *   if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') process.stdout.write(event.data.chunk.text)
   * }
   * console.log((await run.result).text)
   * ```
   */
  stream<S extends OutputSchema>(
    input: UserMessageInput,
    options: StreamOptions & OutputRunOptions<S>,
  ): AgentRun<StructuredTurnResult<OutputOf<S>>>
  /**
   * Queues a prompt like {@link Agent.run} and streams the claiming turn's durable events.
   *
   * @param input - the prompt
   * @param options - a signal, `maxSteps` and `highWaterMark`
   * @returns the run
   */
  stream(input: UserMessageInput, options?: StreamOptions): AgentRun
  /**
   * Runs `task` as maintenance: claims the idle phase synchronously; `status`
   * stays `'idle'`; `cancel` aborts the task's signal; waking sends made meanwhile latch and run in
   * FIFO order after the task settles.
   *
   * @param task - the work, given the maintenance signal
   * @returns the task's value or rejection, unchanged
   * @throws {@link AgentBusyError} (synchronously) when a driver or another task runs;
   *   {@link AgentDisposedError} after dispose
   */
  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T>
  /**
   * Manual compaction between turns: runs, as one maintenance task,
   * `services.compaction.compactNow()` and then a flush. Status stays `'idle'`; prompts sent
   * meanwhile run after it.
   *
   * @param options - a signal that aborts the summary
   * @returns the summary action, or `null` when nothing is usable (nothing appended)
   * @throws (as a rejection) {@link AgentBusyError} while a turn or other maintenance runs;
   *   `ServiceMissingError` without `services.compaction`; the action's `CompactionError`
   */
  compact(options?: CompactOptions): Promise<SummaryAction | null>
  /**
   * Decides a pending tool approval as the host (`by: 'host'`). The first decision
   * wins and is final.
   *
   * @param approvalId - an id from {@link Agent.pendingApprovals}
   * @param decision - `{ kind: 'allow' }` or `{ kind: 'deny', reason? }`
   * @returns `'decided'`, or `'already-decided'` (nothing logged) for an id already decided
   * @throws {@link ApprovalNotPendingError} for an id never asked; {@link InvalidArgumentError} for a bad decision
   */
  approve(approvalId: string, decision: ApprovalDecision): 'decided' | 'already-decided'
  /**
   * Disposes the agent: a running turn ends aborted `{ kind: 'disposed' }`.
   * Memoized.
   *
   * @returns resolves once the agent left the registries
   */
  dispose(): Promise<void>
}

/** Options of {@link Agent.stream}. */
export interface StreamOptions extends RunOptions {
  /**
   * How many undelivered events the stream buffers; one more makes the next read throw
   * {@link StreamOverflowError} once the buffer is drained. A positive safe integer.
   *
   * @default 1024
   */
  readonly highWaterMark?: number
}

/**
 * What {@link Agent.stream} returns: the claiming turn's durable events from
 * `turn/start` to `turn/end`, in seq order, plus the queued message and the turn result. Every
 * yielded event is lossless JSON, typed by its `type` ({@link AgentStreamEvent}): narrowing on
 * `event.type` types `event.data`. Breaking out of the iteration unsubscribes without cancelling.
 */
export interface AgentRun<R extends TurnResult = TurnResult> extends AsyncIterable<AgentStreamEvent> {
  /** The agent that runs it (for `sseResponse(run)`, which reads the turn from its session). */
  readonly agent: Agent
  /** The queued prompt. */
  readonly message: UserMessage
  /** Settles like {@link Agent.run}; unaffected by an overflow or an early break. */
  readonly result: Promise<R>
}
