import { z } from 'zod'
import { type LlmFailure, llmFailureSchema } from './llm-failure.js'
import { positiveSafeIntegerSchema, typedSchema } from './schema-primitives.js'

/**
 * An abort without detail: the user canceled, the parent agent canceled, the agent was disposed,
 * or a deadline passed (a run's `signal` that aborted with a `TimeoutError`, as
 * `AbortSignal.timeout(ms)` does).
 */
export interface PlainCancelCause {
  /** Who aborted: `'user'`, `'parent'`, `'disposed'` or `'timeout'`. */
  readonly kind: 'user' | 'parent' | 'disposed' | 'timeout'
}

/** An abort requested by a hook. */
export interface HookCancelCause {
  /** Always `'hook'`. */
  readonly kind: 'hook'
  /** What the hook said. */
  readonly reason: string
}

/** Why a turn signal aborted, tagged by `kind`; the first cause wins. */
export type CancelCause = PlainCancelCause | HookCancelCause

/** The turn ended normally, or a first pre-step entered nothing (a zero-step turn). */
export interface CompletedTurnEnd {
  /** Always `'completed'`. */
  readonly kind: 'completed'
}

/** The turn signal aborted. */
export interface AbortedTurnEnd {
  /** Always `'aborted'`. */
  readonly kind: 'aborted'
  /** The first abort cause. */
  readonly reason: CancelCause
}

/** A pre-step rejected. */
export interface BlockedTurnEnd {
  /** Always `'blocked'`. */
  readonly kind: 'blocked'
}

/** Any other failure; a non-model error is normalized to `{ message, code }`. */
export interface ErrorTurnEnd {
  /** Always `'error'`. */
  readonly kind: 'error'
  /** The failure. */
  readonly error: LlmFailure
}

/** Some step of the turn hit the output ceiling (sticky within the turn). */
export interface MaxTokensTurnEnd {
  /** Always `'max-tokens'`. */
  readonly kind: 'max-tokens'
}

/**
 * The turn reached its step limit (`maxSteps`): its last step's request forbade tool calls, and the
 * turn ended there although the model was offered tools or more work was pending.
 */
export interface MaxStepsTurnEnd {
  /** Always `'max-steps'`. */
  readonly kind: 'max-steps'
  /** The step limit the turn ran under: a positive safe integer. */
  readonly limit: number
}

/** The turn never ended: written only by crash repair. */
export interface InterruptedTurnEnd {
  /** Always `'interrupted'`. */
  readonly kind: 'interrupted'
}

/** Why a turn ended, tagged by `kind`. */
export type TurnEndReason =
  | CompletedTurnEnd
  | AbortedTurnEnd
  | BlockedTurnEnd
  | ErrorTurnEnd
  | MaxTokensTurnEnd
  | MaxStepsTurnEnd
  | InterruptedTurnEnd

/** The strict schema of a {@link CancelCause}, discriminated on `kind`. */
export const cancelCauseSchema = typedSchema<CancelCause>()(
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.enum(['user', 'parent', 'disposed', 'timeout']) }),
    z.strictObject({ kind: z.literal('hook'), reason: z.string() }),
  ]),
)

/** The strict schema of a {@link TurnEndReason}, discriminated on `kind`. */
export const turnEndReasonSchema = typedSchema<TurnEndReason>()(
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('completed') }),
    z.strictObject({ kind: z.literal('aborted'), reason: cancelCauseSchema }),
    z.strictObject({ kind: z.literal('blocked') }),
    z.strictObject({ kind: z.literal('error'), error: llmFailureSchema }),
    z.strictObject({ kind: z.literal('max-tokens') }),
    z.strictObject({ kind: z.literal('max-steps'), limit: positiveSafeIntegerSchema }),
    z.strictObject({ kind: z.literal('interrupted') }),
  ]),
)
