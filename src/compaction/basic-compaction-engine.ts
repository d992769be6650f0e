import type { Agent } from '../agent/agent.js'
import { ErrorCode } from '../errors/codes.js'
import { CompactionError, type InvalidRangeReason } from '../errors/compaction-error.js'
import type { Context } from '../kernel/context.js'
import { IdsKey } from '../kernel/host-keys.js'
import { ModelsKey } from '../model/models-key.js'
import type { AssistantMessageData } from '../session/core-event-types.js'
import type { Message, UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-event.js'
import { chooseHead, type CutKind } from './choose-cut.js'
import type { CompactionReport, FailedAction, PruneAction, SummaryAction } from './compaction-actions.js'
import type { CompactionEngine } from './compaction-engine.js'
import type { AgentCompactionPayload } from './compaction-events.js'
import { type EstimateContext, headerTokens, messageTokens, type TokenEstimator } from './estimate-tokens.js'
import { type PruneConfig, pruneToolResults } from './prune-tool-results.js'
import type { Summarizer } from './summarizer.js'
import { runSummaryAction, type SummaryActionDeps } from './summary-action.js'
import { balanceDelta, compareOrigins, SurfaceIndex } from './surface-index.js'

/** The resolved settings of a basic engine (the `basicCompaction` options with defaults applied). */
export interface BasicCompactionSettings {
  /** Fraction of the context window pressure keeps under. */
  readonly threshold: number
  /** Turns the turn cut keeps, the current one included. */
  readonly keepRecentTurns: number
  /** The summarizer. */
  readonly summarizer: Summarizer
  /** The pruner's bounds, or `false`. */
  readonly prune: PruneConfig | false
  /** A custom estimator; the heuristic (with calibration) when absent. */
  readonly estimator?: TokenEstimator
}

type PlanStep = CutKind | 'prune'

const plans: Readonly<Record<'pressure' | 'context-overflow', readonly PlanStep[]>> = Object.freeze({
  pressure: ['turn', 'step', 'prune'],
  'context-overflow': ['step', 'prune', 'open-step'],
})

function contextOf(session: Session): EstimateContext {
  const header = session.requestHeader()
  return {
    ...(header?.system === undefined ? {} : { system: header.system }),
    ...(header?.tools === undefined ? {} : { tools: header.tools }),
  }
}

function failedAction(error: CompactionError): FailedAction {
  return Object.freeze({ kind: 'failed', compactionId: error.compactionId ?? '', error })
}

/**
 * Creates the engine of `BasicCompactionPlugin`: estimates, plans, summary
 * actions under a per-session lock, the pruner fallback and manual and range compaction.
 *
 * @param ctx - the plugin context (ids, logger, models, `agent/compaction` emits)
 * @param settings - the resolved options
 * @returns the engine
 * @internal
 */
export function createBasicCompactionEngine(ctx: Context, settings: BasicCompactionSettings): CompactionEngine {
  const ids = ctx.get(IdsKey)
  const models = ctx.get(ModelsKey)
  const measure =
    settings.estimator === undefined
      ? messageTokens
      : (message: Message) => (settings.estimator as TokenEstimator)([message], {})
  const indexes = new WeakMap<Session, SurfaceIndex>()
  const warnedNoWindow = new WeakSet<Agent>()
  const deps: SummaryActionDeps = {
    nextId: () => ids('compaction'),
    logger: ctx.logger,
    summarizer: settings.summarizer,
    measure,
    running: new Set(),
  }

  function indexOf(session: Session): SurfaceIndex {
    let index = indexes.get(session)
    if (index === undefined) indexes.set(session, (index = new SurfaceIndex(session, measure)))
    index.sync()
    return index
  }

  function report(agent: Agent, payload: Omit<AgentCompactionPayload, 'agent'>): void {
    ctx.emit('agent/compaction', { agent, ...payload }, { scope: agent, subject: agent.id })
  }

  function estimate(agent: Agent, pending: readonly UserMessage[] = []): number {
    const session = agent.session
    const index = indexOf(session)
    const nodes = session.surfaceNodes()
    if (settings.estimator !== undefined)
      return settings.estimator([...index.messages(nodes), ...pending], contextOf(session))
    let total = pending.reduce((sum, message) => sum + measure(message), 0)
    let position = nodes.length - 1
    while (position >= 0 && (session.at(nodes[position] as number) as SessionEvent).type !== 'assistant/message')
      position--
    const newest = position >= 0 ? (session.at(nodes[position] as number) as SessionEvent) : undefined
    const usage = newest === undefined ? undefined : (newest.data as unknown as AssistantMessageData).usage
    const calibrated = newest !== undefined && usage !== undefined && index.lastReplaceSeq < newest.seq
    if (!calibrated) return total + headerTokens(contextOf(session)) + index.surfaceTokens()
    total += usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens
    for (let next = position + 1; next < nodes.length; next++) total += index.tokens(nodes[next] as number)
    return total
  }

  function contextWindow(agent: Agent): number | undefined {
    const logged = agent.session.requestContext()?.contextWindow
    if (logged !== undefined) return logged
    const { provider, model } = agent.options
    return provider === undefined || model === undefined
      ? undefined
      : models.describe(provider, model, agent)?.contextWindow
  }

  function headFor(kind: CutKind, session: Session): readonly number[] | undefined {
    const state = session.turnState()
    return chooseHead(kind, {
      index: indexOf(session),
      keepRecentTurns: settings.keepRecentTurns,
      currentTurn: state.openTurn ?? state.nextTurn,
    })
  }

  function prune(
    session: Session,
    trigger: 'pressure' | 'context-overflow',
  ): PruneAction | CompactionError | undefined {
    if (settings.prune === false || session.turnState().openTurn === null) return undefined
    try {
      const action = pruneToolResults(session, { ...settings.prune, trigger })
      return action.prunedSeqs.length === 0 ? undefined : action
    } catch (error) {
      return new CompactionError(ErrorCode.COMPACTION_COMMIT_FAILED, {
        sessionId: session.id,
        detail: `pruning failed: ${error instanceof Error ? error.message : String(error)}`,
        cause: error,
      })
    }
  }

  async function compactIfNeeded(
    input: Parameters<CompactionEngine['compactIfNeeded']>[0],
  ): Promise<CompactionReport | null> {
    const { agent, trigger, signal } = input
    const session = agent.session
    if (signal.aborted) {
      report(agent, { trigger, outcome: 'skipped', reason: 'aborted' })
      return null
    }
    let limit = Number.POSITIVE_INFINITY
    if (trigger === 'pressure') {
      const window = contextWindow(agent)
      if (window === undefined) {
        if (!warnedNoWindow.has(agent)) {
          warnedNoWindow.add(agent)
          report(agent, { trigger, outcome: 'skipped', reason: 'no-context-window' })
        }
        return null
      }
      limit = Math.floor(window * settings.threshold)
    }
    const before = estimate(agent, input.pending)
    if (trigger === 'pressure' && before <= limit) return null
    const actions: (SummaryAction | PruneAction | FailedAction)[] = []
    let summaryBroken = false
    let attempted = false
    for (const step of plans[trigger]) {
      if (signal.aborted) break
      let outcome: SummaryAction | PruneAction | CompactionError | undefined
      if (step === 'prune') outcome = prune(session, trigger)
      else {
        const head = summaryBroken ? undefined : headFor(step, session)
        if (head === undefined) continue
        try {
          outcome = await runSummaryAction(deps, { agent, index: indexOf(session), trigger, head, signal, halve: true })
        } catch (error) {
          outcome = CompactionError.is(error)
            ? error
            : new CompactionError(ErrorCode.SUMMARY_FAILED, {
                sessionId: session.id,
                detail: String(error),
                cause: error,
              })
          if (outcome.code === ErrorCode.COMPACTION_BUSY) {
            report(agent, { trigger, outcome: 'skipped', reason: 'busy' })
            return { trigger, before, after: before, actions }
          }
          summaryBroken = true
        }
      }
      if (outcome === undefined) continue
      attempted = true
      if (CompactionError.is(outcome)) {
        actions.push(failedAction(outcome))
        report(agent, { trigger, outcome: 'failed', error: outcome })
        continue
      }
      actions.push(outcome)
      if (trigger === 'context-overflow' || estimate(agent, input.pending) <= limit) break
    }
    const after = estimate(agent, input.pending)
    if (!attempted && !signal.aborted) report(agent, { trigger, outcome: 'skipped', reason: 'nothing-to-compact' })
    else if (trigger === 'pressure' && attempted && after > limit && !signal.aborted)
      report(agent, { trigger, outcome: 'unrelieved' })
    return Object.freeze({ trigger, before, after, actions: Object.freeze(actions) })
  }

  async function compactNow(input: Parameters<CompactionEngine['compactNow']>[0]): Promise<SummaryAction | null> {
    const session = input.agent.session
    for (const kind of ['turn', 'step'] as const) {
      const head = headFor(kind, session)
      if (head === undefined) continue
      return runSummaryAction(deps, {
        agent: input.agent,
        index: indexOf(session),
        trigger: 'manual',
        head,
        signal: input.signal,
        halve: true,
      })
    }
    return null
  }

  function rangeHead(session: Session, start: number, end: number): readonly number[] {
    const index = indexOf(session)
    const refuse = (reason: InvalidRangeReason, detail: string): CompactionError =>
      new CompactionError(ErrorCode.INVALID_RANGE, {
        sessionId: session.id,
        detail: `range ${start}..${end} ${detail}`,
        reason,
        start,
        end,
      })
    const nodes = session.surfaceNodes()
    const first = nodes.indexOf(start)
    if (first === -1) throw refuse('start-not-on-surface', 'starts at a seq that is not a surface node')
    const last = nodes.indexOf(end)
    if (last === -1) throw refuse('end-not-on-surface', 'ends at a seq that is not a surface node')
    if (first > last) throw refuse('reversed', 'ends before it starts in surface order')
    const span = nodes.slice(first, last + 1)
    let balance = 0
    for (const seq of span) {
      balance += balanceDelta(session.at(seq) as SessionEvent)
      if (balance < 0) break
    }
    if (balance !== 0) throw refuse('unbalanced', 'splits a tool call from its result')
    const state = session.turnState()
    if (state.openTurn !== null && state.openStep !== null) {
      const open = { turn: state.openTurn, step: state.openStep }
      if (span.some((seq) => compareOrigins(index.origin(seq), open) === 0))
        throw refuse('open-step', 'contains a node of the open step')
    }
    return span
  }

  async function compactRange(input: Parameters<CompactionEngine['compactRange']>[0]): Promise<SummaryAction> {
    const session = input.agent.session
    const head = rangeHead(session, input.start, input.end)
    return runSummaryAction(deps, {
      agent: input.agent,
      index: indexOf(session),
      trigger: 'range',
      head,
      signal: input.signal,
      halve: false,
    })
  }

  return Object.freeze({
    compactIfNeeded,
    compactNow,
    compactRange,
    estimate: (input: Parameters<CompactionEngine['estimate']>[0]) => estimate(input.agent, input.pending),
  })
}
