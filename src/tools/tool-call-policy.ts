import type { ApprovalAskOptions } from './approval-broker.js'
import type { CallSlot, SchedulerEnvironment } from './tool-call-slot.js'
import type { ToolContext, ToolDefinition } from './tool-definition.js'
import { thrownMessage, toolErrorResult } from './tool-error-result.js'
import type { PreExecuteDecision } from './tool-events.js'
import type { ToolResult } from './tool-result.js'

const allow: PreExecuteDecision = Object.freeze({ kind: 'allow' })

/**
 * The result text of a policy throw (a pre-execute listener, `needsApproval`, a guard, post-execute).
 *
 * @internal
 * @param toolName - the tool's name
 * @param error - what the policy threw
 * @returns `a policy check for "<name>" failed: <message>`
 */
export function policyFailedMessage(toolName: string, error: unknown): string {
  return `a policy check for "${toolName}" failed: ${thrownMessage(error)}`
}

/**
 * The `TOOL_ABORTED_BEFORE_DISPATCH` result.
 *
 * @internal
 * @param toolName - the tool's name
 * @returns the error result
 */
export function abortedBeforeDispatch(toolName: string): ToolResult {
  return toolErrorResult('TOOL_ABORTED_BEFORE_DISPATCH', `the call to "${toolName}" was cancelled before it started`)
}

function denied(message: string): ToolResult {
  return toolErrorResult('TOOL_DENIED', message)
}

/** The decision if `value` is a valid pre-execute decision, else `undefined`. Never throws. */
function readDecision(value: unknown): PreExecuteDecision | undefined {
  try {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
    const record = value as Record<string, unknown>
    const kind = record['kind']
    if (kind !== 'allow' && kind !== 'deny' && kind !== 'ask') return undefined
    for (const key of Object.keys(record))
      if (key !== 'kind' && (key !== 'reason' || kind === 'allow')) return undefined
    const reason = record['reason']
    if (reason === undefined) return { kind }
    return typeof reason === 'string' && kind !== 'allow' ? { kind, reason } : undefined
  } catch {
    return undefined
  }
}

/** Whether the approval stage must ask: pre-execute said `ask`, or `needsApproval` answered anything but exactly `false`. */
async function needsApproval(
  definition: ToolDefinition,
  args: unknown,
  context: ToolContext,
  decision: PreExecuteDecision,
): Promise<boolean> {
  if (decision.kind === 'ask') return true
  if (definition.needsApproval === undefined) return false
  return (await definition.needsApproval(args, context)) !== false
}

/**
 * The policy stages of one call: the `tools/pre-execute` waterfall, approval, the
 * guards. A denial, a policy throw and an invalid decision end the call `TOOL_DENIED`; a
 * cancelled approval ends it `TOOL_ABORTED_BEFORE_DISPATCH`. Once the turn signal aborted, no
 * approval is asked any more: a call that needs one ends `TOOL_ABORTED_BEFORE_DISPATCH` at once.
 *
 * @internal
 * @param environment - the step and its services
 * @param slot - the call, its arguments parsed (`slot.call.args`)
 * @param definition - the visible definition
 * @param context - the body's context (passed to `needsApproval`)
 * @returns `undefined` when every stage allowed the call, else the result it ends with
 * @throws what the approval broker or the registry's guard lookup throws (scheduler failures)
 */
export async function runCallPolicy(
  environment: SchedulerEnvironment,
  slot: CallSlot,
  definition: ToolDefinition,
  context: ToolContext,
): Promise<ToolResult | undefined> {
  const { step } = environment
  const { call } = slot
  const name = call.name
  let decision: PreExecuteDecision | undefined
  try {
    const answer: unknown = await step.ctx.waterfall(
      'tools/pre-execute',
      Object.freeze({ call }),
      () => allow,
      environment.dispatch,
    )
    decision = readDecision(answer)
  } catch (error) {
    return denied(policyFailedMessage(name, error))
  }
  if (decision === undefined)
    return denied(`a policy check for "${name}" failed: tools/pre-execute returned an invalid decision`)
  if (decision.kind === 'deny') {
    return denied(
      decision.reason === undefined || decision.reason === '' ? `"${name}" was denied by policy` : decision.reason,
    )
  }
  let ask: boolean
  try {
    ask = await needsApproval(definition, call.args, context, decision)
  } catch (error) {
    return denied(policyFailedMessage(name, error))
  }
  if (ask) {
    const askReason = decision.kind === 'ask' ? decision.reason : undefined
    if (step.signal.aborted) return abortedBeforeDispatch(name)
    const { approvalMode, approvalTimeoutMs } = step.options
    const options: ApprovalAskOptions = {
      mode: approvalMode,
      ...(askReason === undefined ? {} : { reason: askReason }),
      ...(approvalMode === 'manual' && approvalTimeoutMs !== undefined ? { timeoutMs: approvalTimeoutMs } : {}),
    }
    const outcome = await step.approvals.ask(call, options)
    if (outcome.outcome === 'cancelled') return abortedBeforeDispatch(name)
    if (outcome.outcome === 'denied') return denied(`"${name}" was not approved: ${outcome.reason}`)
  }
  for (const guard of environment.tools.guardsFor(step.scope)) {
    let verdict: unknown
    try {
      verdict = guard(call)
    } catch (error) {
      return denied(policyFailedMessage(name, error))
    }
    if (verdict !== undefined)
      return denied(typeof verdict === 'string' && verdict !== '' ? verdict : `"${name}" was denied by policy`)
  }
  return undefined
}
