import type { AgentRun, SessionOwner } from 'yoke'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { TranslatorOptions } from './ui-chunk-translator.js'
import { runFrames, sessionFrames, type UIFrameReader } from './ui-frame-reader.js'
import type { UIMessageChunk } from './ui-message-chunk.js'
import {
  checkOption,
  resolveUIMessageOptions,
  type UIFailedTurnEnd,
  type UIMessageOptions,
} from './ui-message-options.js'

/** Options of {@link uiMessageStream} and {@link uiMessageStreamResponse}. */
export interface UIMessageStreamOptions extends UIMessageOptions {
  /**
   * The `errorText` a failed turn shows. The default hides the failure's message, which may hold
   * provider or server details; map the codes you want users to see. Must not throw.
   *
   * @default () => 'An error occurred.'
   */
  readonly onError?: (reason: UIFailedTurnEnd) => string
}

/** Options of {@link uiMessageStream} and {@link uiMessageStreamResponse} for a session. */
export interface UIMessageSessionStreamOptions extends UIMessageStreamOptions {
  /**
   * The id of the last frame the reader has (the raw `Last-Event-ID` header, or a number): the
   * stream resumes right after it and ends with its turn. Without it the stream is the running
   * turn from its start, and there is nothing to stream when no turn runs.
   */
  readonly lastEventId?: string | number | null
}

const defaultErrorText = (): string => 'An error occurred.'

/** Where a UI message stream reads from: a run, or a session that may have no turn to serve. */
export type UIMessageStreamSource = AgentRun | SessionOwner

/** @internal Checks the options and applies their defaults. */
export function translatorOptions(options: UIMessageStreamOptions): Omit<TranslatorOptions, 'sessionId'> {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be an object', value: options })
  }
  checkOption('onError', options.onError, 'function')
  const onError = options.onError ?? defaultErrorText
  return {
    ...resolveUIMessageOptions(options),
    errorText: (reason) => {
      const text = onError(reason)
      return typeof text === 'string' ? text : defaultErrorText()
    },
  }
}

/** @internal Whether a source is a run (rather than an agent or `{ session, ctx }`). */
export function isRun(source: unknown): source is AgentRun {
  return (
    typeof source === 'object' &&
    source !== null &&
    typeof (source as Partial<AgentRun>)[Symbol.asyncIterator] === 'function' &&
    'result' in source &&
    'agent' in source
  )
}

/**
 * @internal Opens the frame reader of a source; `undefined` when a session has no turn to serve.
 * @throws `InvalidArgumentError`; `LastEventIdError`
 */
export function openFrames(
  source: UIMessageStreamSource,
  options: UIMessageSessionStreamOptions,
): UIFrameReader | undefined {
  const translator = translatorOptions(options)
  if (isRun(source)) {
    if (options.lastEventId !== undefined) {
      throw new InvalidArgumentError({
        argument: 'options.lastEventId',
        reason: 'is for a session (an agent or { session, ctx }); a run is always served from its start',
        value: options.lastEventId,
      })
    }
    return runFrames(source, translator)
  }
  return sessionFrames(source, options.lastEventId, translator)
}

/**
 * A turn's events as AI SDK UI message chunks (`start`, `start-step`, `text-delta`,
 * `tool-input-available`, `tool-output-available`, `finish`, …): the objects the AI SDK's
 * `readUIMessageStream` and `createUIMessageStreamResponse` take. For the HTTP response a
 * `useChat` front end reads, use {@link uiMessageStreamResponse}.
 *
 * For a run: its turn, from `turn/start` to `turn/end`. For an agent (or `{ session, ctx }`): the
 * chunks after `lastEventId` to the end of its turn, or else the running turn from its start; an
 * empty stream when no turn runs. The stream reads the session log as it grows; cancelling it
 * never cancels the turn.
 *
 * @param source - a run from `agent.stream()`, or the agent (or `{ session, ctx: harness.ctx }`)
 * @param options - message ids, reasoning, tool parts, error text; for a session `lastEventId`
 * @returns the chunks
 * @throws `InvalidArgumentError` for a bad source or option; `LastEventIdError` for a
 *   `lastEventId` that is not a frame id of this session
 * @example
 * ```ts
 * import { readUIMessageStream } from 'ai'
 *
 * for await (const message of readUIMessageStream({ stream: uiMessageStream(agent.stream('hi')) })) {
 *   console.log(message.parts)
 * }
 * ```
 */
export function uiMessageStream(source: AgentRun, options?: UIMessageStreamOptions): ReadableStream<UIMessageChunk>
export function uiMessageStream(
  source: SessionOwner,
  options?: UIMessageSessionStreamOptions,
): ReadableStream<UIMessageChunk>
export function uiMessageStream(
  source: UIMessageStreamSource,
  options: UIMessageSessionStreamOptions = {},
): ReadableStream<UIMessageChunk> {
  const reader = openFrames(source, options)
  return new ReadableStream<UIMessageChunk>(
    {
      async pull(controller) {
        const frame = await reader?.next()
        if (frame === undefined) controller.close()
        else controller.enqueue(frame.chunk)
      },
      cancel() {
        reader?.close()
      },
    },
    new CountQueuingStrategy({ highWaterMark: 16 }),
  )
}
