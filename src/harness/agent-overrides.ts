import type { Agent } from '../agent/agent.js'
import { validateAgentOptions } from '../agent/agent-options.js'
import type { CreateAgentOptions } from '../agent/agent-registry.js'
import { queuedPolicyRule, type ResumeAgentOptions } from '../agent/resume-agent.js'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import type { Context } from '../kernel/context.js'
import { isPlainObject } from '../kernel/is-plain-object.js'
import { SystemPromptKey } from '../prompt/system-prompt-key.js'
import { ToolsKey } from '../tools/tools-key.js'
import { instructionSections, instructionsIssues } from '../prompt/instructions.js'
import type { AgentOverrides, ResumeOverrides } from './harness.js'

const overrideKeys: ReadonlySet<string> = new Set([
  'preset',
  'model',
  'options',
  'tools',
  'instructions',
  'signal',
  'queued',
])

/**
 * Maps {@link AgentOverrides} to the options of `agents.create` / `agents.resume`:
 * `preset`, `model`, `options` and `signal` pass through; `tools` and `instructions` become a
 * setup that registers them through `agent.ctx`, so they are the agent's only and go with it.
 *
 * @param overrides - what the caller passed
 * @returns the registry options (without an id)
 * @throws {@link InvalidOptionsError} for an unknown key (`{ path: [key], message: 'unknown option' }`;
 *   agent options go under `options`), `instructions` that are neither a string nor valid sections
 *   (issue paths start with `'instructions'`), `tools` that are not an array, or a `queued` that is
 *   neither `'keep'` nor `'discard'` (it is checked here, and passed on by {@link resumeOptionsOf} only)
 * @internal
 */
export function registryOptionsOf(overrides: ResumeOverrides): Omit<CreateAgentOptions, 'id'> {
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
  const { preset, model, options, tools, instructions, signal, queued } = overrides
  if (queued !== undefined) {
    const message = queuedPolicyRule(queued)
    if (message !== undefined) throw new InvalidOptionsError({ issues: [{ path: ['queued'], message }], value: queued })
  }
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

/**
 * The options of `agents.resume` for {@link ResumeOverrides}: {@link registryOptionsOf} plus `queued`.
 *
 * @param overrides - what the caller passed
 * @returns the registry options
 * @throws what {@link registryOptionsOf} throws
 * @internal
 */
export function resumeOptionsOf(overrides: ResumeOverrides): ResumeAgentOptions {
  const options = registryOptionsOf(overrides)
  return overrides.queued === undefined ? options : { ...options, queued: overrides.queued }
}

/**
 * Which of the `given` overrides differ from those a live agent runs with, so `openAgent` never
 * returns an agent that silently ignores them. An override left out never differs (none at all
 * matches any live agent); `signal` and `queued` only matter while an agent is opened, so they are
 * not compared. `preset` is compared with the preset the session header recorded; each field of
 * `options` with the agent's own resolved options (so a value it got from the harness or its
 * preset matches too); `model` and `instructions` by value with the ones the agent was built with
 * (functions and class instances by identity); `tools` by their names.
 *
 * @param agent - the live agent
 * @param built - the overrides it was created, resumed or opened with by this harness, if known
 * @param given - the overrides of the `openAgent` call (already checked by {@link registryOptionsOf})
 * @returns the differing fields (`preset`, `model`, `tools`, `instructions`, `options.<field>`), empty when none
 * @throws {@link InvalidOptionsError} for invalid `options`, as a create or resume would
 * @internal
 */
export function overridesDifference(agent: Agent, built: AgentOverrides | undefined, given: AgentOverrides): string[] {
  const fields: string[] = []
  if (given.preset !== undefined && given.preset !== agent.session.header.agentPreset) fields.push('preset')
  if (given.model !== undefined && !sameValue(given.model, built?.model)) fields.push('model')
  if (given.options !== undefined) {
    const options = validateAgentOptions(given.options) as Readonly<Record<string, unknown>>
    const live = agent.options as Readonly<Record<string, unknown>>
    for (const key of Object.keys(given.options)) {
      if (options[key] !== undefined && !sameValue(options[key], live[key])) fields.push(`options.${key}`)
    }
  }
  if (given.tools !== undefined && !sameToolNames(given.tools, built?.tools ?? [])) fields.push('tools')
  if (given.instructions !== undefined && !sameValue(given.instructions, built?.instructions))
    fields.push('instructions')
  return fields
}

/** Whether two tool lists name the same tools (in any order). */
function sameToolNames(
  left: readonly { readonly name: string }[],
  right: readonly { readonly name: string }[],
): boolean {
  const names = (tools: readonly { readonly name: string }[]): string[] => tools.map((tool) => tool.name).sort()
  return sameValue(names(left), names(right))
}

/** Structural equality over arrays and plain objects (an `undefined` key counts as absent); anything else by identity. */
function sameValue(left: unknown, right: unknown): boolean {
  if (Object.is(left, right)) return true
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((item, index) => sameValue(item, right[index]))
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const keys = new Set([...Object.keys(left), ...Object.keys(right)])
    for (const key of keys) if (!sameValue(left[key], right[key])) return false
    return true
  }
  return false
}
