import { normalizeToolReturn } from './normalize-tool-return.js'
import { toolErrorResult } from './tool-error-result.js'
import type { ToolResult, ToolResultCode } from './tool-result.js'

/**
 * The code a result stands for: its runtime error code, `TOOL_FAILED` for a tool's own
 * `isError` result, `undefined` for a success.
 *
 * @internal
 * @param result - a normalized result
 * @returns the code, or `undefined`
 */
export function resultCodeOf(result: ToolResult): ToolResultCode | undefined {
  if (!result.isError) return undefined
  return result.error?.code ?? 'TOOL_FAILED'
}

/**
 * Applies the monotonic rule of `tools/post-execute` to what the waterfall
 * returned for `before`: success → success (anything may change), success → `TOOL_DENIED` (a
 * block), error `X` → error `X` (content and meta may change). Any other output, or one that is
 * not a valid result, gives `TOOL_FAILED` naming the problem.
 *
 * @internal
 * @param before - the result post-execute received
 * @param output - what the waterfall returned
 * @param toolName - the tool's name, for messages
 * @returns the frozen result to commit
 */
export function applyPostExecuteRule(before: ToolResult, output: unknown, toolName: string): ToolResult {
  if (output === before) return before
  const after = normalizeToolReturn(output, toolName, { allowError: true })
  const from = resultCodeOf(before)
  const to = resultCodeOf(after)
  // normalizeToolReturn reports a malformed value as a TOOL_FAILED result with this prefix.
  const invalidPrefix = `"${toolName}" returned an invalid result: `
  const invalidMessage = after.error?.message
  const inherited = from === 'TOOL_FAILED' && before.error?.message === invalidMessage
  if (to === 'TOOL_FAILED' && !inherited && invalidMessage?.startsWith(invalidPrefix) === true) {
    const problem = invalidMessage.slice(invalidPrefix.length)
    return toolErrorResult(
      'TOOL_FAILED',
      `a post-execute listener for "${toolName}" returned an invalid result: ${problem}`,
    )
  }
  if (from === undefined) {
    if (to === undefined || to === 'TOOL_DENIED') return after
    return toolErrorResult(
      'TOOL_FAILED',
      `a post-execute listener for "${toolName}" turned a success into ${to}; only TOOL_DENIED may block a success`,
    )
  }
  if (to === undefined) {
    return toolErrorResult(
      'TOOL_FAILED',
      `a post-execute listener for "${toolName}" turned a result with code ${from} into a success`,
    )
  }
  if (to !== from) {
    return toolErrorResult(
      'TOOL_FAILED',
      `a post-execute listener for "${toolName}" changed the result code ${from} into ${to}`,
    )
  }
  return after
}
