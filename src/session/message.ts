import { z } from 'zod'
import {
  type AssistantContentBlock,
  assistantContentBlockSchema,
  type ToolResultBlock,
  toolResultBlockSchema,
  type UserContentBlock,
  userContentBlockSchema,
} from './content-block.js'
import type { JsonValue } from './json-value.js'
import {
  callIdSchema,
  jsonValueSchema,
  messageIdSchema,
  nonEmptyStringSchema,
  typedSchema,
} from './schema-primitives.js'

/** A message the user wrote. */
export interface HumanMessageSource {
  /** Always `'user'`. */
  readonly kind: 'user'
}

/** A user-role message a plugin wrote (runtime context, a compaction summary, …). */
export interface PluginMessageSource {
  /** Always `'plugin'`. */
  readonly kind: 'plugin'
  /** The id of the plugin that wrote it, e.g. `'yoke/compaction'`; non-empty. */
  readonly plugin: string
  /** The plugin's own label for the kind of message, e.g. `'summary'`; non-empty. */
  readonly form?: string
}

/** Where a {@link UserMessage} came from. */
export type UserMessageSource = HumanMessageSource | PluginMessageSource

/** The model call an {@link AssistantMessage} came from. */
export interface ModelMessageSource {
  /** Always `'model'`. */
  readonly kind: 'model'
  /** The provider route id; non-empty. */
  readonly provider: string
  /** The adapter-owned model id; non-empty. */
  readonly model: string
  /** Opaque provider state the adapter needs to replay this message (any JSON). */
  readonly replayState?: JsonValue
}

/** The tool call a {@link ToolResultMessage} answers. */
export interface ToolMessageSource {
  /** Always `'tool'`. */
  readonly kind: 'tool'
  /** The answered call id: non-empty, at most 256 characters. */
  readonly callId: string
}

/** Any message source, tagged by `kind`. */
export type MessageSource = UserMessageSource | ModelMessageSource | ToolMessageSource

/** A user-role message: what the user (or a plugin on its behalf) said. */
export interface UserMessage {
  /** The message id: non-empty, at most 1024 characters, unique in the log. */
  readonly id: string
  /** Always `'user'`. */
  readonly role: 'user'
  /** Text and image blocks. */
  readonly content: readonly UserContentBlock[]
  /** Who wrote it. */
  readonly source: UserMessageSource
}

/** What the model answered in one step. */
export interface AssistantMessage {
  /** The message id: non-empty, at most 1024 characters, unique in the log. */
  readonly id: string
  /** Always `'assistant'`. */
  readonly role: 'assistant'
  /** Text, reasoning and tool-call blocks, in stream order. */
  readonly content: readonly AssistantContentBlock[]
  /** The model call it came from. */
  readonly source: ModelMessageSource
}

/** The answer to one tool call, sent to the model with the user role. */
export interface ToolResultMessage {
  /** The message id: non-empty, at most 1024 characters. */
  readonly id: string
  /** Always `'user'`. */
  readonly role: 'user'
  /** Exactly one tool-result block, whose `toolCallId` equals `source.callId`. */
  readonly content: readonly [ToolResultBlock]
  /** The call it answers. */
  readonly source: ToolMessageSource
}

/** A model-history message: what `deriveMessages()` returns. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage

/** The strict schema of a {@link UserMessageSource}, discriminated on `kind`. */
export const userMessageSourceSchema = typedSchema<UserMessageSource>()(
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('user') }),
    z.strictObject({
      kind: z.literal('plugin'),
      plugin: nonEmptyStringSchema,
      form: nonEmptyStringSchema.exactOptional(),
    }),
  ]),
)

/** The strict schema of a {@link ModelMessageSource}; `replayState` is any JSON. */
export const modelMessageSourceSchema = typedSchema<ModelMessageSource>()(
  z.strictObject({
    kind: z.literal('model'),
    provider: nonEmptyStringSchema,
    model: nonEmptyStringSchema,
    replayState: jsonValueSchema.exactOptional(),
  }),
)

/** The strict schema of a {@link ToolMessageSource}. */
export const toolMessageSourceSchema = typedSchema<ToolMessageSource>()(
  z.strictObject({
    kind: z.literal('tool'),
    callId: callIdSchema,
  }),
)

/** The strict schema of a {@link UserMessage}. */
export const userMessageSchema = typedSchema<UserMessage>()(
  z.strictObject({
    id: messageIdSchema,
    role: z.literal('user'),
    content: z.array(userContentBlockSchema),
    source: userMessageSourceSchema,
  }),
)

/** The strict schema of an {@link AssistantMessage}. */
export const assistantMessageSchema = typedSchema<AssistantMessage>()(
  z.strictObject({
    id: messageIdSchema,
    role: z.literal('assistant'),
    content: z.array(assistantContentBlockSchema),
    source: modelMessageSourceSchema,
  }),
)

/**
 * The strict schema of a {@link ToolResultMessage}: exactly one tool-result block answering
 * `source.callId` (a mismatch is reported at `content[0].toolCallId`).
 */
export const toolResultMessageSchema = typedSchema<ToolResultMessage>()(
  z
    .strictObject({
      id: messageIdSchema,
      role: z.literal('user'),
      content: z.tuple([toolResultBlockSchema], { error: 'must be exactly one tool-result block' }),
      source: toolMessageSourceSchema,
    })
    .superRefine((message, context) => {
      if (message.content[0].toolCallId !== message.source.callId) {
        context.addIssue({
          code: 'custom',
          path: ['content', 0, 'toolCallId'],
          message: `must equal source.callId ("${message.source.callId}")`,
        })
      }
    }),
)

/**
 * The schema of any {@link Message}. A user message and a tool result share the `user` role, so this
 * is a plain union: a failure is one `invalid_union` issue listing each member's issues. Validate
 * against {@link userMessageSchema}, {@link assistantMessageSchema} or {@link toolResultMessageSchema}
 * for precise paths.
 */
export const messageSchema = typedSchema<Message>()(
  z.union([userMessageSchema, assistantMessageSchema, toolResultMessageSchema]),
)
