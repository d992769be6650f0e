import type { CreateAgentOptions } from '../agent/agent-registry.js'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import type { Context } from '../kernel/context.js'
import { SystemPromptKey } from '../prompt/system-prompt-key.js'
import { ToolsKey } from '../tools/tools-key.js'
import { instructionSections, instructionsIssues } from '../prompt/instructions.js'
import type { AgentOverrides } from './harness.js'

const overrideKeys: ReadonlySet<string> = new Set(['preset', 'model', 'options', 'tools', 'instructions', 'signal'])

/**
 * Maps {@link AgentOverrides} to the options of `agents.create` / `agents.resume`:
 * `preset`, `model`, `options` and `signal` pass through; `tools` and `instructions` become a
 * setup that registers them through `agent.ctx`, so they are the agent's only and go with it.
 *
 * @param overrides - what the caller passed
 * @returns the registry options (without an id)
 * @throws {@link InvalidOptionsError} for an unknown key (`{ path: [key], message: 'unknown option' }`;
 *   agent options go under `options`), `instructions` that are neither a string nor valid sections
 *   (issue paths start with `'instructions'`), or `tools` that are not an array
 * @internal
 */
export function registryOptionsOf(overrides: AgentOverrides): Omit<CreateAgentOptions, 'id'> {
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw new InvalidOptionsError({ issues: [{ path: [], message: 'must be an overrides object' }], value: overrides })
  }
  const unknown = Object.keys(overrides).filter((key) => !overrideKeys.has(key))
  if (unknown.length > 0) {
    throw new InvalidOptionsError({
      issues: unknown.map((key) => ({ path: [key], message: 'unknown option' })),
      value: overrides,
    })
  }
  const { preset, model, options, tools, instructions, signal } = overrides
  if (tools !== undefined && !Array.isArray(tools)) {
    throw new InvalidOptionsError({
      issues: [{ path: ['tools'], message: 'must be an array of tool definitions' }],
      value: tools,
    })
  }
  if (instructions !== undefined) {
    const issues = instructionsIssues(instructions).map((issue) => ({
      ...issue,
      path: ['instructions', ...issue.path],
    }))
    if (issues.length > 0) throw new InvalidOptionsError({ issues, value: instructions })
  }
  const sections = instructionSections(instructions)
  const hasTools = tools !== undefined && tools.length > 0
  return {
    ...(preset === undefined ? {} : { preset }),
    ...(model === undefined ? {} : { model }),
    ...(options === undefined ? {} : { options }),
    ...(signal === undefined ? {} : { signal }),
    ...(hasTools || sections.length > 0
      ? {
          setup: (ctx: Context) => {
            if (hasTools) ctx.get(ToolsKey).register(tools)
            if (sections.length > 0) {
              const prompt = ctx.get(SystemPromptKey)
              for (const section of sections) prompt.section(section)
            }
          },
        }
      : {}),
  }
}
