import type { Agent } from '../agent/agent.js'
import { ErrorCode } from '../errors/codes.js'
import { CompactionError } from '../errors/compaction-error.js'
import { LlmError } from '../errors/llm-error.js'
import { untaken } from '../agent/session-message-ids.js'
import type { Logger } from '../kernel/host-services.js'
import type { Message, UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { CompactionTrigger, SummaryAction } from './compaction-actions.js'
import type { CompactionEndData, CompactionStartData, CompactionSummaryData } from './compaction-events.js'
import { olderHalf } from './choose-cut.js'
import { DEFAULT_SUMMARY_INSTRUCTION, type Summarizer, type SummarizerResult } from './summarizer.js'
import { COMPACTION_PLUGIN, type SurfaceIndex } from './surface-index.js'
import { raceSignal } from '../kernel/race-signal.js'

/** The text before the summary in a checkpoint. */
export const CHECKPOINT_PREFIX = 'Earlier conversation, condensed to save context:\n\n<conversation-summary>\n'

/** The text after the summary in a checkpoint. */
export const CHECKPOINT_SUFFIX = '\n</conversation-summary>'

/**
 * The framed text of a checkpoint for `summary`.
 *
 * @param summary - the summary
 * @returns the checkpoint text
 */
export function checkpointText(summary: string): string {
  return `${CHECKPOINT_PREFIX}${summary}${CHECKPOINT_SUFFIX}`
}

/**
 * What a summary action needs from its engine.
 *
 * @internal
 */
export interface SummaryActionDeps {
  /** Makes the compaction id. */
  readonly nextId: () => string
  /** Reports a failed close. */
  readonly logger: Logger
  /** The summarizer. */
  readonly summarizer: Summarizer
  /** The per-message estimate. */
  readonly measure: (message: Message) => number
  /** The sessions with a compaction running (the lock). */
  readonly running: Set<Session>
}

/**
 * One summary action to run.
 *
 * @internal
 */
export interface SummaryActionInput {
  /** The agent. */
  readonly agent: Agent
  /** The session's index. */
  readonly index: SurfaceIndex
  /** What started it. */
  readonly trigger: CompactionTrigger
  /** The head's node seqs. */
  readonly head: readonly number[]
  /** Aborts it. */
  readonly signal: AbortSignal
  /** Whether an overflowing summary may retry with the older half of the head. */
  readonly halve: boolean
}

const abortedMarker = Symbol('aborted')

function isOverflow(error: unknown): boolean {
  const llm = CompactionError.is(error) && error.code === ErrorCode.SUMMARY_FAILED ? error.cause : error
  return LlmError.is(llm) && llm.failure.code === ErrorCode.CONTEXT_WINDOW_EXCEEDED
}

/** A failure whose close was already attempted: rethrown as it is, with no second close. */
class ClosedFailure {
  constructor(readonly error: CompactionError) {}
}

/** Where the action is, for building its errors. */
interface Bracket {
  readonly sessionId: string
  readonly compactionId: string
  readonly signal: AbortSignal
}

function failure(
  bracket: Bracket,
  code: ConstructorParameters<typeof CompactionError>[0],
  detail: string,
  extra: { readonly cause?: unknown; readonly shadowedTokens?: number; readonly summaryTokens?: number } = {},
): CompactionError {
  return new CompactionError(code, {
    sessionId: bracket.sessionId,
    compactionId: bracket.compactionId,
    detail,
    ...extra,
  })
}

function normalizeError(bracket: Bracket, error: unknown): CompactionError {
  if (bracket.signal.aborted)
    return failure(bracket, ErrorCode.COMPACTION_ABORTED, 'the compaction was aborted', {
      cause: bracket.signal.reason,
    })
  if (CompactionError.is(error)) {
    if (error.compactionId !== undefined) return error
    return failure(bracket, error.code, error.detail, Object.hasOwn(error, 'cause') ? { cause: error.cause } : {})
  }
  const text = error instanceof Error ? error.message : String(error)
  return failure(bracket, ErrorCode.SUMMARY_FAILED, `the summarizer failed: ${text}`, { cause: error })
}

async function summarize(
  deps: SummaryActionDeps,
  input: SummaryActionInput,
  head: readonly number[],
): Promise<SummarizerResult> {
  const { agent, signal } = input
  const header = agent.session.requestHeader()
  const provider = header?.config.provider ?? agent.options.provider
  const model = header?.config.model ?? agent.options.model
  if (provider === undefined || model === undefined) {
    throw new CompactionError(ErrorCode.SUMMARY_FAILED, {
      sessionId: agent.session.id,
      detail: 'no provider or model to summarize with (no request header and no agent options route)',
    })
  }
  const result = await raceSignal(
    deps.summarizer({
      agent,
      messages: input.index.messages(head),
      ...(header?.system === undefined ? {} : { system: header.system }),
      ...(header?.tools === undefined ? {} : { tools: header.tools }),
      route: { provider, model },
      instruction: DEFAULT_SUMMARY_INSTRUCTION,
      signal,
    }),
    signal,
    () => abortedMarker,
  )
  if (typeof result?.text !== 'string' || result.text.trim() === '') {
    throw new CompactionError(ErrorCode.SUMMARY_EMPTY, {
      sessionId: agent.session.id,
      detail: 'the summarizer returned no text',
    })
  }
  return result
}

/** Step 3's staleness check: the head is still a contiguous run of the surface, in order. */
function isCurrent(session: Session, head: readonly number[]): boolean {
  const nodes = session.surfaceNodes()
  const first = nodes.indexOf(head[0] as number)
  if (first === -1) return false
  return head.every((seq, offset) => nodes[first + offset] === seq)
}

/**
 * Runs one summary action: `compaction/start` before any await, the
 * summarizer, the checks, `compaction/summary` and immediately the replacing `user/message`, then
 * `compaction/end` (with the error on failure). Holds the session's lock from start to end.
 *
 * @param deps - the engine's parts
 * @param input - the agent, the head and the signal
 * @returns the action
 * @throws {@link CompactionError}: `COMPACTION_BUSY` (nothing appended), or the action's failure
 *   after its `compaction/end {error}`
 * @internal
 */
export async function runSummaryAction(deps: SummaryActionDeps, input: SummaryActionInput): Promise<SummaryAction> {
  const { agent, signal, trigger } = input
  const session = agent.session
  if (deps.running.has(session)) {
    throw new CompactionError(ErrorCode.COMPACTION_BUSY, {
      sessionId: session.id,
      detail: 'another compaction of this session is running',
    })
  }
  // The summary message is `compaction:<id>`: skip ids a resumed log already holds (a fresh
  // deterministic id source restarts at its first id).
  const compactionId = untaken(deps.nextId, (id) => session.hasMessageId(`compaction:${id}`))
  const bracket: Bracket = { sessionId: session.id, compactionId, signal }
  const state = session.turnState()
  const start: CompactionStartData = { compactionId, trigger, turn: state.openTurn, step: state.openStep }
  let startSeq: number
  try {
    startSeq = session.append('compaction/start', start).seq
  } catch (error) {
    throw failure(
      bracket,
      ErrorCode.COMPACTION_COMMIT_FAILED,
      `compaction/start could not be appended: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    )
  }
  deps.running.add(session)
  try {
    let head = input.head
    let result: SummarizerResult
    try {
      result = await summarize(deps, input, head)
    } catch (error) {
      const half = input.halve && !signal.aborted && isOverflow(error) ? olderHalf(input.index, head) : undefined
      if (half === undefined) throw error
      head = half
      result = await summarize(deps, input, head)
    }
    const text = checkpointText(result.text)
    const checkpoint: UserMessage = {
      id: `compaction:${compactionId}`,
      role: 'user',
      content: [{ type: 'text', text }],
      source: { kind: 'plugin', plugin: COMPACTION_PLUGIN, form: 'summary' },
    }
    const shadowedTokens = head.reduce((total, seq) => total + input.index.tokens(seq), 0)
    const summaryTokens = deps.measure(checkpoint)
    if (summaryTokens >= shadowedTokens) {
      throw failure(
        bracket,
        ErrorCode.SUMMARY_NOT_SMALLER,
        `the checkpoint (${summaryTokens} tokens) is not smaller than the span it replaces (${shadowedTokens} tokens)`,
        { shadowedTokens, summaryTokens },
      )
    }
    if (!isCurrent(session, head))
      throw failure(bracket, ErrorCode.COMPACTION_STALE, 'the summarized span changed on the surface meanwhile')
    const first = head[0] as number
    const last = head[head.length - 1] as number
    const summary: CompactionSummaryData = {
      compactionId,
      summary: result.text,
      shadowedRange: { start: first, end: last },
      shadowedSeqs: head,
      shadowedTokens,
      summaryTokens,
      provider: result.provider,
      model: result.model,
      ...(result.usage === undefined ? {} : { usage: result.usage }),
      attempts: result.attempts,
    }
    let summarySeq: number
    let replacementSeq: number
    try {
      summarySeq = session.append('compaction/summary', summary).seq
      replacementSeq = session.append('user/message', checkpoint, {
        surfaceOp: { op: 'replace', start: first, end: last },
        sourceEventSeqs: [startSeq, summarySeq, ...head],
      }).seq
    } catch (error) {
      throw failure(
        bracket,
        ErrorCode.COMPACTION_COMMIT_FAILED,
        `the checkpoint could not be committed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      )
    }
    const end: CompactionEndData = { compactionId }
    let endSeq: number
    try {
      endSeq = session.append('compaction/end', end).seq
    } catch (closeError) {
      // Exactly one close is attempted, never retried: its failure is logged, and the action counts as failed.
      deps.logger.error(`compaction "${compactionId}" of session "${session.id}": could not append compaction/end`, {
        error: closeError,
      })
      throw new ClosedFailure(
        failure(
          bracket,
          ErrorCode.COMPACTION_COMMIT_FAILED,
          `compaction/end could not be appended: ${closeError instanceof Error ? closeError.message : String(closeError)}`,
          { cause: closeError },
        ),
      )
    }
    return Object.freeze({
      kind: 'summary',
      compactionId,
      trigger,
      startSeq,
      summarySeq,
      replacementSeq,
      endSeq,
      shadowedSeqs: Object.freeze([...head]),
      shadowedTokens,
      summaryTokens,
    })
  } catch (thrown) {
    if (thrown instanceof ClosedFailure) throw thrown.error
    const error = normalizeError(bracket, thrown === abortedMarker ? undefined : thrown)
    try {
      const end: CompactionEndData = { compactionId, error: { code: error.code, message: error.message } }
      session.append('compaction/end', end)
    } catch (closeError) {
      deps.logger.error(`compaction "${compactionId}" of session "${session.id}": could not append compaction/end`, {
        error: closeError,
      })
    }
    throw error
  } finally {
    deps.running.delete(session)
  }
}
