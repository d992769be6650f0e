import type { Clock } from '../kernel/host-services.js'
import { fieldPath } from '../errors/issue.js'
import type { LlmFailure } from '../session/llm-failure.js'
import { isStreamChunkFast } from '../session/fast-payload-checks.js'
import { shareSnapshot } from '../session/snapshot/shared-snapshots.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'
import { copyStreamDelta } from '../session/snapshot/copy-stream-delta.js'
import { type FinishChunk, type StreamChunk, streamChunkSchema } from '../session/stream-chunk.js'
import { isRetryableByDefault, modelFailure } from './failure-defaults.js'
import type { ModelAdapter } from './model-adapter.js'
import type { ModelRequest } from './model-request.js'
import { normalizeThrown } from './normalize-thrown.js'

/** Options of {@link adapterBoundary}. */
export interface AdapterBoundaryOptions {
  /**
   * Receives what the adapter iterator's `return()` threw or rejected with; the stream goes on
   * regardless. Must not throw.
   *
   * @default ignore it
   */
  readonly onCloseError?: (error: unknown) => void
  /**
   * The harness clock, handed to the adapter as `options.clock`.
   *
   * @default none
   */
  readonly clock?: Clock
}

type Admission = { readonly chunk: StreamChunk } | { readonly type: string | null; readonly problem: string }

function typeOf(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null
  try {
    const type: unknown = (value as { type?: unknown }).type
    return typeof type === 'string' ? type : null
  } catch {
    return null
  }
}

/** Copies and checks one adapter chunk: lossless JSON and one of the chunk shapes. O(chunk size). */
function admit(value: unknown): Admission {
  let copy: unknown
  try {
    // Most chunks are deltas: copied field by field. (Not recorded as shared: the append of its
    // payload copies the three fields again, which costs less than the record.)
    const delta = copyStreamDelta(value)
    if (delta !== undefined) return { chunk: delta }
    // Recorded: the loop appends this very chunk in its assistant/chunk event, which then keeps it.
    copy = shareSnapshot(snapshotJson(value, 'chunk'))
  } catch (error) {
    return { type: typeOf(value), problem: error instanceof Error ? error.message : 'it could not be read' }
  }
  if (isStreamChunkFast(copy)) return { chunk: copy as StreamChunk }
  const parsed = streamChunkSchema.safeParse(copy)
  if (parsed.success) return { chunk: copy as StreamChunk }
  const issue = parsed.error.issues[0]
  const where =
    issue === undefined ? '' : fieldPath(issue.path.map((part) => (typeof part === 'number' ? part : String(part))))
  return { type: typeOf(value), problem: `${where === '' ? 'chunk' : where}: ${issue?.message ?? 'invalid'}` }
}

function finishWith(failure: LlmFailure): FinishChunk {
  return Object.freeze({ type: 'finish', reason: 'error', failure })
}

async function close(
  iterator: AsyncIterator<unknown>,
  onCloseError: ((error: unknown) => void) | undefined,
): Promise<void> {
  try {
    await iterator.return?.()
  } catch (error) {
    onCloseError?.(error)
  }
}

/**
 * A stream of exactly one chunk.
 *
 * @param chunk - the chunk (a `finish`)
 * @returns the stream
 * @internal
 */
export async function* singleChunk(chunk: StreamChunk): AsyncGenerator<StreamChunk, void, undefined> {
  yield chunk
}

/**
 * A stream of one `finish` error chunk carrying `failure`.
 *
 * @param failure - the failure
 * @returns the stream
 * @internal
 */
export function failedStream(failure: LlmFailure): AsyncGenerator<StreamChunk, void, undefined> {
  return singleChunk(finishWith(failure))
}

/**
 * The registry always sets a failure's `retryable` (the table default when the
 * adapter left it out) and `phase` (`'streaming'` once a chunk went through, else `'response'`).
 */
function completeFailure(chunk: StreamChunk, streamed: boolean): StreamChunk {
  if (chunk.type !== 'finish' || chunk.failure === undefined) return chunk
  const failure = chunk.failure
  if (failure.retryable !== undefined && failure.phase !== undefined) return chunk
  return Object.freeze({
    ...chunk,
    failure: Object.freeze({
      ...failure,
      retryable: failure.retryable ?? isRetryableByDefault(failure.code),
      phase: failure.phase ?? (streamed ? 'streaming' : 'response'),
    }),
  })
}

/**
 * Calls `adapter.stream(request, { signal: request.signal })` and enforces the chunk protocol on
 * what comes back, so the consumer always receives valid, frozen chunks ending
 * in exactly one `finish`:
 *
 * - `stream()` throws, or the iterator rejects → one normalized `finish` error after the
 *   chunks already forwarded;
 * - the iteration ends without `finish` → `finish` error `STREAM_CLOSED` (`phase: 'streaming'`);
 * - a chunk after `finish` → never read: the boundary stops at `finish` and calls `return()`;
 * - a chunk that is not lossless JSON or not a chunk shape → `finish` error `MALFORMED_RESPONSE`
 *   (`detail.chunk` = its `type`, or `null`), the chunk not forwarded, the iterator closed.
 *
 * A consumer that stops early (`break`, a throw) closes the adapter iterator (`return()`).
 *
 * @param adapter - the bound adapter
 * @param request - the validated, frozen request
 * @param options - where `return()` failures go
 * @returns the checked chunks
 */
export async function* adapterBoundary(
  adapter: ModelAdapter,
  request: ModelRequest,
  options: AdapterBoundaryOptions = {},
): AsyncGenerator<StreamChunk, void, undefined> {
  const signal = request.signal
  let iterator: AsyncIterator<unknown>
  try {
    iterator = adapter
      .stream(request, options.clock === undefined ? { signal } : { signal, clock: options.clock })
      [Symbol.asyncIterator]()
  } catch (error) {
    yield normalizeThrown(error, { signal, streamed: false })
    return
  }
  let open = true
  let streamed = false
  try {
    while (true) {
      let done: boolean
      let value: unknown
      try {
        const result = await iterator.next()
        done = result.done === true
        value = result.value
      } catch (error) {
        open = false
        yield normalizeThrown(error, { signal, streamed })
        return
      }
      if (done) {
        open = false
        yield finishWith(modelFailure('STREAM_CLOSED', 'the adapter stream ended without a finish chunk', 'streaming'))
        return
      }
      const admission = admit(value)
      if (!('chunk' in admission)) {
        open = false
        void close(iterator, options.onCloseError)
        const failure = modelFailure(
          'MALFORMED_RESPONSE',
          `the adapter yielded a malformed chunk (${admission.problem})`,
          'streaming',
          {
            detail: Object.freeze({ chunk: admission.type }),
          },
        )
        yield finishWith(failure)
        return
      }
      if (admission.chunk.type === 'finish') {
        open = false
        void close(iterator, options.onCloseError)
        yield completeFailure(admission.chunk, streamed)
        return
      }
      streamed = true
      yield admission.chunk
    }
  } finally {
    if (open) await close(iterator, options.onCloseError)
  }
}
