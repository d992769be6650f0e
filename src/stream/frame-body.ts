/**
 * The body of an event-stream response, shared by the SSE and the UI message stream responses: it
 * pulls one frame at a time from a reader of the session log, sends heartbeats while idle, cuts a
 * reader that falls too far behind, and ends on an abort signal.
 *
 * @module
 */
import { StreamOverflowError } from '../errors/agent-errors.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { commentFrame } from './sse-frames.js'

/** @internal Reads the frames of a response, pulling events from the session log as they are committed. */
export interface FrameReader<Frame> {
  /** The next frame; `undefined` once the last one was read. */
  next(): Promise<Frame | undefined>
  /** Events committed but not read yet. */
  readonly lag: number
  /** The seq of the last event read (`-1` before the first). */
  readonly lastReadSeq: number
  /** Sets what to call after each commit (the lag check). */
  onCommit(listener: () => void): void
  /** Stops reading; never cancels the turn. */
  close(): void
}

/** @internal The heartbeat interval and the lag bound of a response, checked. */
export interface FrameLimits {
  /** Milliseconds between heartbeats; `0` sends none. */
  readonly heartbeatMs: number
  /** Events the reader may fall behind before the body is cut. */
  readonly maxLag: number
}

/** @internal How {@link frameBody} reads, encodes and ends its frames. */
export interface FrameBodyParts<Frame> {
  /** The reader now, or how to open it at the first pull (a failure to open is sent as an error). */
  readonly reader: FrameReader<Frame> | (() => Promise<FrameReader<Frame>>)
  /** One frame as bytes. */
  readonly encode: (frame: Frame) => Uint8Array
  /** A read that failed, as bytes; the body ends after it. */
  readonly encodeError: (error: unknown) => Uint8Array
  /** Sent last, after the final frame or the error; none when absent. */
  readonly end?: Uint8Array | undefined
  /** Sent first, before any frame; none when absent. */
  readonly prelude?: Uint8Array | undefined
  /** Ends the body (after what was sent) when aborted. */
  readonly signal?: AbortSignal | undefined
}

const defaultHeartbeatMs = 15_000
const defaultMaxLag = 1024
/** Chunks the body holds before it stops pulling; the reader, not a queue, holds the rest. */
const bodyHighWaterMark = 16

/**
 * @internal Checks the options object and its `heartbeatMs` and `maxLag`, filling in the defaults.
 *
 * @param options - the response's options
 * @returns the heartbeat interval and the lag bound
 * @throws {@link InvalidArgumentError} when `options` is not an object or a limit is out of range
 */
export function checkFrameLimits(options: { readonly heartbeatMs?: number; readonly maxLag?: number }): FrameLimits {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be an object', value: options })
  }
  const heartbeatMs = options.heartbeatMs ?? defaultHeartbeatMs
  if (!Number.isSafeInteger(heartbeatMs) || heartbeatMs < 0) {
    throw new InvalidArgumentError({
      argument: 'options.heartbeatMs',
      reason: 'must be a non-negative safe integer',
      value: heartbeatMs,
    })
  }
  const maxLag = options.maxLag ?? defaultMaxLag
  if (!Number.isSafeInteger(maxLag) || maxLag < 1) {
    throw new InvalidArgumentError({
      argument: 'options.maxLag',
      reason: 'must be a positive safe integer',
      value: maxLag,
    })
  }
  return { heartbeatMs, maxLag }
}

/**
 * @internal A pull-based body: it reads the next frame only when the connection took the previous
 * ones and buffers none itself. A reader more than `maxLag` events behind errors the body with
 * {@link StreamOverflowError}; an abort closes it; cancelling it closes the reader, never the turn.
 *
 * @param parts - where the frames come from, how they and the ending are encoded, the signal
 * @param limits - checked by {@link checkFrameLimits}
 * @returns the body
 */
export function frameBody<Frame>(parts: FrameBodyParts<Frame>, limits: FrameLimits): ReadableStream<Uint8Array> {
  const source = parts.reader
  const open = typeof source === 'function' ? source : () => Promise.resolve(source)
  let reader = typeof source === 'function' ? undefined : source
  let heartbeat: ReturnType<typeof setInterval> | undefined
  let stopped = false
  const { signal } = parts
  let onAbort: (() => void) | undefined
  const stop = (): void => {
    if (stopped) return
    stopped = true
    if (heartbeat !== undefined) clearInterval(heartbeat)
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
    reader?.close()
  }
  const watch = (watched: FrameReader<Frame>, controller: ReadableStreamDefaultController<Uint8Array>): void => {
    watched.onCommit(() => {
      if (stopped || watched.lag <= limits.maxLag) return
      stop()
      controller.error(new StreamOverflowError({ limit: limits.maxLag, lastYieldedSeq: watched.lastReadSeq }))
    })
  }
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>): void => {
    if (parts.end !== undefined) controller.enqueue(parts.end)
    controller.close()
  }
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (parts.prelude !== undefined) controller.enqueue(parts.prelude)
        if (limits.heartbeatMs > 0) {
          heartbeat = setInterval(() => {
            // A reader that does not read gets no more heartbeats than the body holds.
            if ((controller.desiredSize ?? 0) > 0) controller.enqueue(commentFrame('hb'))
          }, limits.heartbeatMs)
          heartbeat.unref?.()
        }
        if (reader !== undefined) watch(reader, controller)
        if (signal !== undefined) {
          onAbort = () => {
            stop()
            controller.close()
          }
          if (signal.aborted) onAbort()
          else signal.addEventListener('abort', onAbort, { once: true })
        }
      },
      async pull(controller) {
        try {
          let current = reader
          if (current === undefined) {
            const opened = await open()
            if (stopped) {
              opened.close()
              return
            }
            reader = current = opened
            watch(opened, controller)
          }
          const frame = await current.next()
          if (stopped) return
          if (frame === undefined) {
            stop()
            finish(controller)
          } else controller.enqueue(parts.encode(frame))
        } catch (error) {
          if (stopped) return
          stop()
          controller.enqueue(parts.encodeError(error))
          finish(controller)
        }
      },
      cancel() {
        stop()
      },
    },
    new CountQueuingStrategy({ highWaterMark: bodyHighWaterMark }),
  )
}
