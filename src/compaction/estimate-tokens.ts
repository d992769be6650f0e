import type { Message } from '../session/message.js'
import type { ToolSchema } from '../session/request-header.js'

/** What an estimator counts besides the messages: the folded header's `system` and `tools`. */
export interface EstimateContext {
  /** The system prompt. */
  readonly system?: string
  /** The tools offered. */
  readonly tools?: readonly ToolSchema[]
}

/**
 * A token estimator: the size of a request made of `messages` plus the
 * context. The `estimator` option of `basicCompaction` replaces the heuristic with one.
 */
export type TokenEstimator = (messages: readonly Message[], context: EstimateContext) => number

/** The tokens an image block adds to the heuristic. */
export const IMAGE_TOKENS = 1000

/**
 * The heuristic size of one message: `4 + ceil(chars / 4)`, where `chars` sums the UTF-16 length of
 * text and reasoning, tool-call `name` + `arguments` and tool-result inner text; each image adds
 * {@link IMAGE_TOKENS}.
 *
 * @param message - a model-history message
 * @returns tokens
 */
export function messageTokens(message: Message): number {
  let chars = 0
  let images = 0
  for (const block of message.content) {
    if (block.type === 'text' || block.type === 'reasoning') chars += block.text.length
    else if (block.type === 'tool-call') chars += block.name.length + block.arguments.length
    else if (block.type === 'image') images++
    else if (block.type === 'tool-result') {
      for (const inner of block.content) {
        if (inner.type === 'text') chars += inner.text.length
        else images++
      }
    }
  }
  return 4 + Math.ceil(chars / 4) + images * IMAGE_TOKENS
}

/**
 * The heuristic size of the non-message part of a request: `ceil(system.length / 4)` plus
 * `ceil(JSON.stringify(tools).length / 4)` (no tools count 0).
 *
 * @param context - the system prompt and tools
 * @returns tokens
 */
export function headerTokens(context: EstimateContext): number {
  const system = context.system === undefined ? 0 : Math.ceil(context.system.length / 4)
  const tools =
    context.tools === undefined || context.tools.length === 0 ? 0 : Math.ceil(JSON.stringify(context.tools).length / 4)
  return system + tools
}

/**
 * The default estimator of `basicCompaction`: `ceil(system.length / 4)` plus
 * `ceil(JSON.stringify(tools).length / 4)`, plus per message `4 + ceil(chars / 4)` (text,
 * reasoning, tool-call name and arguments, tool-result text) and 1000 per image.
 *
 * @param messages - the messages
 * @param context - the system prompt and tools
 * @returns tokens
 * @example
 * ```ts
 * heuristicEstimate([{ id: 'm', role: 'user', content: [{ type: 'text', text: 'hello' }], source: { kind: 'user' } }], {}) // 6
 * ```
 */
export function heuristicEstimate(messages: readonly Message[], context: EstimateContext): number {
  let total = headerTokens(context)
  for (const message of messages) total += messageTokens(message)
  return total
}
