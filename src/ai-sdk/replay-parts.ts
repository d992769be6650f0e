/**
 * The logged AI SDK state of an assistant message → what goes back into its prompt message: the
 * `providerOptions` of each content block, and the extra parts (provider-executed tool calls and
 * results, files, opaque reasoning, custom parts) at their places.
 *
 * @module
 */
import type { JsonObject } from '../session/json-value.js'
import type { AiSdkSpecificationVersion } from './ai-sdk-language-model.js'
import type { AiSdkExtraPart, AiSdkFileData, AiSdkMessageState } from './ai-sdk-message-state.js'
import { messageStateOf } from './ai-sdk-message-state.js'

/** One prompt part, as plain data; its exact type depends on the specification version. */
type PromptPart = Readonly<Record<string, unknown>>

type BlockType = 'text' | 'reasoning' | 'tool-call'

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : undefined
}

function text(value: unknown): value is string {
  return typeof value === 'string' && value !== ''
}

/**
 * The arguments of a logged tool call as the `input` a prompt carries: the parsed JSON, or the raw
 * text when the model wrote invalid JSON (the provider then gets it back as written).
 *
 * @internal
 */
export function toolInput(argumentsText: string): unknown {
  try {
    return JSON.parse(argumentsText) as unknown
  } catch {
    return argumentsText
  }
}

/**
 * The `providerOptions` to send with the content block at `position` of a logged assistant
 * message: the metadata recorded for it, when the entry's type matches the block's.
 *
 * @internal
 */
export function providerOptionsAt(
  state: AiSdkMessageState | undefined,
  position: number,
  type: BlockType,
): JsonObject | undefined {
  const parts: unknown = state?.parts
  if (!Array.isArray(parts)) return undefined
  const entry = record(parts[position])
  if (entry === undefined || entry['type'] !== type) return undefined
  const metadata = record(entry['providerMetadata'])
  return metadata === undefined ? undefined : (metadata as JsonObject)
}

/** File data for a prompt part: v4 keeps the tagged form, v2 and v3 take base64 text or a `URL`. */
function promptFileData(data: unknown, version: AiSdkSpecificationVersion): unknown {
  const tagged = record(data) as Partial<AiSdkFileData> | undefined
  if (tagged?.type === 'data' && typeof tagged.data === 'string') {
    return version === 'v4' ? { type: 'data', data: tagged.data } : tagged.data
  }
  if (tagged?.type === 'url' && typeof tagged.url === 'string' && URL.canParse(tagged.url)) {
    const url = new URL(tagged.url)
    return version === 'v4' ? { type: 'url', url } : url
  }
  return undefined
}

/** The output of a provider-executed result, the way the AI SDK itself sends it back. */
function resultOutput(result: unknown, isError: boolean): PromptPart {
  if (isError) return { type: 'error-json', value: result ?? null }
  return typeof result === 'string' ? { type: 'text', value: result } : { type: 'json', value: result ?? null }
}

/**
 * One logged extra part as a prompt part of `version`, or `undefined` when the version has no
 * such part (a reasoning file or a custom part before v4) or the entry is damaged: nothing
 * malformed is ever sent.
 */
function extraPromptPart(part: AiSdkExtraPart, version: AiSdkSpecificationVersion): PromptPart | undefined {
  const metadata = record(part.providerMetadata)
  const options = metadata === undefined ? {} : { providerOptions: metadata }
  switch (part.type) {
    case 'tool-call':
      if (!text(part.toolCallId) || !text(part.toolName) || typeof part.input !== 'string') return undefined
      return {
        type: 'tool-call',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: toolInput(part.input),
        providerExecuted: true,
        ...options,
      }
    case 'tool-result':
      if (!text(part.toolCallId) || !text(part.toolName)) return undefined
      return {
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        output: resultOutput(part.result, part.isError === true),
        ...options,
      }
    case 'file':
    case 'reasoning-file': {
      if (part.type === 'reasoning-file' && version !== 'v4') return undefined
      const data = promptFileData(part.data, version)
      if (data === undefined || !text(part.mediaType)) return undefined
      return { type: part.type, mediaType: part.mediaType, data, ...options }
    }
    case 'reasoning':
      return metadata === undefined ? undefined : { type: 'reasoning', text: '', ...options }
    case 'custom':
      return version === 'v4' && text(part.kind) ? { type: 'custom', kind: part.kind, ...options } : undefined
    default:
      return undefined
  }
}

/**
 * Builds an assistant message's prompt content: `blockPart` for each content block, with the
 * logged extra parts put back at their places, in stream order.
 *
 * @param replayState - the message source's `replayState`
 * @param count - the number of content blocks
 * @param blockPart - the prompt part of the block at a position, given the state
 * @param version - the model's specification version
 * @returns the content
 * @internal
 */
export function assistantContent(
  replayState: unknown,
  count: number,
  blockPart: (position: number, state: AiSdkMessageState | undefined) => PromptPart,
  version: AiSdkSpecificationVersion,
): PromptPart[] {
  const state = messageStateOf(replayState)
  const extras: unknown = state?.content
  const pending = Array.isArray(extras) ? (extras as readonly AiSdkExtraPart[]) : []
  const content: PromptPart[] = []
  let next = 0
  const flush = (position: number): void => {
    while (next < pending.length) {
      const part = record(pending[next]) as AiSdkExtraPart | undefined
      const at = typeof part?.at === 'number' ? part.at : Number.POSITIVE_INFINITY
      if (at > position) return
      next++
      const prompt = part === undefined ? undefined : extraPromptPart(part, version)
      if (prompt !== undefined) content.push(prompt)
    }
  }
  for (let position = 0; position < count; position++) {
    flush(position)
    content.push(blockPart(position, state))
  }
  flush(Number.POSITIVE_INFINITY)
  return content
}
