import { type ZodType, z } from 'zod'
import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { fieldPath } from '../errors/issue.js'
import type { OutputIssue } from '../errors/output-validation-error.js'
import { SessionEventError } from '../errors/session-event-error.js'
import type { JsonObject, JsonValue } from '../session/json-value.js'
import type { ResponseFormat } from '../session/response-format.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'

/**
 * What `agent.run(input, { output })` accepts: a zod schema (its input side is sent to the model
 * as JSON Schema, and `result.output` is its parsed output) or a JSON Schema object (checked with
 * zod's JSON Schema reader; `result.output` is the parsed JSON).
 */
export type OutputSchema = ZodType | JsonObject

/** A schema's parsed value: the output type of a zod schema, any JSON value for a JSON Schema. */
export type OutputOf<S extends OutputSchema> = S extends ZodType<infer Output> ? Output : JsonValue

/** The outcome of checking one answer. */
export type OutputCheck =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly issues: readonly OutputIssue[] }

/** A run's output contract: what the request carries and how an answer is checked. */
export interface OutputSpec {
  /** The request's `responseFormat`, deep-frozen. */
  readonly responseFormat: ResponseFormat
  /** Checks a parsed JSON value against the schema. */
  readonly validate: (value: unknown) => OutputCheck
}

/** `{ name: z.string() }` passed instead of `z.object(...)` fails here too: its values are not JSON. */
const notASchema = 'must be a zod schema or a JSON Schema object'

/**
 * Reads a run's `output` option into its contract.
 *
 * @param value - what the caller passed as `output`
 * @param argument - the option's name for errors, e.g. `'options.output'`
 * @returns the response format and the validator
 * @throws {@link InvalidArgumentError} when `value` is neither a zod schema nor a JSON Schema
 *   object, or cannot be turned into JSON Schema (a zod `z.date()`, an external `$ref`, …)
 * @internal
 */
export function outputSpecOf(value: unknown, argument: string): OutputSpec {
  if (isZodSchema(value)) {
    let schema: Record<string, unknown>
    try {
      schema = z.toJSONSchema(value, { io: 'input' }) as Record<string, unknown>
    } catch (error) {
      throw new InvalidArgumentError({
        argument,
        reason: `has no JSON Schema form (${messageOf(error)})`,
        value,
        cause: error,
      })
    }
    // The dialect marker describes the document, not the answer's shape: the request does without it.
    const { $schema: _dialect, ...shape } = schema
    return {
      responseFormat: Object.freeze({ type: 'json', schema: jsonSchemaOf(shape, argument, value) }),
      validate: (candidate) => zodCheck(value, candidate),
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError({ argument, reason: notASchema, value })
  }
  return outputSpecFromFormat(Object.freeze({ type: 'json', schema: jsonSchemaOf(value, argument, value) }), argument)
}

/**
 * The contract of a logged response format (a resumed turn has no zod schema, only its JSON
 * Schema): answers are checked with zod's JSON Schema reader.
 *
 * @param format - the response format
 * @param argument - the name errors use
 * @returns the contract
 * @throws {@link InvalidArgumentError} when the JSON Schema cannot be read
 * @internal
 */
export function outputSpecFromFormat(format: ResponseFormat, argument = 'responseFormat.schema'): OutputSpec {
  let reader: ZodType
  try {
    reader = z.fromJSONSchema(format.schema as Parameters<typeof z.fromJSONSchema>[0])
  } catch (error) {
    throw new InvalidArgumentError({
      argument,
      reason: `is not a JSON Schema this library can check answers with (${messageOf(error)})`,
      value: format.schema,
      cause: error,
    })
  }
  return { responseFormat: format, validate: (candidate) => zodCheck(reader, candidate) }
}

/**
 * Checks an answer's text: it must be JSON (a single surrounding Markdown code fence is tolerated,
 * as models add one when a provider has no response-format field) matching the schema.
 *
 * @param text - the answer's text
 * @param spec - the output contract
 * @returns the parsed value, or the issues (`path: ''` when the text is not JSON)
 * @internal
 */
export function checkAnswer(text: string, spec: OutputSpec): OutputCheck {
  let parsed: unknown
  try {
    parsed = JSON.parse(unfenced(text))
  } catch (error) {
    const detail = text.trim() === '' ? 'is empty, not JSON' : `is not JSON (${messageOf(error)})`
    return { ok: false, issues: [{ path: '', message: detail }] }
  }
  return spec.validate(parsed)
}

/**
 * The text of the repair step's message: the issues, one a line, and what to send instead.
 *
 * @param issues - the issues of the invalid answer
 * @returns the message text
 * @internal
 */
export function repairText(issues: readonly OutputIssue[]): string {
  const lines = issues
    .slice(0, 20)
    .map((issue) => `- ${issue.path === '' ? '(the answer)' : issue.path}: ${issue.message}`)
  if (issues.length > 20) lines.push(`- … and ${issues.length - 20} more`)
  return [
    'Your previous answer does not match the required JSON schema:',
    ...lines,
    'Answer again with only the corrected JSON value, matching the schema.',
  ].join('\n')
}

function isZodSchema(value: unknown): value is ZodType {
  return (
    typeof value === 'object' &&
    value !== null &&
    '_zod' in value &&
    typeof (value as { readonly safeParse?: unknown }).safeParse === 'function'
  )
}

function zodCheck(schema: ZodType, candidate: unknown): OutputCheck {
  const result = schema.safeParse(candidate)
  if (result.success) return { ok: true, value: result.data }
  return {
    ok: false,
    issues: result.error.issues.map((issue) => ({
      path: fieldPath(issue.path),
      message: plainMessage(issue.message),
    })),
  }
}

/** zod says `Invalid input: expected string, received number`; the prefix adds nothing. */
function plainMessage(message: string): string {
  return message.replace(/^Invalid input: /, '')
}

/** A frozen lossless-JSON copy of a JSON Schema object. */
function jsonSchemaOf(schema: unknown, argument: string, given: unknown): JsonObject {
  try {
    return snapshotJson(schema, '') as JsonObject
  } catch (error) {
    if (!SessionEventError.is(error) || error.code !== ErrorCode.NOT_JSON) throw error
    const where = error.path === undefined || error.path === '' ? '' : ` (at ${error.path.replace(/^\./, '')})`
    throw new InvalidArgumentError({
      argument,
      reason: `${notASchema}; it is not JSON${where}`,
      value: given,
      cause: error,
    })
  }
}

function unfenced(text: string): string {
  const trimmed = text.trim()
  const fenced = /^```[A-Za-z0-9_-]*\s*\n([\s\S]*?)\n?```$/.exec(trimmed)
  return fenced === null ? trimmed : (fenced[1] as string)
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
