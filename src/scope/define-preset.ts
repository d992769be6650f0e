import type { AgentOptions } from '../agent/agent-options.js'
import type { Context } from '../kernel/context.js'
import type { PluginInput } from '../kernel/plugin.js'
import type { Instructions } from '../prompt/instructions.js'
import type { PromptSectionInput } from '../prompt/prompt-contribution.js'

/**
 * Agent options a preset gives the agents created with it: over the harness
 * `maxParallelToolCalls` and model route, under the caller's options, field by field.
 */
export type PresetAgentOptions = AgentOptions

/** What {@link definePreset} takes. */
export interface PresetSpec {
  /** The preset's name, unique in a harness: `^[a-z0-9][a-z0-9._-]{0,63}$`. */
  readonly name: string
  /**
   * Registered in the preset's layer through its context: a string is the section
   * `{ name: 'instructions', order: 0, text }`; each array entry a section (`order` defaults to 0),
   * names distinct. A section named like a global one shadows it for this preset's agents only.
   *
   * @default none
   */
  readonly instructions?: Instructions
  /**
   * Defaults for agents created with this preset.
   *
   * @default {}
   */
  readonly options?: PresetAgentOptions
  /**
   * Started, in order, as runtime plugins of the preset's context (their listeners are tagged
   * with the preset's scope); stopped in reverse when the harness closes.
   *
   * @default []
   */
  readonly plugins?: readonly PluginInput[]
  /**
   * Runs once per harness, after the preset's instructions and plugins, with the preset's context:
   * register tools, sections, variables and listeners through it. May throw or reject:
   * `createHarness` then rolls everything back and rejects with `PresetSetupError`.
   */
  readonly setup?: (ctx: Context) => void | Promise<void>
}

/** An inert, frozen preset definition from {@link definePreset}; pass it as `createHarness({ presets })`. */
export type PresetDefinition = PresetSpec

/**
 * Defines a preset: a named standing scope composed once per harness and shared by every agent
 * created with it. Inert: it neither runs nor checks anything; a bad field
 * fails `createHarness({ presets: [...] })` before anything starts, as an `InvalidOptionsError`
 * issue at `['presets', i, field]`.
 *
 * @param spec - the name, instructions, agent options, plugins and setup
 * @returns the frozen definition (arrays copied and frozen); a value that is not a plain
 *   definition is returned as it is, for the harness options to report
 * @example
 * ```ts
 * const reviewer = definePreset({
 *   name: 'reviewer',
 *   instructions: 'You review code.',
 *   options: { model: 'm2' },
 *   setup: (ctx) => { ctx.on('agent/status', (event) => console.log(event.status)) },
 * })
 * await using harness = await createHarness({ presets: [reviewer] })
 * ```
 */
export function definePreset(spec: PresetSpec): PresetDefinition {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return spec
  const { instructions, options, plugins } = spec
  const copy: Record<string, unknown> = { ...spec }
  if (Array.isArray(instructions)) copy['instructions'] = freezeInstructions(instructions)
  if (typeof options === 'object' && options !== null && !Array.isArray(options))
    copy['options'] = Object.freeze({ ...options })
  if (Array.isArray(plugins)) copy['plugins'] = Object.freeze([...plugins])
  for (const key of ['instructions', 'options', 'plugins', 'setup'] as const)
    if (copy[key] === undefined) delete copy[key]
  return Object.freeze(copy) as unknown as PresetDefinition
}

function freezeInstructions(instructions: readonly unknown[]): Instructions {
  // A non-object entry stays as it is, for the harness options to report.
  return Object.freeze(
    instructions.map((section) =>
      typeof section === 'object' && section !== null ? Object.freeze({ ...(section as PromptSectionInput) }) : section,
    ),
  ) as Instructions
}
