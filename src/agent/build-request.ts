import type { ModelRequest } from '../model/model-request.js'
import type { Message } from '../session/message.js'
import type { RequestHeader } from '../session/request-header.js'
import { deepFreeze } from '../session/deep-freeze.js'

/**
 * The loop-request marks of one harness (04-agent.md §12.3): which request objects the agent loop
 * built. Backed by a `WeakSet`, owned by whoever creates it; there is no module state.
 */
export interface LoopRequestMarks {
  /**
   * Marks a request as loop-built.
   *
   * @param request - the frozen request
   */
  mark(request: object): void
  /**
   * Whether `value` is a request the loop built and marked (for `llm/stream` middleware).
   *
   * @param value - anything
   * @returns `true` for a marked request
   */
  isLoopRequest(value: unknown): boolean
}

/** Input of {@link buildLoopRequest}. */
export interface BuildLoopRequestInput {
  /** The request's header (`system` and `tools` already omitted when empty). */
  readonly header: RequestHeader
  /** The model history: `session.deriveMessages()`. */
  readonly messages: readonly Message[]
  /** The session (= agent) id. */
  readonly sessionId: string
  /** The attempt's abort signal; neither frozen nor copied. */
  readonly signal: AbortSignal
  /** The harness's marks; the new request is added to them. */
  readonly marks: LoopRequestMarks
}

/**
 * Creates an empty set of loop-request marks, one per harness.
 *
 * @returns the marks
 * @example
 * ```ts
 * const marks = createLoopRequestMarks()
 * const request = buildLoopRequest({ header, messages, sessionId, signal, marks })
 * marks.isLoopRequest(request) // → true
 * ```
 */
export function createLoopRequestMarks(): LoopRequestMarks {
  const marked = new WeakSet<object>()
  return {
    mark(request) {
      marked.add(request)
    },
    isLoopRequest(value) {
      return typeof value === 'object' && value !== null && marked.has(value)
    },
  }
}

/**
 * Builds a loop request (04-agent.md §12.3): `{...header.config, system?, tools?, messages, metadata:
 * {sessionId, purpose: 'conversation'}, signal}`, in that key order (an empty `system` or `tools` is
 * left out, as in the canonical header). The result is deep-frozen in place except the signal
 * (freezing stops at objects that are already frozen, such as logged messages) and marked in
 * `marks`.
 *
 * @param input - the header, messages, session id, signal and the harness's marks
 * @returns the frozen, marked request
 */
export function buildLoopRequest(input: BuildLoopRequestInput): ModelRequest {
  const request: ModelRequest = {
    ...loopRequestBody(input.header, input.messages, input.sessionId),
    signal: input.signal,
  }
  for (const [key, value] of Object.entries(request)) {
    if (key !== 'signal') deepFreeze(value)
  }
  Object.freeze(request)
  input.marks.mark(request)
  return request
}

/**
 * A loop request without its signal, the object itself not frozen (its `metadata` is):
 * `{...header.config, system?, tools?, messages, metadata}` in that key order, an empty `system`
 * or `tools` left out.
 *
 * @internal
 */
export function loopRequestBody(
  header: RequestHeader,
  messages: readonly Message[],
  sessionId: string,
): Omit<ModelRequest, 'signal'> {
  return {
    ...header.config,
    ...(header.system === undefined || header.system === '' ? {} : { system: header.system }),
    ...(header.tools === undefined || header.tools.length === 0 ? {} : { tools: header.tools }),
    messages,
    metadata: Object.freeze({ sessionId, purpose: 'conversation' }),
  }
}
