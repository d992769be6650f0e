import { z } from 'zod'
import { agentOptionsSchema } from '../agent/agent-options.js'
import { isPluginClass, isPluginDefinition } from '../kernel/plugin.js'
import { instructionsSchema } from '../prompt/instructions.js'
import { isPlainObject } from '../kernel/is-plain-object.js'

/** One problem of a preset definition: the field it is in and what is wrong. */
export interface PresetIssue {
  /** The offending field (`'name'`, `'instructions'`, …); `''` when the definition itself is not an object. */
  readonly field: string
  /** What is wrong, e.g. `'must match ^[a-z0-9][a-z0-9._-]{0,63}$'`. */
  readonly message: string
  /** The offending value. */
  readonly value: unknown
}

/** The rule of a preset name. */
export const presetNamePattern: RegExp = /^[a-z0-9][a-z0-9._-]{0,63}$/

const presetFields: ReadonlySet<string> = new Set(['name', 'instructions', 'options', 'plugins', 'setup'])

function schemaProblem(schema: z.ZodType, value: unknown): string | undefined {
  const result = schema.safeParse(value)
  if (result.success) return undefined
  const [issue] = result.error.issues
  if (issue === undefined) return 'is invalid'
  const where = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')
  return where === '' ? issue.message : `${where.replace(/^\./, '')}: ${issue.message}`
}

/**
 * Every problem of one preset definition, in field order: an object with
 * only the known fields, a valid `name`, `instructions` a string or sections with distinct names,
 * `options` valid agent options, `plugins` an array of plugin definitions or classes, `setup` a function.
 *
 * @internal
 */
export function presetIssues(definition: unknown): PresetIssue[] {
  if (!isPlainObject(definition)) {
    return [
      {
        field: '',
        message: 'must be a preset definition { name, instructions?, options?, plugins?, setup? }',
        value: definition,
      },
    ]
  }
  const issues: PresetIssue[] = []
  const { name, instructions, options, plugins, setup } = definition
  if (typeof name !== 'string' || !presetNamePattern.test(name)) {
    issues.push({ field: 'name', message: 'must match ^[a-z0-9][a-z0-9._-]{0,63}$', value: name })
  }
  const instructionsMessage = instructions === undefined ? undefined : schemaProblem(instructionsSchema, instructions)
  if (instructionsMessage !== undefined)
    issues.push({ field: 'instructions', message: instructionsMessage, value: instructions })
  if (options !== undefined) {
    const optionsMessage = isPlainObject(options)
      ? schemaProblem(agentOptionsSchema, options)
      : 'must be a plain object of agent options'
    if (optionsMessage !== undefined) issues.push({ field: 'options', message: optionsMessage, value: options })
  }
  if (plugins !== undefined) {
    const valid =
      Array.isArray(plugins) && plugins.every((plugin) => isPluginDefinition(plugin) || isPluginClass(plugin))
    if (!valid)
      issues.push({ field: 'plugins', message: 'must be an array of plugin definitions or classes', value: plugins })
  }
  if (setup !== undefined && typeof setup !== 'function') {
    issues.push({ field: 'setup', message: 'must be a function', value: setup })
  }
  for (const key of Object.keys(definition)) {
    if (!presetFields.has(key)) issues.push({ field: key, message: 'unknown preset field', value: definition[key] })
  }
  return issues
}

/**
 * The `presets` harness option's schema: an array of preset definitions, each checked by
 * {@link presetIssues} (issue path `[i, field]`, or `[i]` for a non-object), and a repeated
 * name reported on the repeat (`[i, 'name']`).
 *
 * @internal
 */
export const presetsOptionSchema = z
  .array(z.unknown(), { error: 'must be an array of preset definitions' })
  .superRefine((presets, context) => {
    const firstIndex = new Map<unknown, number>()
    for (const [index, preset] of presets.entries()) {
      const issues = presetIssues(preset)
      for (const issue of issues) {
        context.addIssue({
          code: 'custom',
          path: issue.field === '' ? [index] : [index, issue.field],
          message: issue.message,
        })
      }
      if (issues.some((issue) => issue.field === '' || issue.field === 'name')) continue
      const name = (preset as { readonly name: string }).name
      const first = firstIndex.get(name)
      if (first === undefined) firstIndex.set(name, index)
      else
        context.addIssue({
          code: 'custom',
          path: [index, 'name'],
          message: `repeats the preset name "${name}" of presets[${first}]`,
        })
    }
  })
