import type { JsonObject } from '../session/json-value.js'
import type { ScriptedReply } from './scripted-reply.js'

/**
 * A reply with one text block (finish `stop`).
 *
 * @param text - the text
 * @param extra - more reply fields, merged in last
 * @returns the reply
 * @example
 * ```ts
 * scriptedModel([text('hello', { usage: { inputTokens: 3, outputTokens: 1 } })])
 * ```
 */
export function text(text: string, extra: ScriptedReply = {}): ScriptedReply {
  return { text, ...extra }
}

/**
 * A reply with one tool call whose id and raw argument text are given (finish `tool-calls`).
 *
 * @param id - the call id
 * @param name - the tool name
 * @param argumentsJson - the arguments as raw text, sent verbatim (need not be valid JSON)
 * @param extra - more reply fields, merged in last
 * @returns the reply
 */
export function call(id: string, name: string, argumentsJson: string, extra: ScriptedReply = {}): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: argumentsJson }], ...extra }
}

/**
 * A reply with one tool call, its id defaulting to `call_<k>` (finish `tool-calls`).
 *
 * @param name - the tool name
 * @param args - the arguments: an object to `JSON.stringify`, or raw text
 * @param extra - more reply fields, merged in last
 * @returns the reply
 */
export function tool(name: string, args: JsonObject | string, extra: ScriptedReply = {}): ScriptedReply {
  return { toolCalls: [{ name, arguments: args }], ...extra }
}

/**
 * A reply cut short by the output ceiling: one text block, finish `max-tokens`.
 *
 * @param text - the partial text
 * @param extra - more reply fields, merged in last
 * @returns the reply
 */
export function cut(text: string, extra: ScriptedReply = {}): ScriptedReply {
  return { text, finish: 'max-tokens', ...extra }
}

/**
 * A reply that finishes with a failure (`retryable` and `phase` get the scripted model's defaults).
 *
 * @param code - the failure code, e.g. `'RATE_LIMIT'`
 * @param message - the message; default `'scripted failure <code>'`
 * @param extra - more reply fields, merged in last
 * @returns the reply
 */
export function fail(code: string, message?: string, extra: ScriptedReply = {}): ScriptedReply {
  return { failure: message === undefined ? { code } : { code, message }, ...extra }
}

/**
 * A reply that emits the start and delta of a text block, then waits for the abort.
 *
 * @param text - the partial text
 * @returns the reply
 */
export function hang(text = 'partial'): ScriptedReply {
  return { text, hang: true }
}
