import type { Session } from '../session/session.js'
import type { JsonValue } from '../session/json-value.js'

/**
 * The part of an agent the tool layer uses. The agent loop's `Agent` satisfies it; stand-alone
 * callers of the scheduler (tests, hosts) may pass any object with these members.
 */
export interface ToolAgent {
  /** The agent id (= its session id). */
  readonly id: string
  /** The agent's session. */
  readonly session: Session
}

/** One call as policy listeners and guards see it, frozen. */
export interface ToolCallInfo {
  /** The calling agent. */
  readonly agent: ToolAgent
  /** The agent's session. */
  readonly session: Session
  /** The open turn. */
  readonly turn: number
  /** The open step. */
  readonly step: number
  /** The call id. */
  readonly callId: string
  /** The tool name the model asked for. */
  readonly name: string
  /** The model's raw argument text. */
  readonly arguments: string
  /** The parsed (and, for zod tools, validated) arguments, once known. */
  readonly args?: JsonValue | unknown
  /** The turn signal. */
  readonly signal: AbortSignal
}
