import type { ZodType } from 'zod'
import type { Session } from '../session/session.js'
import type { ImageBlock, TextBlock } from '../session/content-block.js'
import type { JsonObject, JsonValue } from '../session/json-value.js'
import type { ToolAgent } from './tool-call-info.js'

/** A raw JSON Schema object whose root `type` is `'object'`. */
export type JsonSchemaObject = JsonObject

/** The arguments type of a tool whose input is `Input`: `z.output<Input>` for zod, a JSON object otherwise. */
export type ToolArgs<Input> = Input extends ZodType<infer Output> ? Output : JsonObject

/** A block a tool may return: text or an image reference. */
export type ToolContentBlock = TextBlock | ImageBlock

/** The fields of a rich tool result, as {@link toolResult} takes them. */
export interface ToolResultInit {
  /** The content: a string (one text block) or text and image blocks. */
  readonly content: string | readonly ToolContentBlock[]
  /** Marks the result as a failure the model should see as one. */
  readonly isError?: boolean
  /** Tool-specific facts (a lossless-JSON plain object), logged on `tool/result`, never model-visible. */
  readonly meta?: JsonObject
  /** Ends the turn after this step when the result is a success (no follow-up request). */
  readonly concludesTurn?: boolean
  /** Messages for the model's next step, each a string or content blocks. */
  readonly additionalContexts?: readonly (string | readonly ToolContentBlock[])[]
}

/**
 * What a tool body may return:
 *
 * - `undefined` (or nothing): a success without content;
 * - a string: the text the model sees;
 * - a {@link toolResult} value: the rich result (content blocks, `isError`, `meta`,
 *   `concludesTurn`, `additionalContexts`);
 * - any other JSON value (object, array, number, boolean, `null`): the model sees its compact JSON
 *   text. It must be plain JSON, checked when the call returns: a function, a bigint, a cycle, a
 *   class instance (`Date`, `Map`) or a non-finite number fails the call with `TOOL_FAILED`
 *   naming its path. The type admits any object so that interface-typed rows compile.
 */
export type ToolReturn = undefined | void | string | number | boolean | null | object

/** What a tool body receives besides its arguments. */
export interface ToolContext {
  /** Aborts on turn cancellation or this call's deadline. */
  readonly signal: AbortSignal
  /** The call id the model gave. */
  readonly callId: string
  /** The calling agent. */
  readonly agent: ToolAgent
  /** The agent's session. */
  readonly session: Session
  /** The open turn. */
  readonly turn: number
  /** The open step. */
  readonly step: number
  /**
   * Emits `tools/progress { agent, callId, name, progress }`; ignored after the call settled.
   *
   * @param progress - any lossless-JSON value
   * @throws {@link InvalidArgumentError} `argument: 'progress'` for a non-JSON value
   */
  reportProgress(progress: JsonValue): void
}

/** The declaration `defineTool` takes. */
export interface ToolSpec<Input extends ZodType | JsonSchemaObject = ZodType | JsonSchemaObject> {
  /** 1–64 characters of `[A-Za-z0-9_-]`. */
  readonly name: string
  /** What the tool does, for the model; non-empty. */
  readonly description: string
  /** A zod v4 schema (its JSON Schema is computed once) or a raw JSON Schema object. */
  readonly input: Input
  /** Only exactly `true` lets the call run in parallel with its neighbours. */
  readonly isConcurrencySafe?: (args: ToolArgs<Input>) => boolean
  /** Anything but exactly `false` asks for approval (a throw denies). */
  readonly needsApproval?: (
    args: ToolArgs<Input>,
    context: ToolContext,
  ) => boolean | undefined | Promise<boolean | undefined>
  /** The call's deadline in milliseconds: positive finite; never sent to the model. */
  readonly timeoutMs?: number
  /** The body. */
  readonly execute: (args: ToolArgs<Input>, context: ToolContext) => ToolReturn | Promise<ToolReturn>
}

/**
 * A validated, frozen tool declaration (what `defineTool` returns): the declaration plus the JSON Schema
 * the model sees. Inert: registering it is what makes it visible.
 */
export interface ToolDefinition<Input extends ZodType | JsonSchemaObject = ZodType | JsonSchemaObject>
  extends ToolSpec<Input> {
  /** The JSON Schema of the arguments (draft-07, no top-level `$schema`), deep-frozen. */
  readonly parameters: JsonSchemaObject
  /** Whether `input` is a zod schema (arguments are validated) or raw JSON Schema (not validated). */
  readonly inputKind: 'zod' | 'json-schema'
}
