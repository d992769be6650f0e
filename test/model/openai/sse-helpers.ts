/**
 * Helpers of the OpenAI adapter tests: SSE text builders and a byte-level driver of the stream
 * translator that decodes exactly like the adapter does.
 *
 * @module
 */
import type { StreamChunk } from 'yoke'
import { createStreamTranslator, type StreamTranslatorOptions } from '../../../src/model/openai/translate-stream.js'

/** SSE text of data events: an object is JSON-encoded, a string is sent as is. */
export function sse(events: readonly unknown[]): string {
  return events.map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`).join('')
}

/** A chat.completion.chunk event with one choice. */
export function delta(value: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'c',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: value, finish_reason: finishReason }],
  }
}

/** Runs the translator over `bytes` cut at `cuts` (sorted byte offsets), as the adapter does (`feedBytes`), then ends the body. */
export function translateBytes(
  bytes: Uint8Array,
  cuts: readonly number[] = [],
  options?: StreamTranslatorOptions,
): StreamChunk[] {
  return translateBytesByRead(bytes, cuts, options).flat()
}

/** {@link translateBytes}, with the chunks each read (and the end) returned, one array per read. */
export function translateBytesByRead(
  bytes: Uint8Array,
  cuts: readonly number[] = [],
  options?: StreamTranslatorOptions,
): StreamChunk[][] {
  const translator = createStreamTranslator(options)
  const reads: StreamChunk[][] = []
  let start = 0
  for (const cut of [...cuts, bytes.length]) {
    if (cut < start) continue
    reads.push(translator.feedBytes(bytes.subarray(start, cut)))
    start = cut
  }
  reads.push(translator.end())
  return reads
}

/**
 * The reference path: the same bytes decoded by a standard streaming `TextDecoder` and fed as
 * text (`feed`), without delta shapes: what the translator did before it read bytes.
 */
export function translateDecoded(
  bytes: Uint8Array,
  cuts: readonly number[] = [],
  options?: StreamTranslatorOptions,
): StreamChunk[] {
  return translateDecodedByRead(bytes, cuts, options).flat()
}

/** {@link translateDecoded}, with the chunks each read (and the end) returned, one array per read. */
export function translateDecodedByRead(
  bytes: Uint8Array,
  cuts: readonly number[] = [],
  options?: StreamTranslatorOptions,
): StreamChunk[][] {
  const translator = createStreamTranslator({ ...options, deltaTemplates: false })
  const decoder = new TextDecoder()
  const reads: StreamChunk[][] = []
  let start = 0
  for (const cut of [...cuts, bytes.length]) {
    if (cut < start) continue
    reads.push(translator.feed(decoder.decode(bytes.subarray(start, cut), { stream: true })))
    start = cut
  }
  reads.push([...translator.feed(decoder.decode()), ...translator.end()])
  return reads
}

/** Runs the translator over SSE text, whole. */
export function translate(text: string, options?: StreamTranslatorOptions): StreamChunk[] {
  return translateBytes(new TextEncoder().encode(text), [], options)
}

/** The `finish` chunk of a stream (the last chunk); throws when the last chunk is not one. */
export function finishOf(chunks: readonly StreamChunk[]): Extract<StreamChunk, { type: 'finish' }> {
  const last = chunks.at(-1)
  if (last?.type !== 'finish') throw new Error(`expected a finish last, got ${JSON.stringify(last)}`)
  return last
}
