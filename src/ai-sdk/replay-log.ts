/**
 * The collector of what one call's stream parts leave beside the content blocks: provider
 * metadata per block, and the parts no Yoke block holds. Providers put state on stream parts that
 * they need again on the next call (a reasoning signature, a thought signature on a tool call, an
 * item id, a server-side tool call and its result); it goes into the `finish` chunk's
 * `replayState`, which the log keeps on the assistant message, so a resumed, forked or rebuilt
 * request carries it too. The shape is {@link AiSdkMessageState}, under `aiSdk`.
 *
 * @module
 */
import type { JsonObject, JsonValue } from '../session/json-value.js'
import { isJsonValue } from '../session/snapshot/snapshot-json.js'
import type { AiSdkBlockState, AiSdkExtraPart } from './ai-sdk-message-state.js'

type BlockType = 'text' | 'reasoning' | 'tool-call'
type Metadata = Record<string, Record<string, unknown>>

/** An extra part before its position is known. */
export type PendingExtraPart = AiSdkExtraPart extends infer Part
  ? Part extends AiSdkExtraPart
    ? Omit<Part, 'at'>
    : never
  : never

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : undefined
}

/**
 * Merges one part's metadata into what was collected: per provider, later keys win (a signature
 * arrives last).
 *
 * @internal
 */
export function mergeMetadata(target: Metadata | undefined, value: unknown): Metadata | undefined {
  const incoming = record(value)
  if (incoming === undefined) return target
  const merged: Metadata = target ?? {}
  for (const [provider, fields] of Object.entries(incoming)) {
    const inner = record(fields)
    if (inner !== undefined) merged[provider] = { ...merged[provider], ...inner }
  }
  return merged
}

/**
 * A JSON copy without `undefined` members (a `Date` becomes its ISO string), or `undefined` when
 * the value is not JSON.
 *
 * @internal
 */
export function jsonCopy(value: unknown): JsonValue | undefined {
  try {
    const text = JSON.stringify(value)
    if (text === undefined) return undefined
    const copy: unknown = JSON.parse(text)
    return isJsonValue(copy) ? (copy as JsonValue) : undefined
  } catch {
    return undefined
  }
}

/**
 * A JSON object copy of `providerMetadata`, or `undefined` when there is none.
 *
 * @internal
 */
export function metadataJson(metadata: unknown): JsonObject | undefined {
  const copy = record(metadata) === undefined ? undefined : jsonCopy(metadata)
  return copy === undefined || record(copy) === undefined ? undefined : (copy as JsonObject)
}

type Slot =
  | { readonly kind: 'block'; readonly index: number }
  | { readonly kind: 'extra'; readonly key?: string; part?: PendingExtraPart }

/**
 * Collects what one call's parts leave beside the content blocks, in stream order.
 *
 * @internal
 */
export interface ReplayLog {
  /** A block was opened (its first appearance fixes its place among the extra parts). */
  opened(index: number): void
  /** Notes a part's `providerMetadata` for the block at `index`. */
  note(index: number, metadata: unknown): void
  /** Notes the citations of the text block at `index`. */
  cite(index: number, citations: unknown): void
  /** Records how the block at `index` ended: its type, and whether it has no text (then the assembler drops it). */
  closed(index: number, type: BlockType, empty: boolean): void
  /** Holds a place for an extra part whose content arrives later (a provider call's input streams first). */
  reserve(key: string): void
  /** Adds an extra part, at the place held for `key` if there is one, else here. */
  extra(part: PendingExtraPart, key?: string): void
  /** Keeps a `source` part. */
  source(source: JsonObject): void
  /** Keeps the `stream-start` warnings. */
  warnings(warnings: readonly JsonValue[]): void
  /** Keeps the `response-metadata` fields (later parts win per field). */
  response(fields: JsonObject): void
  /**
   * The replay state for the `finish` chunk, or `undefined` when nothing was kept.
   *
   * @param finishMetadata - the `finish` part's `providerMetadata`
   * @param dropToolCalls - whether the message will drop its tool calls (a `max-tokens` finish)
   */
  replayState(finishMetadata: unknown, dropToolCalls: boolean): JsonValue | undefined
}

/**
 * Creates the collector of one call.
 *
 * @returns the collector
 * @internal
 */
export function createReplayLog(): ReplayLog {
  const slots: Slot[] = []
  const byIndex = new Map<number, Metadata>()
  const citations = new Map<number, JsonValue[]>()
  const blocks = new Map<number, { readonly type: BlockType; readonly empty: boolean }>()
  const sources: JsonObject[] = []
  let warnings: readonly JsonValue[] = []
  let response: JsonObject | undefined

  /** The state of one kept block, or `null`. */
  const blockState = (index: number, type: BlockType): AiSdkBlockState | null => {
    const providerMetadata = metadataJson(byIndex.get(index))
    const cited = citations.get(index)
    if (providerMetadata === undefined && cited === undefined) return null
    return {
      type,
      ...(providerMetadata !== undefined && { providerMetadata }),
      ...(cited !== undefined && { citations: cited }),
    }
  }

  return {
    opened(index) {
      slots.push({ kind: 'block', index })
    },
    note(index, metadata) {
      const merged = mergeMetadata(byIndex.get(index), metadata)
      if (merged !== undefined) byIndex.set(index, merged)
    },
    cite(index, value) {
      if (!Array.isArray(value)) return
      const copy = jsonCopy(value)
      if (Array.isArray(copy) && copy.length > 0) citations.set(index, [...(citations.get(index) ?? []), ...copy])
    },
    closed(index, type, empty) {
      blocks.set(index, { type, empty })
    },
    reserve(key) {
      slots.push({ kind: 'extra', key })
    },
    extra(part, key) {
      const held = key === undefined ? undefined : slots.find((slot) => slot.kind === 'extra' && slot.key === key)
      if (held !== undefined && held.kind === 'extra' && held.part === undefined) held.part = part
      else slots.push({ kind: 'extra', part })
    },
    source(source) {
      sources.push(source)
    },
    warnings(list) {
      warnings = list
    },
    response(fields) {
      response = { ...response, ...fields }
    },
    replayState(finishMetadata, dropToolCalls) {
      // The same rule as the assembler: blocks in order of first appearance, empty text and
      // reasoning dropped, tool calls dropped when the output was cut. What is dropped but carries
      // reasoning metadata (redacted or encrypted reasoning) goes back as an extra part instead.
      const parts: (AiSdkBlockState | null)[] = []
      const content: AiSdkExtraPart[] = []
      for (const slot of slots) {
        if (slot.kind === 'extra') {
          if (slot.part !== undefined) content.push({ ...slot.part, at: parts.length } as AiSdkExtraPart)
          continue
        }
        const block = blocks.get(slot.index)
        if (block === undefined) continue
        if (block.type === 'tool-call' ? !dropToolCalls : !block.empty) {
          parts.push(blockState(slot.index, block.type))
          continue
        }
        const providerMetadata = metadataJson(byIndex.get(slot.index))
        if (block.type === 'reasoning' && providerMetadata !== undefined) {
          content.push({ type: 'reasoning', text: '', providerMetadata, at: parts.length })
        }
      }
      const finish = metadataJson(finishMetadata)
      const state: Record<string, JsonValue> = {}
      if (parts.some((part) => part !== null)) state['parts'] = parts as unknown as JsonValue
      if (finish !== undefined) state['finish'] = finish
      if (content.length > 0) state['content'] = content as unknown as JsonValue
      if (sources.length > 0) state['sources'] = sources
      if (warnings.length > 0) state['warnings'] = warnings
      if (response !== undefined && Object.keys(response).length > 0) state['response'] = response
      return Object.keys(state).length === 0 ? undefined : { aiSdk: state }
    },
  }
}
