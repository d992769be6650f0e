import type { ZodType } from 'zod'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { fieldPath } from '../errors/issue.js'
import type { ToolDefinition } from './tool-definition.js'
import { thrownMessage } from './tool-error-result.js'

/** {@link parseToolArguments} succeeded. */
export interface ParsedToolArgumentsSuccess {
  /** Always `true`. */
  readonly ok: true
  /** The tool's `args`: the parsed object, or a zod tool's parsed output (defaults, transforms applied). */
  readonly args: unknown
}

/** {@link parseToolArguments} failed: the call is answered `INVALID_ARGUMENTS`. */
export interface ParsedToolArgumentsFailure {
  /** Always `false`. */
  readonly ok: false
  /** The `INVALID_ARGUMENTS` message. */
  readonly message: string
}

/** The outcome of {@link parseToolArguments}: the tool's `args`, or the `INVALID_ARGUMENTS` message. */
export type ParsedToolArguments = ParsedToolArgumentsSuccess | ParsedToolArgumentsFailure

/** One schema issue, as zod reports it; only the fields the message uses. */
export interface ToolSchemaIssue {
  /** Where the issue is; empty for the root. */
  readonly path: readonly PropertyKey[]
  /** What is wrong. */
  readonly message: string
}

/**
 * Formats schema issues as `<path or (root)>: <message>`, the path dot-joined, joined by `; `.
 *
 * @param issues - the zod issues, in zod's order
 * @returns the issue list of an `INVALID_ARGUMENTS` message
 * @throws {@link InvalidArgumentError} `argument: 'issues'` when `issues` is not an array, or
 *   `argument: 'issues[<i>]'` for an entry that is not `{ path: PropertyKey[], message: string }`
 */
export function formatSchemaIssues(issues: readonly ToolSchemaIssue[]): string {
  if (!Array.isArray(issues as unknown))
    throw new InvalidArgumentError({
      argument: 'issues',
      reason: 'must be an array of { path, message }',
      value: issues,
    })
  issues.forEach((issue: unknown, index) => {
    const record = issue as Partial<ToolSchemaIssue> | null
    if (
      typeof record !== 'object' ||
      record === null ||
      !Array.isArray(record.path) ||
      typeof record.message !== 'string'
    ) {
      throw new InvalidArgumentError({
        argument: `issues[${index}]`,
        reason: 'must be { path: PropertyKey[], message: string }',
        value: issue,
      })
    }
  })
  return issues
    .map((issue) => `${issue.path.length === 0 ? '(root)' : fieldPath(issue.path)}: ${issue.message}`)
    .join('; ')
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Parses and validates a call's raw argument text. `''` is `{}`;
 * anything else goes through `JSON.parse` and must give a JSON object. A zod tool's arguments
 * then go through `input.safeParseAsync`, whose output (defaults, transforms applied) is `args`;
 * a raw JSON Schema tool gets the parsed object unvalidated. Bad argument text never rejects: a
 * schema whose refinement throws counts as a mismatch at `(root)` with the thrown message.
 *
 * @example
 * ```ts
 * const parsed = await parseToolArguments('{"path":"a.txt"}', readTool)
 * if (parsed.ok) console.log(parsed.args) // { path: 'a.txt' }
 * else console.log(parsed.message) // the INVALID_ARGUMENTS message
 * ```
 *
 * @param raw - the model's argument text, verbatim
 * @param definition - the tool the call resolved to
 * @returns `{ ok: true, args }`, or `{ ok: false, message }` with the `INVALID_ARGUMENTS` message
 * @throws {@link InvalidArgumentError} (as a rejection) `argument: 'raw'` when `raw` is not a
 *   string, `argument: 'definition'` when `definition` is not a tool definition object
 */
export async function parseToolArguments(raw: string, definition: ToolDefinition): Promise<ParsedToolArguments> {
  const parsed = parseArgumentText(raw, definition)
  if (!parsed.ok || definition.inputKind !== 'zod') return parsed
  const mismatch = mismatchPrefix(definition)
  try {
    const outcome = await (definition.input as ZodType).safeParseAsync(parsed.args)
    if (outcome.success) return { ok: true, args: outcome.data }
    return { ok: false, message: mismatch + formatSchemaIssues(outcome.error.issues) }
  } catch (error) {
    return { ok: false, message: `${mismatch}(root): ${thrownMessage(error)}` }
  }
}

/**
 * {@link parseToolArguments} without awaiting: a zod tool's arguments go through `safeParse`, so a
 * schema with an asynchronous refinement or transform counts as a mismatch (zod refuses to run it
 * synchronously). For classifying a call, where failing closed is the safe answer.
 *
 * @internal
 * @param raw - the model's argument text, verbatim
 * @param definition - the tool the call resolved to
 * @returns `{ ok: true, args }`, or `{ ok: false, message }`
 * @throws {@link InvalidArgumentError} as {@link parseToolArguments} rejects
 */
export function parseToolArgumentsSync(raw: string, definition: ToolDefinition): ParsedToolArguments {
  const parsed = parseArgumentText(raw, definition)
  if (!parsed.ok || definition.inputKind !== 'zod') return parsed
  const mismatch = mismatchPrefix(definition)
  try {
    const outcome = (definition.input as ZodType).safeParse(parsed.args)
    if (outcome.success) return { ok: true, args: outcome.data }
    return { ok: false, message: mismatch + formatSchemaIssues(outcome.error.issues) }
  } catch (error) {
    return { ok: false, message: `${mismatch}(root): ${thrownMessage(error)}` }
  }
}

function mismatchPrefix(definition: ToolDefinition): string {
  return `arguments for "${definition.name}" do not match its input schema: `
}

/** The argument text as a JSON object (`''` is `{}`), before any schema; throws for a bad `raw` or `definition`. */
function parseArgumentText(raw: string, definition: ToolDefinition): ParsedToolArguments {
  if (typeof raw !== 'string')
    throw new InvalidArgumentError({ argument: 'raw', reason: 'must be the argument text (a string)', value: raw })
  if (typeof definition !== 'object' || definition === null || typeof definition.name !== 'string') {
    throw new InvalidArgumentError({
      argument: 'definition',
      reason: 'must be a tool definition (an object with a string name)',
      value: definition,
    })
  }
  const notObject = { ok: false, message: `arguments for "${definition.name}" are not a valid JSON object` } as const
  let parsed: unknown
  if (raw === '') parsed = {}
  else {
    try {
      parsed = JSON.parse(raw)
    } catch {
      return notObject
    }
  }
  return isPlainObject(parsed) ? { ok: true, args: parsed } : notObject
}
