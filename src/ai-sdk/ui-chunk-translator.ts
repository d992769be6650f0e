/**
 * Turns a session's committed events, one at a time, into AI SDK UI message chunks. Pure and
 * deterministic: the same events with the same options always give the same chunks, which is what
 * lets a reconnecting reader resume at an exact chunk.
 *
 * @module
 */
import type { AgentStreamEvent, StreamChunk, ToolResultData, TurnEndData } from 'yoke'
import type { UIFinishReason, UIMessageChunk } from './ui-message-chunk.js'
import {
  invalidInputText,
  isToolError,
  parseToolInput,
  type ResolvedUIMessageOptions,
  toolErrorText,
  type UIFailedTurnEnd,
} from './ui-message-options.js'

/** @internal What the translator needs beyond the shared options. */
export interface TranslatorOptions extends ResolvedUIMessageOptions {
  /** The session read, for the default message id. */
  readonly sessionId: string
  /** The text a failed turn shows. */
  readonly errorText: (reason: UIFailedTurnEnd) => string
}

/** An open block of the current model call, by its index. */
type OpenBlock =
  | { readonly kind: 'text' | 'reasoning'; readonly id: string; readonly sent: boolean }
  | { readonly kind: 'tool-call'; callId?: string; name?: string }

const cutOffText = 'The tool call was cut off before its input was complete.'

/** @internal Translates one turn's events at a time; events outside a turn give no chunks. */
export class UIChunkTranslator {
  readonly #options: TranslatorOptions
  #turnOpen = false
  #stepOpen = false
  #step = 0
  #attempt = 1
  /** A model call of the current step failed: the next chunk is a retry's first. */
  #retryPending = false
  readonly #open = new Map<number, OpenBlock>()

  constructor(options: TranslatorOptions) {
    this.#options = options
  }

  /** Whether a turn is open: its `start` was sent and its `finish` (or `abort`) was not. */
  get turnOpen(): boolean {
    return this.#turnOpen
  }

  /**
   * The chunks one event gives, in order; none for an event the client does not see.
   *
   * @param event - the next committed event
   * @returns the chunks
   */
  translate(event: AgentStreamEvent): UIMessageChunk[] {
    const out: UIMessageChunk[] = []
    if (event.type === 'turn/start') {
      this.#turnOpen = true
      this.#stepOpen = false
      this.#open.clear()
      out.push({
        type: 'start',
        messageId: this.#options.messageId({ sessionId: this.#options.sessionId, turn: event.data.turn }),
      })
      return out
    }
    if (!this.#turnOpen) return out
    switch (event.type) {
      case 'step/start':
        if (this.#stepOpen) this.#endStep(out)
        this.#stepOpen = true
        this.#step = event.data.step
        this.#attempt = 1
        this.#retryPending = false
        out.push({ type: 'start-step' })
        break
      case 'assistant/chunk':
        if (this.#stepOpen) this.#chunk(event.data.chunk, out)
        break
      case 'tool/result':
        this.#toolResult(event.data, out)
        break
      case 'step/end':
        if (this.#stepOpen) this.#endStep(out)
        break
      case 'turn/end':
        if (this.#stepOpen) this.#endStep(out)
        this.#turnOpen = false
        this.#endTurn(event.data, out)
        break
      default:
        break
    }
    return out
  }

  #partId(kind: 'text' | 'reasoning', index: number): string {
    const attempt = this.#attempt === 1 ? '' : `.${this.#attempt}`
    return `${kind}-${this.#step}${attempt}-${index}`
  }

  #chunk(chunk: StreamChunk, out: UIMessageChunk[]): void {
    if (chunk.type === 'finish') {
      // A failed call may be retried within the step; what it streamed stays, closed.
      this.#closeOpen(out)
      if (chunk.reason === 'error' || chunk.reason === 'aborted') this.#retryPending = true
      return
    }
    if (this.#retryPending) {
      this.#retryPending = false
      this.#attempt++
    }
    switch (chunk.type) {
      case 'block-start':
        if (chunk.blockType === 'tool-call') this.#open.set(chunk.index, { kind: 'tool-call' })
        else this.#openPart(chunk.blockType, chunk.index, out)
        break
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = chunk.type === 'text-delta' ? 'text' : 'reasoning'
        const block = this.#open.get(chunk.index) ?? this.#openPart(kind, chunk.index, out)
        if (block.kind !== 'tool-call' && block.sent)
          out.push({ type: `${block.kind}-delta`, id: block.id, delta: chunk.text })
        break
      }
      case 'tool-call-delta': {
        let block = this.#open.get(chunk.index)
        if (block === undefined || block.kind !== 'tool-call') {
          block = { kind: 'tool-call' }
          this.#open.set(chunk.index, block)
        }
        if (block.callId === undefined) {
          block.callId = chunk.id
          block.name = chunk.name ?? ''
          out.push({ type: 'tool-input-start', toolCallId: chunk.id, toolName: block.name, ...this.#dynamic() })
        }
        if (chunk.argumentsDelta !== '') {
          out.push({ type: 'tool-input-delta', toolCallId: chunk.id, inputTextDelta: chunk.argumentsDelta })
        }
        break
      }
      case 'block-end': {
        const { block } = chunk
        const open = this.#open.get(chunk.index)
        this.#open.delete(chunk.index)
        if (block.type === 'tool-call') {
          const parsed = parseToolInput(block.arguments)
          out.push(
            parsed.ok
              ? {
                  type: 'tool-input-available',
                  toolCallId: block.id,
                  toolName: block.name,
                  input: parsed.input,
                  ...this.#dynamic(),
                }
              : {
                  type: 'tool-input-error',
                  toolCallId: block.id,
                  toolName: block.name,
                  input: block.arguments,
                  errorText: invalidInputText,
                  ...this.#dynamic(),
                },
          )
          break
        }
        const part =
          open !== undefined && open.kind === block.type ? open : this.#openPart(block.type, chunk.index, out, true)
        if (part.kind === 'tool-call' || !part.sent) break
        // A block that streamed nothing (its text came whole at the end) still shows its text.
        if (part !== open && block.text !== '') out.push({ type: `${part.kind}-delta`, id: part.id, delta: block.text })
        out.push({ type: `${part.kind}-end`, id: part.id })
        break
      }
      default:
        break
    }
  }

  #openPart(kind: 'text' | 'reasoning', index: number, out: UIMessageChunk[], transient = false): OpenBlock {
    const sent = kind === 'text' || this.#options.sendReasoning
    const block: OpenBlock = { kind, id: this.#partId(kind, index), sent }
    if (!transient) this.#open.set(index, block)
    if (sent) out.push({ type: `${kind}-start`, id: block.id })
    return block
  }

  #dynamic(): { dynamic?: true } {
    return this.#options.dynamicTools ? { dynamic: true } : {}
  }

  /** Closes what a cancelled or failed call left open, so the client shows no part as streaming. */
  #closeOpen(out: UIMessageChunk[]): void {
    for (const block of this.#open.values()) {
      if (block.kind === 'tool-call') {
        if (block.callId !== undefined) {
          out.push({
            type: 'tool-input-error',
            toolCallId: block.callId,
            toolName: block.name ?? '',
            input: undefined,
            errorText: cutOffText,
            ...this.#dynamic(),
          })
        }
      } else if (block.sent) out.push({ type: `${block.kind}-end`, id: block.id })
    }
    this.#open.clear()
  }

  #toolResult(result: ToolResultData, out: UIMessageChunk[]): void {
    const toolCallId = result.message.content[0].toolCallId
    out.push(
      isToolError(result)
        ? { type: 'tool-output-error', toolCallId, errorText: toolErrorText(result), ...this.#dynamic() }
        : { type: 'tool-output-available', toolCallId, output: this.#options.toolOutput(result), ...this.#dynamic() },
    )
  }

  #endStep(out: UIMessageChunk[]): void {
    this.#closeOpen(out)
    this.#stepOpen = false
    out.push({ type: 'finish-step' })
  }

  #endTurn(end: TurnEndData, out: UIMessageChunk[]): void {
    const { reason } = end
    switch (reason.kind) {
      case 'aborted':
        out.push({ type: 'abort', reason: reason.reason.kind })
        return
      case 'error':
      case 'interrupted':
        out.push({ type: 'error', errorText: this.#options.errorText(reason) })
        out.push({ type: 'finish', finishReason: 'error' })
        return
      default:
        out.push({ type: 'finish', finishReason: finishReasons[reason.kind] })
    }
  }
}

const finishReasons: Readonly<Record<'completed' | 'max-tokens' | 'max-steps' | 'blocked', UIFinishReason>> = {
  completed: 'stop',
  'max-tokens': 'length',
  'max-steps': 'other',
  blocked: 'other',
}
