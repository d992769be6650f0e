/**
 * AI SDK stream parts (v2, v3, v4) → Yoke {@link StreamChunk}s, in one pass.
 *
 * @module
 */
import { modelFailure } from '../model/failure-defaults.js'
import type { LlmFailure } from '../session/llm-failure.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import { streamErrorFailure } from './api-call-failure.js'
import { createExtraParts } from './extra-parts.js'
import { mapFinishReason, mapUsage } from './map-finish.js'
import { createReplayLog } from './replay-log.js'

/**
 * Turns stream parts into chunks. Each call returns the chunks it completed; once a `finish` has
 * been returned the translator ignores everything else.
 *
 * @internal
 */
export interface PartTranslator {
  /** Feeds the next stream part. */
  push(part: unknown): StreamChunk[]
  /** The stream ended: a `STREAM_CLOSED` failure unless a `finish` was seen. */
  end(): StreamChunk[]
  /** Ends the stream with a failure from outside the parts (a thrown error, an abort). */
  fail(reason: 'error' | 'aborted', failure: LlmFailure): StreamChunk[]
  /** Whether the `finish` was returned. */
  readonly finished: boolean
}

interface TextualBlock {
  readonly kind: 'text' | 'reasoning'
  readonly index: number
  readonly parts: string[]
}

interface ToolBlock {
  readonly index: number
  readonly name: string
  readonly parts: string[]
}

type Part = Readonly<Record<string, unknown>>

function asPart(value: unknown): Part | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Part) : undefined
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * Creates a translator for one call. Text and reasoning blocks are keyed by kind and part id, so
 * several may be open at once; each gets the next block index when it starts. A tool call's block
 * opens at `tool-input-start` (or at the `tool-call` part when the provider streams no input) and
 * closes at the `tool-call` part, whose `input` is the final argument text. Provider-executed tool
 * calls never become blocks (Yoke must never run them): they, their results, files, sources,
 * warnings and response metadata go to the replay state of the `finish` chunk.
 *
 * @param now - the clock, for `retry-after` dates in in-band errors
 * @returns the translator
 * @internal
 */
export function createPartTranslator(now: () => number): PartTranslator {
  let out: StreamChunk[] = []
  let nextIndex = 0
  let finished = false
  const textual = new Map<string, TextualBlock>()
  const tools = new Map<string, ToolBlock>()
  const usedIds = new Set<string>()
  const metadata = createReplayLog()

  const terminate = (chunks: readonly StreamChunk[]): void => {
    out.push(...chunks)
    finished = true
  }
  const malformed = (message: string, detail: Readonly<Record<string, string>>): void => {
    terminate([
      {
        type: 'finish',
        reason: 'error',
        failure: modelFailure('MALFORMED_RESPONSE', message, 'streaming', { detail }),
      },
    ])
  }

  const extras = createExtraParts(metadata, malformed, (id) => usedIds.has(`tool:${id}`))

  const startTextual = (kind: 'text' | 'reasoning', id: string): TextualBlock | undefined => {
    const key = `${kind}:${id}`
    if (usedIds.has(key)) {
      malformed(`the provider started ${kind} part id "${id}" twice`, { part: `${kind}-start`, id })
      return undefined
    }
    usedIds.add(key)
    const block: TextualBlock = { kind, index: nextIndex++, parts: [] }
    textual.set(key, block)
    metadata.opened(block.index)
    out.push({ type: 'block-start', index: block.index, blockType: kind })
    return block
  }
  const openTextual = (kind: 'text' | 'reasoning', id: string, partType: string): TextualBlock | undefined => {
    const block = textual.get(`${kind}:${id}`)
    if (block === undefined)
      malformed(`the provider sent ${partType} for ${kind} part id "${id}", which is not open`, { part: partType, id })
    return block
  }
  const closeTextual = (key: string, block: TextualBlock): void => {
    textual.delete(key)
    const text = block.parts.join('')
    metadata.closed(block.index, block.kind, text === '')
    out.push({ type: 'block-end', index: block.index, block: { type: block.kind, text } })
  }

  const startTool = (id: string, name: string): ToolBlock => {
    usedIds.add(`tool:${id}`)
    const block: ToolBlock = { index: nextIndex++, name, parts: [] }
    tools.set(id, block)
    metadata.opened(block.index)
    out.push({ type: 'block-start', index: block.index, blockType: 'tool-call' })
    out.push({ type: 'tool-call-delta', index: block.index, id, name, argumentsDelta: '' })
    return block
  }
  const closeTool = (id: string, block: ToolBlock, argumentsText: string): void => {
    tools.delete(id)
    metadata.closed(block.index, 'tool-call', false)
    out.push({
      type: 'block-end',
      index: block.index,
      block: { type: 'tool-call', id, name: block.name, arguments: argumentsText },
    })
  }

  /** Closes what is still open, in index order, so a finish keeps every streamed block. */
  const closeAll = (): void => {
    const open: { index: number; close: () => void }[] = []
    for (const [key, block] of textual) open.push({ index: block.index, close: () => closeTextual(key, block) })
    for (const [id, block] of tools)
      open.push({ index: block.index, close: () => closeTool(id, block, block.parts.join('')) })
    for (const entry of open.sort((left, right) => left.index - right.index)) entry.close()
  }

  const toolCall = (part: Part): void => {
    const id = nonEmpty(part['toolCallId'])
    const name = nonEmpty(part['toolName'])
    const input = part['input']
    if (id === undefined || name === undefined || typeof input !== 'string') {
      malformed('the provider sent a tool-call part without a toolCallId, a toolName or a string input', {
        part: 'tool-call',
      })
      return
    }
    const open = tools.get(id)
    if (part['providerExecuted'] === true || extras.isProviderCall(id)) {
      // A call Yoke already streamed as its own cannot turn into the provider's: it would run twice.
      if (open !== undefined) {
        const message = `the provider sent tool call id "${id}" as provider-executed after streaming it as a call Yoke runs`
        malformed(message, { part: 'tool-call', id })
      } else {
        extras.providerCall(id, name, input, part)
      }
      return
    }
    if (open !== undefined) {
      metadata.note(open.index, part['providerMetadata'])
      closeTool(id, open, input)
      return
    }
    if (usedIds.has(`tool:${id}`)) {
      malformed(`the provider sent tool call id "${id}" twice`, { part: 'tool-call', id })
      return
    }
    const block = startTool(id, name)
    metadata.note(block.index, part['providerMetadata'])
    closeTool(id, block, input)
  }

  const handle = (part: Part): void => {
    const type = part['type']
    const id = typeof part['id'] === 'string' ? part['id'] : ''
    switch (type) {
      case 'text-start':
      case 'reasoning-start': {
        const block = startTextual(type === 'text-start' ? 'text' : 'reasoning', id)
        if (block !== undefined) metadata.note(block.index, part['providerMetadata'])
        return
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = type === 'text-delta' ? 'text' : 'reasoning'
        const block = openTextual(kind, id, type)
        const delta = part['delta']
        if (block === undefined) return
        // A signature often comes on a delta with no text: the metadata counts even then.
        metadata.note(block.index, part['providerMetadata'])
        if (typeof delta !== 'string' || delta === '') return
        block.parts.push(delta)
        out.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', index: block.index, text: delta })
        return
      }
      case 'text-end':
      case 'reasoning-end': {
        const kind = type === 'text-end' ? 'text' : 'reasoning'
        const block = openTextual(kind, id, type)
        if (block === undefined) return
        metadata.note(block.index, part['providerMetadata'])
        if (kind === 'text') metadata.cite(block.index, part['citations'])
        closeTextual(`${kind}:${id}`, block)
        return
      }
      case 'tool-input-start': {
        const name = nonEmpty(part['toolName'])
        if (part['providerExecuted'] === true) {
          extras.providerInputStart(id, part)
          return
        }
        if (id === '' || name === undefined) {
          malformed('the provider sent a tool-input-start part without an id or a toolName', { part: type })
          return
        }
        if (usedIds.has(`tool:${id}`) || extras.isProviderCall(id)) {
          malformed(`the provider started tool input id "${id}" twice`, { part: type, id })
          return
        }
        metadata.note(startTool(id, name).index, part['providerMetadata'])
        return
      }
      case 'tool-input-delta': {
        if (extras.isProviderCall(id)) {
          extras.providerInputNote(id, part)
          return
        }
        const block = tools.get(id)
        const delta = part['delta']
        if (block === undefined) {
          malformed(`the provider sent tool-input-delta for tool input id "${id}", which is not open`, {
            part: type,
            id,
          })
          return
        }
        metadata.note(block.index, part['providerMetadata'])
        if (typeof delta !== 'string' || delta === '') return
        block.parts.push(delta)
        out.push({ type: 'tool-call-delta', index: block.index, id, name: block.name, argumentsDelta: delta })
        return
      }
      case 'tool-input-end': {
        // The block stays open for the `tool-call` part, which carries the final input.
        const block = tools.get(id)
        if (block !== undefined) metadata.note(block.index, part['providerMetadata'])
        else extras.providerInputNote(id, part)
        return
      }
      case 'tool-call':
        toolCall(part)
        return
      case 'error':
        terminate([{ type: 'finish', reason: 'error', failure: streamErrorFailure(part['error'], now()) }])
        return
      case 'finish': {
        closeAll()
        const usage = mapUsage(part['usage'])
        const finish = mapFinishReason(part['finishReason'])
        const replayState =
          finish.reason === 'error'
            ? undefined
            : metadata.replayState(part['providerMetadata'], finish.reason === 'max-tokens')
        terminate([
          ...(usage === undefined ? [] : [{ type: 'usage', usage } as const]),
          replayState === undefined ? finish : { ...finish, replayState },
        ])
        return
      }
      case 'tool-result':
        extras.toolResult(part)
        return
      case 'file':
      case 'reasoning-file':
        extras.file(part)
        return
      case 'custom':
        extras.custom(part)
        return
      case 'source':
        extras.source(part)
        return
      case 'stream-start':
        extras.streamStart(part)
        return
      case 'response-metadata':
        extras.responseMetadata(part)
        return
      default:
        // `raw` chunks only come when asked for; tool approval requests need an approval flow
        // Yoke does not have for provider tools; unknown part types of later versions are skipped.
        return
    }
  }

  const take = (): StreamChunk[] => {
    const chunks = out
    out = []
    return chunks
  }

  return {
    push(value) {
      if (finished) return []
      const part = asPart(value)
      if (part === undefined)
        malformed('the provider stream yielded a part that is not an object', { part: typeof value })
      else handle(part)
      return take()
    },
    end() {
      if (!finished) {
        terminate([
          {
            type: 'finish',
            reason: 'error',
            failure: modelFailure('STREAM_CLOSED', 'the provider stream ended without a finish part', 'streaming'),
          },
        ])
      }
      return take()
    },
    fail(reason, failure) {
      if (!finished) terminate([{ type: 'finish', reason, failure }])
      return take()
    },
    get finished() {
      return finished
    },
  }
}
