import type { JsonObject, JsonValue } from '../../session/json-value.js'
import type { TokenUsage } from '../../session/stream-chunk.js'
import type { ScriptedReply } from '../scripted-reply.js'

/** What a rendered reply's chunk events share: the `id`, `model` and the server's tool-call ids. */
export interface RenderContext {
  /** The accepted request number (1-based): the chunks' `id` is `chatcmpl-<n>`. */
  readonly requestNumber: number
  /** The `model` of the request body, echoed in every chunk. */
  readonly model: string
  /** Whether the request asked `stream_options.include_usage`. */
  readonly includeUsage: boolean
  /** Counts one more tool call and returns its number `k` (from 1, across the server's script). */
  readonly nextToolCallNumber: () => number
}

/** The SSE data (JSON text, without `data: `) of one reply, split where faults cut it. */
export interface RenderedReply {
  /** The events before the finish: the role delta, reasoning, content and tool-call fragments. */
  readonly body: readonly string[]
  /** The final empty delta with its `finish_reason`. */
  readonly finish: string
  /** The `choices: []` usage event, when asked for and the reply has usage. */
  readonly usage: string | undefined
}

const finishReasons = { stop: 'stop', 'tool-calls': 'tool_calls', 'max-tokens': 'length' } as const

/**
 * Splits a string into pieces of `size` code points (the whole string when `size` is absent);
 * an empty string gives no piece.
 *
 * @param text - the string
 * @param size - the piece length in code points
 * @returns the pieces, none empty
 */
export function splitCodePoints(text: string, size: number | undefined): string[] {
  if (text === '') return []
  if (size === undefined) return [text]
  const points = Array.from(text)
  const pieces: string[] = []
  for (let start = 0; start < points.length; start += size) pieces.push(points.slice(start, start + size).join(''))
  return pieces
}

/**
 * One `chat.completion.chunk` event's JSON text.
 *
 * @param context - the request's id and model
 * @param delta - the choice's delta
 * @param finishReason - the choice's `finish_reason`
 * @returns the JSON text
 */
export function chunkEvent(context: RenderContext, delta: JsonObject, finishReason: string | null): string {
  return JSON.stringify({
    id: `chatcmpl-${context.requestNumber}`,
    object: 'chat.completion.chunk',
    created: 0,
    model: context.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  })
}

function usageObject(usage: TokenUsage): JsonObject {
  const promptTokens = usage.inputTokens + (usage.cacheReadTokens ?? 0)
  const result: Record<string, JsonValue> = {
    prompt_tokens: promptTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: promptTokens + usage.outputTokens,
  }
  if (usage.cacheReadTokens !== undefined) result['prompt_tokens_details'] = { cached_tokens: usage.cacheReadTokens }
  if (usage.reasoningTokens !== undefined) {
    result['completion_tokens_details'] = { reasoning_tokens: usage.reasoningTokens }
  }
  return result
}

/**
 * Renders a {@link ScriptedReply} as OpenAI chat-completion SSE data: a
 * `{ role: 'assistant' }` delta, `reasoning_content` deltas, `content` deltas, `tool_calls`
 * fragments (the first of each call with `id`, `type` and `function.name`; ids default to
 * `call_<k>`, `k` counting every tool call rendered), the final empty delta
 * with `finish_reason`, then the usage event. `chunkSize` splits every string; `failure`, `hang`
 * and `chunks` are not used.
 *
 * @param reply - the reply
 * @param context - the request's id, model, usage wish and the tool-call id counter
 * @returns the events, split into body, finish and usage
 */
export function renderReplyEvents(reply: ScriptedReply, context: RenderContext): RenderedReply {
  const size = reply.chunkSize
  const body: string[] = [chunkEvent(context, { role: 'assistant' }, null)]
  for (const piece of splitCodePoints(reply.reasoning ?? '', size)) {
    body.push(chunkEvent(context, { reasoning_content: piece }, null))
  }
  for (const piece of splitCodePoints(reply.text ?? '', size)) body.push(chunkEvent(context, { content: piece }, null))
  const toolCalls = reply.toolCalls ?? []
  toolCalls.forEach((call, index) => {
    const number = context.nextToolCallNumber()
    const id = call.id ?? `call_${number}`
    const text =
      call.arguments === undefined
        ? '{}'
        : typeof call.arguments === 'string'
          ? call.arguments
          : JSON.stringify(call.arguments)
    const [first = '', ...rest] = splitCodePoints(text, size)
    const opening = { index, id, type: 'function', function: { name: call.name, arguments: first } }
    body.push(chunkEvent(context, { tool_calls: [opening] }, null))
    for (const piece of rest)
      body.push(chunkEvent(context, { tool_calls: [{ index, function: { arguments: piece } }] }, null))
  })
  const finish = finishReasons[reply.finish ?? (toolCalls.length > 0 ? 'tool-calls' : 'stop')]
  const usage =
    context.includeUsage && reply.usage !== undefined
      ? JSON.stringify({
          id: `chatcmpl-${context.requestNumber}`,
          object: 'chat.completion.chunk',
          created: 0,
          model: context.model,
          choices: [],
          usage: usageObject(reply.usage),
        })
      : undefined
  return { body, finish: chunkEvent(context, {}, finish), usage }
}
