/**
 * What `yoke/ai-sdk` keeps in the log for one assistant message, beside its content blocks, and
 * the reader for it.
 *
 * @module
 */
import type { JsonObject, JsonValue } from '../session/json-value.js'
import type { AssistantMessage } from '../session/message.js'

/** The state of one content block of the message (the block at the same position). */
export interface AiSdkBlockState {
  /** The block's type, checked before anything is sent back. */
  readonly type: 'text' | 'reasoning' | 'tool-call'
  /** The `providerMetadata` of the block's stream parts, merged; sent back as `providerOptions`. */
  readonly providerMetadata?: JsonObject
  /** The citations of a text block (specification v4 `text-end`), as JSON. */
  readonly citations?: readonly JsonValue[]
}

/**
 * File data as logged: base64 bytes, or a URL. (A provider that streams bytes has them stored
 * as base64.)
 */
export type AiSdkFileData =
  | {
      /** Inline data. */
      readonly type: 'data'
      /** The bytes, base64. */
      readonly data: string
    }
  | {
      /** A link. */
      readonly type: 'url'
      /** The URL. */
      readonly url: string
    }

/** Where an extra part goes back into the assistant message, and its provider metadata. */
export interface AiSdkExtraPartBase {
  /** The position in the message's content the part stands before (the content length: after it). */
  readonly at: number
  /** The part's `providerMetadata`, sent back as `providerOptions`. */
  readonly providerMetadata?: JsonObject
}

/** A tool call the provider ran itself (`providerExecuted: true`): never run by Yoke. */
export interface AiSdkProviderToolCall extends AiSdkExtraPartBase {
  /** Always `'tool-call'`. */
  readonly type: 'tool-call'
  /** The call id. */
  readonly toolCallId: string
  /** The provider's tool name, e.g. `'web_search'`. */
  readonly toolName: string
  /** The input text, as the provider sent it. */
  readonly input: string
  /** Always `true`. */
  readonly providerExecuted: true
  /** Whether the provider called it a dynamic tool. */
  readonly dynamic?: boolean
}

/** The result of a provider-executed tool call (preliminary results are not kept). */
export interface AiSdkProviderToolResult extends AiSdkExtraPartBase {
  /** Always `'tool-result'`. */
  readonly type: 'tool-result'
  /** The call id it answers. */
  readonly toolCallId: string
  /** The provider's tool name. */
  readonly toolName: string
  /** The result, as JSON. */
  readonly result: JsonValue
  /** Whether the provider marked it an error. */
  readonly isError?: boolean
  /** Whether the provider called it a dynamic tool. */
  readonly dynamic?: boolean
}

/** A file the model generated (a `file` part), or one it generated while reasoning (`reasoning-file`, v4). */
export interface AiSdkFilePart extends AiSdkExtraPartBase {
  /** `'file'` or `'reasoning-file'`. */
  readonly type: 'file' | 'reasoning-file'
  /** The IANA media type. */
  readonly mediaType: string
  /** The data. */
  readonly data: AiSdkFileData
}

/**
 * A reasoning part with no text whose metadata carries the provider's data (redacted or
 * encrypted reasoning): it has no content block, since an empty block is dropped.
 */
export interface AiSdkOpaqueReasoning extends AiSdkExtraPartBase {
  /** Always `'reasoning'`. */
  readonly type: 'reasoning'
  /** Always `''`. */
  readonly text: ''
}

/** A provider-specific content part (`custom`, v4). */
export interface AiSdkCustomPart extends AiSdkExtraPartBase {
  /** Always `'custom'`. */
  readonly type: 'custom'
  /** The provider's kind, e.g. `'openai.compaction'`. */
  readonly kind: string
}

/** Assistant content that no Yoke content block holds, kept so it goes back to the provider. */
export type AiSdkExtraPart =
  | AiSdkProviderToolCall
  | AiSdkProviderToolResult
  | AiSdkFilePart
  | AiSdkOpaqueReasoning
  | AiSdkCustomPart

/**
 * Everything `yoke/ai-sdk` logged for one assistant message, in its source's `replayState` under
 * `aiSdk`. All of it is plain JSON, so the log stays the truth: a resumed, forked or rebuilt
 * request carries the same state and the provider gets the same prompt.
 */
export interface AiSdkMessageState {
  /** One entry per content block of the message (`null` where there is nothing); absent when all would be `null`. */
  readonly parts?: readonly (AiSdkBlockState | null)[]
  /** The `finish` part's `providerMetadata`, for the record. */
  readonly finish?: JsonObject
  /** Provider-executed tool calls and results, files, opaque reasoning and custom parts, in stream order. */
  readonly content?: readonly AiSdkExtraPart[]
  /** The `source` parts (URLs and documents the answer cites), for the application; never sent back. */
  readonly sources?: readonly JsonObject[]
  /** The `stream-start` warnings (unsupported settings and the like), when there were any. */
  readonly warnings?: readonly JsonValue[]
  /** The `response-metadata` part: `id`, `modelId`, `timestamp` (an ISO string), … */
  readonly response?: JsonObject
}

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : undefined
}

/**
 * The AI SDK state of a replay state value, or `undefined` when it holds none.
 *
 * @internal
 */
export function messageStateOf(replayState: unknown): AiSdkMessageState | undefined {
  return record(record(replayState)?.['aiSdk']) as AiSdkMessageState | undefined
}

/**
 * Reads what `yoke/ai-sdk` logged for an assistant message beside its content: the sources the
 * answer cites, provider-executed tool calls and their results, generated files, warnings and the
 * response id. Messages of other adapters have none.
 *
 * @param message - an assistant message, e.g. from an `assistant/message` event or `deriveMessages()`
 * @returns the state, or `undefined`
 * @example
 * ```ts
 * for (const message of agent.session.deriveMessages()) {
 *   if (message.role !== 'assistant') continue
 *   for (const source of aiSdkMessageState(message)?.sources ?? []) console.log(source['url'])
 * }
 * ```
 */
export function aiSdkMessageState(message: AssistantMessage): AiSdkMessageState | undefined {
  return messageStateOf(message.source.replayState)
}
