import { ErrorCode } from '../errors/codes.js'
import { PromptRegistrationError, type PromptContributionKind } from '../errors/prompt-registration-error.js'
import type { ToolSchema } from '../session/request-header.js'
import type { AssembleInput } from './prompt-assembly.js'

/**
 * The text of a section or runtime context: a template string, or a provider called on every
 * `assemble` (it may throw: the assembly then rejects with `CONTRIBUTION_FAILED`; it should
 * honour `input.signal`). `undefined` counts as `''`.
 */
export type PromptText = string | ((input: AssembleInput) => string | undefined)

/** A system-prompt section; the nearest scope wins its name. */
export interface SectionDefinition {
  /** Non-empty, without whitespace; one per layer. */
  readonly name: string
  /** A finite sort key, ascending; ties keep merge order. By convention negative orders precede the instructions (0), tool guidance uses 100–199. */
  readonly order: number
  /** The section's template text, or its provider. */
  readonly text: PromptText
  /**
   * This section is the whole prompt: the assembly's sections become exactly this one.
   *
   * @default false
   */
  readonly complete?: boolean
}

/** A runtime-context entry; the nearest scope wins its name. */
export interface ContextDefinition {
  /** Non-empty, without whitespace; one per layer. */
  readonly name: string
  /** A finite sort key, ascending; ties keep merge order. */
  readonly order: number
  /** The context's template text, or its provider. */
  readonly text: PromptText
}

/**
 * The value of `{{name}}`: a string, or a provider called on every `assemble` that returns a
 * string or `undefined` (anything else rejects with `INVALID_VARIABLE_VALUE`; a throw with
 * `CONTRIBUTION_FAILED`). It should honour `input.signal`.
 */
export type VariableValue = string | ((input: AssembleInput) => string | undefined)

/** What a {@link ToolSchemaProvider} returns. */
export interface ToolSchemaContribution {
  /** The visible schemas; each is copied (`parameters` structured-cloned). */
  readonly schemas: readonly ToolSchema[]
  /** Names known but not visible here (restricted tools); a schema's own name is always known. */
  readonly knownNames?: readonly string[]
}

/**
 * Yields tool schemas on every `assemble`; every provider of every layer in the chain contributes.
 * It may throw (the assembly rejects with `CONTRIBUTION_FAILED`, kind `tools`) and should honour
 * `input.signal`.
 */
export type ToolSchemaProvider = (input: AssembleInput) => ToolSchemaContribution

/** A section as the `instructions` option accepts it: `order` defaults to 0. */
export interface PromptSectionInput {
  /** The section name (non-empty, without whitespace). */
  readonly name: string
  /**
   * The sort key.
   *
   * @default 0
   */
  readonly order?: number
  /** The section text. */
  readonly text: string
}

/** @internal A validated section or context, as a layer stores it (a copy of the definition). */
export interface TextEntry {
  readonly name: string
  readonly order: number
  readonly text: PromptText
  readonly complete: boolean
}

const variableNamePattern = /^[a-z][a-z0-9_]*$/
const whitespace = /\s/

function invalid(kind: PromptContributionKind, field: string, value: unknown, reason: string): PromptRegistrationError {
  return new PromptRegistrationError({ code: ErrorCode.INVALID_PROMPT_CONTRIBUTION, kind, field, value, reason })
}

/**
 * Checks a section or context definition and copies it.
 *
 * @internal
 * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` naming the field
 */
export function checkTextDefinition(kind: 'section' | 'context', definition: unknown): TextEntry {
  if (typeof definition !== 'object' || definition === null) {
    throw invalid(kind, 'definition', definition, 'must be an object { name, order, text }')
  }
  const { name, order, text, complete } = definition as Record<string, unknown>
  if (typeof name !== 'string' || name.length === 0 || whitespace.test(name)) {
    throw invalid(kind, 'name', name, 'must be a non-empty string without whitespace')
  }
  if (typeof order !== 'number' || !Number.isFinite(order))
    throw invalid(kind, 'order', order, 'must be a finite number')
  if (typeof text !== 'string' && typeof text !== 'function')
    throw invalid(kind, 'text', text, 'must be a string or a function')
  if (kind === 'context' && complete !== undefined) {
    throw invalid(kind, 'complete', complete, 'is not allowed on a runtime context (sections only)')
  }
  if (complete !== undefined && typeof complete !== 'boolean')
    throw invalid(kind, 'complete', complete, 'must be a boolean')
  return Object.freeze({ name, order, text: text as PromptText, complete: complete === true })
}

/**
 * Checks a variable registration.
 *
 * @internal
 * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` with `field: 'name'` or `'value'`
 */
export function checkVariable(name: unknown, value: unknown): asserts value is VariableValue {
  if (typeof name !== 'string' || !variableNamePattern.test(name)) {
    throw invalid('variable', 'name', name, 'must match ^[a-z][a-z0-9_]*$')
  }
  if (typeof value !== 'string' && typeof value !== 'function')
    throw invalid('variable', 'value', value, 'must be a string or a function')
}

/**
 * Checks a tool-schema provider.
 *
 * @internal
 * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` with `field: 'provider'`
 */
export function checkToolProvider(provider: unknown): asserts provider is ToolSchemaProvider {
  if (typeof provider !== 'function') throw invalid('tools', 'provider', provider, 'must be a function')
}
