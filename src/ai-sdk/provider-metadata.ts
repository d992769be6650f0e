/**
 * AI SDK `providerMetadata` kept in the log and sent back as `providerOptions`. Providers put
 * state on stream parts that they need again on the next call (a reasoning signature, a thought
 * signature on a tool call, an item id); it goes into the `finish` chunk's `replayState`, which the
 * log keeps on the assistant message, so a resumed, forked or rebuilt request carries it too.
 *
 * The replay state is `{ aiSdk: { parts, finish? } }`: `parts` lines up with the assistant
 * message's content (one entry per block, `null` where the provider sent no metadata) and each
 * entry names its block type, so a mismatch is never sent to the provider; `finish` is the
 * metadata of the `finish` part, kept for the record.
 *
 * @module
 */
import type { JsonObject, JsonValue } from '../session/json-value.js'
import { isJsonValue } from '../session/snapshot/snapshot-json.js'

type BlockType = 'text' | 'reasoning' | 'tool-call'
type Metadata = Record<string, Record<string, unknown>>

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : undefined
}

/** Merges one part's metadata into a block's: per provider, later keys win (a signature arrives last). */
function merge(target: Metadata | undefined, value: unknown): Metadata | undefined {
  const incoming = record(value)
  if (incoming === undefined) return target
  const merged: Metadata = target ?? {}
  for (const [provider, fields] of Object.entries(incoming)) {
    const inner = record(fields)
    if (inner !== undefined) merged[provider] = { ...merged[provider], ...inner }
  }
  return merged
}

/** A JSON copy without `undefined` members, or `undefined` when the value is not JSON. */
function json(value: unknown): JsonValue | undefined {
  try {
    const copy: unknown = JSON.parse(JSON.stringify(value))
    return isJsonValue(copy) ? (copy as JsonValue) : undefined
  } catch {
    return undefined
  }
}

/**
 * Collects the metadata of one call's blocks.
 *
 * @internal
 */
export interface MetadataLog {
  /** Notes a part's `providerMetadata` for the block at `index`. */
  note(index: number, metadata: unknown): void
  /** Records how the block at `index` ended: its type, and whether it has no text (then the assembler drops it). */
  closed(index: number, type: BlockType, empty: boolean): void
  /**
   * The replay state for the `finish` chunk, or `undefined` when no part carried metadata.
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
export function createMetadataLog(): MetadataLog {
  const byIndex = new Map<number, Metadata>()
  const blocks = new Map<number, { readonly type: BlockType; readonly empty: boolean }>()
  return {
    note(index, metadata) {
      const merged = merge(byIndex.get(index), metadata)
      if (merged !== undefined) byIndex.set(index, merged)
    },
    closed(index, type, empty) {
      blocks.set(index, { type, empty })
    },
    replayState(finishMetadata, dropToolCalls) {
      // The same rule as the assembler: blocks in index order, empty text and reasoning dropped,
      // tool calls dropped when the output was cut.
      const parts: JsonValue[] = []
      let any = false
      for (const index of [...blocks.keys()].sort((left, right) => left - right)) {
        const block = blocks.get(index) as { readonly type: BlockType; readonly empty: boolean }
        if (block.type === 'tool-call' ? dropToolCalls : block.empty) continue
        const metadata = json(byIndex.get(index))
        if (metadata === undefined) {
          parts.push(null)
        } else {
          any = true
          parts.push({ type: block.type, providerMetadata: metadata })
        }
      }
      const finish = json(record(finishMetadata))
      if (!any && finish === undefined) return undefined
      const state: JsonObject = { parts, ...(finish !== undefined && { finish }) }
      return { aiSdk: state }
    },
  }
}

/**
 * The `providerOptions` to send with the content block at `position` of a logged assistant
 * message: the metadata recorded for it, when the entry's type matches the block's.
 *
 * @param replayState - the message source's `replayState`
 * @param position - the block's position in the message content
 * @param type - the block's type
 * @returns the options, or `undefined`
 * @internal
 */
export function providerOptionsAt(replayState: unknown, position: number, type: BlockType): JsonValue | undefined {
  const parts = record(record(record(replayState)?.['aiSdk']))?.['parts']
  if (!Array.isArray(parts)) return undefined
  const entry = record(parts[position])
  if (entry === undefined || entry['type'] !== type) return undefined
  const metadata = record(entry['providerMetadata'])
  return metadata === undefined ? undefined : (metadata as JsonObject)
}
