import { HarnessError } from '../errors/harness-error.js'
import { LlmError } from '../errors/llm-error.js'
import type { LlmFailure } from '../session/llm-failure.js'
import type { CancelCause, TurnEndReason } from '../session/turn-end-reason.js'

/**
 * Normalizes a thrown value into the `LlmFailure` of a `turn/end {error}`: an
 * `LlmError` keeps its failure verbatim, another `HarnessError` gives `{message, code}`, anything
 * else `{message, code: 'UNKNOWN'}`.
 *
 * @param error - what was thrown
 * @returns the failure
 */
export function failureOf(error: unknown): LlmFailure {
  // A hostile value (a proxy whose traps throw, a throwing getter) must not break the turn's end.
  try {
    if (error instanceof LlmError) return error.failure
    if (HarnessError.is(error)) return { message: String(error.message), code: error.code }
    return { message: thrownText(error), code: 'UNKNOWN' }
  } catch {
    return { message: unprintable, code: 'UNKNOWN' }
  }
}

const unprintable = '(unprintable thrown value)'

function thrownText(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message)
    return String(error)
  } catch {
    return unprintable
  }
}

/** Whether `error` is the abort itself: the signal's reason, an `AbortError` or an `ABORTED` model failure. */
function isAbortItself(error: unknown, signal: AbortSignal): boolean {
  if (error === signal.reason) return true
  try {
    if (error instanceof Error && error.name === 'AbortError') return true
    return error instanceof LlmError && error.failure.code === 'ABORTED'
  } catch {
    return false
  }
}

/** What a turn observed, folded into its end reason by {@link turnEndOf}. */
export interface TurnFacts {
  /** The turn signal. */
  readonly signal: AbortSignal
  /** What unwound the turn, when something did. */
  readonly thrown: { readonly error: unknown } | undefined
  /** `agent/pre-step` rejected. */
  readonly blocked: boolean
  /** A step finished `max-tokens`. */
  readonly maxTokens: boolean
  /** The step limit, when the turn stopped at it (see `runTurn`). */
  readonly maxStepsLimit?: number | undefined
}

/** A `turn/end`'s reason and optional cause. */
export interface TurnEnd {
  /** The end reason. */
  readonly reason: TurnEndReason
  /** The failure kept on an aborted turn unwound by something else. */
  readonly cause?: LlmFailure
}

/**
 * The end reason of a turn: the first of `aborted`, `error`, `blocked`,
 * `max-tokens`, `max-steps`, `completed` that applies.
 *
 * @param facts - what the turn observed
 * @returns the reason, with `cause` on an aborted turn unwound by another exception
 */
export function turnEndOf(facts: TurnFacts): TurnEnd {
  const { signal, thrown } = facts
  if (signal.aborted) {
    const reason: TurnEndReason = { kind: 'aborted', reason: signal.reason as CancelCause }
    if (thrown === undefined || isAbortItself(thrown.error, signal)) return { reason }
    return { reason, cause: failureOf(thrown.error) }
  }
  if (thrown !== undefined) return { reason: { kind: 'error', error: failureOf(thrown.error) } }
  if (facts.blocked) return { reason: { kind: 'blocked' } }
  if (facts.maxTokens) return { reason: { kind: 'max-tokens' } }
  if (facts.maxStepsLimit !== undefined) return { reason: { kind: 'max-steps', limit: facts.maxStepsLimit } }
  return { reason: { kind: 'completed' } }
}

/**
 * Throws the signal's reason when the turn signal is aborted (every abort check of the loop).
 *
 * @param signal - the turn signal
 */
export function abortCheck(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason
}
