import type { UserContentBlock } from '../session/content-block.js'
import { CallDeadline } from './call-deadline.js'
import { dispatchToolCall } from './dispatch-tool-call.js'
import { parseToolArguments } from './parse-tool-arguments.js'
import { normalizeToolReturn } from './normalize-tool-return.js'
import { applyPostExecuteRule, resultCodeOf } from './post-execute-rule.js'
import { strikeSchedulerFault } from './scheduler-fault.js'
import { announceToolResult, createToolCallContext } from './tool-call-context.js'
import { abortedBeforeDispatch, policyFailedMessage, runCallPolicy } from './tool-call-policy.js'
import type { CallSlot, SchedulerEnvironment } from './tool-call-slot.js'
import type { ToolContentBlock } from './tool-definition.js'
import { resultErrorOf, thrownMessage, toolErrorResult } from './tool-error-result.js'
import type { ToolContextMessage, ToolResult, ToolResultCode } from './tool-result.js'
import { toolResultMessage } from './tool-result-message.js'
import { truncateToolResult } from './truncate-tool-result.js'

const contextSource = Object.freeze({ kind: 'plugin', plugin: 'tools', form: 'tool-context' } as const)

/** Logs the call's `tool/call` (or a closer's synthetic one) and keeps its seq. */
function appendToolCall(environment: SchedulerEnvironment, slot: CallSlot): void {
  const { step } = environment
  const { block } = slot
  strikeSchedulerFault(step.agent, 'start', block.id)
  const data = { turn: step.turn, step: step.step, callId: block.id, name: block.name, arguments: block.arguments }
  slot.callSeq = step.session.append('tool/call', data).seq
}

/** Logs the call's `tool/result` after its `tool/call`; the slot is committed from then on. */
function appendToolResult(environment: SchedulerEnvironment, slot: CallSlot, result: ToolResult): void {
  const { step } = environment
  const callId = slot.block.id
  strikeSchedulerFault(step.agent, 'commit', callId)
  const error = resultErrorOf(result)
  const data = {
    turn: step.turn,
    step: step.step,
    message: toolResultMessage(environment.ids('message'), callId, result),
    ...(error === undefined ? {} : { error }),
    ...(result.meta === undefined ? {} : { meta: result.meta }),
  }
  step.session.append('tool/result', data, { surfaceOp: 'append', sourceEventSeqs: [slot.callSeq as number] })
  slot.state = 'committed'
}

/** One additional context as a message for the next step. */
function contextMessage(
  environment: SchedulerEnvironment,
  context: string | readonly ToolContentBlock[],
): ToolContextMessage {
  const content: readonly UserContentBlock[] =
    typeof context === 'string' ? Object.freeze([Object.freeze({ type: 'text', text: context } as const)]) : context
  return Object.freeze({ id: environment.ids('message'), role: 'user', content, source: contextSource })
}

/** Ends a call in its pre-execute phase: the result is its dispatch outcome, fired live at once. */
function endBeforeDispatch(environment: SchedulerEnvironment, slot: CallSlot, result: ToolResult): void {
  slot.result = result
  slot.state = 'settled'
  announceToolResult(environment, slot, result, 0)
}

/**
 * The start action of one call (then the dispatch is launched, not awaited): logs
 * `tool/call` before any policy or side effect, checks the turn signal, resolves the visible
 * definition, parses the arguments, runs pre-execute, approval and guards, flushes and
 * re-checks the signal. A call that ends here is `settled` (its live `tools/result` fired); one
 * that passes is `running`.
 *
 * @internal
 * @param environment - the step and its services
 * @param slot - a `waiting` call
 * @throws a failure of the scheduler's own machinery (the `tool/call` append, the approval
 *   broker, the registry); tool code and policy listeners never make it throw
 */
export async function startToolCall(environment: SchedulerEnvironment, slot: CallSlot): Promise<void> {
  const { step, tools } = environment
  const name = slot.block.name
  slot.state = 'pre-execute'
  appendToolCall(environment, slot)
  if (step.signal.aborted) return endBeforeDispatch(environment, slot, abortedBeforeDispatch(name))
  const resolved = tools.resolve(name, step.scope)
  if (resolved === undefined) {
    return endBeforeDispatch(environment, slot, toolErrorResult('UNKNOWN_TOOL', `no tool named "${name}" is available`))
  }
  const { definition } = resolved
  const parsed = await parseToolArguments(slot.block.arguments, definition)
  if (!parsed.ok) return endBeforeDispatch(environment, slot, toolErrorResult('INVALID_ARGUMENTS', parsed.message))
  slot.call = Object.freeze({ ...slot.call, args: parsed.args })
  const deadline = new CallDeadline({
    clock: environment.clock,
    turnSignal: step.signal,
    toolName: name,
    callId: slot.block.id,
    timeoutMs: definition.timeoutMs ?? step.options.toolTimeoutMs,
    graceMs: step.options.toolAbortGraceMs,
  })
  const context = createToolCallContext(environment, slot, deadline.signal)
  const end = (result: ToolResult): void => {
    deadline.release()
    context.close()
    endBeforeDispatch(environment, slot, result)
  }
  let denial: ToolResult | undefined
  try {
    denial = await runCallPolicy(environment, slot, definition, context.context)
  } catch (error) {
    deadline.release()
    context.close()
    throw error
  }
  if (denial !== undefined) return end(denial)
  try {
    await step.checkpoint()
  } catch (error) {
    return end(toolErrorResult('TOOL_FAILED', thrownMessage(error)))
  }
  if (step.signal.aborted) return end(abortedBeforeDispatch(name))
  slot.state = 'running'
  dispatchToolCall(environment, { slot, definition, context, deadline })
}

/** The `tools/post-execute` waterfall under the monotonic rule. */
async function postExecute(environment: SchedulerEnvironment, slot: CallSlot, result: ToolResult): Promise<ToolResult> {
  const name = slot.block.name
  let output: unknown
  try {
    const payload = Object.freeze({ call: slot.call, result })
    output = await environment.step.ctx.waterfallEach(
      'tools/post-execute',
      payload,
      (current) => current.result,
      (value) => normalizeToolReturn(value, name, { allowError: true }),
      environment.dispatch,
    )
  } catch (error) {
    return result.isError ? result : toolErrorResult('TOOL_DENIED', policyFailedMessage(name, error))
  }
  return applyPostExecuteRule(result, output, name)
}

/**
 * The commit action of one settled call, in model order:
 * post-execute (skipped for `TOOL_ABORTED_BEFORE_DISPATCH` and `TOOL_SCHEDULER_FAILED`), the size
 * limit, the durable `tool/result` after its `tool/call`, then each additional context inserted
 * into the next-step inbox.
 *
 * @internal
 * @param environment - the step and its services
 * @param slot - a `settled` call whose predecessors are all committed
 * @returns whether the committed result is a success that concludes the turn
 * @throws a failure of the scheduler's own machinery (the append, the inbox insertion)
 */
export async function commitToolCall(environment: SchedulerEnvironment, slot: CallSlot): Promise<boolean> {
  const { step } = environment
  let result = slot.result as ToolResult
  const code = resultCodeOf(result)
  if (code !== 'TOOL_ABORTED_BEFORE_DISPATCH' && code !== 'TOOL_SCHEDULER_FAILED')
    result = await postExecute(environment, slot, result)
  const spill = step.options.toolResultSpill
  result = truncateToolResult(result, {
    limitBytes: step.options.toolResultMaxBytes,
    ...(spill === undefined ? {} : { spill }),
  })
  appendToolResult(environment, slot, result)
  for (const context of result.additionalContexts) step.insertContext(contextMessage(environment, context))
  return !result.isError && result.concludesTurn
}

/**
 * Closes a call the scheduler will not run or finish: its `tool/call` if
 * none was logged, its live `tools/result` if none fired, and a `tool/result` with `code`
 * (post-execute skipped).
 *
 * @internal
 * @param environment - the step and its services
 * @param slot - a call without a committed `tool/result`
 * @param code - `TOOL_ABORTED_BEFORE_DISPATCH` or `TOOL_SCHEDULER_FAILED`
 * @throws what an append throws
 */
export function closeToolCall(
  environment: SchedulerEnvironment,
  slot: CallSlot,
  code: Extract<ToolResultCode, 'TOOL_ABORTED_BEFORE_DISPATCH' | 'TOOL_SCHEDULER_FAILED'>,
): void {
  const name = slot.block.name
  if (slot.callSeq === undefined) appendToolCall(environment, slot)
  const result =
    code === 'TOOL_ABORTED_BEFORE_DISPATCH'
      ? abortedBeforeDispatch(name)
      : toolErrorResult(code, `the call to "${name}" was not completed because the tool scheduler failed`)
  announceToolResult(environment, slot, result, 0)
  appendToolResult(environment, slot, result)
}
