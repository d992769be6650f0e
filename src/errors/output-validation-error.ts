import type { TurnResult } from '../agent/turn-result.js'
import { ErrorCode } from './codes.js'
import { causeOf } from './cause-of.js'
import { HarnessError } from './harness-error.js'

/** One way a structured answer missed its schema: where, in bracket form, and what is wrong. */
export interface OutputIssue {
  /** The path inside the answer, e.g. `'items[0].name'`; `''` for the answer itself. */
  readonly path: string
  /** What is wrong, e.g. `'expected string, received number'`. */
  readonly message: string
}

/**
 * A run's structured answer (`agent.run(input, { output })`) was still not JSON matching the
 * schema after its repair steps, or the turn ended without an answer. The raw answer is kept in
 * {@link OutputValidationError.text} and the whole turn in {@link OutputValidationError.result}.
 */
export class OutputValidationError extends HarnessError {
  static override readonly brand: string = 'OutputValidationError'
  /** The path of the first issue, in bracket form (`'items[0].name'`; `''` for the answer itself). */
  readonly path: string
  /** Every issue of the last answer, first one first. */
  readonly issues: readonly OutputIssue[]
  /** The raw text of the last answer (`''` when the turn gave none). */
  readonly text: string
  /** The turn's result, as `agent.run()` would have resolved it without `output`; absent outside a run. */
  readonly result: TurnResult | undefined

  /** @param options - the issues (at least one), the raw answer, the turn result and an optional cause */
  constructor(options: {
    issues: readonly OutputIssue[]
    text: string
    result?: TurnResult | undefined
    cause?: unknown
  }) {
    const first = options.issues[0] ?? { path: '', message: 'is invalid' }
    const where = first.path === '' ? 'the answer' : `the answer at ${first.path}`
    super(ErrorCode.OUTPUT_INVALID, `${where}: ${first.message}`, causeOf(options))
    this.path = first.path
    this.issues = Object.freeze([...options.issues])
    this.text = options.text
    this.result = options.result
  }
}
