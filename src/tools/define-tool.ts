import { type ZodType, z } from 'zod'
import { ToolDefinitionError } from '../errors/tool-definition-error.js'
import type { JsonObject } from '../session/json-value.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'
import type { JsonSchemaObject, ToolDefinition, ToolSpec } from './tool-definition.js'
import { thrownMessage } from './tool-error-result.js'

const NAME = /^[A-Za-z0-9_-]{1,64}$/
const CALLBACKS = ['isConcurrencySafe', 'needsApproval'] as const
const KNOWN_KEYS: ReadonlySet<PropertyKey> = new Set([
  'name',
  'description',
  'input',
  'timeoutMs',
  'execute',
  ...CALLBACKS,
])

/** Whether `value` looks like a zod v4 schema (classic or mini): it has `_zod` internals and `safeParseAsync`. */
function isZodSchema(value: object): value is ZodType {
  const candidate = value as { _zod?: unknown; safeParseAsync?: unknown }
  return typeof candidate._zod === 'object' && candidate._zod !== null && typeof candidate.safeParseAsync === 'function'
}

/** Whether `value` looks like a zod v3 schema, which `z.toJSONSchema` cannot read. */
function isZodThreeSchema(value: object): boolean {
  const candidate = value as { _def?: unknown; safeParse?: unknown }
  return typeof candidate._def === 'object' && typeof candidate.safeParse === 'function'
}

/** A short rendering of an offending value for a message: strings quoted (cut at 80), numbers as written, else the kind. */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null)
    return String(value)
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

function describeType(schema: JsonObject): string {
  const type = schema['type']
  return type === undefined ? 'no root type' : `root type ${JSON.stringify(type)}`
}

/** The JSON Schema the model sees: `schema` without its top-level `$schema`, deep-frozen. */
function withoutDialect(schema: JsonObject): JsonSchemaObject {
  if (!Object.hasOwn(schema, '$schema')) return schema
  const { $schema: _dialect, ...rest } = schema
  return Object.freeze(rest)
}

/** The input converted and checked: the (frozen) input to keep, its kind, and the model's JSON Schema. */
interface CheckedInput {
  readonly input: ZodType | JsonSchemaObject
  readonly inputKind: 'zod' | 'json-schema'
  readonly parameters: JsonSchemaObject
}

function checkInput(input: unknown, toolName: string): CheckedInput {
  const fail = (reason: string, cause?: unknown): never => {
    throw new ToolDefinitionError({
      toolName,
      field: 'input',
      value: input,
      reason,
      ...(cause === undefined ? {} : { cause }),
    })
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return fail('must be a zod v4 schema or a JSON Schema object')
  }
  if (isZodSchema(input)) {
    let converted: unknown
    try {
      // Only the enumerable keys: zod adds a non-enumerable `~standard` (Standard Schema) to the root.
      converted = Object.fromEntries(
        Object.entries(z.toJSONSchema(input, { target: 'draft-07', io: 'input', unrepresentable: 'throw' })),
      )
    } catch (error) {
      return fail(`cannot be converted to JSON Schema: ${thrownMessage(error)}`, error)
    }
    let schema: JsonObject
    try {
      schema = snapshotJson(converted, 'input') as JsonObject
    } catch (error) {
      return fail(`converts to a JSON Schema that is not lossless JSON: ${thrownMessage(error)}`, error)
    }
    if (schema['type'] !== 'object')
      return fail(`must describe an object (root type "object"), got ${describeType(schema)}`)
    return { input, inputKind: 'zod', parameters: withoutDialect(schema) }
  }
  if (isZodThreeSchema(input)) return fail('is a zod v3 schema; defineTool needs zod v4 (or a JSON Schema object)')
  let object: JsonObject
  try {
    // `input` is a non-array object here, so its copy is a JSON object.
    object = snapshotJson(input, 'input') as JsonObject
  } catch (error) {
    return fail(`must be a lossless-JSON plain object: ${thrownMessage(error)}`, error)
  }
  if (object['type'] !== 'object')
    return fail(`must describe an object (root type "object"), got ${describeType(object)}`)
  // A raw schema is sent as it is, `$schema` included; only zod's output loses it.
  return { input: object, inputKind: 'json-schema', parameters: object as JsonSchemaObject }
}

/**
 * Declares a tool: validates every field, computes the JSON Schema the model sees
 * once, and returns a frozen, inert declaration (registering it is what makes it visible). With a
 * zod v4 `input`, `args` is typed `z.output<typeof input>` and validated on each call; a raw JSON
 * Schema `input` is sent as is and its arguments are not validated.
 *
 * @example
 * ```ts
 * const read = defineTool({
 *   name: 'read',
 *   description: 'Read a file',
 *   input: z.object({ path: z.string() }),
 *   execute: async ({ path }) => readFile(path, 'utf8'),
 * })
 * ```
 *
 * @param spec - the declaration: `name`, `description`, `input`, `execute`, and optionally
 *   `isConcurrencySafe`, `needsApproval`, `timeoutMs`
 * @returns the frozen definition, with `parameters` (deep-frozen JSON Schema, no `$schema`) and `inputKind`
 * @throws {@link ToolDefinitionError} `INVALID_TOOL_DEFINITION` naming the `field` and `value`
 *   (a bad name, an empty description, an input that is not an object schema or cannot be
 *   converted — the conversion error as `cause` —, a timeout that is not positive finite, a
 *   callback that is not a function, or any other key)
 */
export function defineTool<Input extends ZodType | JsonSchemaObject>(spec: ToolSpec<Input>): ToolDefinition<Input> {
  if (typeof spec !== 'object' || spec === null) {
    throw new ToolDefinitionError({
      field: 'spec',
      value: spec,
      reason: `must be an object (got ${describeValue(spec)})`,
    })
  }
  const source = spec as unknown as Record<PropertyKey, unknown>
  const name = source['name']
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new ToolDefinitionError({
      field: 'name',
      value: name,
      reason: `must be 1-64 characters of [A-Za-z0-9_-] (got ${describeValue(name)})`,
    })
  }
  for (const key of Reflect.ownKeys(spec)) {
    if (!KNOWN_KEYS.has(key)) {
      throw new ToolDefinitionError({
        toolName: name,
        field: String(key),
        value: source[key],
        reason: 'is not a tool definition field',
      })
    }
  }
  const description = source['description']
  if (typeof description !== 'string' || description.length === 0) {
    throw new ToolDefinitionError({
      toolName: name,
      field: 'description',
      value: description,
      reason: `must be a non-empty string (got ${describeValue(description)})`,
    })
  }
  const checked = checkInput(source['input'], name)
  const timeoutMs = source['timeoutMs']
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
    throw new ToolDefinitionError({
      toolName: name,
      field: 'timeoutMs',
      value: timeoutMs,
      reason: `must be a positive finite number of milliseconds (got ${describeValue(timeoutMs)})`,
    })
  }
  const execute = source['execute']
  if (typeof execute !== 'function') {
    throw new ToolDefinitionError({
      toolName: name,
      field: 'execute',
      value: execute,
      reason: `must be a function (got ${describeValue(execute)})`,
    })
  }
  const callbacks: Record<string, unknown> = {}
  for (const key of CALLBACKS) {
    const callback = source[key]
    if (callback === undefined) continue
    if (typeof callback !== 'function') {
      throw new ToolDefinitionError({
        toolName: name,
        field: key,
        value: callback,
        reason: `must be a function (got ${describeValue(callback)})`,
      })
    }
    callbacks[key] = callback
  }
  return Object.freeze({
    name,
    description,
    input: checked.input,
    ...callbacks,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    execute,
    parameters: checked.parameters,
    inputKind: checked.inputKind,
  }) as unknown as ToolDefinition<Input>
}
