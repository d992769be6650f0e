import type { ToolAgent } from './tool-call-info.js'

/** Where an injected scheduler fault strikes. */
export type SchedulerFaultSite = 'start' | 'commit'

/** One injected scheduler fault: throw `error` in place of one append of one call. */
export interface SchedulerFault {
  /** `'start'`: in place of the call's `tool/call` append; `'commit'`: its `tool/result` append. */
  readonly at: SchedulerFaultSite
  /** The call whose append fails. */
  readonly callId: string
  /** What the append throws. */
  readonly error: unknown
}

/**
 * The non-enumerable property of an agent object holding its pending injected faults.
 *
 * @internal
 */
export const schedulerFaultKey: unique symbol = Symbol.for('yoke.schedulerFault')

type FaultHolder = { [schedulerFaultKey]?: SchedulerFault[] }

/**
 * The pending injected faults of an agent, created on first use (a non-enumerable property, so
 * no module state and nothing visible to `Object.keys`).
 *
 * @internal
 * @param agent - the agent object
 * @returns the live list
 */
export function schedulerFaultsOf(agent: ToolAgent): SchedulerFault[] {
  const holder = agent as FaultHolder
  const existing = holder[schedulerFaultKey]
  if (existing !== undefined) return existing
  const faults: SchedulerFault[] = []
  Object.defineProperty(agent, schedulerFaultKey, {
    value: faults,
    enumerable: false,
    configurable: true,
    writable: false,
  })
  return faults
}

/**
 * Consumes the injected fault for one append, if any (one-shot), and throws its error.
 *
 * @internal
 * @param agent - the calling agent
 * @param at - which append is about to run
 * @param callId - the call it belongs to
 * @throws the injected error, once
 */
export function strikeSchedulerFault(agent: ToolAgent, at: SchedulerFaultSite, callId: string): void {
  const faults = (agent as FaultHolder)[schedulerFaultKey]
  if (faults === undefined || faults.length === 0) return
  const index = faults.findIndex((fault) => fault.at === at && fault.callId === callId)
  if (index === -1) return
  const [fault] = faults.splice(index, 1)
  throw (fault as SchedulerFault).error
}
