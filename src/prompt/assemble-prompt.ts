import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { PromptAssemblyError } from '../errors/prompt-assembly-error.js'
import type { PromptContributionKind } from '../errors/prompt-registration-error.js'
import type { Context } from '../kernel/context.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import type { ToolSchema } from '../session/request-header.js'
import type { ScopedLayers } from '../kernel/scoped-layers.js'
import { checkAssembly, copyToolSchema, toolSchemaProblem } from './check-assembly.js'
import type { AssembledContext, AssembledSection, AssembleInput, PromptAssembly } from './prompt-assembly.js'
import type { PromptText, TextEntry, VariableValue } from './prompt-contribution.js'
import type { SystemPromptAssemblePayload } from './prompt-events.js'
import type { PromptLayer } from './prompt-layer.js'

/** @internal What {@link assemblePrompt} reads: the dispatching context, the layers and the `toolOrder` option. */
export interface AssembleSource {
  /** Dispatches `system-prompt/assemble`. */
  readonly ctx: Context
  /** The global layer and one per scope. */
  readonly layers: ScopedLayers<PromptLayer>
  /** The `toolOrder` option of the entry (validated: `'*'` exactly once, no duplicate). */
  readonly toolOrder: readonly string[] | undefined
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function contributionFailed(
  kind: PromptContributionKind,
  name: string | undefined,
  cause: unknown,
): PromptAssemblyError {
  const what = name === undefined ? `a ${kind} provider` : `the ${kind} "${name}"`
  return new PromptAssemblyError({
    code: ErrorCode.CONTRIBUTION_FAILED,
    message: `${what} failed: ${reasonOf(cause)}`,
    kind,
    name,
    cause,
  })
}

function compareNames(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0
}

function inputOf(input: unknown): AssembleInput {
  if (typeof input !== 'object' || input === null) {
    throw new InvalidArgumentError({
      argument: 'input',
      reason: 'assemble() takes { agent?, scope?, signal }',
      value: input,
    })
  }
  const { agent, scope, signal } = input as Record<string, unknown>
  const candidate = signal as { aborted?: unknown; addEventListener?: unknown } | null | undefined
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.aborted !== 'boolean' ||
    typeof candidate.addEventListener !== 'function'
  ) {
    throw new InvalidArgumentError({ argument: 'signal', reason: 'assemble() needs an AbortSignal', value: signal })
  }
  if (scope !== undefined && (typeof scope !== 'object' || scope === null)) {
    throw new InvalidArgumentError({ argument: 'scope', reason: 'a scope key must be an object', value: scope })
  }
  if (agent !== undefined && (typeof agent !== 'object' || agent === null)) {
    throw new InvalidArgumentError({ argument: 'agent', reason: 'an agent must be an object', value: agent })
  }
  return Object.freeze({
    ...(agent === undefined ? {} : { agent: agent as ScopeKey }),
    ...(scope === undefined ? {} : { scope: scope as ScopeKey }),
    signal: signal as AbortSignal,
  })
}

/** Merges one namespace by name: earlier layers first, a later layer replacing the entry in place. */
function mergeNamed<V>(layers: readonly PromptLayer[], pick: (layer: PromptLayer) => Map<string, V>): Map<string, V> {
  const merged = new Map<string, V>()
  for (const layer of layers) for (const [name, value] of pick(layer)) merged.set(name, value)
  return merged
}

function evaluateText(kind: 'section' | 'context', name: string, text: PromptText, input: AssembleInput): string {
  if (typeof text === 'string') return text
  let result: unknown
  try {
    result = text(input)
  } catch (error) {
    throw contributionFailed(kind, name, error)
  }
  if (result === undefined) return ''
  if (typeof result !== 'string')
    throw contributionFailed(
      kind,
      name,
      new TypeError(`the text provider returned ${typeName(result)}, not a string or undefined`),
    )
  return result
}

function evaluateVariables(
  merged: Map<string, VariableValue>,
  input: AssembleInput,
): Readonly<Record<string, string | undefined>> {
  const variables: Record<string, string | undefined> = Object.create(null)
  for (const [name, value] of merged) {
    if (typeof value === 'string') {
      variables[name] = value
      continue
    }
    let result: unknown
    try {
      result = value(input)
    } catch (error) {
      throw contributionFailed('variable', name, error)
    }
    if (result !== undefined && typeof result !== 'string') {
      const valueType = typeName(result)
      throw new PromptAssemblyError({
        code: ErrorCode.INVALID_VARIABLE_VALUE,
        message: `variable "${name}" evaluated to ${valueType}; a variable provider must return a string or undefined`,
        name,
        valueType,
      })
    }
    variables[name] = result
  }
  return Object.freeze(variables)
}

/** Calls every tool provider of every layer (global first), copying each schema; step 5 before ordering. */
function collectTools(
  layers: readonly PromptLayer[],
  input: AssembleInput,
): { schemas: Map<string, ToolSchema>; known: Set<string> } {
  const schemas = new Map<string, ToolSchema>()
  const known = new Set<string>()
  for (const layer of layers) {
    for (const { provider } of layer.tools) {
      let result: unknown
      try {
        result = provider(input)
      } catch (error) {
        throw contributionFailed('tools', undefined, error)
      }
      const contribution = result as { schemas?: unknown; knownNames?: unknown } | null
      if (typeof contribution !== 'object' || contribution === null || !Array.isArray(contribution.schemas)) {
        throw contributionFailed(
          'tools',
          undefined,
          new TypeError(`the provider returned ${typeName(result)}, not { schemas, knownNames? }`),
        )
      }
      const knownNames = contribution.knownNames
      if (
        knownNames !== undefined &&
        (!Array.isArray(knownNames) || !knownNames.every((name) => typeof name === 'string'))
      ) {
        throw contributionFailed('tools', undefined, new TypeError('knownNames must be an array of strings'))
      }
      for (const [index, schema] of (contribution.schemas as unknown[]).entries()) {
        const problem = toolSchemaProblem(schema)
        if (problem !== undefined) {
          throw contributionFailed(
            'tools',
            undefined,
            new TypeError(`schemas[${index}]${problem.field === '' ? '' : `.${problem.field}`} ${problem.reason}`),
          )
        }
        const tool = schema as ToolSchema
        if (schemas.has(tool.name)) {
          throw new PromptAssemblyError({
            code: ErrorCode.DUPLICATE_TOOL_SCHEMA,
            message: `two tool schemas are named "${tool.name}"`,
            name: tool.name,
          })
        }
        let copy: ToolSchema
        try {
          copy = copyToolSchema(tool)
        } catch (error) {
          throw contributionFailed('tools', undefined, error)
        }
        schemas.set(tool.name, copy)
        known.add(tool.name)
      }
      for (const name of (knownNames ?? []) as string[]) known.add(name)
    }
  }
  return { schemas, known }
}

/** Orders the schemas: by name, or by `toolOrder` with the rest at `'*'`. */
function orderTools(
  schemas: Map<string, ToolSchema>,
  known: Set<string>,
  toolOrder: readonly string[] | undefined,
): readonly ToolSchema[] {
  const byName = [...schemas.keys()].sort(compareNames)
  if (toolOrder === undefined) return Object.freeze(byName.map((name) => schemas.get(name) as ToolSchema))
  for (const name of toolOrder) {
    if (name !== '*' && !known.has(name)) {
      const sortedKnown = [...known].sort(compareNames)
      throw new PromptAssemblyError({
        code: ErrorCode.UNKNOWN_TOOL_ORDER_ENTRY,
        message: `toolOrder lists "${name}", which is not a known tool (known: ${sortedKnown.length === 0 ? 'none' : sortedKnown.join(', ')})`,
        name,
        known: sortedKnown,
      })
    }
  }
  const listed = new Set(toolOrder)
  const ordered: ToolSchema[] = []
  for (const name of toolOrder) {
    if (name === '*') {
      for (const rest of byName) if (!listed.has(rest)) ordered.push(schemas.get(rest) as ToolSchema)
      continue
    }
    const schema = schemas.get(name)
    if (schema !== undefined) ordered.push(schema)
  }
  return Object.freeze(ordered)
}

function sortEntries(merged: Map<string, TextEntry>): TextEntry[] {
  return [...merged.values()].sort((left, right) => left.order - right.order)
}

function evaluateSections(
  merged: Map<string, TextEntry>,
  input: AssembleInput,
): { sections: readonly AssembledSection[]; complete: AssembledSection | undefined } {
  const entries = sortEntries(merged)
  const completes = entries.filter((entry) => entry.complete)
  if (completes.length > 1) {
    const names = completes.map((entry) => entry.name)
    throw new PromptAssemblyError({
      code: ErrorCode.MULTIPLE_COMPLETE_SECTIONS,
      message: `more than one complete section: ${names.join(', ')}`,
      names,
    })
  }
  let complete: AssembledSection | undefined
  const sections = entries.map((entry): AssembledSection => {
    const text = evaluateText('section', entry.name, entry.text, input)
    if (!entry.complete) return Object.freeze({ name: entry.name, order: entry.order, text })
    complete = Object.freeze({ name: entry.name, order: entry.order, text, complete: true })
    return complete
  })
  return { sections: Object.freeze(sections), complete }
}

function evaluateContexts(merged: Map<string, TextEntry>, input: AssembleInput): readonly AssembledContext[] {
  return Object.freeze(
    sortEntries(merged).map((entry) =>
      Object.freeze({
        name: entry.name,
        order: entry.order,
        text: evaluateText('context', entry.name, entry.text, input),
      }),
    ),
  )
}

async function assemble(source: AssembleSource, input: AssembleInput): Promise<PromptAssembly> {
  const { scope } = input
  const layers = [source.layers.global, ...(scope === undefined ? [] : source.layers.chain(scope))]
  const suppressed = layers.some((layer) => layer.suppressors.size > 0)
  const mergedSections = mergeNamed(layers, (layer) => layer.sections)
  const mergedContexts = mergeNamed(layers, (layer) => layer.contexts)
  const variables = evaluateVariables(
    mergeNamed(layers, (layer) => layer.variables),
    input,
  )
  const collected = collectTools(layers, input)
  const tools = orderTools(collected.schemas, collected.known, source.toolOrder)
  const { sections, complete } = evaluateSections(mergedSections, input)
  const contexts = suppressed ? Object.freeze([]) : evaluateContexts(mergedContexts, input)
  const assembly: PromptAssembly = Object.freeze({ sections, contexts, variables, tools })
  // With no listener the result is this assembly, valid by construction (registration checked its
  // names and orders, schemas were copied above): no dispatch and no second check.
  if (!source.ctx.listens('system-prompt/assemble', 'waterfall')) {
    return Object.freeze({
      sections: complete === undefined ? sections : Object.freeze([complete]),
      contexts,
      variables,
      tools,
    })
  }
  const payload: SystemPromptAssemblePayload = Object.freeze({ ...input, assembly })
  const result = await source.ctx.waterfall(
    'system-prompt/assemble',
    payload,
    (current) => current.assembly,
    scope === undefined ? undefined : { scope },
  )
  const checked = checkAssembly(result, new Set<object>(tools))
  return Object.freeze({
    sections: complete === undefined ? checked.sections : Object.freeze([complete]),
    contexts: suppressed ? Object.freeze([]) : checked.contexts,
    variables: checked.variables,
    tools: checked.tools,
  })
}

/**
 * Assembles the system prompt for a scope: merges the global
 * layer and the scope's chain (nearest last, shadowed contributions never evaluated), evaluates
 * variables, collects and orders tool schemas, sorts and evaluates sections and contexts (`[]` when
 * suppressed), runs the `system-prompt/assemble` waterfall over the deep-frozen result, checks the
 * listener's result, then restores the complete section and the suppression. Nothing is cached.
 * O(contributions in the global layer and the chain + chain length).
 *
 * @internal Reached through `SystemPrompt.assemble`.
 * @param source - the dispatching context, the layers and the `toolOrder` option
 * @param input - `{ agent?, scope?, signal }`
 * @returns a fresh, deep-frozen assembly
 * @throws {@link PromptAssemblyError} (rejects) for each assembly failure; {@link InvalidArgumentError} for a malformed input; what a listener throws
 */
export function assemblePrompt(source: AssembleSource, input: AssembleInput): Promise<PromptAssembly> {
  try {
    return assemble(source, inputOf(input))
  } catch (error) {
    return Promise.reject(error)
  }
}
