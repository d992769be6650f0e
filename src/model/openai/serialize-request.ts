/**
 * `ModelRequest` → Chat Completions JSON body.
 *
 * @module
 */
import type { AssistantContentBlock, ImageBlock, TextBlock } from '../../session/content-block.js'
import type { JsonObject, JsonValue } from '../../session/json-value.js'
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../../session/message.js'
import type { ToolChoice } from '../../session/response-format.js'
import type { ModelRequest } from '../model-request.js'
import { systemWithInstruction } from '../response-format-instruction.js'
import type { ReasoningStyle, ResponseFormatStyle } from './openai-options.js'

/**
 * The adapter settings serialization depends on.
 *
 * @internal
 */
export interface SerializeSettings {
  readonly reasoningStyle: ReasoningStyle
  readonly sendReasoning: boolean
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens'
  /** How `responseFormat` goes on the wire; default `'json_schema'`. */
  readonly responseFormatStyle?: ResponseFormatStyle
  /** Send `strict: true` in `json_schema`; default `false`. */
  readonly strictJsonSchema?: boolean
}

/** What OpenAI accepts as a `json_schema` name. */
const schemaNamePattern = /[^A-Za-z0-9_-]/g

function wireToolChoice(choice: ToolChoice): JsonValue {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } }
}

/** The schema name OpenAI accepts (`^[A-Za-z0-9_-]{1,64}$`): other characters become `_`, cut at 64. */
function wireSchemaName(name: string | undefined): string {
  return (name ?? 'output').replace(schemaNamePattern, '_').slice(0, 64)
}

type WireMessage = { [key: string]: JsonValue }
type WirePart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image_url'; readonly image_url: { readonly url: string } }

function joinText(
  blocks: readonly { readonly type: string; readonly text?: string }[],
  type: 'text' | 'reasoning',
): string {
  const texts: string[] = []
  for (const block of blocks) if (block.type === type && block.text !== undefined) texts.push(block.text)
  return texts.join('\n\n')
}

function part(block: TextBlock | ImageBlock): WirePart {
  return block.type === 'text'
    ? { type: 'text', text: block.text }
    : { type: 'image_url', image_url: { url: block.uri } }
}

/**
 * Whether a message is a tool result (a user-role message answering a tool call).
 *
 * @internal
 */
export function isToolResultMessage(message: Message): message is ToolResultMessage {
  return message.role === 'user' && message.source.kind === 'tool'
}

function userMessage(message: UserMessage): WireMessage {
  if (!message.content.some((block) => block.type === 'image'))
    return { role: 'user', content: joinText(message.content, 'text') }
  return { role: 'user', content: message.content.map(part) }
}

function assistantMessage(message: AssistantMessage, settings: SerializeSettings): WireMessage {
  const wire: WireMessage = { role: 'assistant', content: joinText(message.content, 'text') }
  const calls: JsonObject[] = []
  for (const block of message.content as readonly AssistantContentBlock[]) {
    if (block.type === 'tool-call')
      calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: block.arguments } })
  }
  if (calls.length > 0) wire['tool_calls'] = calls
  if (settings.sendReasoning) {
    const reasoning = joinText(message.content, 'reasoning')
    if (reasoning !== '') wire['reasoning_content'] = reasoning
  }
  return wire
}

function toolMessages(run: readonly ToolResultMessage[]): WireMessage[] {
  const wire: WireMessage[] = []
  const images: WirePart[] = []
  for (const message of run) {
    const result = message.content[0]
    const text = joinText(result.content, 'text')
    wire.push({ role: 'tool', tool_call_id: result.toolCallId, content: text === '' ? '(no output)' : text })
    const returned = result.content.filter((block): block is ImageBlock => block.type === 'image')
    if (returned.length > 0) {
      images.push({ type: 'text', text: `Images returned by tool call ${result.toolCallId}:` })
      for (const image of returned) images.push(part(image))
    }
  }
  if (images.length > 0) wire.push({ role: 'user', content: images })
  return wire
}

function wireMessages(request: ModelRequest, settings: SerializeSettings): WireMessage[] {
  const wire: WireMessage[] = []
  // Without a json_schema field the model reads the format as an instruction (json_object needs
  // the word "JSON" in the prompt anyway).
  const format = request.responseFormat
  const system =
    format !== undefined && (settings.responseFormatStyle ?? 'json_schema') !== 'json_schema'
      ? systemWithInstruction(request.system, format)
      : request.system
  if (system !== undefined && system !== '') wire.push({ role: 'system', content: system })
  const messages = request.messages
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!
    if (isToolResultMessage(message)) {
      const run: ToolResultMessage[] = [message]
      while (index + 1 < messages.length && isToolResultMessage(messages[index + 1]!))
        run.push(messages[++index] as ToolResultMessage)
      wire.push(...toolMessages(run))
    } else if (message.role === 'assistant') {
      wire.push(assistantMessage(message, settings))
    } else {
      wire.push(userMessage(message))
    }
  }
  return wire
}

/**
 * Builds the request body, keys in this fixed order: `model`, `stream`,
 * `stream_options`, `messages`, `tools`, `tool_choice`, the max-tokens field, `temperature`,
 * `stop`, `response_format`, then the reasoning keys of the style. `toolChoice` is sent only with
 * tools (`{ name }` as `{ type: 'function', function: { name } }`); `responseFormat` as
 * `json_schema` (`name ?? 'output'`), as `json_object` plus the instruction in the system message,
 * or as the instruction alone, by `responseFormatStyle`. Pure; run the pre-request checks first.
 *
 * @internal
 */
export function serializeRequest(request: ModelRequest, settings: SerializeSettings): JsonObject {
  const body: { [key: string]: JsonValue } = {
    model: request.model,
    stream: true,
    stream_options: { include_usage: true },
    messages: wireMessages(request, settings),
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    body['tools'] = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
  }
  // OpenAI refuses tool_choice without tools; with none there is nothing to choose anyway.
  if (request.toolChoice !== undefined && request.tools !== undefined && request.tools.length > 0)
    body['tool_choice'] = wireToolChoice(request.toolChoice)
  if (request.maxTokens !== undefined) body[settings.maxTokensField] = request.maxTokens
  if (request.temperature !== undefined) body['temperature'] = request.temperature
  if (request.stop !== undefined && request.stop.length > 0) body['stop'] = [...request.stop]
  const format = request.responseFormat
  const formatStyle = settings.responseFormatStyle ?? 'json_schema'
  if (format !== undefined && formatStyle === 'json_schema') {
    const jsonSchema: { [key: string]: JsonValue } = { name: wireSchemaName(format.name), schema: format.schema }
    if (settings.strictJsonSchema === true) jsonSchema['strict'] = true
    body['response_format'] = { type: 'json_schema', json_schema: jsonSchema }
  } else if (format !== undefined && formatStyle === 'json_object') {
    body['response_format'] = { type: 'json_object' }
  }
  const effort = request.reasoningEffort
  if (settings.reasoningStyle === 'openai') {
    if (effort !== undefined && effort !== 'off') body['reasoning_effort'] = effort
  } else if (settings.reasoningStyle === 'deepseek') {
    if (request.metadata.purpose === 'title' || effort === 'off') {
      body['thinking'] = { type: 'disabled' }
    } else if (effort !== undefined) {
      body['thinking'] = { type: 'enabled' }
      body['reasoning_effort'] = effort
    }
  }
  return body
}
