import type { CallDeadline } from './call-deadline.js'
import { normalizeToolReturn } from './normalize-tool-return.js'
import { announceToolResult, type ToolCallContext } from './tool-call-context.js'
import type { CallSlot, SchedulerEnvironment } from './tool-call-slot.js'
import type { ToolDefinition } from './tool-definition.js'
import { thrownMessage, type ToolErrorExtras, toolErrorResult } from './tool-error-result.js'
import type { ToolResult } from './tool-result.js'

const abandonedMeta = Object.freeze({ 'yoke:abandoned': true })

/** What {@link dispatchToolCall} runs. */
export interface DispatchRequest {
  /** The call (`slot.call.args` holds the parsed arguments). */
  readonly slot: CallSlot
  /** The visible definition. */
  readonly definition: ToolDefinition
  /** The call's context and its progress switch. */
  readonly context: ToolCallContext
  /** The call's signal, deadline and abandonment timer (not armed yet). */
  readonly deadline: CallDeadline
}

function timeoutResult(toolName: string, timeoutMs: number | undefined, abandoned: boolean): ToolResult {
  return toolErrorResult(
    'TOOL_TIMEOUT',
    `"${toolName}" did not finish within ${timeoutMs} ms`,
    abandoned ? { meta: abandonedMeta } : undefined,
  )
}

function abortedResult(toolName: string, extra: ToolErrorExtras): ToolResult {
  return toolErrorResult('TOOL_ABORTED', `the call to "${toolName}" was cancelled while it was running`, extra)
}

/**
 * The dispatch stage of one call: arms the deadline, runs the body inside the
 * `tools/execute` waterfall without awaiting it, and settles the call exactly once, firing the
 * live `tools/result` (completion order) and `environment.onSettled`:
 *
 * - the deadline expired first → `TOOL_TIMEOUT`, however the body settles;
 * - a body's throw → `TOOL_FAILED` (the thrown message), handed to the wrappers as the body's
 *   result, so `next()` resolves with it; a wrapper's own throw → `TOOL_FAILED` too;
 * - a success after the turn signal aborted → `TOOL_ABORTED`, keeping the body's additional
 *   contexts; failures and error results are kept;
 * - a body still unsettled `toolAbortGraceMs` after the call signal aborted is abandoned:
 *   `TOOL_ABORTED` / `TOOL_TIMEOUT` with `meta["yoke:abandoned"]: true`, then `tools/abandoned`;
 *   its later settlement is ignored and a rejection swallowed.
 *
 * @internal
 * @param environment - the step and its services
 * @param request - the call, its definition, context and deadline
 */
export function dispatchToolCall(environment: SchedulerEnvironment, request: DispatchRequest): void {
  const { step, clock } = environment
  const { slot, definition, context, deadline } = request
  const name = definition.name
  const startedAt = clock.now()
  let settled = false
  const settle = (result: ToolResult): void => {
    if (settled) return
    settled = true
    deadline.release()
    context.close()
    slot.result = result
    slot.state = 'settled'
    announceToolResult(environment, slot, result, clock.now() - startedAt)
    environment.onSettled(slot)
  }
  const interrupted = (result: ToolResult): ToolResult => {
    if (deadline.interruption === 'deadline') return timeoutResult(name, deadline.timeoutMs, false)
    if (deadline.interruption === 'abort' && !result.isError)
      return abortedResult(name, { additionalContexts: result.additionalContexts })
    return result
  }
  environment.onDispatched(slot)
  deadline.arm(() => {
    if (settled) return
    settle(
      deadline.interruption === 'deadline'
        ? timeoutResult(name, deadline.timeoutMs, true)
        : abortedResult(name, { meta: abandonedMeta }),
    )
    try {
      step.ctx.emit(
        'tools/abandoned',
        Object.freeze({ agent: step.agent, callId: slot.call.callId, name }),
        environment.dispatch,
      )
    } catch (error) {
      environment.onInternalError(error)
    }
  })
  let bodyResult: ToolResult | undefined
  // A throwing body is answered here, as a result: wrappers awaiting `next()` then run their code
  // after it for a failure as for a success, instead of seeing a rejection.
  const body = async (): Promise<ToolResult> => {
    let value: unknown
    try {
      value = await definition.execute(slot.call.args, context.context)
    } catch (error) {
      bodyResult = toolErrorResult('TOOL_FAILED', thrownMessage(error))
      return bodyResult
    }
    bodyResult = normalizeToolReturn(value, name)
    return bodyResult
  }
  // Normalized after the body and after each middleware (a listener's own value).
  const normalizeLayer = (value: unknown): ToolResult => normalizeToolReturn(value, name, { allowError: true })
  let running: Promise<unknown>
  try {
    running = step.ctx.waterfallEach(
      'tools/execute',
      Object.freeze({ call: slot.call, context: context.context }),
      body,
      normalizeLayer,
      environment.dispatch,
    )
  } catch (error) {
    running = Promise.reject(error)
  }
  running.then(
    (value) => settle(interrupted(value === bodyResult ? (value as ToolResult) : normalizeLayer(value))),
    (error: unknown) => settle(interrupted(toolErrorResult('TOOL_FAILED', thrownMessage(error)))),
  )
}
