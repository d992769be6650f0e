import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { ClockKey, IdsKey } from '../kernel/host-keys.js'
import { ToolsKey } from './tools-key.js'
import type { ToolCallBlock } from '../session/content-block.js'
import { SchedulerWake } from './scheduler-wake.js'
import type { ToolCallInfo } from './tool-call-info.js'
import { closeToolCall, commitToolCall, startToolCall } from './tool-call-pipeline.js'
import type { CallSlot, SchedulerEnvironment, SchedulerToolLookup } from './tool-call-slot.js'
import type { RunToolCalls, ToolStepContext, ToolStepReport } from './tool-step-context.js'

/** A stand-in for a service the scheduler could not get: every use throws that failure. */
function unavailable(error: unknown): never {
  throw error
}

/**
 * One step's scheduler: one action at a time, a start or a commit; every
 * settlement wakes it. Bookkeeping is O(calls): indices into the slots and two counters.
 */
class StepScheduler {
  readonly #step: ToolStepContext
  readonly #slots: CallSlot[]
  readonly #wake = new SchedulerWake()
  readonly #environment: SchedulerEnvironment
  /** The next call to start; every call before it started (or failed to). */
  #next = 0
  /** The next call to commit; every call before it is committed. */
  #committed = 0
  /** Dispatched, unsettled calls. */
  #inFlight = 0
  /** The started exclusive call not yet committed, or -1. */
  #barrier = -1
  #failure: { readonly error: unknown } | undefined
  #commitBroken = false
  #concluded = false

  constructor(calls: readonly ToolCallBlock[], step: ToolStepContext) {
    this.#step = step
    this.#slots = calls.map((block, index) => ({
      index,
      block,
      state: 'waiting',
      callSeq: undefined,
      call: this.#callInfo(block),
      result: undefined,
      announced: false,
    }))
    this.#environment = this.#buildEnvironment()
  }

  async run(): Promise<ToolStepReport> {
    if (this.#failure === undefined) await this.#schedule()
    if (this.#failure === undefined) this.#closeUnstarted()
    if (this.#failure !== undefined) this.#closeAfterFailure()
    const outcome = this.#concluded ? 'concluded' : 'owed'
    return Object.freeze(this.#failure === undefined ? { outcome } : { outcome, failure: this.#failure.error })
  }

  #callInfo(block: ToolCallBlock): ToolCallInfo {
    const step = this.#step
    return Object.freeze({
      agent: step.agent,
      session: step.session,
      turn: step.turn,
      step: step.step,
      callId: block.id,
      name: block.name,
      arguments: block.arguments,
      signal: step.signal,
    })
  }

  #buildEnvironment(): SchedulerEnvironment {
    const { ctx } = this.#step
    const lookup = <T>(get: () => T, stand: (error: unknown) => T): T => {
      try {
        return get()
      } catch (error) {
        this.#fail(error)
        return stand(error)
      }
    }
    const clock = lookup(
      () => ctx.get(ClockKey),
      (error) => ({ now: () => unavailable(error), setTimer: () => unavailable(error) }),
    )
    const ids = lookup(
      () => ctx.get(IdsKey),
      (error) => () => unavailable(error),
    )
    const tools = lookup(
      () => ctx.get(ToolsKey) as SchedulerToolLookup,
      (error) => ({
        resolve: () => unavailable(error),
        executionMode: () => unavailable(error),
        guardsFor: () => unavailable(error),
      }),
    )
    const scope = this.#step.scope
    return {
      step: this.#step,
      tools,
      clock,
      ids,
      dispatch: scope === undefined ? undefined : { scope },
      onDispatched: () => {
        this.#inFlight++
      },
      onSettled: () => {
        this.#inFlight--
        this.#wake.notify()
      },
      onInternalError: (error) => {
        this.#fail(error)
        this.#wake.notify()
      },
    }
  }

  #fail(error: unknown): void {
    this.#failure ??= { error }
  }

  /** Starts and commits until nothing is left to start and nothing is in flight. */
  async #schedule(): Promise<void> {
    const signal = this.#step.signal
    for (;;) {
      this.#wake.reset()
      await this.#commitReady()
      if (this.#failure !== undefined || signal.aborted || this.#next === this.#slots.length) {
        // A call may have settled while commitReady's await yielded: commit it before leaving.
        if (this.#inFlight === 0 && !this.#committable()) return
        if (this.#inFlight > 0) await this.#wake.wait()
        continue
      }
      const slot = this.#slots[this.#next] as CallSlot
      const mode = await this.#classify(slot)
      await this.#commitReady()
      if (this.#failure !== undefined || signal.aborted) continue
      if (!this.#canStart(mode)) {
        await this.#wake.wait()
        continue
      }
      await this.#start(slot, mode)
    }
  }

  /** Parallel or exclusive, re-done right before each start with the registry of that moment; a throw is `'exclusive'`. */
  async #classify(slot: CallSlot): Promise<'parallel' | 'exclusive'> {
    try {
      const mode = await this.#environment.tools.executionMode(
        { name: slot.block.name, arguments: slot.block.arguments },
        this.#step.scope,
      )
      return mode === 'parallel' ? 'parallel' : 'exclusive'
    } catch {
      return 'exclusive'
    }
  }

  /** An exclusive call waits for every started call to commit; a parallel one for room in the pool. */
  #canStart(mode: 'parallel' | 'exclusive'): boolean {
    if (this.#barrier >= this.#committed) return false
    if (mode === 'exclusive') return this.#committed === this.#next
    // The options are validated upstream; a cap below 1 must still never stall the step.
    return this.#inFlight < Math.max(1, this.#step.options.maxParallelToolCalls)
  }

  async #start(slot: CallSlot, mode: 'parallel' | 'exclusive'): Promise<void> {
    this.#next++
    if (mode === 'exclusive') this.#barrier = slot.index
    try {
      await startToolCall(this.#environment, slot)
    } catch (error) {
      slot.state = 'failed'
      this.#fail(error)
    }
  }

  /** Whether the next call in model order is settled and may be committed now. */
  #committable(): boolean {
    return !this.#commitBroken && this.#committed < this.#next && this.#slots[this.#committed]?.state === 'settled'
  }

  /** Commits every settled call whose predecessors are all committed, in model order. */
  async #commitReady(): Promise<void> {
    while (this.#committable()) {
      const slot = this.#slots[this.#committed] as CallSlot
      try {
        if (await commitToolCall(this.#environment, slot)) this.#concluded = true
      } catch (error) {
        this.#commitBroken = true
        this.#fail(error)
        return
      }
      this.#committed++
    }
  }

  /** After an abort, every call never started gets a synthetic pair, in model order. */
  #closeUnstarted(): void {
    for (let index = this.#next; index < this.#slots.length; index++) {
      try {
        closeToolCall(this.#environment, this.#slots[index] as CallSlot, 'TOOL_ABORTED_BEFORE_DISPATCH')
      } catch (error) {
        this.#fail(error)
        return
      }
    }
  }

  /** Every call without a committed `tool/result` is closed `TOOL_SCHEDULER_FAILED`; a closing throw stops writing. */
  #closeAfterFailure(): void {
    for (const slot of this.#slots) {
      if (slot.state === 'committed') continue
      try {
        closeToolCall(this.#environment, slot, 'TOOL_SCHEDULER_FAILED')
      } catch (error) {
        this.#step.ctx.logger.error('the tool scheduler could not close a call; crash repair will close the step', {
          callId: slot.block.id,
          error,
        })
        return
      }
    }
  }
}

/**
 * Runs one step's tool calls, the function the agent loop calls with the step's
 * tool-call blocks in model order. Each call goes through classify (re-done right before each
 * start), pre-execute (one call at a time, model order), dispatch (overlapping, a rolling
 * pool of at most `maxParallelToolCalls`, exclusive calls as barriers) and commit (model
 * order); the live `tools/result` fires in completion order. Tool and policy failures become
 * results. On abort, no call starts any more, running calls are awaited (bounded by their
 * deadline and the abort grace) and committed, and every unstarted call gets a synthetic
 * `TOOL_ABORTED_BEFORE_DISPATCH` pair; it returns normally. A failure of the scheduler's own
 * machinery closes every remaining call `TOOL_SCHEDULER_FAILED` and is reported as
 * `failure`. Never rejects for well-formed arguments.
 *
 * @example
 * ```ts
 * const report = await runToolCalls(assistantMessage.content.filter(isToolCall), stepContext)
 * if (report.failure !== undefined) endTurnWithError(report.failure)
 * ```
 *
 * @param calls - the step's tool-call blocks, in model order
 * @param step - the step: context, agent, session, turn, step, signal, options, checkpoint, inbox, approvals
 * @returns the step outcome (`concluded` or `owed`) and the first internal failure, if any
 * @throws {@link InvalidArgumentError} (as a rejection, before anything is logged)
 *   `argument: 'calls'` when `calls` is not an array, `argument: 'step'` when `step` is not an
 *   object with a `ctx`
 */
export const runToolCalls: RunToolCalls = async (calls, step) => {
  if (!Array.isArray(calls))
    throw new InvalidArgumentError({ argument: 'calls', reason: 'must be an array of tool-call blocks', value: calls })
  if (typeof step !== 'object' || step === null || typeof step.ctx !== 'object' || step.ctx === null) {
    throw new InvalidArgumentError({
      argument: 'step',
      reason: 'must be a ToolStepContext (an object with ctx)',
      value: step,
    })
  }
  return new StepScheduler(calls, step).run()
}
