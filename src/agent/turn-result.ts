import type { LlmFailure } from '../session/llm-failure.js'
import type { Message } from '../session/message.js'
import type { TokenUsage } from '../session/stream-chunk.js'
import type { TurnEndReason } from '../session/turn-end-reason.js'

/** What `agent.run()` resolves with. Lossless JSON. */
export interface TurnResult {
  /** The claiming turn. */
  readonly turn: number
  /** Its end reason. */
  readonly reason: TurnEndReason
  /** The `turn/end` cause, when there is one. */
  readonly cause?: LlmFailure
  /** The text blocks of the turn's assistant messages, joined with `'\n'`. */
  readonly text: string
  /** The surface messages the turn logged, in order. */
  readonly messages: readonly Message[]
  /** The summed usage of the turn's assistant messages. */
  readonly usage: TokenUsage
}

/** What a structured `agent.run()` resolves with: the turn result plus its checked answer. */
export interface StructuredTurnResult<T> extends TurnResult {
  /** The answer, parsed and checked: `z.output` of a zod schema, the JSON value for a JSON Schema. */
  readonly output: T
}
