/**
 * Chat Completions SSE → {@link StreamChunk}s, in one pass.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { LlmFailure } from '../../session/llm-failure.js'
import type { StreamChunk } from '../../session/stream-chunk.js'
import { modelFailure } from '../failure-defaults.js'
import { classifyErrorBody } from './classify-http-error.js'
import { createBodySplitter } from './body-splitter.js'
import { createDeltaTemplates, type DeltaTemplates } from './delta-templates.js'
import { mapFinishReason } from './map-finish-reason.js'
import { mapUsage } from './map-usage.js'
import { redactText } from './resolve-credential.js'

/**
 * Turns decoded SSE text into chunks. Each call returns the chunks it completed; once a `finish`
 * has been returned the translator ignores everything else.
 *
 * @internal
 */
export interface StreamTranslator {
  /**
   * Feeds the next bytes of the body (any split: mid-line, mid-character, CRLF halves). Events of a
   * learned shape are read from the bytes; the rest is decoded and parsed.
   */
  feedBytes(bytes: Uint8Array): StreamChunk[]
  /** Feeds the next piece of already decoded body text (any split); no shape is learned or used. Do not mix with `feedBytes`. */
  feed(text: string): StreamChunk[]
  /** The body ended cleanly: `usage` and `finish` after a `finish_reason`, else `STREAM_CLOSED`. */
  end(): StreamChunk[]
  /** Ends the stream with a failure from outside the body (transport, timeout, abort). */
  fail(reason: 'error' | 'aborted', failure: LlmFailure): StreamChunk[]
  /** Whether the `finish` was returned. */
  readonly finished: boolean
}

/**
 * Options of {@link createStreamTranslator}.
 *
 * @internal
 */
export interface StreamTranslatorOptions {
  /** The API key to redact from provider text in failures. */
  readonly key?: string | undefined
  /** The response's request id, reported on in-stream failures. */
  readonly requestId?: string | undefined
  /**
   * Whether `feedBytes` reads events that repeat a parsed one's bytes around a new text delta
   * straight from the bytes ({@link createDeltaTemplates}), or the shapes to use; the chunks are
   * the same either way.
   *
   * @default true
   */
  readonly deltaTemplates?: boolean | DeltaTemplates | undefined
}

type OpenBlock =
  | { readonly kind: 'text' | 'reasoning'; readonly index: number; readonly parts: string[] }
  | {
      readonly kind: 'tool-call'
      readonly index: number
      readonly parts: string[]
      readonly wireIndex: number
      readonly id: string
      readonly name: string
    }

type JsonRecord = Readonly<Record<string, unknown>>

function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * Creates a translator for one response body. Text and reasoning deltas are kept as parts and
 * joined once, at the block's end, so the work is O(bytes).
 *
 * @internal
 */
export function createStreamTranslator(options: StreamTranslatorOptions = {}): StreamTranslator {
  const { key, requestId, deltaTemplates = true } = options
  let out: StreamChunk[] = []
  let current: OpenBlock | undefined
  let nextIndex = 0
  const endedWireIndexes = new Set<number>()
  let finishReason: string | undefined
  let usage: JsonRecord | undefined
  let finished = false

  const push = (chunk: StreamChunk): void => {
    out.push(chunk)
  }
  const take = (): StreamChunk[] => {
    const chunks = out
    out = []
    return chunks
  }

  const closeCurrent = (): void => {
    if (current === undefined) return
    const block = current
    current = undefined
    if (block.kind === 'tool-call') {
      endedWireIndexes.add(block.wireIndex)
      push({
        type: 'block-end',
        index: block.index,
        block: { type: 'tool-call', id: block.id, name: block.name, arguments: block.parts.join('') },
      })
    } else {
      push({ type: 'block-end', index: block.index, block: { type: block.kind, text: block.parts.join('') } })
    }
  }

  const terminate = (finish: StreamChunk): void => {
    if (usage !== undefined) push({ type: 'usage', usage: mapUsage(usage) })
    push(finish)
    finished = true
  }
  const failWith = (failure: LlmFailure): void => terminate({ type: 'finish', reason: 'error', failure })
  const malformed = (message: string, detail?: Readonly<Record<string, string | number>>): void => {
    failWith(
      modelFailure('MALFORMED_RESPONSE', redactText(message, key), 'streaming', {
        ...(detail !== undefined && { detail }),
      }),
    )
  }
  const complete = (): void => {
    closeCurrent()
    terminate(finishReason === undefined ? { type: 'finish', reason: 'stop' } : mapFinishReason(finishReason))
  }

  const appendText = (kind: 'text' | 'reasoning', text: string): void => {
    if (current?.kind !== kind) {
      closeCurrent()
      current = { kind, index: nextIndex++, parts: [] }
      push({ type: 'block-start', index: current.index, blockType: kind })
    }
    current.parts.push(text)
    push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', index: current.index, text })
  }

  const toolFragment = (value: unknown): void => {
    const fragment = asRecord(value)
    if (fragment === undefined) {
      malformed('a tool_calls entry is not an object')
      return
    }
    const wire = asRecord(fragment['function'])
    const argumentsDelta = typeof wire?.['arguments'] === 'string' ? wire['arguments'] : ''
    const rawIndex = fragment['index']
    const wireIndex =
      typeof rawIndex === 'number' && Number.isSafeInteger(rawIndex)
        ? rawIndex
        : current?.kind === 'tool-call'
          ? current.wireIndex
          : Math.max(-1, ...endedWireIndexes) + 1
    if (current?.kind === 'tool-call' && current.wireIndex === wireIndex) {
      if (argumentsDelta === '') return
      current.parts.push(argumentsDelta)
      push({ type: 'tool-call-delta', index: current.index, id: current.id, name: current.name, argumentsDelta })
      return
    }
    if (endedWireIndexes.has(wireIndex)) {
      malformed(`a tool-call fragment for wire index ${wireIndex} arrived after that call ended`, { wireIndex })
      return
    }
    const id = nonEmptyString(fragment['id'])
    const name = nonEmptyString(wire?.['name'])
    if (id === undefined || name === undefined) {
      malformed(
        `the first fragment of tool call ${wireIndex} lacks ${id === undefined ? 'an id' : 'a function name'}`,
        { wireIndex },
      )
      return
    }
    closeCurrent()
    current = { kind: 'tool-call', index: nextIndex++, parts: [argumentsDelta], wireIndex, id, name }
    push({ type: 'block-start', index: current.index, blockType: 'tool-call' })
    push({ type: 'tool-call-delta', index: current.index, id, name, argumentsDelta })
  }

  const choice = (value: unknown): void => {
    const entry = asRecord(value)
    if (entry === undefined || (entry['index'] !== undefined && entry['index'] !== 0)) return
    const delta = asRecord(entry['delta'])
    if (delta !== undefined) {
      const reasoning = nonEmptyString(delta['reasoning_content']) ?? nonEmptyString(delta['reasoning'])
      if (reasoning !== undefined) appendText('reasoning', reasoning)
      const text = nonEmptyString(delta['content'])
      if (text !== undefined) appendText('text', text)
      const calls = delta['tool_calls']
      if (Array.isArray(calls)) {
        for (const call of calls) {
          toolFragment(call)
          if (finished) return
        }
      }
    }
    const reason = nonEmptyString(entry['finish_reason'])
    if (reason !== undefined) {
      closeCurrent()
      finishReason = reason
    }
  }

  const appendDelta = (kind: 'text' | 'reasoning', text: string): void => {
    if (text !== '') appendText(kind, text)
  }
  // Most events repeat an earlier one's bytes around a new text delta: those are read from the
  // bytes (feedBytes), without decoding, SSE parsing or JSON.parse.
  const templates =
    deltaTemplates === true ? createDeltaTemplates() : deltaTemplates === false ? undefined : deltaTemplates

  const onEvent = (message: EventSourceMessage): void => {
    if (finished) return
    const data = message.data
    if (data.trim() === '[DONE]') {
      complete()
      return
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(data)
    } catch {
      malformed(`the provider sent an event that is not JSON: ${data.slice(0, 100)}`)
      return
    }
    const event = asRecord(parsed)
    if (event === undefined) {
      malformed(`the provider sent an event that is not a JSON object: ${data.slice(0, 100)}`)
      return
    }
    if (event['error'] !== undefined && event['error'] !== null) {
      failWith(
        classifyErrorBody({
          bodyText: data,
          parsed: event,
          key,
          phase: 'streaming',
          ...(requestId !== undefined && { requestId }),
        }),
      )
      return
    }
    templates?.learn(data, event)
    const eventUsage = asRecord(event['usage'])
    if (eventUsage !== undefined) usage = eventUsage
    const choices = event['choices']
    if (Array.isArray(choices)) {
      for (const entry of choices) {
        choice(entry)
        if (finished) return
      }
    }
  }

  const parser = createParser({ onEvent })
  const splitter = createBodySplitter({
    templates,
    text: (text) => parser.feed(text),
    append: appendDelta,
    stopped: () => finished,
  })

  return {
    feedBytes(bytes) {
      if (!finished) splitter.push(bytes)
      return take()
    },
    feed(text) {
      if (!finished) parser.feed(text)
      return take()
    },
    end() {
      splitter.end()
      // A last event without its blank line still counts (servers often end with a single `\n`).
      if (!finished) parser.feed('\n\n')
      if (!finished) {
        if (finishReason !== undefined) complete()
        else failWith(modelFailure('STREAM_CLOSED', 'the stream ended before the model finished', 'streaming'))
      }
      return take()
    },
    fail(reason, failure) {
      if (!finished) terminate({ type: 'finish', reason, failure })
      return take()
    },
    get finished() {
      return finished
    },
  }
}
