/**
 * Yoke messages → the AI SDK prompt of one specification version.
 *
 * @module
 */
import type { ImageBlock, TextBlock, ToolResultBlock } from '../session/content-block.js'
import type { Message } from '../session/message.js'
import type { AiSdkSpecificationVersion } from './ai-sdk-language-model.js'
import type { AiSdkMessageState } from './ai-sdk-message-state.js'
import { assistantContent, providerOptionsAt, toolInput } from './replay-parts.js'

/** One prompt message, as plain data; its exact type depends on the specification version. */
export type PromptMessage = Readonly<Record<string, unknown>>

const dataUri = /^data:([^;,]*)(;[^,]*)?,(.*)$/s

/**
 * The image data a provider accepts: the base64 payload of a `data:` URI (providers do not all
 * read `data:` URLs), a `URL` for anything else.
 */
function imageData(block: ImageBlock): { readonly base64: string } | { readonly url: URL } {
  const match = dataUri.exec(block.uri)
  if (match !== null) {
    const payload = match[3] ?? ''
    const base64 = (match[2] ?? '').includes(';base64')
      ? payload
      : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64')
    return { base64 }
  }
  return { url: new URL(block.uri) }
}

function filePart(block: ImageBlock, version: AiSdkSpecificationVersion): PromptMessage {
  const data = imageData(block)
  if (version === 'v4') {
    return {
      type: 'file',
      mediaType: block.mediaType,
      data: 'base64' in data ? { type: 'data', data: data.base64 } : { type: 'url', url: data.url },
    }
  }
  return { type: 'file', mediaType: block.mediaType, data: 'base64' in data ? data.base64 : data.url }
}

function userPart(block: TextBlock | ImageBlock, version: AiSdkSpecificationVersion): PromptMessage {
  return block.type === 'text' ? { type: 'text', text: block.text } : filePart(block, version)
}

/** A tool result's image inside `output: { type: 'content' }`, which each version spells its own way. */
function resultMedia(block: ImageBlock, version: AiSdkSpecificationVersion): PromptMessage {
  const data = imageData(block)
  if (version === 'v2') {
    return 'base64' in data
      ? { type: 'media', data: data.base64, mediaType: block.mediaType }
      : { type: 'text', text: block.uri }
  }
  if (version === 'v3') {
    return 'base64' in data
      ? { type: 'image-data', data: data.base64, mediaType: block.mediaType }
      : { type: 'image-url', url: block.uri }
  }
  return {
    type: 'file',
    mediaType: block.mediaType,
    data: 'base64' in data ? { type: 'data', data: data.base64 } : { type: 'url', url: data.url },
  }
}

function toolOutput(
  content: readonly (TextBlock | ImageBlock)[],
  isError: boolean,
  version: AiSdkSpecificationVersion,
): PromptMessage {
  if (content.every((block) => block.type === 'text')) {
    const value = content.map((block) => (block as TextBlock).text).join('')
    return { type: isError ? 'error-text' : 'text', value }
  }
  // Images need the `content` form, which has no error flag: the text says it failed instead.
  const parts = content.map((block) =>
    block.type === 'text' ? { type: 'text', text: block.text } : resultMedia(block, version),
  )
  return { type: 'content', value: isError ? [{ type: 'text', text: 'The tool call failed.' }, ...parts] : parts }
}

/**
 * Converts the system prompt and the conversation. Tool results go into `tool` messages naming the
 * tool of the call they answer (looked up in the assistant messages before them). An assistant
 * message gets back what its replay state logged: `providerOptions` per block, and the parts no
 * block holds (provider-executed tool calls and results, files, opaque reasoning) at their places.
 *
 * @param system - the system prompt, if any
 * @param messages - the conversation
 * @param version - the model's specification version
 * @returns the prompt
 * @internal
 */
export function toPrompt(
  system: string | undefined,
  messages: readonly Message[],
  version: AiSdkSpecificationVersion,
): PromptMessage[] {
  const prompt: PromptMessage[] = []
  if (system !== undefined && system !== '') prompt.push({ role: 'system', content: system })
  const toolNames = new Map<string, string>()
  for (const message of messages) {
    if (message.role === 'assistant') {
      const blocks = message.content
      const blockPart = (position: number, state: AiSdkMessageState | undefined): PromptMessage => {
        const block = blocks[position] as (typeof blocks)[number]
        const providerOptions = providerOptionsAt(state, position, block.type)
        const options = providerOptions === undefined ? {} : { providerOptions }
        if (block.type === 'tool-call') {
          toolNames.set(block.id, block.name)
          return {
            type: 'tool-call',
            toolCallId: block.id,
            toolName: block.name,
            input: toolInput(block.arguments),
            ...options,
          }
        }
        return { type: block.type, text: block.text, ...options }
      }
      const content = assistantContent(message.source.replayState, blocks.length, blockPart, version)
      prompt.push({ role: 'assistant', content })
    } else if (message.source.kind === 'tool') {
      const [result] = message.content as readonly [ToolResultBlock]
      prompt.push({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: result.toolCallId,
            toolName: toolNames.get(result.toolCallId) ?? 'unknown',
            output: toolOutput(result.content, result.isError === true, version),
          },
        ],
      })
    } else {
      const content = message.content as readonly (TextBlock | ImageBlock)[]
      prompt.push({ role: 'user', content: content.map((block) => userPart(block, version)) })
    }
  }
  return prompt
}
