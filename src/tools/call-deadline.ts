import { ToolTimeoutError } from '../errors/tool-call-error.js'
import type { Clock } from '../kernel/host-services.js'

/** What interrupted a call first: its deadline or the turn signal. */
export type CallInterruption = 'deadline' | 'abort'

/** What {@link CallDeadline} needs. */
export interface CallDeadlineOptions {
  /** The harness clock: the deadline and the abort grace are timed on it. */
  readonly clock: Clock
  /** The turn signal; its abort aborts the call signal with the same reason. */
  readonly turnSignal: AbortSignal
  /** The tool's name, for the timeout reason. */
  readonly toolName: string
  /** The call id, for the timeout reason. */
  readonly callId: string
  /** The deadline in milliseconds (the definition's `timeoutMs`, else the agent's `toolTimeoutMs`); none when absent. */
  readonly timeoutMs: number | undefined
  /** How long an interrupted body may take before it is abandoned (`toolAbortGraceMs`). */
  readonly graceMs: number
}

/**
 * One call's signal, deadline and abandonment timer. The call signal follows
 * the turn signal from creation; {@link CallDeadline.arm} (at dispatch) starts the deadline, on
 * whose expiry the call signal aborts with a {@link ToolTimeoutError}. The first of the two
 * decides {@link CallDeadline.interruption}. Once the call signal aborted during dispatch, the
 * body has `graceMs` to settle before `onAbandon` runs. {@link CallDeadline.release} cancels
 * every timer and listener; nothing fires after it.
 *
 * @internal
 */
export class CallDeadline {
  readonly #options: CallDeadlineOptions
  readonly #controller = new AbortController()
  #interruption: CallInterruption | undefined
  #onAbandon: (() => void) | undefined
  #cancelDeadline: (() => void) | undefined
  #cancelGrace: (() => void) | undefined
  #released = false
  readonly #onTurnAbort = (): void => {
    this.#interrupt('abort', this.#options.turnSignal.reason)
  }

  /** @param options - the clock, the turn signal, the deadline and the grace */
  constructor(options: CallDeadlineOptions) {
    this.#options = options
    if (options.turnSignal.aborted) this.#onTurnAbort()
    else options.turnSignal.addEventListener('abort', this.#onTurnAbort, { once: true })
  }

  /** The call signal (`ToolContext.signal`). */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** The deadline in milliseconds, if the call has one. */
  get timeoutMs(): number | undefined {
    return this.#options.timeoutMs
  }

  /** What aborted the call signal first, if anything did. */
  get interruption(): CallInterruption | undefined {
    return this.#interruption
  }

  /**
   * Starts the deadline (dispatch began) and the abandonment watch.
   *
   * @param onAbandon - runs once if the body is still unsettled `graceMs` after the call signal aborted
   */
  arm(onAbandon: () => void): void {
    if (this.#released) return
    this.#onAbandon = onAbandon
    const { timeoutMs, clock } = this.#options
    if (this.#interruption !== undefined) {
      this.#startGrace()
      return
    }
    if (timeoutMs !== undefined) {
      this.#cancelDeadline = clock.setTimer(() => {
        this.#cancelDeadline = undefined
        this.#interrupt('deadline', this.#timeoutReason(timeoutMs))
      }, timeoutMs)
    }
  }

  /** The call settled: cancels the timers and stops following the turn signal. Idempotent. */
  release(): void {
    if (this.#released) return
    this.#released = true
    this.#options.turnSignal.removeEventListener('abort', this.#onTurnAbort)
    this.#cancelDeadline?.()
    this.#cancelGrace?.()
    this.#cancelDeadline = undefined
    this.#cancelGrace = undefined
  }

  #timeoutReason(timeoutMs: number): ToolTimeoutError {
    const { toolName, callId } = this.#options
    return new ToolTimeoutError({ toolName, callId, message: `"${toolName}" did not finish within ${timeoutMs} ms` })
  }

  #interrupt(interruption: CallInterruption, reason: unknown): void {
    if (this.#released || this.#interruption !== undefined) return
    this.#interruption = interruption
    this.#options.turnSignal.removeEventListener('abort', this.#onTurnAbort)
    this.#cancelDeadline?.()
    this.#cancelDeadline = undefined
    this.#controller.abort(reason)
    if (this.#onAbandon !== undefined) this.#startGrace()
  }

  #startGrace(): void {
    if (this.#released || this.#cancelGrace !== undefined) return
    this.#cancelGrace = this.#options.clock.setTimer(() => {
      this.#cancelGrace = undefined
      if (this.#released) return
      this.#onAbandon?.()
    }, this.#options.graceMs)
  }
}
