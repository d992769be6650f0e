/**
 * Event builders in a compact notation (`TS` turn start, `TE` turn end, `SS` step start, `SE` step
 * end, `UM` user message, `AM` assistant message, `TC` tool call, `TR` tool result, `text`, `call`,
 * and a builder of one completed turn), plus {@link logOf} to turn them into a committed-looking
 * log. Each builder returns a fresh `{ type, data, options }` plan, ready for
 * `session.append(plan.type, plan.data, plan.options)`.
 *
 * @module
 */
import type { JsonObject, JsonValue } from '../../src/session/json-value.js'
import type { AppendOptions, SessionEvent } from '../../src/session/session-event.js'

/** One event to append: the arguments of `session.append`. */
export interface EventPlan {
  /** The event type. */
  readonly type: string
  /** The payload. */
  readonly data: JsonValue
  /** The append options (`{}` for log-only types). */
  readonly options: AppendOptions
}

/**
 * The message id {@link AM} writes: the notation's `'a-<seq>'` before the seq is known.
 * {@link logOf} replaces it; live appenders call {@link stampSeq} with `session.length`.
 */
export const assistantIdPlaceholder = 'a-<seq>'

/**
 * `turn/start { turn }`.
 *
 * @param turn - the turn number
 * @returns the plan
 */
export function TS(turn: number): EventPlan {
  return { type: 'turn/start', data: { turn }, options: {} }
}

/**
 * `turn/end { turn, reason }`.
 *
 * @param turn - the turn number
 * @param reason - a reason `kind` (`{ kind }` is built), or a whole reason object
 * @returns the plan
 */
export function TE(turn: number, reason: string | JsonObject): EventPlan {
  return {
    type: 'turn/end',
    data: { turn, reason: typeof reason === 'string' ? { kind: reason } : reason },
    options: {},
  }
}

/**
 * `step/start { turn, step }`.
 *
 * @param turn - the turn number
 * @param step - the step number
 * @returns the plan
 */
export function SS(turn: number, step: number): EventPlan {
  return { type: 'step/start', data: { turn, step }, options: {} }
}

/**
 * `step/end { turn, step }`.
 *
 * @param turn - the turn number
 * @param step - the step number
 * @returns the plan
 */
export function SE(turn: number, step: number): EventPlan {
  return { type: 'step/end', data: { turn, step }, options: {} }
}

/**
 * A user `user/message` with id `'u-' + text` and one text block, appended to the surface.
 *
 * @param text - the message text
 * @returns the plan
 */
export function UM(text: string): EventPlan {
  return {
    type: 'user/message',
    data: { id: `u-${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
    options: { surfaceOp: 'append' },
  }
}

/**
 * An `assistant/message` of the mock model with the given blocks, `{ surfaceOp: 'append',
 * sourceEventSeqs: [] }`; its id is {@link assistantIdPlaceholder} until stamped.
 *
 * @param turn - the turn number
 * @param step - the step number
 * @param blocks - the content blocks ({@link text}, {@link call})
 * @returns the plan
 */
export function AM(turn: number, step: number, ...blocks: JsonObject[]): EventPlan {
  return {
    type: 'assistant/message',
    data: {
      turn,
      step,
      message: {
        id: assistantIdPlaceholder,
        role: 'assistant',
        content: blocks,
        source: { kind: 'model', provider: 'mock', model: 'mock' },
      },
    },
    options: { surfaceOp: 'append', sourceEventSeqs: [] },
  }
}

/**
 * A text block.
 *
 * @param text - its text
 * @returns `{ type: 'text', text }`
 */
export function text(text: string): JsonObject {
  return { type: 'text', text }
}

/**
 * A tool-call block of the `echo` tool with arguments `'{}'`.
 *
 * @param id - the call id
 * @returns `{ type: 'tool-call', id, name: 'echo', arguments: '{}' }`
 */
export function call(id: string): JsonObject {
  return { type: 'tool-call', id, name: 'echo', arguments: '{}' }
}

/**
 * `tool/call { turn, step, callId, name: 'echo', arguments: '{}' }`.
 *
 * @param turn - the turn number
 * @param step - the step number
 * @param callId - the call id
 * @returns the plan
 */
export function TC(turn: number, step: number, callId: string): EventPlan {
  return { type: 'tool/call', data: { turn, step, callId, name: 'echo', arguments: '{}' }, options: {} }
}

/**
 * A successful `tool/result` with id `'r-' + callId` and text `'ok'`, appended with sources
 * `[callSeq]`.
 *
 * @param turn - the turn number
 * @param step - the step number
 * @param callId - the answered call id
 * @param callSeq - the seq of its `tool/call`
 * @returns the plan
 */
export function TR(turn: number, step: number, callId: string, callSeq: number): EventPlan {
  return {
    type: 'tool/result',
    data: {
      turn,
      step,
      message: {
        id: `r-${callId}`,
        role: 'user',
        source: { kind: 'tool', callId },
        content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: 'ok' }] }],
      },
    },
    options: { surfaceOp: 'append', sourceEventSeqs: [callSeq] },
  }
}

/**
 * A copy of `plan` with other `sourceEventSeqs` (e.g. an `AM` made from chunks).
 *
 * @param plan - the plan to copy
 * @param sourceEventSeqs - the new sources
 * @returns the new plan
 */
export function withSources(plan: EventPlan, sourceEventSeqs: readonly number[]): EventPlan {
  return { ...plan, options: { ...plan.options, sourceEventSeqs } }
}

/**
 * Resolves an {@link AM}'s placeholder id to `'a-' + seq`; any other plan is returned as is.
 *
 * @param plan - the plan
 * @param seq - the seq the event will get
 * @returns the plan with its final message id
 */
export function stampSeq(plan: EventPlan, seq: number): EventPlan {
  const data = plan.data
  if (plan.type !== 'assistant/message' || !isObject(data)) return plan
  const message = data['message']
  if (!isObject(message) || message['id'] !== assistantIdPlaceholder) return plan
  return { ...plan, data: { ...data, message: { ...message, id: `a-${seq}` } } }
}

/** One completed turn as fresh plans: `TS(1) SS(1,1) UM('hi') AM(1,1,text('hello')) SE(1,1) TE(1, reason)`. */
export function L1(reason: string | JsonObject = 'completed'): EventPlan[] {
  return [TS(1), SS(1, 1), UM('hi'), AM(1, 1, text('hello')), SE(1, 1), TE(1, reason)]
}

/**
 * Stamps plans into a log as `append` would: `seq` = index, one fixed `time`, envelope key order,
 * data copied and everything deep-frozen. No rule is checked.
 *
 * @param plans - the events in order
 * @param time - the clock value of every event
 * @returns the frozen log
 */
export function logOf(plans: readonly EventPlan[], time = 1000): SessionEvent[] {
  return plans.map((plan, seq) => {
    const { type, data, options } = stampSeq(plan, seq)
    const event: Record<string, unknown> = { type, seq, time, data: structuredClone(data) }
    if (options.ignorable !== undefined) event['ignorable'] = options.ignorable
    if (options.surfaceOp !== undefined) event['surfaceOp'] = structuredClone(options.surfaceOp)
    if (options.sourceEventSeqs !== undefined) event['sourceEventSeqs'] = [...options.sourceEventSeqs]
    return deepFreeze(event) as unknown as SessionEvent
  })
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
