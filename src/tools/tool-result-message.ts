import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { ToolResultMessage } from '../session/message.js'
import type { ToolResult } from './tool-result.js'

/**
 * The tool-result message of a committed result: role `user`,
 * `source { kind: 'tool', callId }`, and one `tool-result` block `{ toolCallId, isError, content }`
 * whose `isError` is always set: `true` for an error result, `false` for a success (never
 * omitted). Frozen, with its own copy of the content list.
 *
 * @example
 * ```ts
 * toolResultMessage('m-7', 'call-1', normalizeToolReturn('done', 'read'))
 * // { id: 'm-7', role: 'user', source: { kind: 'tool', callId: 'call-1' },
 * //   content: [{ type: 'tool-result', toolCallId: 'call-1', isError: false, content: [{ type: 'text', text: 'done' }] }] }
 * ```
 *
 * @param id - the message id (from the harness id source)
 * @param callId - the answered call's id
 * @param result - the result, after post-execute and the size limit
 * @returns the frozen message, ready for `tool/result.message`
 * @throws {@link InvalidArgumentError} `argument: 'id'` or `'callId'` when it is not a string,
 *   `argument: 'result'` for a result without a `content` array
 */
export function toolResultMessage(id: string, callId: string, result: ToolResult): ToolResultMessage {
  if (typeof id !== 'string') throw new InvalidArgumentError({ argument: 'id', reason: 'must be a string', value: id })
  if (typeof callId !== 'string')
    throw new InvalidArgumentError({ argument: 'callId', reason: 'must be a string', value: callId })
  if (typeof result !== 'object' || result === null || !Array.isArray(result.content)) {
    throw new InvalidArgumentError({
      argument: 'result',
      reason: 'must be a tool result with a content array',
      value: result,
    })
  }
  const block = Object.freeze({
    type: 'tool-result',
    toolCallId: callId,
    isError: result.isError,
    content: Object.freeze([...result.content]),
  } as const)
  return Object.freeze({
    id,
    role: 'user',
    content: Object.freeze([block]) as readonly [typeof block],
    source: Object.freeze({ kind: 'tool', callId } as const),
  })
}
