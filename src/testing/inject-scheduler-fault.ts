import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { checkOptionsArgument, type OptionRule, optionRule } from '../kernel/option-issues.js'
import { type SchedulerFault, schedulerFaultsOf } from '../tools/scheduler-fault.js'
import type { ToolAgent } from '../tools/tool-call-info.js'

/** What {@link injectSchedulerFault} takes. */
export interface SchedulerFaultOptions {
  /** `'start'` throws in place of the call's `tool/call` append; `'commit'` in place of its `tool/result` append. */
  readonly at: 'start' | 'commit'
  /** The call whose append fails. */
  readonly callId: string
  /** What the append throws (the step's `failure`, and the turn's error). */
  readonly error: unknown
}

const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  at: optionRule.any,
  callId: optionRule.any,
  error: optionRule.any,
})

/**
 * Makes the tool scheduler's own machinery fail once: the next `tool/call`
 * (`at: 'start'`) or `tool/result` (`at: 'commit'`) append of `callId` by this agent throws
 * `error` instead of appending. One-shot: the fault is consumed when it strikes. The fault is
 * kept on the agent object itself, so two harnesses never see each other's faults.
 *
 * @example
 * ```ts
 * injectSchedulerFault(agent, { at: 'start', callId: 'c2', error: new Error('scheduler exploded') })
 * // c2 and every later call of the step get tool/result TOOL_SCHEDULER_FAILED
 * ```
 *
 * @param agent - the agent (or any object passed as `ToolStepContext.agent`)
 * @param options - where, which call, and what to throw
 * @throws `InvalidArgumentError` for options that are not an object or hold an unknown key, a bad
 *   `at`, an empty `callId`, or an agent that cannot hold the fault
 */
export function injectSchedulerFault(agent: ToolAgent, options: SchedulerFaultOptions): void {
  if (typeof agent !== 'object' || agent === null || !Object.isExtensible(agent)) {
    throw new InvalidArgumentError({ argument: 'agent', reason: 'must be an extensible agent object', value: agent })
  }
  // `at` and `callId` are required, so missing options are refused too.
  checkOptionsArgument((options ?? null) as SchedulerFaultOptions, optionRules, '{ at, callId, error }')
  if (options.at !== 'start' && options.at !== 'commit') {
    throw new InvalidArgumentError({ argument: 'options.at', reason: "must be 'start' or 'commit'", value: options.at })
  }
  if (typeof options.callId !== 'string' || options.callId.length === 0) {
    throw new InvalidArgumentError({
      argument: 'options.callId',
      reason: 'must be a non-empty string',
      value: options.callId,
    })
  }
  const fault: SchedulerFault = Object.freeze({ at: options.at, callId: options.callId, error: options.error })
  schedulerFaultsOf(agent).push(fault)
}
