/**
 * The UI messages Yoke builds from a session log, typed after the AI SDK 6 `UIMessage` shapes (the
 * parts a Yoke session produces), so that a route can hand them to `useChat` without loading the
 * AI SDK.
 *
 * @module
 */

/** A text part. */
export interface UITextPart {
  /** Always `'text'`. */
  readonly type: 'text'
  /** The text. */
  readonly text: string
  /** Always `'done'` for a part read from the log. */
  readonly state?: 'streaming' | 'done'
}

/** The model's reasoning. */
export interface UIReasoningPart {
  /** Always `'reasoning'`. */
  readonly type: 'reasoning'
  /** The part id the stream gave it. */
  readonly id?: string
  /** The reasoning text. */
  readonly text: string
  /** Always `'done'` for a part read from the log. */
  readonly state?: 'streaming' | 'done'
}

/** A file the user sent: an image, by URL (often a `data:` URL). */
export interface UIFilePart {
  /** Always `'file'`. */
  readonly type: 'file'
  /** The media type, e.g. `'image/png'`. */
  readonly mediaType: string
  /** The file's URL. */
  readonly url: string
  /** The file name, when known. */
  readonly filename?: string
}

/** Marks where a step (one model call) of the assistant message starts. */
export interface UIStepStartPart {
  /** Always `'step-start'`. */
  readonly type: 'step-start'
}

/** What a tool part of either kind holds, by state. */
export type UIToolCallState =
  | {
      /** The input is complete; no output yet. */
      readonly state: 'input-available'
      /** The parsed input. */
      readonly input: unknown
    }
  | {
      /** The call succeeded. */
      readonly state: 'output-available'
      /** The parsed input. */
      readonly input: unknown
      /** The output. */
      readonly output: unknown
    }
  | {
      /** The call failed, or its input was unusable. */
      readonly state: 'output-error'
      /** The parsed input; `undefined` when it was not JSON. */
      readonly input: unknown
      /** The raw input text, when it was not JSON. */
      readonly rawInput?: unknown
      /** What went wrong. */
      readonly errorText: string
    }

/** A tool call of a tool the front end declares: `type` is `tool-<name>`. */
export type UIToolPart = {
  /** `tool-` and the tool name. */
  readonly type: `tool-${string}`
  /** The call id. */
  readonly toolCallId: string
} & UIToolCallState

/** A tool call shown without a declared tool (the `dynamicTools` option). */
export type UIDynamicToolPart = {
  /** Always `'dynamic-tool'`. */
  readonly type: 'dynamic-tool'
  /** The tool name. */
  readonly toolName: string
  /** The call id. */
  readonly toolCallId: string
} & UIToolCallState

/** One part of a {@link UIMessage}. */
export type UIMessagePart = UITextPart | UIReasoningPart | UIFilePart | UIStepStartPart | UIToolPart | UIDynamicToolPart

/**
 * A chat message as `useChat` holds it: a user message, or one turn's assistant message with a
 * `step-start` part per model call.
 */
export interface UIMessage {
  /** The message id: the user message's log id, or the turn's assistant message id. */
  readonly id: string
  /** Who wrote it. */
  readonly role: 'user' | 'assistant'
  /** The parts, in order. */
  readonly parts: UIMessagePart[]
}
