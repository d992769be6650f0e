/**
 * Crash repair: the events that close a log whose last turn never ended.
 *
 * @module
 */
import type { JsonObject, JsonValue } from './json-value.js'
import type { SessionEvent } from './session-event.js'
import { deepFreeze } from './deep-freeze.js'

/** The text of the synthetic result of a call that has a tool-call block but no `tool/call`. */
export const toolNotStartedText =
  'This tool call never started: the session stopped before the call was recorded, so nothing ran. Call the tool again if you still need its result.'

/** The text of the synthetic result of a call whose `tool/call` was logged but whose result was not. */
export const toolOutcomeUnknownText =
  'This tool call started, but the session stopped before its result was saved, so the outcome is unknown and it may already have changed something. Do not simply repeat it: call it again only if it just reads or is safe to repeat; otherwise check the current state first or ask the user.'

/** An unanswered call of the open step. */
interface PendingCall {
  /** The step it was first mentioned in. */
  readonly step: number
  /** The seq of its last `tool/call`, if one was logged. */
  callSeq: number | null
}

/**
 * Computes the events to append after a log whose last turn never ended: one synthetic error
 * `tool/result` per unanswered call of the open step (in order of first mention), then `step/end`
 * if a step is open, then `turn/end` with reason `interrupted`.
 *
 * Pure and deterministic, one forward scan. Event data is read defensively: a `turn/start` or
 * `step/start` without a positive integer number, or a call without an id, has no effect. Only
 * append-form `assistant/message`s request calls and only append-form `tool/result`s answer them.
 *
 * @param events - the log, `events[i].seq === i` (not modified)
 * @returns fresh deep-frozen events with seqs from `last.seq + 1` and `time = last.time`, or `[]`
 *   when no turn is open (including an empty log)
 * @example
 * ```ts
 * const closers = interruptedTurnClosers(loadedEvents)
 * const session = sessions.create({ seed: [...loadedEvents, ...closers] })
 * ```
 */
export function interruptedTurnClosers(events: readonly SessionEvent[]): SessionEvent[] {
  let openTurn: number | null = null
  let openStep: number | null = null
  const pending = new Map<string, PendingCall>()

  // Every turn/end, and a turn/start with a valid turn, resets the whole state: only the events
  // from the last such one on matter, so a long balanced log costs one backward scan to its end.
  let start = events.length - 1
  while (start > 0) {
    const event = events[start] as SessionEvent
    if (
      event.type === 'turn/end' ||
      (event.type === 'turn/start' && positiveInteger(field(event.data, 'turn')) !== null)
    )
      break
    start--
  }
  for (let index = Math.max(start, 0); index < events.length; index++) {
    const event = events[index] as SessionEvent
    const data = event.data
    switch (event.type) {
      case 'turn/start':
      case 'turn/end': {
        const turn = positiveInteger(field(data, 'turn'))
        if (event.type === 'turn/start' && turn === null) break
        openTurn = event.type === 'turn/start' ? turn : null
        openStep = null
        pending.clear()
        break
      }
      case 'step/start': {
        const step = positiveInteger(field(data, 'step'))
        if (step !== null) openStep = step
        break
      }
      case 'step/end':
        openStep = null
        pending.clear()
        break
      case 'assistant/message': {
        if (typeof event.surfaceOp === 'object') break
        const step = positiveInteger(field(data, 'step')) ?? openStep
        const content = field(field(data, 'message'), 'content')
        if (step === null || !Array.isArray(content)) break
        for (const block of content) {
          const id = field(block, 'id')
          if (field(block, 'type') === 'tool-call' && isNonEmptyString(id) && !pending.has(id)) {
            pending.set(id, { step, callSeq: null })
          }
        }
        break
      }
      case 'tool/call': {
        const callId = field(data, 'callId')
        if (!isNonEmptyString(callId)) break
        const known = pending.get(callId)
        if (known !== undefined) {
          known.callSeq = event.seq
          break
        }
        const step = positiveInteger(field(data, 'step')) ?? openStep
        if (step !== null) pending.set(callId, { step, callSeq: event.seq })
        break
      }
      case 'tool/result': {
        if (typeof event.surfaceOp === 'object') break
        const callId = field(field(field(data, 'message'), 'source'), 'callId')
        if (typeof callId === 'string') pending.delete(callId)
        break
      }
    }
  }

  const last = events.at(-1)
  if (openTurn === null || last === undefined) return []

  const turn = openTurn
  const time = last.time
  let seq = last.seq + 1
  const closers: SessionEvent[] = []
  for (const [callId, call] of pending) {
    closers.push(syntheticResult(turn, callId, call, seq, time))
    seq += 1
  }
  if (openStep !== null) {
    const data: JsonObject = { turn, step: openStep, meta: { synthetic: true } }
    closers.push(deepFreeze({ type: 'step/end', seq, time, data }))
    seq += 1
  }
  const data: JsonObject = { turn, reason: { kind: 'interrupted' }, meta: { synthetic: true } }
  closers.push(deepFreeze({ type: 'turn/end', seq, time, data }))
  return closers
}

function syntheticResult(turn: number, callId: string, call: PendingCall, seq: number, time: number): SessionEvent {
  const started = call.callSeq !== null
  const text = started ? toolOutcomeUnknownText : toolNotStartedText
  const data: JsonObject = {
    turn,
    step: call.step,
    message: {
      id: `interrupted:${callId}:${seq}`,
      role: 'user',
      source: { kind: 'tool', callId },
      content: [{ type: 'tool-result', toolCallId: callId, isError: true, content: [{ type: 'text', text }] }],
    },
    error: {
      name: 'InterruptedToolCallError',
      code: started ? 'TOOL_OUTCOME_UNKNOWN' : 'TOOL_NOT_STARTED',
    },
    meta: { synthetic: true },
  }
  const base = { type: 'tool/result', seq, time, data, surfaceOp: 'append' } as const
  return deepFreeze(call.callSeq === null ? base : { ...base, sourceEventSeqs: [call.callSeq] })
}

/** The value at `key` of a JSON object, or `undefined` for anything else. */
function field(value: JsonValue | undefined, key: string): JsonValue | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  return Object.hasOwn(value, key) ? (value as JsonObject)[key] : undefined
}

function positiveInteger(value: JsonValue | undefined): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null
}

function isNonEmptyString(value: JsonValue | undefined): value is string {
  return typeof value === 'string' && value.length > 0
}
