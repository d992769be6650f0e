import { ErrorCode } from '../errors/codes.js'
import { PromptAssemblyError } from '../errors/prompt-assembly-error.js'
import { fieldPath } from '../errors/issue.js'
import type { ToolSchema } from '../session/request-header.js'
import type { AssembledContext, AssembledSection, PromptAssembly } from './prompt-assembly.js'
import { deepFreeze, isKnownDeepFrozen } from '../session/deep-freeze.js'

/** A problem found at a path of the listener's result. */
class AssemblyProblem {
  constructor(
    readonly path: readonly (string | number)[],
    readonly reason: string,
  ) {}
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Whether `schema` has exactly the three fields of a tool schema (own, enumerable). */
function hasOnlySchemaFields(schema: ToolSchema): boolean {
  const keys = Object.keys(schema)
  return (
    keys.length === 3 &&
    Object.hasOwn(schema, 'name') &&
    Object.hasOwn(schema, 'description') &&
    Object.hasOwn(schema, 'parameters')
  )
}

/** The copy made of each deep-frozen schema this library built (the tool registry's): it never changes, so neither does its copy. */
const copies = new WeakMap<ToolSchema, ToolSchema>()

function freshCopy(schema: ToolSchema): ToolSchema {
  return Object.freeze({
    name: schema.name,
    description: schema.description,
    parameters: deepFreeze(structuredClone(schema.parameters)),
  })
}

/**
 * A frozen copy of one tool schema: only its three fields, `parameters` structured-cloned. The
 * copy of a schema this library built deep-frozen (the tool registry's) is made once and reused:
 * the schema is never handed out, and it is not cloned again on every step.
 *
 * @internal
 * @throws what `structuredClone` throws for uncloneable parameters
 */
export function copyToolSchema(schema: ToolSchema): ToolSchema {
  if (!isKnownDeepFrozen(schema) || !hasOnlySchemaFields(schema)) return freshCopy(schema)
  let copy = copies.get(schema)
  if (copy === undefined) {
    copy = freshCopy(schema)
    copies.set(schema, copy)
  }
  return copy
}

/**
 * The problem with a candidate tool schema, if any: the field (`''` for the value itself) and why.
 *
 * @internal
 */
export function toolSchemaProblem(value: unknown): { field: string; reason: string } | undefined {
  if (!isRecord(value)) return { field: '', reason: 'must be a tool schema { name, description, parameters }' }
  if (typeof value['name'] !== 'string' || value['name'].length === 0)
    return { field: 'name', reason: 'must be a non-empty string' }
  if (typeof value['description'] !== 'string') return { field: 'description', reason: 'must be a string' }
  if (!isRecord(value['parameters'])) return { field: 'parameters', reason: 'must be a JSON Schema object' }
  return undefined
}

function arrayAt(value: unknown, path: readonly (string | number)[]): readonly unknown[] {
  if (!Array.isArray(value)) throw new AssemblyProblem(path, 'must be an array')
  return value
}

function textEntry(value: unknown, path: readonly (string | number)[], section: boolean): AssembledSection {
  if (!isRecord(value)) throw new AssemblyProblem(path, 'must be an object { name, order, text }')
  const { name, order, text, complete } = value
  if (typeof name !== 'string' || name.length === 0)
    throw new AssemblyProblem([...path, 'name'], 'must be a non-empty string')
  if (typeof order !== 'number' || !Number.isFinite(order))
    throw new AssemblyProblem([...path, 'order'], 'must be a finite number')
  if (typeof text !== 'string') throw new AssemblyProblem([...path, 'text'], 'must be a string')
  if (section && complete !== undefined && complete !== true)
    throw new AssemblyProblem([...path, 'complete'], 'must be true when present')
  if (!section && complete !== undefined)
    throw new AssemblyProblem([...path, 'complete'], 'is not allowed on a context')
  return Object.freeze(complete === true ? { name, order, text, complete } : { name, order, text })
}

function variablesOf(value: unknown): Readonly<Record<string, string | undefined>> {
  if (!isRecord(value)) throw new AssemblyProblem(['variables'], 'must be a record of strings or undefined')
  const variables: Record<string, string | undefined> = Object.create(null)
  for (const name of Object.keys(value)) {
    const variable = value[name]
    if (variable !== undefined && typeof variable !== 'string')
      throw new AssemblyProblem(['variables', name], 'must be a string or undefined')
    variables[name] = variable
  }
  return Object.freeze(variables)
}

function toolsOf(value: unknown, own: ReadonlySet<object>): readonly ToolSchema[] {
  const names = new Set<string>()
  return Object.freeze(
    arrayAt(value, ['tools']).map((schema, index) => {
      const problem = toolSchemaProblem(schema)
      if (problem !== undefined)
        throw new AssemblyProblem(
          problem.field === '' ? ['tools', index] : ['tools', index, problem.field],
          problem.reason,
        )
      const tool = schema as ToolSchema
      if (names.has(tool.name))
        throw new AssemblyProblem(['tools', index, 'name'], `repeats the tool name "${tool.name}"`)
      names.add(tool.name)
      if (own.has(tool)) return tool
      try {
        return copyToolSchema(tool)
      } catch {
        throw new AssemblyProblem(['tools', index, 'parameters'], 'must be structured-cloneable JSON')
      }
    }),
  )
}

function build(value: unknown, own: ReadonlySet<object>): PromptAssembly {
  if (!isRecord(value))
    throw new AssemblyProblem([], 'must be a PromptAssembly { sections, contexts, variables, tools }')
  const sections = Object.freeze(
    arrayAt(value['sections'], ['sections']).map((entry, index) => textEntry(entry, ['sections', index], true)),
  )
  const contexts: readonly AssembledContext[] = Object.freeze(
    arrayAt(value['contexts'], ['contexts']).map((entry, index) => textEntry(entry, ['contexts', index], false)),
  )
  return { sections, contexts, variables: variablesOf(value['variables']), tools: toolsOf(value['tools'], own) }
}

/**
 * Checks what the `system-prompt/assemble` waterfall resolved with and copies it into fresh frozen
 * objects: only the fields of {@link PromptAssembly}, a variables
 * record with a null prototype, tool `parameters` structured-cloned (schemas this assembly built
 * itself, listed in `own`, are kept as they are).
 *
 * @internal
 * @throws {@link PromptAssemblyError} `INVALID_ASSEMBLY` with the `path` (`sections[0].name`) of the first problem (`''` for the result itself)
 */
export function checkAssembly(value: unknown, own: ReadonlySet<object>): PromptAssembly {
  try {
    return build(value, own)
  } catch (error) {
    const problem = error instanceof AssemblyProblem ? error : new AssemblyProblem([], 'could not be read')
    const path = fieldPath(problem.path)
    throw new PromptAssemblyError({
      code: ErrorCode.INVALID_ASSEMBLY,
      message: `the system-prompt/assemble result is not a valid PromptAssembly: ${path === '' ? 'the result' : path} ${problem.reason}`,
      path,
      ...(error instanceof AssemblyProblem ? {} : { cause: error }),
    })
  }
}
