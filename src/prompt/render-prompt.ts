import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { PromptRenderError } from '../errors/prompt-render-error.js'

/** One named piece of a template: a system-prompt section or a runtime context. */
export interface PromptTemplateSection {
  /** The name errors report, e.g. `'instructions'`. */
  readonly name: string
  /** The text, with `{{variable}}` references. */
  readonly text: string
}

/** Options of {@link renderPrompt}. */
export interface RenderPromptOptions {
  /**
   * What the sections are, as named in error messages and in `PromptRenderError.sectionKind`.
   *
   * @default 'section'
   */
  readonly kind?: 'section' | 'context'
}

/** What a template's `{{name}}` references read: own keys only; a null-prototype record is fine. */
export type PromptVariables = Readonly<Record<string, string | undefined>>

const variableName = /^[a-z][a-z0-9_]*$/
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d

interface Where {
  readonly section: string
  readonly sectionKind: 'section' | 'context'
}

/**
 * Renders a template with strict `{{variable}}` interpolation: each
 * section is interpolated in one left-to-right pass, sections whose result is empty or
 * whitespace-only are dropped and the rest are joined with `"\n\n"`. A string template is one
 * section named `'template'`. Values are copied verbatim and never scanned again; a `{{` with no
 * `}}` anywhere after it is prose. Pure and deterministic, O(template length + output length).
 *
 * @param template - a string, or sections `{ name, text }` (extra fields are ignored)
 * @param variables - the values of `{{name}}`; only own keys count
 * @param options - `kind` names the sections in errors (default `'section'`)
 * @returns the rendered text, `''` when every section is empty
 * @throws {@link PromptRenderError} `PROMPT_VARIABLE_MALFORMED`, `PROMPT_VARIABLE_UNKNOWN` or `PROMPT_VARIABLE_UNDEFINED` at the first bad reference
 * @throws {@link InvalidArgumentError} when an argument has the wrong shape, or a referenced value is neither a string nor `undefined`
 * @example
 * ```ts
 * renderPrompt([{ name: 'where', text: 'Work in {{dir}}.' }], { dir: '/w' }) // 'Work in /w.'
 * renderPrompt('use ${X:-{{fallback}', {}) // 'use ${X:-{{fallback}' (no `}}` later: prose)
 * ```
 */
export function renderPrompt(
  template: string | readonly PromptTemplateSection[],
  variables: PromptVariables,
  options?: RenderPromptOptions,
): string {
  const sectionKind = kindOf(options)
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    throw new InvalidArgumentError({
      argument: 'variables',
      reason: 'must be a record of strings (or undefined)',
      value: variables,
    })
  }
  const sections = sectionsOf(template)
  let output = ''
  for (const section of sections) {
    const text = interpolate(section.text, variables, { section: section.name, sectionKind })
    if (text.trim() === '') continue
    output = output === '' ? text : `${output}\n\n${text}`
  }
  return output
}

function kindOf(options: RenderPromptOptions | undefined): 'section' | 'context' {
  if (options === undefined) return 'section'
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be an object', value: options })
  }
  const kind: unknown = options.kind
  if (kind === undefined) return 'section'
  if (kind !== 'section' && kind !== 'context') {
    throw new InvalidArgumentError({ argument: 'options.kind', reason: "must be 'section' or 'context'", value: kind })
  }
  return kind
}

function sectionsOf(template: unknown): readonly PromptTemplateSection[] {
  if (typeof template === 'string') return [{ name: 'template', text: template }]
  if (!Array.isArray(template)) {
    throw new InvalidArgumentError({
      argument: 'template',
      reason: 'must be a string or an array of { name, text } sections',
      value: template,
    })
  }
  for (const [index, section] of template.entries()) {
    if (typeof section !== 'object' || section === null) {
      throw new InvalidArgumentError({
        argument: `template[${index}]`,
        reason: 'must be a { name, text } section',
        value: section,
      })
    }
    const record = section as { readonly name?: unknown; readonly text?: unknown }
    if (typeof record.name !== 'string') {
      throw new InvalidArgumentError({
        argument: `template[${index}].name`,
        reason: 'must be a string',
        value: record.name,
      })
    }
    if (typeof record.text !== 'string') {
      throw new InvalidArgumentError({
        argument: `template[${index}].text`,
        reason: 'must be a string',
        value: record.text,
      })
    }
  }
  return template as readonly PromptTemplateSection[]
}

/**
 * One section's pass. Each `{{` either matches (its inner run stops at the first brace) or is
 * prose/malformed; inner runs never overlap, so every character is looked at a bounded number of
 * times. "Is there a later `}}`" is searched at most once: a `}}` found is an error, none found
 * stays none for every later position.
 */
function interpolate(text: string, variables: PromptVariables, where: Where): string {
  let output = ''
  let position = 0
  let closeLater = true
  for (;;) {
    const open = text.indexOf('{{', position)
    if (open === -1) return position === 0 ? text : output + text.slice(position)
    output += text.slice(position, open)
    let end = open + 2
    while (end < text.length) {
      const code = text.charCodeAt(end)
      if (code === OPEN_BRACE || code === CLOSE_BRACE) break
      end++
    }
    const matched = text.charCodeAt(end) === CLOSE_BRACE && text.charCodeAt(end + 1) === CLOSE_BRACE
    if (!matched) {
      const close = closeLater ? text.indexOf('}}', open + 2) : -1
      if (close !== -1) throw malformed(text.slice(open, close + 2), where)
      closeLater = false
      output += '{{'
      position = open + 2
      continue
    }
    output += referencedValue(text.slice(open, end + 2), text.slice(open + 2, end), variables, where)
    position = end + 2
  }
}

function referencedValue(reference: string, name: string, variables: PromptVariables, where: Where): string {
  if (!variableName.test(name)) throw malformed(reference, where)
  if (!Object.hasOwn(variables, name)) {
    throw new PromptRenderError({
      code: ErrorCode.PROMPT_VARIABLE_UNKNOWN,
      reference,
      variable: name,
      ...where,
      registered: Object.keys(variables).sort(),
    })
  }
  const value: unknown = variables[name]
  if (value === undefined) {
    throw new PromptRenderError({ code: ErrorCode.PROMPT_VARIABLE_UNDEFINED, reference, variable: name, ...where })
  }
  if (typeof value !== 'string') {
    throw new InvalidArgumentError({ argument: `variables.${name}`, reason: 'must be a string or undefined', value })
  }
  return value
}

function malformed(reference: string, where: Where): PromptRenderError {
  return new PromptRenderError({ code: ErrorCode.PROMPT_VARIABLE_MALFORMED, reference, ...where })
}
