import { z } from 'zod'
import type { PromptSectionInput, SectionDefinition } from './prompt-contribution.js'

/** The `instructions` option of a harness, a preset or an agent: one text, or named sections. */
export type Instructions = string | readonly PromptSectionInput[]

const sectionFields: ReadonlySet<string> = new Set(['name', 'order', 'text'])
const sectionName = /^\S+$/

/**
 * The problems of an `instructions` value, each with its path relative to the option.
 *
 * @internal
 */
export function instructionsIssues(value: unknown): { path: (string | number)[]; message: string }[] {
  if (typeof value === 'string') return []
  if (!Array.isArray(value))
    return [{ path: [], message: 'must be a string or an array of sections { name, order?, text }' }]
  const issues: { path: (string | number)[]; message: string }[] = []
  const seen = new Set<string>()
  for (const [index, section] of value.entries()) {
    if (typeof section !== 'object' || section === null || Array.isArray(section)) {
      issues.push({ path: [index], message: 'must be a section { name, order?, text }' })
      continue
    }
    const record = section as Record<string, unknown>
    for (const key of Object.keys(record))
      if (!sectionFields.has(key)) issues.push({ path: [index, key], message: 'is not a section field' })
    const { name, order, text } = record
    if (typeof name !== 'string' || !sectionName.test(name))
      issues.push({ path: [index, 'name'], message: 'must be a non-empty section name without whitespace' })
    else if (seen.has(name)) issues.push({ path: [index, 'name'], message: `repeats the section name "${name}"` })
    else seen.add(name)
    if (order !== undefined && (typeof order !== 'number' || !Number.isFinite(order)))
      issues.push({ path: [index, 'order'], message: 'must be a finite number' })
    if (typeof text !== 'string') issues.push({ path: [index, 'text'], message: 'must be a string' })
  }
  return issues
}

/**
 * The zod schema of an `instructions` option: a string, or an array of
 * `{ name, order?, text }` sections (names non-empty without whitespace and distinct, orders
 * finite, no other field). Passes the value through unchanged.
 *
 * @internal
 */
export const instructionsSchema: z.ZodType<Instructions> = z.unknown().superRefine((value, context) => {
  for (const issue of instructionsIssues(value))
    context.addIssue({ code: 'custom', path: issue.path, message: issue.message })
}) as unknown as z.ZodType<Instructions>

/**
 * The sections an `instructions` option registers: a string `s` is the
 * section `{ name: 'instructions', order: 0, text: s }`; each array entry is a section whose
 * `order` defaults to 0; absent → none.
 *
 * @param instructions - the option's value
 * @returns the section definitions, in the given order
 * @example
 * ```ts
 * instructionSections('You are helpful.') // [{ name: 'instructions', order: 0, text: 'You are helpful.' }]
 * ```
 */
export function instructionSections(instructions: Instructions | undefined): readonly SectionDefinition[] {
  if (instructions === undefined) return []
  if (typeof instructions === 'string') return [{ name: 'instructions', order: 0, text: instructions }]
  return instructions.map((section) => ({ name: section.name, order: section.order ?? 0, text: section.text }))
}
