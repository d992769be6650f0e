import type { UserMessageInput } from 'yoke'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { ImageBlock, TextBlock } from '../session/content-block.js'

/** What `useChat` asks for, read from its request body. */
export interface ChatRequest {
  /** The chat id (`useChat({ id })`): the session to run the turn in. */
  readonly id: string
  /**
   * The new user message, ready for `agent.stream(input)`: its text, or its text and images as
   * content blocks. The earlier messages of the body are not read: the session log holds the
   * history.
   */
  readonly input: UserMessageInput
  /** `'submit-message'` for a new message, `'regenerate-message'` to answer the last one again. */
  readonly trigger: 'submit-message' | 'regenerate-message'
  /** The id of the message the client edits or regenerates, when it names one. */
  readonly messageId?: string
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function refuse(argument: string, reason: string, value: unknown): never {
  throw new InvalidArgumentError({ argument, reason, value })
}

function contentOf(parts: readonly unknown[], at: string): (TextBlock | ImageBlock)[] {
  const content: (TextBlock | ImageBlock)[] = []
  parts.forEach((part, index) => {
    const where = `${at}.parts[${index}]`
    if (!isRecord(part)) refuse(where, 'must be an object', part)
    if (part['type'] === 'text') {
      if (typeof part['text'] !== 'string') refuse(`${where}.text`, 'must be a string', part['text'])
      content.push({ type: 'text', text: part['text'] })
    } else if (part['type'] === 'file') {
      const { mediaType, url } = part
      if (typeof mediaType !== 'string' || !mediaType.startsWith('image/')) {
        refuse(`${where}.mediaType`, 'must be an image media type (image/…): only images can be sent', mediaType)
      }
      if (typeof url !== 'string' || url === '') refuse(`${where}.url`, 'must be a non-empty string', url)
      content.push({ type: 'image', mediaType, uri: url })
    }
    // Other parts (step markers, data parts) carry nothing the model reads.
  })
  return content
}

/**
 * Reads the body `useChat` posts (`{ id, messages, trigger, messageId }`, through the AI SDK's
 * `DefaultChatTransport`) and returns the chat id and the new user message, the last of
 * `messages`: Yoke keeps the history in the session log, so the earlier messages are not read.
 * Text parts become text, `file` parts with an image media type become images.
 *
 * @param body - the parsed JSON body
 * @returns the chat id, the input for `agent.stream()`, the trigger and the message id
 * @throws `InvalidArgumentError` (`INVALID_ARGUMENT`) naming what is wrong: `body`,
 *   `body.id`, `body.messages`, `body.trigger`, `body.messageId`, `body.messages[2].role`,
 *   `body.messages[2].parts[0].text`, … (answer it with a 400)
 * @example
 * ```ts
 * export async function POST(request: Request) {
 *   const { id, input } = parseChatRequest(await request.json())
 *   const agent = await harness.openAgent(id)
 *   return uiMessageStreamResponse(agent.stream(input))
 * }
 * ```
 */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isRecord(body)) refuse('body', 'must be a JSON object like { id, messages }', body)
  const { id, messages, trigger, messageId } = body
  if (typeof id !== 'string' || id === '') refuse('body.id', 'must be a non-empty string (the chat id)', id)
  if (trigger !== undefined && trigger !== 'submit-message' && trigger !== 'regenerate-message') {
    refuse('body.trigger', "must be 'submit-message' or 'regenerate-message'", trigger)
  }
  if (messageId !== undefined && messageId !== null && typeof messageId !== 'string') {
    refuse('body.messageId', 'must be a string', messageId)
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    refuse('body.messages', 'must be a non-empty array of UI messages', messages)
  }
  const last = messages.length - 1
  const at = `body.messages[${last}]`
  const message: unknown = messages[last]
  if (!isRecord(message)) refuse(at, 'must be an object', message)
  if (message['role'] !== 'user')
    refuse(`${at}.role`, "must be 'user': the last message is the one to answer", message['role'])
  if (!Array.isArray(message['parts'])) refuse(`${at}.parts`, 'must be an array', message['parts'])
  const content = contentOf(message['parts'], at)
  if (content.length === 0) refuse(`${at}.parts`, 'must hold a text or an image part', message['parts'])
  const [first] = content
  const input: UserMessageInput = content.length === 1 && first?.type === 'text' ? first.text : { content }
  return {
    id,
    input,
    trigger: trigger ?? 'submit-message',
    ...(typeof messageId === 'string' ? { messageId } : {}),
  }
}
