import type { ToolResultData, TurnEndReason } from 'yoke'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'

/** Which assistant message a turn is: the session and the turn number. */
export interface UITurn {
  /** The session (agent) id. */
  readonly sessionId: string
  /** The turn number. */
  readonly turn: number
}

/** The kinds of turn end a client is shown as an error. */
interface FailedKind {
  /** `'error'`: the turn failed; `'interrupted'`: it never ended (the process stopped). */
  readonly kind: 'error' | 'interrupted'
}

/** A turn end the client is shown as an error: the turn failed, or never ended (a crash). */
export type UIFailedTurnEnd = Extract<TurnEndReason, FailedKind>

/** How a session's turns become UI messages: shared by the UI message stream and {@link toUIMessages}. */
export interface UIMessageOptions {
  /**
   * The id of a turn's assistant message. Give the stream and {@link toUIMessages} the same
   * function, so that a message streamed live and the same message read back from the log later
   * have one id.
   *
   * @default `${sessionId}:turn-${turn}`
   */
  readonly messageId?: (turn: UITurn) => string
  /**
   * Whether to send the model's reasoning as `reasoning` parts.
   *
   * @default true
   */
  readonly sendReasoning?: boolean
  /**
   * Whether tool calls are `dynamic-tool` parts (with `toolName`) rather than `tool-<name>` parts;
   * for front ends that do not declare the server's tools.
   *
   * @default false
   */
  readonly dynamicTools?: boolean
  /**
   * The `output` a successful tool result shows. Must not throw.
   *
   * @default the result's text when it is one text block, else its content blocks
   */
  readonly toolOutput?: (result: ToolResultData) => unknown
}

/** @internal The {@link UIMessageOptions} with their defaults applied. */
export interface ResolvedUIMessageOptions {
  readonly messageId: (turn: UITurn) => string
  readonly sendReasoning: boolean
  readonly dynamicTools: boolean
  readonly toolOutput: (result: ToolResultData) => unknown
}

/**
 * @internal The default tool output: a single text block is its text (what a tool returning a string
 * gave), anything else the content blocks as they are logged.
 */
export function defaultToolOutput(result: ToolResultData): unknown {
  const content = result.message.content[0].content
  const [first] = content
  return content.length === 1 && first?.type === 'text' ? first.text : content
}

/** @internal What a failed tool call shows: the text the model was given. */
export function toolErrorText(result: ToolResultData): string {
  const text = result.message.content[0].content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  return text === '' ? `The tool call failed (${result.error?.code ?? 'error'}).` : text
}

/** @internal Whether a tool result stands for a failure. */
export function isToolError(result: ToolResultData): boolean {
  return result.error !== undefined || result.message.content[0].isError === true
}

/**
 * @internal A tool call's input for the client: the parsed JSON, or `undefined` with the raw text
 * when the model wrote something that is not JSON.
 */
export function parseToolInput(
  argumentsText: string,
): { readonly ok: true; readonly input: unknown } | { readonly ok: false } {
  if (argumentsText.trim() === '') return { ok: true, input: {} }
  try {
    return { ok: true, input: JSON.parse(argumentsText) as unknown }
  } catch {
    return { ok: false }
  }
}

/** @internal The text a tool call with unusable input shows. */
export const invalidInputText = 'The model sent tool input that is not valid JSON.'

/**
 * @internal Applies the defaults and checks the option types.
 * @throws `InvalidArgumentError` naming the option (`options.sendReasoning`, …)
 */
export function resolveUIMessageOptions(options: UIMessageOptions): ResolvedUIMessageOptions {
  const { messageId, sendReasoning, dynamicTools, toolOutput } = options
  checkOption('messageId', messageId, 'function')
  checkOption('sendReasoning', sendReasoning, 'boolean')
  checkOption('dynamicTools', dynamicTools, 'boolean')
  checkOption('toolOutput', toolOutput, 'function')
  return {
    messageId: messageId ?? ((turn) => `${turn.sessionId}:turn-${turn.turn}`),
    sendReasoning: sendReasoning ?? true,
    dynamicTools: dynamicTools ?? false,
    toolOutput: toolOutput ?? defaultToolOutput,
  }
}

/**
 * @internal Checks that an option is absent or of the given `typeof`.
 * @throws `InvalidArgumentError` `options.<name>`
 */
export function checkOption(name: string, value: unknown, type: 'function' | 'boolean' | 'string'): void {
  if (value !== undefined && typeof value !== type) {
    throw new InvalidArgumentError({ argument: `options.${name}`, reason: `must be a ${type}`, value })
  }
}
