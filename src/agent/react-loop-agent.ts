import type { CompactOptions, SummaryAction } from '../compaction/compaction-actions.js'
import { runManualCompaction } from '../compaction/run-manual-compaction.js'
import { AgentBusyError, AgentDisposedError, DuplicateMessageError } from '../errors/agent-errors.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { Context } from '../kernel/context.js'
import type { PayloadOf } from '../kernel/yoke-events.js'
import { ClockKey, IdsKey } from '../kernel/host-keys.js'
import { sessionMessageIds } from './session-message-ids.js'
import type { InitiatorControl } from '../scope/initiator.js'
import type { UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-event.js'
import { type CancelCause, cancelCauseSchema } from '../session/turn-end-reason.js'
import type { ApprovalDecision, PendingApproval } from '../tools/approval-broker.js'
import type {
  Agent,
  AgentPhase,
  AgentRun,
  AgentStatus,
  CancelOptions,
  OutputRunOptions,
  RunOptions,
  SendOptions,
  StreamOptions,
  StructuredTurnResult,
  TurnResult,
} from './agent.js'
import { AgentInbox, type InboxEntry, type InboxTarget, type InboxView } from './agent-inbox.js'
import type { AgentOptions } from './agent-options.js'
import { DriverNotices } from './driver-notices.js'
import { createLoopHost, type LoopHost } from './loop-host.js'
import type { LoopRequestMarks } from './request-builder.js'
import { checkRunOptions, type RunSource, runAgentTurn } from './run-agent.js'
import type { RunSettings } from './run-settings.js'
import type { OutputOf, OutputSchema } from './structured-output.js'
import { runTurn } from './run-turn.js'
import { streamAgentTurn } from './stream-agent-turn.js'
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
  /** Runs once the driver stopped at dispose: the registry's unpublish steps. */
  readonly unpublish: () => Promise<void>
}

/**
 * Creates an agent driver: the library's {@link Agent}, built only by the agent registry.
 *
 * @param init - the owner context, session, options, initiator, marks and the registry's unpublish steps
 * @returns the agent
 */
export function createReactLoopAgent(init: ReactLoopAgentInit): Agent {
  return new ReactLoopAgent(init)
}

/**
 * The agent driver shipped with the library: phases, the wake latch, the turn loop. It holds the
 * state (phase, controller, inbox, subscriptions); the turn and the step are functions over the
 * frozen {@link LoopHost} it wires once.
 */
class ReactLoopAgent implements Agent {
  /** Marks the handle as an agent scope key (`ctx.agent`). */
  readonly [agentBrand] = true
  readonly id: string
  readonly session: Session
  readonly options: AgentOptions
  readonly ctx: Context
  readonly #inbox: AgentInbox
  /** The public inbox view: its edits refuse a disposed agent (`AgentDisposedError`), like `send`. */
  readonly #inboxView: InboxView
  readonly #host: LoopHost
  readonly #initiator: InitiatorControl<Agent>
  #phase: AgentPhase = 'idle'
  #controller: AbortController | undefined
  #wakeRequested = false
  #lastTurn: number
  #driver: Promise<void> | undefined
  #disposing: Promise<void> | undefined
  readonly #unpublish: () => Promise<void>
  /** What the driver tells the runs waiting on it. */
  readonly #notices = new DriverNotices()
  /** What `run` and `stream` are given: explicit functions, not this object. */
  readonly #runSource: RunSource
  #starts = 0

  /** @param init - the owner context, session, options, initiator and marks */
  constructor(init: ReactLoopAgentInit) {
    this.id = init.session.id
    this.session = init.session
    this.options = init.options
    this.#initiator = init.initiator
    this.#unpublish = init.unpublish
    const parent = init.parent
    // The agent's own id source (skipping message ids its log already holds) for everything that
    // runs in its context: the inbox, the runtime-context projection, the steps, the tool calls.
    this.ctx = init.parent.child(`agent:${this.id}`, { scope: this, isolate: [IdsKey] })
    const ctx = this.ctx
    // Drawn only after the inbox below exists.
    const ids = sessionMessageIds(init.parent.get(IdsKey), this.session, (id) => this.#inbox.has(id))
    ctx.provide(IdsKey, ids)
    this.#inbox = new AgentInbox({
      session: this.session,
      ids,
      clock: init.parent.get(ClockKey),
      emit: (name, payload) => ctx.emit(name, payload as PayloadOf<typeof name>, { scope: this, subject: this.id }),
    })
    const inbox = this.#inbox
    const refuseDisposed = (operation: string): void => {
      if (this.#disposing !== undefined) throw new AgentDisposedError({ agentId: this.id, operation })
    }
    this.#inboxView = Object.freeze({
      get nextTurn() {
        return inbox.nextTurn
      },
      get nextStep() {
        return inbox.nextStep
      },
      get hasPending() {
        return inbox.hasPending
      },
      list(): readonly InboxEntry[] {
        return inbox.list()
      },
      remove(id: string): boolean {
        refuseDisposed('inbox.remove')
        return inbox.remove(id)
      },
      replace(id: string, input: UserMessageInput): UserMessage | false {
        refuseDisposed('inbox.replace')
        return inbox.replace(id, input)
      },
      clear(): readonly UserMessage[] {
        refuseDisposed('inbox.clear')
        return inbox.clear()
      },
    })
    // The session's structure fold already knows the numbering (no backward scan of the log).
    this.#lastTurn = this.session.turnState().nextTurn - 1
    const session = this.session
    this.#host = createLoopHost({ agent: this, inbox, ids, marks: init.marks, initiator: init.initiator })
    this.#runSource = Object.freeze({
      agent: this,
      notices: this.#notices,
      prepare: (input: UserMessageInput) => this.#prepare(input),
      enqueue: (message: UserMessage) => this.#enqueue(message, 'next-turn', true),
      tapSession: (listener: (event: SessionEvent) => void) =>
        parent.on('session/event', (payload) => {
          if (payload.session === session) listener(payload.event)
        }),
      recordRun: (messageId: string, settings: RunSettings) => this.#host.runSettings.record(messageId, settings),
      forgetRun: (messageId: string) => this.#host.runSettings.forget(messageId),
    })
  }

  get status(): AgentStatus {
    return this.#phase === 'running' ? 'running' : 'idle'
  }

  get phase(): AgentPhase {
    return this.#phase
  }

  get inbox(): InboxView {
    return this.#inboxView
  }

  get disposed(): boolean {
    return this.#disposing !== undefined
  }

  get pendingApprovals(): readonly PendingApproval[] {
    return this.#host.approvals.pending
  }

  approve(approvalId: string, decision: ApprovalDecision): 'decided' | 'already-decided' {
    return this.#host.approvals.approve(approvalId, decision)
  }

  send(input: UserMessageInput, target: InboxTarget, wakeup: boolean, options?: SendOptions): UserMessage {
    if (typeof wakeup !== 'boolean')
      throw new InvalidArgumentError({ argument: 'wakeup', reason: 'must be a boolean', value: wakeup })
    const message = this.#prepare(input, givenId(options))
    this.#enqueue(message, target, wakeup)
    return message
  }

  /** Validates and normalizes an input without queuing it (the first half of `send`). */
  #prepare(input: UserMessageInput, id?: string): UserMessage {
    if (this.#disposing !== undefined) throw new AgentDisposedError({ agentId: this.id, operation: 'send' })
    const message = normalizeUserMessage(input, id ?? this.#host.ids('message'))
    // A given id must be new to the session: a second message under it would fail only when a turn
    // claims it, far from the caller.
    if (id !== undefined && this.session.hasMessageId(id))
      throw new DuplicateMessageError({ messageId: id, logged: true })
    return message
  }

  /**
   * The rest of `send` for a prepared message: queue it (a wake after an abort queues for the next
   * turn), then start a driver when idle or latch the wake while maintenance or an aborted turn runs.
   */
  #enqueue(message: UserMessage, target: InboxTarget, wakeup: boolean): void {
    if (this.#disposing !== undefined) throw new AgentDisposedError({ agentId: this.id, operation: 'send' })
    const wakingAfterAbort = wakeup && this.#phase !== 'idle' && this.#controller?.signal.aborted === true
    this.#inbox.insert(message, wakingAfterAbort ? 'next-turn' : target)
    if (!wakeup) return
    if (this.#phase === 'idle') this.#start()
    else if (
      (this.#phase === 'maintenance' || wakingAfterAbort) &&
      (this.#controller?.signal.reason as CancelCause | undefined)?.kind !== 'disposed'
    ) {
      this.#wakeRequested = true
    }
  }

  followup(input: UserMessageInput, options?: SendOptions): UserMessage {
    return this.send(input, 'next-turn', true, options)
  }

  steer(input: UserMessageInput, options?: SendOptions): UserMessage {
    return this.send(input, 'next-step', true, options)
  }

  inject(input: UserMessageInput, options?: SendOptions): UserMessage {
    return this.send(input, 'next-step', false, options)
  }

  wake(): boolean {
    if (this.#phase !== 'idle' || this.#disposing !== undefined || !this.#inbox.hasPending) return false
    this.#start()
    return true
  }

  cancel(cause: CancelCause = { kind: 'user' }, options: CancelOptions = {}): void {
    if (
      typeof options !== 'object' ||
      options === null ||
      Array.isArray(options) ||
      (options.keepInbox !== undefined && typeof options.keepInbox !== 'boolean')
    ) {
      throw new InvalidArgumentError({ argument: 'options', reason: 'must be { keepInbox?: boolean }', value: options })
    }
    if (!cancelCauseSchema.safeParse(cause).success) {
      throw new InvalidArgumentError({
        argument: 'cause',
        reason:
          "must be a CancelCause ({ kind: 'user' | 'parent' | 'disposed' | 'timeout' } or { kind: 'hook', reason })",
        value: cause,
      })
    }
    // Once dispose() was called the queued work stays in the log for a resume: a later cancel keeps it.
    if (options.keepInbox !== true && this.#disposing === undefined) {
      this.#notices.clearing(cause, () => this.#inbox.clear())
      this.#wakeRequested = false
    }
    if (this.#phase !== 'idle') this.#controller?.abort(cause)
  }

  async whenIdle(): Promise<void> {
    while (this.#driver !== undefined) await this.#driver.catch(() => undefined)
  }

  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.#disposing !== undefined) throw new AgentDisposedError({ agentId: this.id, operation: 'runMaintenance' })
    if (typeof task !== 'function')
      throw new InvalidArgumentError({
        argument: 'task',
        reason: 'must be a function (signal) => Promise',
        value: task,
      })
    if (this.#phase !== 'idle')
      throw new AgentBusyError({ agentId: this.id, phase: this.#phase, operation: 'runMaintenance' })
    this.#phase = 'maintenance'
    const controller = new AbortController()
    this.#controller = controller
    this.#wakeRequested = false
    const work = (async () => {
      try {
        return await task(controller.signal)
      } finally {
        this.#phase = 'idle'
        if (this.#wakeRequested && this.#inbox.hasPending && this.#disposing === undefined) this.#start()
      }
    })()
    this.#track(work)
    return work
  }

  compact(options: CompactOptions = {}): Promise<SummaryAction | null> {
    try {
      checkRunOptions(options)
    } catch (error) {
      return Promise.reject(error)
    }
    return runManualCompaction(this, options)
  }

  run<S extends OutputSchema>(
    input: UserMessageInput,
    options: OutputRunOptions<S>,
  ): Promise<StructuredTurnResult<OutputOf<S>>>
  run(input: UserMessageInput, options?: RunOptions): Promise<TurnResult>
  run(input: UserMessageInput, options: RunOptions = {}): Promise<TurnResult> {
    try {
      return runAgentTurn(this.#runSource, input, options).result
    } catch (error) {
      return Promise.reject(error)
    }
  }

  stream<S extends OutputSchema>(
    input: UserMessageInput,
    options: StreamOptions & OutputRunOptions<S>,
  ): AgentRun<StructuredTurnResult<OutputOf<S>>>
  stream(input: UserMessageInput, options?: StreamOptions): AgentRun
  stream(input: UserMessageInput, options: StreamOptions = {}): AgentRun {
    return streamAgentTurn(this.#runSource, input, options)
  }

  dispose(): Promise<void> {
    this.#disposing ??= this.#dispose()
    return this.#disposing
  }

  /** Abort, stop the driver (queued work stays in the log for a resume), tear down in reverse. */
  async #dispose(): Promise<void> {
    this.cancel({ kind: 'disposed' }, { keepInbox: true })
    await this.whenIdle()
    this.#notices.disposed()
    await this.ctx.dispose()
    await this.#host.sessions.flush(this.session).catch(() => false)
    await this.#unpublish()
  }

  #track(work: Promise<unknown>): void {
    this.#driver = work as Promise<void>
    void work.then(
      () => this.#untrack(work),
      () => this.#untrack(work),
    )
  }

  #untrack(work: Promise<unknown>): void {
    if (this.#driver === work) this.#driver = undefined
  }

  /** Idle → running, synchronously up to the driver's first await. */
  #start(): void {
    this.#phase = 'running'
    this.#controller = new AbortController()
    this.#wakeRequested = false
    this.#emitStatus('running')
    const generation = ++this.#starts
    // The whole driver runs in this agent's frame: model adapters, prompt sections and log
    // observers attribute their work to it, not only tools and loop listeners.
    const work = this.#initiator.run(this, () => this.#drive())
    // A driver that exited before its first await may already have started (and tracked) its latched replay.
    if (generation === this.#starts) this.#track(work)
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
        this.#refuseIfUnclosed(error)
        break
      }
      this.#lastTurn = turn
      this.#notices.turnStarted(startSeq)
      const outcome = await runTurn(this.#host, turn, signal)
      const end = { turn, reason: outcome.reason, ...(outcome.cause === undefined ? {} : { cause: outcome.cause }) }
      let flushError: { readonly error: unknown } | undefined
      try {
        this.session.append('turn/end', end)
        await this.#host.checkpoints.end(signal)
      } catch (error) {
        flushError = { error }
        this.#reportError(turn, outcome.step, error)
      }
      this.#notices.turnEnded({ turn, startSeq, end }, flushError)
      if (flushError !== undefined) this.#refuseIfUnclosed(flushError.error)
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

  /**
   * A failed turn keeps the prompts queued, but while the session holds a turn the loop could not
   * close (its `turn/end` append threw) no `turn/start` can be logged, so no wake can run them: the
   * runs waiting for a claim reject with `error`. A resume repairs the log (`interrupted`). While
   * disposing they are discarded `'disposed'` instead.
   */
  #refuseIfUnclosed(error: unknown): void {
    if (this.#disposing !== undefined || this.session.turnState().openTurn === null) return
    this.#notices.unclosedTurn(error)
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

/**
 * The `id` of send options: `undefined` when none is given.
 *
 * @throws InvalidArgumentError for options that are not `{ id? }` or an id that is not a string
 */
function givenId(options: SendOptions | undefined): string | undefined {
  if (options === undefined) return undefined
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be { id?: string }', value: options })
  }
  for (const key of Object.keys(options)) {
    if (key !== 'id')
      throw new InvalidArgumentError({
        argument: `options.${key}`,
        reason: 'is not a send option (only id is)',
        value: (options as Record<string, unknown>)[key],
      })
  }
  const id: unknown = options.id
  if (id !== undefined && typeof id !== 'string')
    throw new InvalidArgumentError({ argument: 'options.id', reason: 'must be a string', value: id })
  return id
}
