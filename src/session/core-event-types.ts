import { type ZodType, z } from 'zod'
import type { JsonValue } from './json-value.js'
import { type LlmFailure, llmFailureSchema } from './llm-failure.js'
import {
  type AssistantMessage,
  assistantMessageSchema,
  type ToolResultMessage,
  toolResultMessageSchema,
  type UserMessage,
  userMessageSchema,
} from './message.js'
import { type RequestHeader, requestHeaderSchema } from './request-header.js'
import { type ResponseFormat, responseFormatSchema } from './response-format.js'
import {
  callIdSchema,
  jsonValueSchema,
  nonEmptyStringSchema,
  nonNegativeSafeIntegerSchema,
  positiveSafeIntegerSchema,
  typedSchema,
} from './schema-primitives.js'
import type { SessionEvent } from './session-event.js'
import { type StreamChunk, streamChunkSchema, type TokenUsage, tokenUsageSchema } from './stream-chunk.js'
import { type TurnEndReason, turnEndReasonSchema } from './turn-end-reason.js'

/** Marks an event written by crash repair rather than by the loop. */
export interface SyntheticMeta {
  /** Always `true`. */
  readonly synthetic: true
}

/** `turn/start`: a turn opens. */
export interface TurnStartData {
  /** The turn number: a positive safe integer, the next one in the log. */
  readonly turn: number
}

/** `turn/end`: the open turn closes. */
export interface TurnEndData {
  /** The turn number of the open turn. */
  readonly turn: number
  /** Why it ended. */
  readonly reason: TurnEndReason
  /** The real failure behind an `aborted` end. */
  readonly cause?: LlmFailure
  /** Present on the closers crash repair writes. */
  readonly meta?: SyntheticMeta
}

/** `step/start`: a step of the open turn opens. */
export interface StepStartData {
  /** The open turn's number. */
  readonly turn: number
  /** The step number: a positive safe integer, the next one in the turn. */
  readonly step: number
}

/** `step/end`: the open step closes; every call of it is answered. */
export interface StepEndData {
  /** The open turn's number. */
  readonly turn: number
  /** The open step's number. */
  readonly step: number
  /** Present on the closers crash repair writes. */
  readonly meta?: SyntheticMeta
}

/** `user/message`: the data is the message itself. */
export type UserMessageData = UserMessage

/** `assistant/chunk`: one stream chunk of the open step's model call. */
export interface AssistantChunkData {
  /** The open turn's number. */
  readonly turn: number
  /** The open step's number. */
  readonly step: number
  /** The chunk, verbatim. */
  readonly chunk: StreamChunk
}

/** `assistant/message`: what the model answered in the open step. */
export interface AssistantMessageData {
  /** The open turn's number. */
  readonly turn: number
  /** The open step's number. */
  readonly step: number
  /** The message; its tool-call blocks become requested calls. */
  readonly message: AssistantMessage
  /** The call's token usage. */
  readonly usage?: TokenUsage
  /** Set when the stream was canceled and this is the surviving text/reasoning prefix. */
  readonly interrupted?: true
}

/** `tool/call`: a tool call starts executing. */
export interface ToolCallData {
  /** The open turn's number. */
  readonly turn: number
  /** The open step's number. */
  readonly step: number
  /** The call id: non-empty, at most 256 characters. */
  readonly callId: string
  /** The tool name; non-empty. */
  readonly name: string
  /** The model's raw argument text, unparsed. */
  readonly arguments: string
}

/** The failure a tool result stands for. */
export interface ToolResultError {
  /** The error class name, e.g. `'InterruptedToolCallError'`; non-empty. */
  readonly name: string
  /** The error code, e.g. `'TOOL_NOT_STARTED'`; non-empty. */
  readonly code: string
}

/** `tool/result`: the answer to a call (append form) or a content rewrite of one (replace form). */
export interface ToolResultData {
  /** The open turn's number. */
  readonly turn: number
  /** The step of the answered call. */
  readonly step: number
  /** The result message. */
  readonly message: ToolResultMessage
  /** Set when the call failed; its block then has `isError: true`. */
  readonly error?: ToolResultError
  /** Tool-specific facts, any JSON. */
  readonly meta?: JsonValue
}

/** Why a `request/header` was logged. */
export type RequestHeaderReason = 'initial' | 'resume' | 'change'

/** `request/header`: the header of the next model requests. */
export interface RequestHeaderData {
  /** The full header snapshot. */
  readonly header: RequestHeader
  /** `initial` for the log's first, `resume` for a new loop instance's first, `change` otherwise. */
  readonly reason: RequestHeaderReason
}

/** `request/context`: the route and window of the next model requests. */
export interface RequestContextData {
  /** The provider route id; non-empty. */
  readonly provider: string
  /** The model id; non-empty. */
  readonly model: string
  /** The model's context window in tokens: a positive safe integer. */
  readonly contextWindow?: number
}

/** `agent/inbox/spliced`: queued input was inserted into (or removed from) a turn. */
export interface AgentInboxSplicedData {
  /** Which queue was spliced. */
  readonly target: 'next-turn' | 'next-step'
  /** The queue position: a non-negative safe integer. */
  readonly start: number
  /** How many queued entries were removed: a positive safe integer. */
  readonly removedCount?: number
  /** The messages inserted at `start`. */
  readonly inserted: readonly UserMessage[]
  /** Set when the splice cancels queued work. */
  readonly outcome?: 'canceled'
}

/**
 * `agent/run-options`: the per-run settings of a prompt queued by `agent.run()` / `agent.stream()`,
 * logged just before the prompt is queued, so the turn that claims it (in this process or after a
 * resume) makes the same requests. Absent fields fall back to the agent's options.
 */
export interface AgentRunOptionsData {
  /** The queued prompt's message id. */
  readonly messageId: string
  /** The turn's step limit: a positive safe integer, or `null` for no limit. */
  readonly maxSteps?: number | null
  /** The JSON shape the turn's answer must have. */
  readonly responseFormat?: ResponseFormat
  /** How many repair steps an invalid answer gets: a non-negative safe integer. */
  readonly outputRepairs?: number
}

/** `session/end-seed`: the marker closing inherited history; always `{}`. */
export type SessionEndSeedData = Readonly<Record<string, never>>

/** The payload of each core event type, keyed by type. */
export interface CoreEventData {
  /** A turn opens. */
  'turn/start': TurnStartData
  /** The open turn closes. */
  'turn/end': TurnEndData
  /** A step opens. */
  'step/start': StepStartData
  /** The open step closes. */
  'step/end': StepEndData
  /** A user-role message (surface). */
  'user/message': UserMessageData
  /** One stream chunk. */
  'assistant/chunk': AssistantChunkData
  /** The model's answer (surface). */
  'assistant/message': AssistantMessageData
  /** A tool call starts. */
  'tool/call': ToolCallData
  /** A tool call's answer (surface). */
  'tool/result': ToolResultData
  /** The request header. */
  'request/header': RequestHeaderData
  /** The request route and window. */
  'request/context': RequestContextData
  /** An inbox splice. */
  'agent/inbox/spliced': AgentInboxSplicedData
  /** A queued prompt's per-run settings. */
  'agent/run-options': AgentRunOptionsData
  /** The end-of-seed marker. */
  'session/end-seed': SessionEndSeedData
}

/** A core event type name. */
export type CoreEventType = keyof CoreEventData

/** A committed event of a core type, typed by its payload; a union over `T`. */
export type CoreSessionEvent<T extends CoreEventType = CoreEventType> = {
  [K in T]: SessionEvent<K, CoreEventData[K]>
}[T]

/** How the catalog describes one event type. */
export interface SessionEventTypeDefinition {
  /** The `noun/verb` name. */
  readonly type: string
  /** Checks the data (the parse result is discarded); `undefined` for none. */
  readonly schema: ZodType | undefined
  /** Whether the type is one of the three surface types. */
  readonly surface: boolean
  /** Whether the type is built in. */
  readonly core: boolean
  /**
   * What must be open when it is appended. For core types this is informational: the least their
   * own structure rules require.
   */
  readonly enclosure: 'none' | 'turn' | 'step'
}

const turn = positiveSafeIntegerSchema
const step = positiveSafeIntegerSchema
const syntheticMetaSchema = z.strictObject({ synthetic: z.literal(true) })

/** The strict schema of {@link TurnStartData}. */
export const turnStartDataSchema = typedSchema<TurnStartData>()(z.strictObject({ turn }))

/** The strict schema of {@link TurnEndData}. */
export const turnEndDataSchema = typedSchema<TurnEndData>()(
  z.strictObject({
    turn,
    reason: turnEndReasonSchema,
    cause: llmFailureSchema.exactOptional(),
    meta: syntheticMetaSchema.exactOptional(),
  }),
)

/** The strict schema of {@link StepStartData}. */
export const stepStartDataSchema = typedSchema<StepStartData>()(z.strictObject({ turn, step }))

/** The strict schema of {@link StepEndData}. */
export const stepEndDataSchema = typedSchema<StepEndData>()(
  z.strictObject({ turn, step, meta: syntheticMetaSchema.exactOptional() }),
)

/** The strict schema of {@link AssistantChunkData}. */
export const assistantChunkDataSchema = typedSchema<AssistantChunkData>()(
  z.strictObject({ turn, step, chunk: streamChunkSchema }),
)

/** The strict schema of {@link AssistantMessageData}. */
export const assistantMessageDataSchema = typedSchema<AssistantMessageData>()(
  z.strictObject({
    turn,
    step,
    message: assistantMessageSchema,
    usage: tokenUsageSchema.exactOptional(),
    interrupted: z.literal(true).exactOptional(),
  }),
)

/** The strict schema of {@link ToolCallData}. */
export const toolCallDataSchema = typedSchema<ToolCallData>()(
  z.strictObject({
    turn,
    step,
    callId: callIdSchema,
    name: nonEmptyStringSchema,
    arguments: z.string(),
  }),
)

/** The strict schema of {@link ToolResultData}: with `error`, the block must have `isError: true`. */
export const toolResultDataSchema = typedSchema<ToolResultData>()(
  z
    .strictObject({
      turn,
      step,
      message: toolResultMessageSchema,
      error: z.strictObject({ name: nonEmptyStringSchema, code: nonEmptyStringSchema }).exactOptional(),
      meta: jsonValueSchema.exactOptional(),
    })
    .superRefine((data, context) => {
      if (data.error !== undefined && data.message.content[0].isError !== true) {
        context.addIssue({
          code: 'custom',
          path: ['message', 'content', 0, 'isError'],
          message: 'must be true when the result has an error',
        })
      }
    }),
)

/** The strict schema of {@link RequestHeaderData}. */
export const requestHeaderDataSchema = typedSchema<RequestHeaderData>()(
  z.strictObject({
    header: requestHeaderSchema,
    reason: z.enum(['initial', 'resume', 'change']),
  }),
)

/** The strict schema of {@link RequestContextData}. */
export const requestContextDataSchema = typedSchema<RequestContextData>()(
  z.strictObject({
    provider: nonEmptyStringSchema,
    model: nonEmptyStringSchema,
    contextWindow: positiveSafeIntegerSchema.exactOptional(),
  }),
)

/** The strict schema of {@link AgentInboxSplicedData}. */
export const agentInboxSplicedDataSchema = typedSchema<AgentInboxSplicedData>()(
  z.strictObject({
    target: z.enum(['next-turn', 'next-step']),
    start: nonNegativeSafeIntegerSchema,
    removedCount: positiveSafeIntegerSchema.exactOptional(),
    inserted: z.array(userMessageSchema),
    outcome: z.literal('canceled').exactOptional(),
  }),
)

/** The strict schema of {@link AgentRunOptionsData}. */
export const agentRunOptionsDataSchema = typedSchema<AgentRunOptionsData>()(
  z.strictObject({
    messageId: nonEmptyStringSchema,
    maxSteps: positiveSafeIntegerSchema.nullable().exactOptional(),
    responseFormat: responseFormatSchema.exactOptional(),
    outputRepairs: nonNegativeSafeIntegerSchema.exactOptional(),
  }),
)

/** The strict schema of {@link SessionEndSeedData}: exactly `{}`. */
export const sessionEndSeedDataSchema = typedSchema<SessionEndSeedData>()(z.strictObject({}))

function core(type: CoreEventType, schema: ZodType, enclosure: 'none' | 'turn' | 'step'): SessionEventTypeDefinition {
  return Object.freeze({ type, schema, surface: isSurfaceType(type), core: true, enclosure })
}

const definitions: readonly SessionEventTypeDefinition[] = Object.freeze([
  core('turn/start', turnStartDataSchema, 'none'),
  core('turn/end', turnEndDataSchema, 'turn'),
  core('step/start', stepStartDataSchema, 'turn'),
  core('step/end', stepEndDataSchema, 'step'),
  core('user/message', userMessageSchema, 'none'),
  core('assistant/chunk', assistantChunkDataSchema, 'step'),
  core('assistant/message', assistantMessageDataSchema, 'step'),
  core('tool/call', toolCallDataSchema, 'step'),
  core('tool/result', toolResultDataSchema, 'turn'),
  core('request/header', requestHeaderDataSchema, 'turn'),
  core('request/context', requestContextDataSchema, 'turn'),
  core('agent/inbox/spliced', agentInboxSplicedDataSchema, 'none'),
  core('agent/run-options', agentRunOptionsDataSchema, 'none'),
  core('session/end-seed', sessionEndSeedDataSchema, 'none'),
])

/**
 * The core event types, in declaration order, keyed by type. Each call returns a fresh map of the
 * same frozen definitions, so a caller may extend its copy.
 *
 * @returns the core catalog
 * @example
 * ```ts
 * const schema = coreEventTypes().get('turn/start')?.schema
 * ```
 */
export function coreEventTypes(): ReadonlyMap<string, SessionEventTypeDefinition> {
  return new Map(definitions.map((definition) => [definition.type, definition]))
}

/**
 * Whether a type is a surface type: exactly `user/message`, `assistant/message` and `tool/result`.
 *
 * @param type - an event type name
 * @returns `true` for the three message event types
 */
export function isSurfaceType(type: string): boolean {
  return type === 'user/message' || type === 'assistant/message' || type === 'tool/result'
}
