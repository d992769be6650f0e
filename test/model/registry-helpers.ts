/**
 * Helpers of the model registry suites: valid requests, stream collection, inline fake adapters
 * (async generators over scripted chunks) and a harness with fake host services.
 *
 * @module
 */
import {
  createHarness,
  type Harness,
  type HarnessOptions,
  type ModelAdapter,
  type ModelInfo,
  type ModelRequest,
  type StreamChunk,
  type UserMessage,
} from 'yoke'
import type { ModelStreamOptions } from '../../src/model/index.js'
import { fakeClock, fakeIds } from 'yoke/testing'
import { type RecordingLogger, recordingLogger } from '../helpers/recording-logger.js'

/** A user message `'hi'`. */
export function userHi(id = 'm1'): UserMessage {
  return { id, role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }
}

/** `req(x)`: a valid request overlaid with `overrides` (a fresh signal unless given). */
export function req(overrides: Record<string, unknown> = {}): ModelRequest {
  return {
    provider: 'a',
    model: 'm',
    messages: [userHi()],
    metadata: { purpose: 'conversation' },
    signal: new AbortController().signal,
    ...overrides,
  } as ModelRequest
}

/** Every chunk of a stream, in order. */
export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/** The chunks of a one-delta text answer `text`. */
export function textChunks(text: string): StreamChunk[] {
  return [
    { type: 'text-delta', index: 0, text },
    { type: 'finish', reason: 'stop' },
  ]
}

/** A fake adapter that records its calls. */
export interface FakeAdapter extends ModelAdapter {
  /** Every request `stream()` received, as received. */
  readonly requests: ModelRequest[]
  /** Every options object `stream()` received. */
  readonly options: ModelStreamOptions[]
}

/** What a fake adapter's script produces for one call: raw chunks (possibly malformed) or an iterable. */
export type FakeOutput = readonly unknown[] | AsyncIterable<unknown>

/**
 * An adapter whose `stream()` yields what `script` returns for the request (an array is yielded
 * one chunk at a time by an async generator).
 */
export function fakeAdapter(
  provider: string,
  script: (request: ModelRequest) => FakeOutput,
  extra: { defaultModel?: string; describeModel?: (model: string) => ModelInfo | undefined } = {},
): FakeAdapter {
  const requests: ModelRequest[] = []
  const options: ModelStreamOptions[] = []
  return {
    provider,
    requests,
    options,
    ...extra,
    stream(request, streamOptions) {
      requests.push(request)
      options.push(streamOptions)
      const output = script(request)
      if (!Array.isArray(output)) return output as AsyncIterable<StreamChunk>
      return (async function* emit() {
        for (const chunk of output) yield chunk as StreamChunk
      })()
    },
  }
}

/** An adapter answering every call with `textChunks(text)`. */
export function textAdapter(
  provider: string,
  text: string,
  extra: Parameters<typeof fakeAdapter>[2] = {},
): FakeAdapter {
  return fakeAdapter(provider, () => textChunks(text), extra)
}

/** A harness with a fake clock, fake ids and a recording logger. */
export async function modelHarness(
  options: HarnessOptions = {},
): Promise<{ harness: Harness; logger: RecordingLogger }> {
  const logger = recordingLogger()
  const harness = await createHarness({ clock: fakeClock({ now: 0 }), ids: fakeIds(), logger, ...options })
  return { harness, logger }
}

/** A promise plus its resolver, to hold an adapter mid-stream. */
export function gate(): { readonly promise: Promise<void>; open(): void } {
  let open = (): void => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open: () => open() }
}
