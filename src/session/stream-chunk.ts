import { z } from 'zod'
import {
  assistantContentBlockSchema,
  type ReasoningBlock,
  type TextBlock,
  type ToolCallBlock,
} from './content-block.js'
import type { JsonValue } from './json-value.js'
import { type LlmFailure, llmFailureSchema } from './llm-failure.js'
import {
  callIdSchema,
  jsonValueSchema,
  nonEmptyStringSchema,
  nonNegativeSafeIntegerSchema,
  typedSchema,
} from './schema-primitives.js'

/** How a model call finished. */
export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens' | 'error' | 'aborted'

/**
 * Token counts of one model call: non-negative safe integers. Input counts are disjoint: billed
 * input is `inputTokens + cacheReadTokens + cacheWriteTokens`.
 */
export interface TokenUsage {
  /** Uncached input tokens. */
  readonly inputTokens: number
  /** Output tokens, reasoning included. */
  readonly outputTokens: number
  /** Input tokens read from the provider's cache. */
  readonly cacheReadTokens?: number
  /** Input tokens written to the provider's cache. */
  readonly cacheWriteTokens?: number
  /** The part of `outputTokens` spent reasoning (not extra). */
  readonly reasoningTokens?: number
  /** The provider's usage object, verbatim JSON. */
  readonly raw?: JsonValue
}

/** Opens the block at `index` (optional: the first delta opens it too). */
export interface BlockStartChunk {
  /** Always `'block-start'`. */
  readonly type: 'block-start'
  /** The block index: a non-negative safe integer, numbered in order of first appearance. */
  readonly index: number
  /** The kind of block. */
  readonly blockType: 'text' | 'reasoning' | 'tool-call'
}

/** Appends text to the text or reasoning block at `index`. */
export interface TextDeltaChunk {
  /** `'text-delta'` or `'reasoning-delta'`. */
  readonly type: 'text-delta' | 'reasoning-delta'
  /** The block index: a non-negative safe integer. */
  readonly index: number
  /** The appended text. */
  readonly text: string
}

/** Appends raw argument text to the tool-call block at `index`. */
export interface ToolCallDeltaChunk {
  /** Always `'tool-call-delta'`. */
  readonly type: 'tool-call-delta'
  /** The block index: a non-negative safe integer. */
  readonly index: number
  /** The call id: non-empty, at most 256 characters; on every delta. */
  readonly id: string
  /** The tool name; on the first delta of the call at least. */
  readonly name?: string
  /** The appended raw argument text. */
  readonly argumentsDelta: string
}

/** Closes the block at `index`, carrying the complete block. */
export interface BlockEndChunk {
  /** Always `'block-end'`. */
  readonly type: 'block-end'
  /** The block index: a non-negative safe integer. */
  readonly index: number
  /** The complete block. */
  readonly block: TextBlock | ReasoningBlock | ToolCallBlock
}

/** The call's token usage; at most one, before the `finish`. */
export interface UsageChunk {
  /** Always `'usage'`. */
  readonly type: 'usage'
  /** The counts. */
  readonly usage: TokenUsage
}

/** The last chunk of every stream. */
export interface FinishChunk {
  /** Always `'finish'`. */
  readonly type: 'finish'
  /** How the call finished. */
  readonly reason: FinishReason
  /** The failure: present exactly when `reason` is `'error'` or `'aborted'`. */
  readonly failure?: LlmFailure
  /** The provider's own finish reason, verbatim. */
  readonly providerFinishReason?: string
  /** Provider state to carry into the message source (`ModelMessageSource.replayState`). */
  readonly replayState?: JsonValue
}

/** One element of a model stream, tagged by `type`; every chunk is lossless JSON. */
export type StreamChunk =
  | BlockStartChunk
  | TextDeltaChunk
  | ToolCallDeltaChunk
  | BlockEndChunk
  | UsageChunk
  | FinishChunk

/** The schema of a {@link FinishReason}. */
export const finishReasonSchema = typedSchema<FinishReason>()(
  z.enum(['stop', 'tool-calls', 'max-tokens', 'error', 'aborted']),
)

/** The strict schema of a {@link TokenUsage}. */
export const tokenUsageSchema = typedSchema<TokenUsage>()(
  z.strictObject({
    inputTokens: nonNegativeSafeIntegerSchema,
    outputTokens: nonNegativeSafeIntegerSchema,
    cacheReadTokens: nonNegativeSafeIntegerSchema.exactOptional(),
    cacheWriteTokens: nonNegativeSafeIntegerSchema.exactOptional(),
    reasoningTokens: nonNegativeSafeIntegerSchema.exactOptional(),
    raw: jsonValueSchema.exactOptional(),
  }),
)

const finishChunkObject = z
  .strictObject({
    type: z.literal('finish'),
    reason: finishReasonSchema,
    failure: llmFailureSchema.exactOptional(),
    providerFinishReason: z.string().exactOptional(),
    replayState: jsonValueSchema.exactOptional(),
  })
  .superRefine((chunk, context) => {
    const failed = chunk.reason === 'error' || chunk.reason === 'aborted'
    if (failed && chunk.failure === undefined) {
      context.addIssue({ code: 'custom', path: ['failure'], message: `is required when reason is "${chunk.reason}"` })
    } else if (!failed && chunk.failure !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['failure'],
        message: `is not allowed when reason is "${chunk.reason}"`,
      })
    }
  })

/**
 * The strict schema of a {@link StreamChunk}, discriminated on `type`. A `finish` carries `failure`
 * exactly when its reason is `error` or `aborted`.
 */
export const streamChunkSchema = typedSchema<StreamChunk>()(
  z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('block-start'),
      index: nonNegativeSafeIntegerSchema,
      blockType: z.enum(['text', 'reasoning', 'tool-call']),
    }),
    z.strictObject({
      type: z.enum(['text-delta', 'reasoning-delta']),
      index: nonNegativeSafeIntegerSchema,
      text: z.string(),
    }),
    z.strictObject({
      type: z.literal('tool-call-delta'),
      index: nonNegativeSafeIntegerSchema,
      id: callIdSchema,
      name: nonEmptyStringSchema.exactOptional(),
      argumentsDelta: z.string(),
    }),
    z.strictObject({
      type: z.literal('block-end'),
      index: nonNegativeSafeIntegerSchema,
      block: assistantContentBlockSchema,
    }),
    z.strictObject({
      type: z.literal('usage'),
      usage: tokenUsageSchema,
    }),
    finishChunkObject,
  ]),
)
