import type { Agent } from '../agent/agent.js'
import { CompactionKey } from './compaction-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import type { CompactOptions, SummaryAction } from './compaction-actions.js'
import type { CompactionEngine } from './compaction-engine.js'

/**
 * The engine `services.compaction` holds, as its interface.
 *
 * @param agent - an agent
 * @returns the engine
 * @throws `ServiceMissingError` when no plugin provides `services.compaction`
 * @internal
 */
export function compactionEngineOf(agent: Agent): CompactionEngine {
  return agent.ctx.get(CompactionKey)
}

/**
 * `agent.compact()`: one maintenance task running `engine.compactNow()` and
 * then `sessions.flush(session)`, so the bracket is durable before the agent is released.
 *
 * @param agent - the agent
 * @param options - a signal
 * @returns the action, or `null` when nothing is usable
 * @throws (as a rejection) `AgentBusyError`, `ServiceMissingError`, or the action's `CompactionError`
 * @internal
 */
export function runManualCompaction(agent: Agent, options: CompactOptions = {}): Promise<SummaryAction | null> {
  try {
    const engine = compactionEngineOf(agent)
    const sessions = agent.ctx.get(SessionsKey)
    return agent.runMaintenance(async (maintenance) => {
      const signal = options.signal === undefined ? maintenance : AbortSignal.any([maintenance, options.signal])
      let action: SummaryAction | null
      try {
        action = await engine.compactNow({ agent, signal })
      } catch (error) {
        await sessions.flush(agent.session).catch(() => false)
        throw error
      }
      await sessions.flush(agent.session)
      return action
    })
  } catch (error) {
    return Promise.reject(error)
  }
}
