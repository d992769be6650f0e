import { SystemPromptKey } from '../prompt/system-prompt-key.js'
import type { Agent } from './agent.js'

/**
 * Registers the per-agent prompt variables through `agent.ctx`, so they
 * live in the agent's layer and go with it at dispose: `agent_id` (`agent.id`), `provider` and
 * `model` (from `agent.options`, else the last logged `request/header`, else `undefined`, read at
 * every assembly, so a switch logged by an `agent/request` listener shows) and `cwd`
 * (`agent.session.header.cwd`, `undefined` when absent).
 *
 * @param agent - the agent, before its `setup` runs
 * @internal
 */
export function registerAgentVariables(agent: Agent): void {
  const prompt = agent.ctx.get(SystemPromptKey)
  prompt.variable('agent_id', agent.id)
  prompt.variable('provider', () => agent.options.provider ?? agent.session.requestHeader()?.config.provider)
  prompt.variable('model', () => agent.options.model ?? agent.session.requestHeader()?.config.model)
  prompt.variable('cwd', () => agent.session.header.cwd)
}
