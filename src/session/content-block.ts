import { z } from 'zod'
import { callIdSchema, nonEmptyStringSchema, typedSchema } from './schema-primitives.js'

/** Plain text the user, a tool or the model wrote. */
export interface TextBlock {
  /** Always `'text'`. */
  readonly type: 'text'
  /** The text; may be empty. */
  readonly text: string
}

/** The model's visible reasoning, kept so it can be replayed to the provider. */
export interface ReasoningBlock {
  /** Always `'reasoning'`. */
  readonly type: 'reasoning'
  /** The reasoning text; may be empty. */
  readonly text: string
}

/** An image, stored as a durable reference, never inline bytes by contract. */
export interface ImageBlock {
  /** Always `'image'`. */
  readonly type: 'image'
  /** The media type; starts with `image/`, e.g. `'image/png'`. */
  readonly mediaType: string
  /** Where the image lives: a `data:`, `http(s):` or other durable URI; non-empty. */
  readonly uri: string
}

/** A tool call the model requested. */
export interface ToolCallBlock {
  /** Always `'tool-call'`. */
  readonly type: 'tool-call'
  /** The call id: non-empty, at most 256 characters. */
  readonly id: string
  /** The tool name; non-empty. */
  readonly name: string
  /** The arguments as the model wrote them: raw JSON text, never parsed here. */
  readonly arguments: string
}

/** The answer to one tool call; the only block of a `ToolResultMessage`. */
export interface ToolResultBlock {
  /** Always `'tool-result'`. */
  readonly type: 'tool-result'
  /** The id of the answered call: non-empty, at most 256 characters. */
  readonly toolCallId: string
  /** What the tool returned: text and images. */
  readonly content: readonly (TextBlock | ImageBlock)[]
  /** `true` when the call failed; absent means it succeeded. */
  readonly isError?: boolean
}

/** Any content block. */
export type ContentBlock = TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock

/** A block a `UserMessage` (and a tool result's inner content) may hold. */
export type UserContentBlock = TextBlock | ImageBlock

/** A block an `AssistantMessage` may hold. */
export type AssistantContentBlock = TextBlock | ReasoningBlock | ToolCallBlock

const textBlockObject = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
})

const reasoningBlockObject = z.strictObject({
  type: z.literal('reasoning'),
  text: z.string(),
})

const imageBlockObject = z.strictObject({
  type: z.literal('image'),
  mediaType: z
    .string({ error: 'must be an image media type' })
    .startsWith('image/', { error: 'must be an image media type (image/…)' }),
  uri: nonEmptyStringSchema,
})

const toolCallBlockObject = z.strictObject({
  type: z.literal('tool-call'),
  id: callIdSchema,
  name: nonEmptyStringSchema,
  arguments: z.string(),
})

const userContentBlockUnion = z.discriminatedUnion('type', [textBlockObject, imageBlockObject])

const toolResultBlockObject = z.strictObject({
  type: z.literal('tool-result'),
  toolCallId: callIdSchema,
  content: z.array(userContentBlockUnion),
  isError: z.boolean().exactOptional(),
})

/** The strict schema of a {@link TextBlock}. */
export const textBlockSchema = typedSchema<TextBlock>()(textBlockObject)

/** The strict schema of a {@link ReasoningBlock}. */
export const reasoningBlockSchema = typedSchema<ReasoningBlock>()(reasoningBlockObject)

/** The strict schema of an {@link ImageBlock}: `mediaType` starts with `image/`, `uri` is non-empty. */
export const imageBlockSchema = typedSchema<ImageBlock>()(imageBlockObject)

/** The strict schema of a {@link ToolCallBlock}: `id` is a call id, `name` non-empty, `arguments` a string. */
export const toolCallBlockSchema = typedSchema<ToolCallBlock>()(toolCallBlockObject)

/** The strict schema of a {@link ToolResultBlock}. */
export const toolResultBlockSchema = typedSchema<ToolResultBlock>()(toolResultBlockObject)

/** The strict schema of a {@link UserContentBlock} (also a tool result's inner content), discriminated on `type`. */
export const userContentBlockSchema = typedSchema<UserContentBlock>()(userContentBlockUnion)

/** The strict schema of an {@link AssistantContentBlock}, discriminated on `type`. */
export const assistantContentBlockSchema = typedSchema<AssistantContentBlock>()(
  z.discriminatedUnion('type', [textBlockObject, reasoningBlockObject, toolCallBlockObject]),
)

/** The strict schema of any {@link ContentBlock}, discriminated on `type`. */
export const contentBlockSchema = typedSchema<ContentBlock>()(
  z.discriminatedUnion('type', [
    textBlockObject,
    reasoningBlockObject,
    imageBlockObject,
    toolCallBlockObject,
    toolResultBlockObject,
  ]),
)
