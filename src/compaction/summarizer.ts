import type { Agent } from '../agent/agent.js'
import type { Message } from '../session/message.js'
import type { ToolSchema } from '../session/request-header.js'
import type { TokenUsage } from '../session/stream-chunk.js'

/** What a {@link Summarizer} is given. */
export interface SummarizerInput {
  /** The agent whose session is compacted. */
  readonly agent: Agent
  /** The head's derived messages, verbatim and in order. */
  readonly messages: readonly Message[]
  /** The folded header's system prompt. */
  readonly system?: string
  /** The folded header's tools. */
  readonly tools?: readonly ToolSchema[]
  /** The folded header's provider and model, else the agent's options. */
  readonly route: {
    /** The provider id. */
    readonly provider: string
    /** The model id. */
    readonly model: string
  }
  /** The instruction to summarize with. */
  readonly instruction: string
  /** Aborts the summary; always forwarded. */
  readonly signal: AbortSignal
}

/** What a {@link Summarizer} resolves with. */
export interface SummarizerResult {
  /** The summary text; empty fails the action `SUMMARY_EMPTY`. */
  readonly text: string
  /** The provider that wrote it. */
  readonly provider: string
  /** The model that wrote it. */
  readonly model: string
  /** The call's usage, when known. */
  readonly usage?: TokenUsage
  /** How many model calls it took. */
  readonly attempts: number
}

/**
 * Writes the summary of a head. Reject with an `LlmError` for a model
 * failure; the engine wraps it as `SUMMARY_FAILED`.
 */
export type Summarizer = (input: SummarizerInput) => Promise<SummarizerResult>

/** The default instruction of the summarizer. */
export const DEFAULT_SUMMARY_INSTRUCTION =
  'Write a summary of the conversation so far that lets you continue the work without it. Keep goals, decisions, constraints, names, identifiers, open tasks and what the tools found. Reply with the summary only.'
