import type { AgentStreamEvent, SessionEvent, SessionOwner, ToolResultData, UserMessage } from 'yoke'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { AssistantMessage } from '../session/message.js'
import { asStreamEvent } from '../stream/agent-stream-event.js'
import type { UIDynamicToolPart, UIMessage, UIMessagePart, UIToolCallState, UIToolPart } from './ui-message.js'
import {
  invalidInputText,
  isToolError,
  parseToolInput,
  type ResolvedUIMessageOptions,
  resolveUIMessageOptions,
  toolErrorText,
  type UIMessageOptions,
} from './ui-message-options.js'

/** A stored session as `harness.readSession()` returns it: its id and its events. */
export interface UISessionEvents {
  /** The session id. */
  readonly id: string
  /** The events, in seq order. */
  readonly events: Iterable<SessionEvent>
}

type ToolPart = UIToolPart | UIDynamicToolPart

/** Builds the messages one event at a time. */
class MessageBuilder {
  readonly messages: UIMessage[] = []
  readonly #options: ResolvedUIMessageOptions
  readonly #sessionId: string
  /** The open turn's assistant message; shown once it has something, after the turn's prompt. */
  #assistant: { message: UIMessage; shown: boolean } | undefined
  readonly #tools = new Map<string, { parts: UIMessagePart[]; index: number }>()

  constructor(options: ResolvedUIMessageOptions, sessionId: string) {
    this.#options = options
    this.#sessionId = sessionId
  }

  add(event: AgentStreamEvent): void {
    switch (event.type) {
      case 'turn/start':
        this.#assistant = {
          message: {
            id: this.#options.messageId({ sessionId: this.#sessionId, turn: event.data.turn }),
            role: 'assistant',
            parts: [],
          },
          shown: false,
        }
        break
      case 'user/message':
        if (event.data.source.kind === 'user') this.messages.push(userMessage(event.data))
        break
      case 'step/start':
        this.#assistant?.message.parts.push({ type: 'step-start' })
        break
      case 'assistant/message':
        this.#assistantMessage(event.data.message, event.data.step)
        break
      case 'tool/result':
        this.#toolResult(event.data)
        break
      case 'turn/end':
        this.#show()
        this.#assistant = undefined
        break
      default:
        break
    }
  }

  #show(): UIMessagePart[] | undefined {
    const assistant = this.#assistant
    if (assistant === undefined) return undefined
    if (!assistant.shown) {
      assistant.shown = true
      this.messages.push(assistant.message)
    }
    return assistant.message.parts
  }

  #assistantMessage(message: AssistantMessage, step: number): void {
    const parts = this.#show()
    if (parts === undefined) return
    message.content.forEach((block, index) => {
      if (block.type === 'text') parts.push({ type: 'text', text: block.text, state: 'done' })
      else if (block.type === 'reasoning') {
        // The id the live stream gave the part: its block index, which is its place in the message.
        const id = `reasoning-${step}-${index}`
        if (this.#options.sendReasoning) parts.push({ type: 'reasoning', id, text: block.text, state: 'done' })
      } else {
        const parsed = parseToolInput(block.arguments)
        const state: UIToolCallState = parsed.ok
          ? { state: 'input-available', input: parsed.input }
          : { state: 'output-error', input: undefined, rawInput: block.arguments, errorText: invalidInputText }
        this.#tools.set(block.id, { parts, index: parts.length })
        parts.push(this.#toolPart(block.name, block.id, state))
      }
    })
  }

  #toolPart(name: string, toolCallId: string, state: UIToolCallState): ToolPart {
    return this.#options.dynamicTools
      ? { type: 'dynamic-tool', toolName: name, toolCallId, ...state }
      : { type: `tool-${name}`, toolCallId, ...state }
  }

  #toolResult(result: ToolResultData): void {
    const toolCallId = result.message.content[0].toolCallId
    const at = this.#tools.get(toolCallId)
    const part = at?.parts[at.index] as ToolPart | undefined
    if (at === undefined || part === undefined) return
    const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length)
    const rawInput = part.state === 'output-error' ? part.rawInput : undefined
    const state: UIToolCallState = isToolError(result)
      ? {
          state: 'output-error',
          input: part.input,
          ...(rawInput === undefined ? {} : { rawInput }),
          errorText: toolErrorText(result),
        }
      : { state: 'output-available', input: part.input, output: this.#options.toolOutput(result) }
    at.parts[at.index] = this.#toolPart(name, toolCallId, state)
  }
}

function userMessage(message: UserMessage): UIMessage {
  const parts: UIMessagePart[] = message.content.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'file', mediaType: block.mediaType, url: block.uri },
  )
  return { id: message.id, role: 'user', parts }
}

function isSessionOwner(source: unknown): source is SessionOwner {
  return typeof source === 'object' && source !== null && 'session' in source
}

/**
 * A session's chat history as `useChat` messages, for the first render of a page: each message the
 * user wrote (text, and images as `file` parts), and each turn as one assistant message with a
 * `step-start` part per model call, its text, its reasoning and its tool calls with their inputs,
 * outputs and errors. A turn's assistant message has the id its UI message stream starts with
 * (give both the same `messageId`), so a running turn resumed with `useChat({ resume: true })`
 * replaces the partial message rather than adding one. Messages plugins wrote (summaries, context)
 * are left out.
 *
 * @param source - an agent (or `{ session, ctx }`), or `harness.readSession()`'s `{ id, events }`
 * @param options - message ids, reasoning, tool parts and outputs, as the stream was given them
 * @returns the messages, oldest first
 * @throws `InvalidArgumentError` for a bad source or option
 * @example
 * ```ts
 * // GET /api/chat/:id: the history for useChat({ id, messages })
 * const agent = await harness.openAgent(id)
 * return Response.json(toUIMessages(agent))
 * ```
 */
export function toUIMessages(source: SessionOwner | UISessionEvents, options: UIMessageOptions = {}): UIMessage[] {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be an object', value: options })
  }
  const resolved = resolveUIMessageOptions(options)
  if (isSessionOwner(source)) {
    const { session } = source
    if (typeof session !== 'object' || session === null || typeof session.at !== 'function') {
      throw new InvalidArgumentError({ argument: 'source.session', reason: 'must be a live session', value: session })
    }
    const builder = new MessageBuilder(resolved, session.id)
    for (let seq = 0; seq < session.length; seq++) {
      const event = session.at(seq)
      if (event !== undefined) builder.add(asStreamEvent(event))
    }
    return builder.messages
  }
  const events = (source as Partial<UISessionEvents> | null)?.events
  const id = (source as Partial<UISessionEvents> | null)?.id
  if (typeof id !== 'string' || typeof events !== 'object' || events === null || !(Symbol.iterator in events)) {
    throw new InvalidArgumentError({
      argument: 'source',
      reason: 'must be an agent, { session, ctx }, or { id, events } as harness.readSession() returns',
      value: source,
    })
  }
  const builder = new MessageBuilder(resolved, id)
  for (const event of events) builder.add(asStreamEvent(event))
  return builder.messages
}
