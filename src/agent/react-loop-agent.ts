import { AgentDisposedError } from '../errors/agent-errors.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { Context } from '../kernel/context.js'
import type { PayloadOf } from '../kernel/event-catalog.js'
import { services } from '../kernel/services.js'
import { createRuntimeContextProjection } from '../prompt/runtime-context-projection.js'
import type { InitiatorControl } from '../scope/initiator.js'
import type { UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import { type CancelCause, cancelCauseSchema } from '../session/turn-end-reason.js'
import { createApprovalBroker } from '../tools/create-approval-broker.js'
import { defaultToolRunOptions, type ToolRunOptions } from '../tools/tool-step-context.js'
import type { Agent, AgentPhase, AgentStatus, CancelOptions, RunOptions, TurnResult } from './agent.js'
import { AgentInbox, type InboxTarget, type InboxView } from './agent-inbox.js'
import type { AgentOptions } from './agent-options.js'
import type { LoopRequestMarks } from './build-request.js'
import type { LoopHost } from './loop-host.js'
import { type RunPort, runAgentTurn, type TurnEndNotice } from './run-agent.js'
import { runTurn } from './run-turn.js'
import { failureOf } from './turn-end.js'
import { normalizeUserMessage, type UserMessageInput } from './user-message-input.js'

const agentBrand = Symbol.for('yoke.agent')

/** What the registry hands a new driver. */
export interface ReactLoopAgentInit {
  /** The owner context; the agent context is its child. */
  readonly parent: Context
  /** The session, already registered. */
  readonly session: Session
  /** The validated options. */
  readonly options: AgentOptions
  /** The harness initiator. */
  readonly initiator: InitiatorControl<Agent>
  /** The harness loop-request marks. */
  readonly marks: LoopRequestMarks
}

function toolOptionsOf(options: AgentOptions): ToolRunOptions {
  return Object.freeze({
    maxParallelToolCalls: options.maxParallelToolCalls ?? defaultToolRunOptions.maxParallelToolCalls,
    toolAbortGraceMs: options.toolAbortGraceMs ?? defaultToolRunOptions.toolAbortGraceMs,
    toolResultMaxBytes: options.toolResultMaxBytes ?? defaultToolRunOptions.toolResultMaxBytes,
    approvalMode: options.approvalMode ?? defaultToolRunOptions.approvalMode,
    ...(options.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: options.toolTimeoutMs }),
    ...(options.toolResultSpill === 'meta' ? { toolResultSpill: 'meta' as const } : {}),
    ...(options.approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs: options.approvalTimeoutMs }),
  })
}

/**
 * The agent driver shipped with the library (04-agent.md): phases, the wake latch, the turn loop.
 * Constructed only by the agent registry.
 */
export class ReactLoopAgent implements Agent, RunPort {
  /** Marks the handle as an agent scope key (`ctx.agent`). */
  readonly [agentBrand] = true
  readonly id: string
  readonly session: Session
  readonly options: AgentOptions
  readonly ctx: Context
  readonly #inbox: AgentInbox
  readonly #host: LoopHost
  readonly #initiator: InitiatorControl<Agent>
  #phase: AgentPhase = 'idle'
  #controller: AbortController | undefined
  #wakeRequested = false
  #lastTurn: number
  #driver: Promise<void> | undefined
  #disposing: Promise<void> | undefined
  #onDispose: (() => Promise<void>) | undefined
  readonly #turnEndListeners = new Set<(notice: TurnEndNotice) => void>()

  /**
   * @param init - the owner context, session, options, initiator and marks
   * @internal
   */
  constructor(init: ReactLoopAgentInit) {
    this.id = init.session.id
    this.session = init.session
    this.options = init.options
    this.#initiator = init.initiator
    this.ctx = init.parent.child(`agent:${this.id}`, { scope: this })
    const ctx = this.ctx
    const ids = ctx.get(services.ids)
    this.#inbox = new AgentInbox({ session: this.session, ids, emit: (name, payload) => ctx.emit(name, payload as PayloadOf<typeof name>, { scope: this, subject: this.id }) })
    // The session's structure fold already knows the numbering (no backward scan of the log).
    this.#lastTurn = this.session.turnState().nextTurn - 1
    this.#host = {
      agent: this,
      ctx,
      session: this.session,
      options: this.options,
      toolOptions: toolOptionsOf(this.options),
      sessions: ctx.get(services.sessions),
      models: ctx.get(services.models),
      systemPrompt: ctx.get(services.systemPrompt),
      projection: createRuntimeContextProjection({ session: this.session, ids }),
      marks: init.marks,
      ids,
      approvals: createApprovalBroker({ ctx, agent: this }),
      inbox: this.#inbox,
      firstRequestOfDriver: true,
    }
  }

  get status(): AgentStatus {
    return this.#phase === 'running' ? 'running' : 'idle'
  }

  get phase(): AgentPhase {
    return this.#phase
  }

  get inbox(): InboxView {
    return this.#inbox
  }

  get disposed(): boolean {
    return this.#disposing !== undefined
  }

  send(input: UserMessageInput, target: InboxTarget, wakeup: boolean): UserMessage {
    if (this.#disposing !== undefined) throw new AgentDisposedError({ agentId: this.id, operation: 'send' })
    const message = normalizeUserMessage(input, this.#host.ids('message'))
    const wakingAfterAbort = wakeup && this.#phase !== 'idle' && this.#controller?.signal.aborted === true
    this.#inbox.insert(message, wakingAfterAbort ? 'next-turn' : target)
    if (wakeup) {
      if (this.#phase === 'idle') this.#start()
      else if (wakingAfterAbort && (this.#controller?.signal.reason as CancelCause | undefined)?.kind !== 'disposed') this.#wakeRequested = true
    }
    return message
  }

  followup(input: UserMessageInput): UserMessage {
    return this.send(input, 'next-turn', true)
  }

  steer(input: UserMessageInput): UserMessage {
    return this.send(input, 'next-step', true)
  }

  inject(input: UserMessageInput): UserMessage {
    return this.send(input, 'next-step', false)
  }

  wake(): boolean {
    if (this.#phase !== 'idle' || this.#disposing !== undefined || !this.#inbox.hasPending) return false
    this.#start()
    return true
  }

  cancel(cause: CancelCause = { kind: 'user' }, options: CancelOptions = {}): void {
    if (!cancelCauseSchema.safeParse(cause).success) {
      throw new InvalidArgumentError({ argument: 'cause', reason: "must be a CancelCause ({ kind: 'user' | 'parent' | 'disposed' } or { kind: 'hook', reason })", value: cause })
    }
    if (options.keepInbox !== true) {
      this.#inbox.clear()
      this.#wakeRequested = false
    }
    if (this.#phase !== 'idle') this.#controller?.abort(cause)
  }

  async whenIdle(): Promise<void> {
    while (this.#driver !== undefined) await this.#driver.catch(() => undefined)
  }

  run(input: UserMessageInput, options: RunOptions = {}): Promise<TurnResult> {
    return runAgentTurn(this, this, input, options)
  }

  /**
   * Calls `listener` after every `turn/end` this driver logs (for `run`).
   *
   * @param listener - the listener
   * @returns a remover
   * @internal
   */
  onTurnEnd(listener: (notice: TurnEndNotice) => void): () => void {
    this.#turnEndListeners.add(listener)
    return () => this.#turnEndListeners.delete(listener)
  }

  dispose(): Promise<void> {
    this.#disposing ??= this.#dispose()
    return this.#disposing
  }

  /**
   * Sets what runs after the driver stopped at dispose (the registry's unpublish steps).
   *
   * @param cleanup - the registry's part of disposal
   * @internal
   */
  onDispose(cleanup: () => Promise<void>): void {
    this.#onDispose = cleanup
  }

  async #dispose(): Promise<void> {
    if (this.#phase !== 'idle') this.#controller?.abort({ kind: 'disposed' })
    await this.whenIdle()
    await this.ctx.dispose()
    await this.#host.sessions.flush(this.session).catch(() => false)
    await this.#onDispose?.()
  }

  /** T2: idle → running, synchronously up to the driver's first await. */
  #start(): void {
    this.#phase = 'running'
    this.#controller = new AbortController()
    this.#wakeRequested = false
    this.#emitStatus('running')
    const driver = this.#initiator.run(this, () => this.#drive())
    this.#driver = driver
    void driver.finally(() => {
      if (this.#driver === driver) this.#driver = undefined
    })
  }

  #emitStatus(status: AgentStatus): void {
    this.ctx.emit('agent/status', { agent: this, status }, { scope: this, subject: this.id })
  }

  async #drive(): Promise<void> {
    for (;;) {
      const controller = this.#controller as AbortController
      const signal = controller.signal
      if (signal.aborted) break
      const turn = this.#lastTurn + 1
      const startSeq = this.session.length
      try {
        this.session.append('turn/start', { turn })
      } catch (error) {
        this.#reportError(undefined, undefined, error)
        break
      }
      this.#lastTurn = turn
      const outcome = await runTurn(this.#host, turn, signal)
      const end = { turn, reason: outcome.reason, ...(outcome.cause === undefined ? {} : { cause: outcome.cause }) }
      try {
        this.session.append('turn/end', end)
        await this.#host.sessions.flush(this.session)
      } catch (error) {
        this.#reportError(turn, outcome.step, error)
      }
      for (const listener of [...this.#turnEndListeners]) listener({ turn, startSeq, end })
      if (outcome.reason.kind === 'error') this.#reportError(turn, outcome.step, outcome.thrown?.error)
      const kind = outcome.reason.kind
      if (kind === 'error' || kind === 'aborted' || !this.#inbox.hasPending) break
      this.#controller = new AbortController()
      this.#wakeRequested = false
    }
    this.#phase = 'idle'
    this.#emitStatus('idle')
    if (this.#wakeRequested && this.#inbox.hasPending && this.#disposing === undefined) this.#start()
  }

  #reportError(turn: number | undefined, step: number | undefined, error: unknown): void {
    this.ctx.emit(
      'agent/error',
      {
        agent: this,
        ...(turn === undefined ? {} : { turn }),
        ...(step === undefined ? {} : { step }),
        error,
        failure: failureOf(error),
        queued: { nextTurn: this.#inbox.nextTurn.length, nextStep: this.#inbox.nextStep.length },
      },
      { scope: this, subject: this.id },
    )
  }
}
