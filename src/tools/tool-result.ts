import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { isPlainObject } from '../kernel/is-plain-object.js'
import { checkObject, toolResultBrand } from './check-tool-result.js'
import type { ToolResultInit } from './tool-definition.js'
import type { ToolResult } from './tool-result-shape.js'

export type {
  ToolContextMessage,
  ToolResult,
  ToolResultCode,
  ToolResultFailure,
  ToolStepOutcome,
} from './tool-result-shape.js'

/**
 * Makes the rich result of a tool body: content blocks (text and images), `isError`, `meta`,
 * `concludesTurn`, `additionalContexts`. Only a value made here is read as a rich result; a plain
 * object a body returns is JSON for the model, even one with a `content` key. The fields are
 * checked and copied at once, and the result is frozen.
 *
 * @example
 * ```ts
 * const search = defineTool({
 *   name: 'search',
 *   description: 'Search the docs',
 *   input: z.object({ query: z.string() }),
 *   execute: async ({ query }) => {
 *     const hits = await index.search(query)
 *     if (hits.length === 0) return toolResult({ content: 'nothing found', isError: true })
 *     return toolResult({ content: hits.map((hit) => hit.title).join('\n'), meta: { count: hits.length } })
 *   },
 * })
 * ```
 *
 * @param init - `content` (a string or text and image blocks) and optionally `isError`, `meta` (a
 *   lossless-JSON plain object, logged but never sent), `concludesTurn` and `additionalContexts`
 * @returns the frozen result, to return from the body
 * @throws {@link InvalidArgumentError} `argument: 'result'`, its reason naming the field (`meta is
 *   not a plain JSON object`, `content[1] is a "reasoning" block; only text and image blocks are
 *   allowed`, `foo is not a result field`); thrown in a body, it fails the call with `TOOL_FAILED`
 */
export function toolResult(init: ToolResultInit): ToolResult {
  let checked: ReturnType<typeof checkObject>
  try {
    checked = isPlainObject(init)
      ? checkObject(init, false)
      : { ok: false, problem: 'a tool result must be a plain object { content, … }' }
  } catch (error) {
    throw new InvalidArgumentError({ argument: 'result', reason: 'reading it threw', value: init, cause: error })
  }
  if (!checked.ok) throw new InvalidArgumentError({ argument: 'result', reason: checked.problem, value: init })
  const result = { ...checked.value }
  Object.defineProperty(result, toolResultBrand, { value: true })
  return Object.freeze(result)
}
