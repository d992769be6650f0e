import { RunDiscardedError } from '../errors/agent-errors.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { OutputValidationError } from '../errors/output-validation-error.js'
import { isAbortSignal } from '../kernel/is-abort-signal.js'
import type { AssistantMessageData } from '../session/core-event-types.js'
import type { Message, UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-event.js'
import type { TokenUsage } from '../session/stream-chunk.js'
import type { CancelCause } from '../session/turn-end-reason.js'
import type { Agent, RunOptions, StructuredTurnResult, TurnResult } from './agent.js'
import type { DriverNotices, TurnEndNotice } from './driver-notices.js'
import { isMaxSteps } from './agent-options.js'
import { answerTextOf } from './output-repair.js'
import type { RunSettings } from './run-settings.js'
import { checkAnswer, type OutputSpec, outputSpecOf } from './structured-output.js'
import { signalCancelCause } from './signal-cancel-cause.js'
import type { UserMessageInput } from './user-message-input.js'

/** What `agent.run()` and `agent.stream()` are given by the agent that queues their prompt. */
export interface RunSource {
  /** The agent: its context's inbox events, its session, `cancel` and `inbox.remove`. */
  readonly agent: Agent
  /** What the agent's driver reports to the runs waiting on it. */
  readonly notices: DriverNotices
  /**
   * Validates and normalizes an input without queuing it.
   *
   * @throws `AgentDisposedError`, `InvalidMessageError`
   */
  readonly prepare: (input: UserMessageInput) => UserMessage
  /** Queues a prepared prompt for its own turn and wakes the agent (`send` without the checks). */
  readonly enqueue: (message: UserMessage) => void
  /** Subscribes to every event the agent's session commits; returns a remover. */
  readonly tapSession: (listener: (event: SessionEvent) => void) => () => void
  /**
   * Logs a prompt's per-run settings before it is queued (nothing when it has none).
   *
   * @throws the append's error
   */
  readonly recordRun: (messageId: string, settings: RunSettings) => void
  /** Drops what {@link RunSource.recordRun} kept in memory for a prompt whose run settled. */
  readonly forgetRun: (messageId: string) => void
}

const runOptionsShape = '{ signal?, maxSteps?, output?, outputRepairs? }'

/** Hooks `agent.stream()` adds to a run. */
export interface RunHooks {
  /**
   * Called when a turn claims the run's message.
   *
   * @param turn - the claiming turn
   * @param startSeq - the seq of its `turn/start`
   */
  claimed(turn: number, startSeq: number): void
}

function addUsage(total: TokenUsage, usage: TokenUsage | undefined): TokenUsage {
  if (usage === undefined) return total
  return { inputTokens: total.inputTokens + usage.inputTokens, outputTokens: total.outputTokens + usage.outputTokens }
}

/**
 * The {@link TurnResult} of a turn: its surface messages, the text of its assistant
 * messages joined with `'\n'`, and the summed usage. Built from the log between `turn/start` and
 * `turn/end`, so it is lossless JSON.
 *
 * @param session - the agent's session
 * @param notice - the finished turn
 * @returns the result
 */
export function turnResultOf(session: Session, notice: TurnEndNotice): TurnResult {
  const messages: Message[] = []
  const texts: string[] = []
  let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 }
  for (const event of session.slice(notice.startSeq)) {
    if (event.type === 'user/message') messages.push(event.data as unknown as Message)
    else if (event.type === 'tool/result')
      messages.push((event.data as unknown as { readonly message: Message }).message)
    else if (event.type === 'assistant/message') {
      const data = event.data as unknown as AssistantMessageData
      usage = addUsage(usage, data.usage)
      if (data.message.content.length > 0) messages.push(data.message)
      for (const block of data.message.content) if (block.type === 'text') texts.push(block.text)
    } else if (event.type === 'turn/end') break
  }
  const { end } = notice
  return {
    turn: notice.turn,
    reason: end.reason,
    ...(end.cause === undefined ? {} : { cause: end.cause }),
    text: texts.join('\n'),
    messages,
    usage,
  }
}

/**
 * The text of a turn's last answer: the text blocks of its last `assistant/message`, whatever
 * they hold (`''` when the turn logged none).
 *
 * @param session - the agent's session
 * @param notice - the finished turn
 * @returns the answer's text
 */
export function lastAnswerOf(session: Session, notice: TurnEndNotice): string {
  let answer = ''
  for (const event of session.slice(notice.startSeq)) {
    if (event.type === 'assistant/message') answer = answerTextOf(event.data as unknown as AssistantMessageData)
    else if (event.type === 'turn/end') break
  }
  return answer
}

/**
 * Reads and checks the per-run settings of `run` / `stream` before anything is queued: `maxSteps`
 * (a positive integer or `Infinity`), `output` (a zod schema or a JSON Schema object) and
 * `outputRepairs` (a non-negative safe integer, only with `output`).
 *
 * @param options - the checked options object
 * @returns the settings
 * @throws {@link InvalidArgumentError} `argument: 'options.maxSteps'`, `'options.output'` or `'options.outputRepairs'`
 * @internal
 */
export function runSettingsOf(options: object): RunSettings {
  const { maxSteps, output, outputRepairs } = options as {
    readonly maxSteps?: unknown
    readonly output?: unknown
    readonly outputRepairs?: unknown
  }
  if (maxSteps !== undefined && !isMaxSteps(maxSteps)) {
    throw new InvalidArgumentError({
      argument: 'options.maxSteps',
      reason: 'must be a positive integer or Infinity',
      value: maxSteps,
    })
  }
  if (outputRepairs !== undefined) {
    if (!Number.isSafeInteger(outputRepairs) || (outputRepairs as number) < 0) {
      throw new InvalidArgumentError({
        argument: 'options.outputRepairs',
        reason: 'must be a non-negative safe integer',
        value: outputRepairs,
      })
    }
    if (output === undefined) {
      throw new InvalidArgumentError({
        argument: 'options.outputRepairs',
        reason: 'is allowed only with output',
        value: outputRepairs,
      })
    }
  }
  return {
    ...(maxSteps === undefined ? {} : { maxSteps }),
    ...(output === undefined ? {} : { output: outputSpecOf(output, 'options.output') }),
    ...(outputRepairs === undefined ? {} : { outputRepairs: outputRepairs as number }),
  }
}

/**
 * How a finished turn settles a run: its result, or for a structured run the result with its
 * checked answer, or an {@link OutputValidationError} when the last answer is not valid.
 */
function settledResult(
  session: Session,
  notice: TurnEndNotice,
  output: OutputSpec | undefined,
): { readonly value: TurnResult } | { readonly error: OutputValidationError } {
  const result = turnResultOf(session, notice)
  if (output === undefined) return { value: result }
  const text = lastAnswerOf(session, notice)
  const check = checkAnswer(text, output)
  if (check.ok) {
    const structured: StructuredTurnResult<unknown> = { ...result, output: check.value }
    return { value: structured }
  }
  const kind = result.reason.kind
  const issues =
    kind === 'completed' || kind === 'max-steps'
      ? check.issues
      : check.issues.map((issue) => ({ ...issue, message: `${issue.message} (the turn ended '${kind}')` }))
  return { error: new OutputValidationError({ issues, text, result }) }
}

/**
 * Checks the options of `run` / `stream` before anything is queued: an object whose `signal`, if
 * set, is an `AbortSignal` (a signal of another realm passes by shape).
 *
 * @param options - what the caller passed
 * @param shape - the options shape the error names
 * @throws {@link InvalidArgumentError} `argument: 'options'` or `'options.signal'`
 * @internal
 */
export function checkRunOptions(options: unknown, shape = '{ signal? }'): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError({
      argument: 'options',
      reason: `must be an options object ${shape}`,
      value: options,
    })
  }
  const signal = (options as { readonly signal?: unknown }).signal
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new InvalidArgumentError({ argument: 'options.signal', reason: 'must be an AbortSignal', value: signal })
  }
}

/**
 * `agent.run(input)`: queues a prompt like `followup` and resolves with the
 * result of the turn that claims it. Rejects {@link RunDiscardedError} when the prompt is discarded
 * before a claim (`'canceled'` by `cancel()` or the run's signal, with the cancel cause: a
 * signal aborted with a `TimeoutError` is `{ kind: 'timeout' }`, any other `{ kind: 'user' }`;
 * `'removed'` by `inbox.remove`/`replace`/`clear`; `'disposed'`, with the cause
 * `{ kind: 'disposed' }`, when the agent is disposed first, the prompt staying queued in the log
 * for a resume), and with the flush error when the turn-end checkpoint fails. When
 * the claiming turn's `turn/end` cannot be appended it rejects with that append error; the turn
 * then stays open in the session, so until a resume repairs it every run still waiting for a claim
 * rejects with that error too, and a later run with the `turn/start` error (`TURN_OPEN`), its
 * prompt staying queued in the log. A structured run (`output`) resolves with the checked answer
 * as `output`, or rejects {@link OutputValidationError} when the turn's last answer is not valid.
 *
 * @param source - the agent, its driver's notices and its queue
 * @param input - the prompt
 * @param options - an abort signal, `maxSteps`, and `output` with `outputRepairs`
 * @param hooks - what `stream()` adds
 * @returns the message queued and the turn result
 * @throws {@link InvalidArgumentError} for bad options, {@link AgentDisposedError} or {@link InvalidMessageError} synchronously, nothing queued
 */
export function runAgentTurn(
  source: RunSource,
  input: UserMessageInput,
  options: RunOptions,
  hooks?: RunHooks,
): { readonly message: UserMessage; readonly result: Promise<TurnResult> } {
  checkRunOptions(options, runOptionsShape)
  const settings = runSettingsOf(options)
  const { agent, notices } = source
  const message = source.prepare(input)
  const signal = options.signal
  const result = new Promise<TurnResult>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(new RunDiscardedError({ reason: 'canceled', messageId: message.id, cause: signalCancelCause(signal) }))
      return
    }
    let claimedTurn: number | undefined
    let abortedBySignal = false
    const cleanups: (() => void)[] = []
    const settle = (action: () => void): void => {
      for (const cleanup of cleanups.splice(0)) cleanup()
      source.forgetRun(message.id)
      action()
    }
    const discard = (reason: 'canceled' | 'removed' | 'disposed', cause: CancelCause | undefined): void => {
      settle(() =>
        reject(new RunDiscardedError({ reason, messageId: message.id, ...(cause === undefined ? {} : { cause }) })),
      )
    }
    cleanups.push(
      agent.ctx.on('agent/inbox/claimed', (payload) => {
        if (payload.message.id !== message.id) return
        claimedTurn = payload.turn
        hooks?.claimed(payload.turn, notices.turnStartSeq ?? agent.session.length)
      }),
      agent.ctx.on('agent/inbox/discarded', (payload) => {
        if (payload.message.id !== message.id) return
        const cause = abortedBySignal && signal !== undefined ? signalCancelCause(signal) : notices.clearingCause
        discard(cause === undefined ? 'removed' : 'canceled', cause)
      }),
      notices.onTurnEnd((notice, flushError) => {
        if (notice.turn !== claimedTurn) return
        if (flushError !== undefined) settle(() => reject(flushError.error))
        else {
          const settled = settledResult(agent.session, notice, settings.output)
          settle(() => ('value' in settled ? resolve(settled.value) : reject(settled.error)))
        }
      }),
      notices.onUnclosedTurn((error) => {
        if (claimedTurn === undefined) settle(() => reject(error))
      }),
      notices.onDisposed(() => {
        // Carries its cause like a cancel's discard; the prompt stays queued in the log for a resume.
        if (claimedTurn === undefined) discard('disposed', { kind: 'disposed' })
      }),
    )
    if (signal !== undefined) {
      const onAbort = (): void => {
        abortedBySignal = true
        // A disposing agent keeps its queued work in the log for a resume; the run is discarded 'disposed'.
        if (claimedTurn === undefined) {
          if (!agent.disposed) agent.inbox.remove(message.id)
        } else agent.cancel(signalCancelCause(signal), { keepInbox: true })
      }
      signal.addEventListener('abort', onAbort, { once: true })
      cleanups.push(() => signal.removeEventListener('abort', onAbort))
    }
    try {
      source.recordRun(message.id, settings)
      source.enqueue(message)
    } catch (error) {
      settle(() => reject(error))
    }
  })
  return { message, result }
}
