import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { JsonValue } from '../session/json-value.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'
import type { CallSlot, SchedulerEnvironment } from './tool-call-slot.js'
import type { ToolContext } from './tool-definition.js'
import { thrownMessage } from './tool-error-result.js'
import type { ToolResult } from './tool-result.js'

/** A call's {@link ToolContext} and the switch that silences its `reportProgress` once the call settled. */
export interface ToolCallContext {
  /** The frozen context handed to `needsApproval`, `tools/execute` and the body. */
  readonly context: ToolContext
  /** The call settled: later `reportProgress` calls are ignored. */
  close(): void
}

/**
 * Builds the context of one call: its signal (turn cancel or deadline), ids,
 * agent, session, turn and step, and `reportProgress`, which emits `tools/progress` with a
 * lossless-JSON copy of the value until the call settles.
 *
 * @internal
 * @param environment - the step and its services
 * @param slot - the call
 * @param signal - the call signal
 * @returns the context and its close switch
 */
export function createToolCallContext(
  environment: SchedulerEnvironment,
  slot: CallSlot,
  signal: AbortSignal,
): ToolCallContext {
  const { step } = environment
  const { callId, name } = slot.call
  let closed = false
  const context: ToolContext = Object.freeze({
    signal,
    callId,
    agent: step.agent,
    session: step.session,
    turn: step.turn,
    step: step.step,
    reportProgress(progress: JsonValue): void {
      if (closed) return
      let copy: JsonValue
      try {
        copy = snapshotJson(progress, 'progress')
      } catch (error) {
        throw new InvalidArgumentError({
          argument: 'progress',
          reason: `must be a lossless JSON value (${thrownMessage(error)})`,
          value: progress,
          cause: error,
        })
      }
      step.ctx.emit(
        'tools/progress',
        Object.freeze({ agent: step.agent, callId, name, progress: copy }),
        environment.dispatch,
      )
    },
  })
  return {
    context,
    close() {
      closed = true
    },
  }
}

/**
 * Fires the live `tools/result` of a call once, in completion order. A
 * dispatch failure (an undefined event) is a scheduler failure, reported, never thrown.
 *
 * @internal
 * @param environment - the step and its services
 * @param slot - the call
 * @param result - the dispatch outcome (before post-execute and truncation)
 * @param durationMs - milliseconds from dispatch to settlement, 0 when it never dispatched
 */
export function announceToolResult(
  environment: SchedulerEnvironment,
  slot: CallSlot,
  result: ToolResult,
  durationMs: number,
): void {
  if (slot.announced) return
  slot.announced = true
  const { step } = environment
  try {
    step.ctx.emit(
      'tools/result',
      Object.freeze({ agent: step.agent, call: slot.call, result, durationMs }),
      environment.dispatch,
    )
  } catch (error) {
    environment.onInternalError(error)
  }
}
