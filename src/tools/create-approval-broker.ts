import { ApprovalNotPendingError } from '../errors/approval-not-pending-error.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { Context } from '../kernel/context.js'
import { type OptionRule, optionIssues, throwOptionIssues } from '../kernel/option-issues.js'
import { ClockKey, IdsKey } from '../kernel/host-keys.js'
import type {
  ApprovalAskOptions,
  ApprovalBroker,
  ApprovalDecision,
  ApprovalOutcome,
  PendingApproval,
} from './approval-broker.js'
import type { ApprovalAskedEventData, ApprovalDecidedEventData } from './approval-events.js'
import type { ToolAgent, ToolCallInfo } from './tool-call-info.js'
import { thrownMessage } from './tool-error-result.js'
import type { ApprovalRequestPayload } from './tool-events.js'

/** What {@link createApprovalBroker} needs. */
export interface ApprovalBrokerOptions {
  /**
   * The agent's context: its clock times `'manual'` timeouts, its id source makes approval ids,
   * and `approval/request` is dispatched through it (routed to its scope when it has one, so
   * `agent.ctx.on(…)` listeners hear only their own agent). The `tools` entry must have defined
   * the `approval/request` event.
   */
  readonly ctx: Context
  /** The agent the approvals belong to (the `agent` of each `approval/request`). */
  readonly agent: ToolAgent
}

const brokerOptionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  ctx: (value) => {
    const record = value as { readonly get?: unknown; readonly waterfall?: unknown } | null
    return typeof record === 'object' &&
      record !== null &&
      typeof record.get === 'function' &&
      typeof record.waterfall === 'function'
      ? undefined
      : 'must be the agent context (a Context)'
  },
  agent: (value) => (typeof value === 'object' && value !== null ? undefined : 'must be the agent object'),
})

/** How many decided ids a broker remembers for `'already-decided'`; older ones are forgotten. */
const DECIDED_MEMORY = 1024

const decisionShape = "must be { kind: 'allow' } or { kind: 'deny', reason?: string }"

/** Why `value` is not an {@link ApprovalDecision}, or `undefined` when it is one. Never throws. */
function decisionProblem(value: unknown): string | undefined {
  try {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return decisionShape
    const record = value as Record<string, unknown>
    const kind = record['kind']
    if (kind !== 'allow' && kind !== 'deny') return `${decisionShape} (kind is ${JSON.stringify(kind) ?? String(kind)})`
    for (const key of Object.keys(record)) {
      if (key !== 'kind' && !(kind === 'deny' && key === 'reason')) return `${decisionShape} (unknown key "${key}")`
    }
    const reason = record['reason']
    if (kind === 'deny' && reason !== undefined && typeof reason !== 'string')
      return `${decisionShape} (reason is not a string)`
    return undefined
  } catch {
    return `${decisionShape} (it could not be read)`
  }
}

function outcomeOf(decision: ApprovalDecision, by: 'listener' | 'host'): ApprovalOutcome {
  if (decision.kind === 'allow') return Object.freeze({ outcome: 'allowed', by })
  const reason =
    decision.reason === undefined || decision.reason === ''
      ? `denied by ${by === 'host' ? 'the host' : 'an approval listener'}`
      : decision.reason
  return Object.freeze({ outcome: 'denied', by, reason })
}

function denied(by: 'default' | 'timeout' | 'error', reason: string): ApprovalOutcome {
  return Object.freeze({ outcome: 'denied', by, reason })
}

function checkAskOptions(options: ApprovalAskOptions): void {
  if (options.mode !== 'auto' && options.mode !== 'manual') {
    throw new InvalidArgumentError({
      argument: 'options.mode',
      reason: "must be 'auto' or 'manual'",
      value: options.mode,
    })
  }
  const timeoutMs = options.timeoutMs
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new InvalidArgumentError({
      argument: 'options.timeoutMs',
      reason: 'must be a positive finite number',
      value: timeoutMs,
    })
  }
}

interface OpenApproval {
  readonly entry: PendingApproval
  /** Decides it; returns what the `approval/decided` append threw, if it threw. */
  settle(outcome: ApprovalOutcome): { readonly error: unknown } | undefined
}

/**
 * Creates one agent's {@link ApprovalBroker}. `ask` appends `approval/asked`,
 * then dispatches the `approval/request` waterfall (default `undefined`). The first decision wins
 * and is logged as the one `approval/decided` of that ask:
 *
 * - a listener's `{kind:'allow'}` / `{kind:'deny', reason?}` → `by: 'listener'`; a listener throw →
 *   denied `by: 'error'` (`the approval listener failed: <message>`); any other result →
 *   denied `by: 'error'` (`the approval listener returned an invalid decision: <problem>`);
 * - no answer: `'auto'` → denied `by: 'default'` (`no approver answered`); `'manual'` → wait for
 *   `approve()` (`by: 'host'`) or `timeoutMs` on the harness clock (denied `by: 'timeout'`,
 *   `no decision within <ms> ms`);
 * - the call's signal, at any time → `cancelled`, `by: 'cancel'`.
 *
 * A listener's answer is awaited as long as it takes (in `'auto'` mode too); `approve()` decides at
 * any time before another decision. A deny without a reason gets `denied by the host` / `denied by
 * an approval listener`. The request's `signal` aborts as soon as the approval is decided, so a
 * slow listener can stop. State is in memory: a new broker (after a crash) knows no earlier ask and
 * `approve()` throws for those ids; the last 1024 decided ids answer `'already-decided'`. A failed
 * `approval/decided` append rejects the `ask` (and is rethrown by the `approve()` that caused it).
 *
 * @param options - the agent's context and the agent
 * @returns the broker
 * @throws {@link InvalidOptionsError} when `options` is not `{ ctx, agent }` (not an object, an
 *   unknown key, a missing key, a `ctx` that is not a Context, an `agent` that is not an object)
 * @example
 * ```ts
 * const approvals = createApprovalBroker({ ctx: agent.ctx, agent })
 * const outcome = await approvals.ask(call, { mode: 'manual', timeoutMs: 60_000 })
 * ```
 */
export function createApprovalBroker(options: ApprovalBrokerOptions): ApprovalBroker {
  throwOptionIssues(
    optionIssues(options, brokerOptionRules, '{ ctx, agent }', ['ctx', 'agent']),
    options,
    'createApprovalBroker options',
  )
  const { ctx, agent } = options
  const clock = ctx.get(ClockKey)
  const ids = ctx.get(IdsKey)
  const open = new Map<string, OpenApproval>()
  const decided = new Set<string>()
  let snapshot: readonly PendingApproval[] | undefined

  const remember = (approvalId: string): void => {
    decided.add(approvalId)
    if (decided.size > DECIDED_MEMORY) decided.delete(decided.values().next().value as string)
  }

  const ask = async (call: ToolCallInfo, askOptions: ApprovalAskOptions): Promise<ApprovalOutcome> => {
    checkAskOptions(askOptions)
    const { reason, mode, timeoutMs } = askOptions
    const approvalId = ids('approval')
    const withReason = reason === undefined ? {} : { reason }
    const asked: ApprovalAskedEventData = {
      approvalId,
      turn: call.turn,
      step: call.step,
      callId: call.callId,
      toolName: call.name,
      arguments: call.arguments,
      ...withReason,
    }
    call.session.append('approval/asked', asked)
    return new Promise<ApprovalOutcome>((resolve, reject) => {
      const controller = new AbortController()
      let done = false
      let cancelTimer: (() => void) | undefined
      const onAbort = (): void => {
        approval.settle(Object.freeze({ outcome: 'cancelled', by: 'cancel' }))
      }
      const approval: OpenApproval = {
        entry: Object.freeze({
          approvalId,
          callId: call.callId,
          toolName: call.name,
          arguments: call.arguments,
          ...withReason,
        }),
        settle(outcome) {
          if (done) return undefined
          done = true
          open.delete(approvalId)
          snapshot = undefined
          remember(approvalId)
          call.signal.removeEventListener('abort', onAbort)
          cancelTimer?.()
          const data: ApprovalDecidedEventData = { approvalId, ...outcome }
          try {
            call.session.append('approval/decided', data)
          } catch (error) {
            reject(error)
            return { error }
          } finally {
            controller.abort()
          }
          resolve(outcome)
          return undefined
        },
      }
      open.set(approvalId, approval)
      snapshot = undefined
      if (call.signal.aborted) {
        onAbort()
        return
      }
      call.signal.addEventListener('abort', onAbort, { once: true })
      if (mode === 'manual' && timeoutMs !== undefined) {
        cancelTimer = clock.setTimer(() => {
          approval.settle(denied('timeout', `no decision within ${timeoutMs} ms`))
        }, timeoutMs)
      }
      const payload: ApprovalRequestPayload = Object.freeze({
        agent,
        approvalId,
        call,
        ...withReason,
        signal: controller.signal,
      })
      let answer: Promise<ApprovalDecision | undefined>
      try {
        answer = ctx.waterfall(
          'approval/request',
          payload,
          () => undefined,
          ctx.scope === undefined ? undefined : { scope: ctx.scope },
        )
      } catch (error) {
        answer = Promise.reject(error)
      }
      answer.then(
        (result: unknown) => {
          if (done) return
          if (result === undefined) {
            if (mode === 'auto') approval.settle(denied('default', 'no approver answered'))
            return
          }
          const problem = decisionProblem(result)
          approval.settle(
            problem === undefined
              ? outcomeOf(result as ApprovalDecision, 'listener')
              : denied('error', `the approval listener returned an invalid decision: ${problem}`),
          )
        },
        (error: unknown) => {
          approval.settle(denied('error', `the approval listener failed: ${thrownMessage(error)}`))
        },
      )
    })
  }

  return {
    get pending(): readonly PendingApproval[] {
      snapshot ??= Object.freeze([...open.values()].map((approval) => approval.entry))
      return snapshot
    },
    approve(approvalId: string, decision: ApprovalDecision): 'decided' | 'already-decided' {
      const problem = decisionProblem(decision)
      if (problem !== undefined)
        throw new InvalidArgumentError({ argument: 'decision', reason: problem, value: decision })
      if (typeof approvalId !== 'string') {
        throw new InvalidArgumentError({ argument: 'approvalId', reason: 'must be a string', value: approvalId })
      }
      const approval = open.get(approvalId)
      if (approval === undefined) {
        if (decided.has(approvalId)) return 'already-decided'
        throw new ApprovalNotPendingError({ approvalId })
      }
      const failure = approval.settle(outcomeOf(decision, 'host'))
      if (failure !== undefined) throw failure.error
      return 'decided'
    },
    ask,
  }
}
