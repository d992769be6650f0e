/**
 * Event and header builders of the conformance suite. Comments use a compact notation: `TS` turn
 * start, `SS` step start, `UM` user message, `AM` assistant message, `SE` step end, `TE` turn end,
 * `CH` text chunk; the clock is fixed at 1000. Adapters do not
 * validate event types, so `test/*` envelopes are fine too.
 *
 * @module
 */
import type { JsonObject, JsonValue } from '../../session/json-value.js'
import type { SessionEvent, SurfaceOp } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import { deepFreeze } from '../../session/deep-freeze.js'

/** The `time` of every event the suite builds. */
export const conformanceTime = 1000

/** An event before it gets its seq: a plan, or a function of the seq (message ids name the seq). */
export type EventPlan = PlannedEvent | ((seq: number) => PlannedEvent)

/** The envelope fields of an event except `seq` and `time`. */
export interface PlannedEvent {
  /** The event type. */
  readonly type: string
  /** The payload. */
  readonly data: JsonValue
  /** `ignorable: true`, when set. */
  readonly ignorable?: true
  /** The surface placement, when set. */
  readonly surfaceOp?: SurfaceOp
  /** The provenance, when set. */
  readonly sourceEventSeqs?: readonly number[]
}

/** The optional header fields {@link headerOf} takes. */
export type HeaderExtra = Omit<SessionHeader, 'version' | 'id' | 'createdAt'>

/**
 * `{ version: 1, id, createdAt: 1000, cwd: '/w', ...extra }`.
 *
 * @param id - the session id
 * @param extra - more header fields, in header key order
 * @returns the header
 */
export function headerOf(id: string, extra: HeaderExtra = {}): SessionHeader {
  const header: SessionHeader = { version: 1, id, createdAt: conformanceTime, cwd: '/w', ...extra }
  return deepFreeze(header)
}

/** `turn/start { turn }`. */
export function turnStart(turn: number): EventPlan {
  return { type: 'turn/start', data: { turn } }
}

/** `turn/end { turn, reason: { kind } }`. */
export function turnEnd(turn: number, kind = 'completed'): EventPlan {
  return { type: 'turn/end', data: { turn, reason: { kind } } }
}

/** `step/start { turn, step }`. */
export function stepStart(turn: number, step: number): EventPlan {
  return { type: 'step/start', data: { turn, step } }
}

/** `step/end { turn, step }`. */
export function stepEnd(turn: number, step: number): EventPlan {
  return { type: 'step/end', data: { turn, step } }
}

/** A user `user/message` with id `'u-' + text` and one text block, appended to the surface. */
export function userMessage(text: string): EventPlan {
  return {
    type: 'user/message',
    data: { id: `u-${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
    surfaceOp: 'append',
  }
}

/** An `assistant/message` of the mock model with id `'a-' + seq` and the given blocks. */
export function assistantMessage(turn: number, step: number, ...blocks: JsonObject[]): EventPlan {
  return (seq) => ({
    type: 'assistant/message',
    data: {
      turn,
      step,
      message: {
        id: `a-${seq}`,
        role: 'assistant',
        content: blocks,
        source: { kind: 'model', provider: 'mock', model: 'mock' },
      },
    },
    surfaceOp: 'append',
    sourceEventSeqs: [],
  })
}

/** A text block. */
export function textBlock(text: string): JsonObject {
  return { type: 'text', text }
}

/** A tool-call block of the `echo` tool with arguments `'{}'`. */
export function toolCallBlock(id: string): JsonObject {
  return { type: 'tool-call', id, name: 'echo', arguments: '{}' }
}

/** `tool/call { turn, step, callId, name: 'echo', arguments: '{}' }`. */
export function toolCall(turn: number, step: number, callId: string): EventPlan {
  return { type: 'tool/call', data: { turn, step, callId, name: 'echo', arguments: '{}' } }
}

/** `assistant/chunk { turn, step, chunk: { type: 'text-delta', index: 0, text } }` (the scenarios' `CH`). */
export function textChunk(turn: number, step: number, text: string): EventPlan {
  return { type: 'assistant/chunk', data: { turn, step, chunk: { type: 'text-delta', index: 0, text } } }
}

/** `session/end-seed {}`. */
export function endSeed(): EventPlan {
  return { type: 'session/end-seed', data: {} }
}

/** A `test/note` (or `type`) event carrying `data` verbatim. */
export function note(data: JsonValue, type = 'test/note'): EventPlan {
  return { type, data }
}

/**
 * Stamps plans into committed-looking events from `firstSeq` on: envelope key order (`type, seq,
 * time, data, ignorable?, surfaceOp?, sourceEventSeqs?`), `time` 1000, deep-frozen.
 *
 * @param firstSeq - the seq of the first event
 * @param plans - the events in order
 * @returns the events
 */
export function eventsFrom(firstSeq: number, plans: readonly EventPlan[]): SessionEvent[] {
  return plans.map((plan, index) => {
    const seq = firstSeq + index
    const planned = typeof plan === 'function' ? plan(seq) : plan
    const event: { -readonly [K in keyof SessionEvent]: SessionEvent[K] } = {
      type: planned.type,
      seq,
      time: conformanceTime,
      data: structuredClone(planned.data),
    }
    if (planned.ignorable !== undefined) event.ignorable = planned.ignorable
    if (planned.surfaceOp !== undefined) event.surfaceOp = structuredClone(planned.surfaceOp)
    if (planned.sourceEventSeqs !== undefined) event.sourceEventSeqs = [...planned.sourceEventSeqs]
    return deepFreeze(event)
  })
}

/** The base log, one completed turn (seqs 0–5): `TS(1) SS(1,1) UM('hi') AM(1,1,text('hello')) SE(1,1) TE(1,'completed')`. */
export function baseLog(): SessionEvent[] {
  return eventsFrom(0, [
    turnStart(1),
    stepStart(1, 1),
    userMessage('hi'),
    assistantMessage(1, 1, textBlock('hello')),
    stepEnd(1, 1),
    turnEnd(1),
  ])
}

/** A turn cut mid-stream, for the torn-tail cases: `baseLog() + [TS(2), SS(2,1), UM('ü😀'), CH('a'), CH('b'), CH('c'), CH('d')]` (seqs 0–12). */
export function tornTailFixture(): SessionEvent[] {
  return [
    ...baseLog(),
    ...eventsFrom(6, [
      turnStart(2),
      stepStart(2, 1),
      userMessage('ü😀'),
      textChunk(2, 1, 'a'),
      textChunk(2, 1, 'b'),
      textChunk(2, 1, 'c'),
      textChunk(2, 1, 'd'),
    ]),
  ]
}

/** The base log plus a closed turn 2 (seqs 0–11): records on both sides of any seq to damage. */
export function twoTurnLog(): SessionEvent[] {
  return [
    ...baseLog(),
    ...eventsFrom(6, [
      turnStart(2),
      stepStart(2, 1),
      userMessage('x'),
      assistantMessage(2, 1, textBlock('y')),
      stepEnd(2, 1),
      turnEnd(2),
    ]),
  ]
}

/** `[TS(2)@6, SS(2,1)@7]`: what comes after the base log. */
export function turnTwo(): SessionEvent[] {
  return eventsFrom(6, [turnStart(2), stepStart(2, 1)])
}
