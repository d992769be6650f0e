import { checkContent, type Checked, checkObject, invalid, isBrandedToolResult, ok } from './check-tool-result.js'
import { isPlainObject } from '../kernel/is-plain-object.js'
import type { ToolContentBlock } from './tool-definition.js'
import { thrownMessage, toolErrorResult } from './tool-error-result.js'
import { toolJsonText } from './tool-json-text.js'
import type { ToolResult } from './tool-result.js'

/** Options of {@link normalizeToolReturn}. */
export interface NormalizeToolReturnOptions {
  /**
   * Read `value` as a middleware's output rather than a tool body's return: the normalized
   * {@link ToolResult} object form (which may carry `error: { code, message }` on an
   * `isError: true` result), content blocks, a string or `undefined`. A body's return is read as
   * JSON unless it was made by `toolResult()`.
   *
   * @default false
   */
  readonly allowError?: boolean
}

/** Why a {@link normalizeToolReturn} failed: the TOOL_FAILED message after the tool's name. */
type Failure = { readonly ok: false; readonly problem: string }

const INVALID_RESULT = 'returned an invalid result'
const NOT_JSON = 'returned a value that is not JSON'

function success(content: readonly ToolContentBlock[]): ToolResult {
  return Object.freeze({ content, isError: false, concludesTurn: false, additionalContexts: Object.freeze([]) })
}

function textResult(text: string): ToolResult {
  return success(Object.freeze([Object.freeze({ type: 'text', text } as const)]))
}

/** A middleware's output: the result forms only. */
function checkMiddlewareOutput(value: unknown): Checked<ToolResult> {
  if (value === undefined) return ok(success(Object.freeze([])))
  if (typeof value === 'string' || Array.isArray(value)) {
    const content = checkContent(value)
    return content.ok ? ok(success(content.value)) : content
  }
  if (isPlainObject(value)) return checkObject(value, true)
  const kind = value === null ? 'null' : typeof value === 'object' ? 'a non-plain object' : `a ${typeof value}`
  return invalid(`${kind} is not a tool result (expected undefined, a string, content blocks or { content, … })`)
}

/** A body's return: nothing, text, a `toolResult()`, or JSON. `kind` tells which message prefix a failure takes. */
function checkBodyReturn(value: unknown): Checked<ToolResult> | (Failure & { readonly kind: 'json' }) {
  if (value === undefined) return ok(success(Object.freeze([])))
  if (typeof value === 'string') return ok(textResult(value))
  // Re-checked: a result made by another loaded copy of the package is trusted no further than its fields.
  if (isBrandedToolResult(value)) return checkObject(value, false)
  const json = toolJsonText(value)
  if (json.ok) return ok(textResult(json.text))
  const where = json.path === '' ? 'the value' : json.path
  return { ok: false, kind: 'json', problem: `${where} is ${json.problem}` }
}

/**
 * Normalizes what a tool body (or, with `allowError`, a middleware) returned into a frozen
 * {@link ToolResult}, and never throws, even for a hostile value.
 *
 * A body's return: `undefined` → no content; a string → one text block; a `toolResult()` value →
 * its fields; any other value → one text block holding its compact JSON text, when it is plain
 * JSON. A value that is not (a function, a bigint, a cycle, a class instance such as a `Date`, a
 * non-finite number) is a `TOOL_FAILED` result naming its path:
 * `"query" returned a value that is not JSON: rows[2].when is a Date instance, not a plain object`.
 *
 * A middleware's output: `undefined`, a string, text and image blocks, or the object form with
 * `content`, `isError?`, `error?`, `meta?` (a lossless-JSON plain object), `concludesTurn?` and
 * `additionalContexts?`, and no other key; a bad field is a `TOOL_FAILED` result naming it
 * (`"read" returned an invalid result: meta is not a plain JSON object`). Blocks and `meta` are copied.
 *
 * @example
 * ```ts
 * normalizeToolReturn({ rows: [1, 2] }, 'query').content // [{ type: 'text', text: '{"rows":[1,2]}' }]
 * ```
 *
 * @param value - the returned value
 * @param toolName - the tool's name, for the message
 * @param options - `allowError` to read a middleware's output
 * @returns the frozen result
 */
export function normalizeToolReturn(
  value: unknown,
  toolName: string,
  options?: NormalizeToolReturnOptions,
): ToolResult {
  let checked: Checked<ToolResult> | (Failure & { readonly kind: 'json' })
  try {
    checked = options?.allowError === true ? checkMiddlewareOutput(value) : checkBodyReturn(value)
  } catch (error) {
    checked = invalid(`reading it threw: ${thrownMessage(error)}`)
  }
  if (checked.ok) return checked.value
  const verb = 'kind' in checked ? NOT_JSON : INVALID_RESULT
  return toolErrorResult('TOOL_FAILED', `"${toolName}" ${verb}: ${checked.problem}`)
}
