/**
 * Per-turn figures of a log for `inspect`: steps, tool calls, usage and how each
 * turn ended, read from the structure events.
 *
 * @module
 */
import type { SessionEvent } from '../session/session-event.js'

/** Token counts summed over a turn's (or a log's) assistant messages. */
export interface UsageTotals {
  /** Input tokens. */
  readonly inputTokens: number
  /** Output tokens. */
  readonly outputTokens: number
}

/** One turn of a log. */
export interface TurnSummary {
  /** The turn number. */
  readonly turn: number
  /** The `turn/end` reason kind, or `null` while the turn is open. */
  readonly reason: string | null
  /** How many steps started. */
  readonly steps: number
  /** How many distinct tool calls were logged (`tool/call`). */
  readonly toolCalls: number
  /** The summed usage of its assistant messages. */
  readonly usage: UsageTotals
}

/** The turns of a log. */
export interface LogTurns {
  /** Every turn, in order. */
  readonly turns: readonly TurnSummary[]
  /** The summed usage of all turns. */
  readonly usage: UsageTotals
  /** The number of the turn left open, else `null`. */
  readonly openTurn: number | null
}

interface OpenSummary {
  turn: number
  reason: string | null
  steps: number
  readonly calls: Set<string>
  inputTokens: number
  outputTokens: number
}

function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null ? (value as Readonly<Record<string, unknown>>) : {}
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}

function summaryOf(open: OpenSummary): TurnSummary {
  return {
    turn: open.turn,
    reason: open.reason,
    steps: open.steps,
    toolCalls: open.calls.size,
    usage: { inputTokens: open.inputTokens, outputTokens: open.outputTokens },
  }
}

/**
 * Summarizes the turns of a log. Events outside a turn are not counted.
 *
 * @param events - the log, in seq order
 * @returns the turns, the total usage and the open turn
 */
export function summarizeTurns(events: readonly SessionEvent[]): LogTurns {
  const all: OpenSummary[] = []
  let current: OpenSummary | undefined
  for (const event of events) {
    const data = record(event.data)
    if (event.type === 'turn/start') {
      current = { turn: count(data['turn']), reason: null, steps: 0, calls: new Set(), inputTokens: 0, outputTokens: 0 }
      all.push(current)
    } else if (current === undefined) {
      // Outside a turn: not counted.
    } else if (event.type === 'turn/end') {
      const kind = record(data['reason'])['kind']
      current.reason = typeof kind === 'string' ? kind : 'unknown'
      current = undefined
    } else if (event.type === 'step/start') {
      current.steps++
    } else if (event.type === 'tool/call') {
      current.calls.add(String(data['callId']))
    } else if (event.type === 'assistant/message') {
      const usage = record(data['usage'])
      current.inputTokens += count(usage['inputTokens'])
      current.outputTokens += count(usage['outputTokens'])
    }
  }
  const turns = all.map(summaryOf)
  const usage = {
    inputTokens: turns.reduce((sum, turn) => sum + turn.usage.inputTokens, 0),
    outputTokens: turns.reduce((sum, turn) => sum + turn.usage.outputTokens, 0),
  }
  return { turns, usage, openTurn: current?.turn ?? null }
}

/**
 * The call ids a set of closers answers (their synthetic `tool/result`s), in order.
 *
 * @param closers - events from `interruptedTurnClosers`
 * @returns the call ids
 */
export function answeredCallIds(closers: readonly SessionEvent[]): string[] {
  return closers.flatMap((event) => {
    if (event.type !== 'tool/result') return []
    const callId = record(record(record(event.data)['message'])['source'])['callId']
    return typeof callId === 'string' ? [callId] : []
  })
}
