import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { ToolResultError } from '../session/core-event-types.js'
import type { JsonObject } from '../session/json-value.js'
import type { ToolContentBlock } from './tool-definition.js'
import type { ToolResult, ToolResultCode } from './tool-result.js'

/** The `name` of each result code: the exported `HarnessError` class it stands for. */
const errorNames: Readonly<Record<ToolResultCode, string>> = Object.freeze({
  UNKNOWN_TOOL: 'UnknownToolError',
  INVALID_ARGUMENTS: 'ToolArgumentsError',
  TOOL_DENIED: 'ToolDeniedError',
  TOOL_FAILED: 'ToolFailedError',
  TOOL_TIMEOUT: 'ToolTimeoutError',
  TOOL_ABORTED_BEFORE_DISPATCH: 'ToolAbortedError',
  TOOL_ABORTED: 'ToolAbortedError',
  TOOL_SCHEDULER_FAILED: 'ToolSchedulerError',
})

/** What {@link toolErrorResult} may carry besides the error text. */
export interface ToolErrorExtras {
  /** Tool-specific facts to keep on the result (e.g. `yoke:abandoned`). */
  readonly meta?: JsonObject | undefined
  /** Additional contexts to keep (e.g. a body's contexts on `TOOL_ABORTED`). */
  readonly additionalContexts?: readonly (string | readonly ToolContentBlock[])[] | undefined
}

/**
 * The error `name` a result code stands for.
 *
 * @param code - a result code
 * @returns the error class name, e.g. `'UnknownToolError'` for `UNKNOWN_TOOL`
 */
export function toolErrorName(code: ToolResultCode): string {
  return errorNames[code]
}

/**
 * A runtime error result: content `[text "Tool error (<CODE>): <message>"]`,
 * `isError: true`, `error: { code, message }`, not concluding the turn. The result, its content and
 * its context list are frozen.
 *
 * @example
 * ```ts
 * toolErrorResult('UNKNOWN_TOOL', 'no tool named "nope" is available')
 * // content: [{ type: 'text', text: 'Tool error (UNKNOWN_TOOL): no tool named "nope" is available' }]
 * ```
 *
 * @param code - the result code
 * @param message - the message (the text after `Tool error (<CODE>): `)
 * @param extra - meta and additional contexts to keep
 * @returns the frozen error result
 */
export function toolErrorResult(code: ToolResultCode, message: string, extra?: ToolErrorExtras): ToolResult {
  const text: ToolContentBlock = Object.freeze({ type: 'text', text: `Tool error (${code}): ${message}` })
  return Object.freeze({
    content: Object.freeze([text]),
    isError: true,
    error: Object.freeze({ code, message }),
    ...(extra?.meta === undefined ? {} : { meta: extra.meta }),
    concludesTurn: false,
    additionalContexts: Object.freeze([...(extra?.additionalContexts ?? [])]),
  })
}

/** Whether `value` is an `Error` of any realm; a trap that throws while looking counts as not. */
function isError(value: unknown): value is Error {
  try {
    return value instanceof Error || Object.prototype.toString.call(value) === '[object Error]'
  } catch {
    return false
  }
}

/**
 * The `TOOL_FAILED` message for a thrown value: an `Error`'s message (a
 * `HarnessError`'s too), `String(value)` for anything else, `(unprintable thrown value)` when
 * that throws (a hostile Proxy, an object whose `toString` throws). Never throws.
 *
 * @param value - what a tool body or wrapper threw
 * @returns the message
 */
export function thrownMessage(value: unknown): string {
  if (isError(value)) {
    try {
      const message: unknown = value.message
      if (typeof message === 'string') return message
    } catch {
      // A throwing `message` getter falls through to String(value).
    }
  }
  try {
    return String(value)
  } catch {
    return '(unprintable thrown value)'
  }
}

/**
 * The durable `tool/result.error` of a result: `{ name, code }` of its runtime
 * error, `{ name: 'ToolFailedError', code: 'TOOL_FAILED' }` for a tool's own `isError` result,
 * `undefined` for a success.
 *
 * @param result - a normalized result
 * @returns the `{ name, code }` pair, or `undefined`
 * @throws {@link InvalidArgumentError} `argument: 'result'` when `result` is not an object
 */
export function resultErrorOf(result: ToolResult): ToolResultError | undefined {
  if (typeof result !== 'object' || result === null) {
    throw new InvalidArgumentError({ argument: 'result', reason: 'must be a tool result object', value: result })
  }
  if (!result.isError) return undefined
  const code = result.error?.code ?? 'TOOL_FAILED'
  return { name: toolErrorName(code), code }
}
