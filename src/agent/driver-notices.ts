import type { TurnEndData } from '../session/core-event-types.js'
import type { CancelCause } from '../session/turn-end-reason.js'

/** A finished turn as the driver reports it to `agent.run()`. */
export interface TurnEndNotice {
  /** The turn. */
  readonly turn: number
  /** The seq of its `turn/start`. */
  readonly startSeq: number
  /** Its `turn/end` data. */
  readonly end: TurnEndData
}

/** The checkpoint failure after a `turn/end`, when there is one. */
export type FlushFailure = { readonly error: unknown } | undefined

/**
 * What an agent's driver tells the runs waiting on it (`agent.run()`, `agent.stream()`): turn ends,
 * a turn it could not close, its stop at dispose, the running turn's start and the cause of a
 * `cancel()` clearing the inbox. The agent owns one and reports into it; the runs only subscribe
 * and read, so they never reach into the agent itself.
 */
export class DriverNotices {
  readonly #turnEnd = new Set<(notice: TurnEndNotice, flushError: FlushFailure) => void>()
  readonly #unclosedTurn = new Set<(error: unknown) => void>()
  readonly #disposed = new Set<() => void>()
  #turnStartSeq: number | undefined
  #clearingCause: CancelCause | undefined

  /** The seq of the running turn's `turn/start`, else `undefined`. */
  get turnStartSeq(): number | undefined {
    return this.#turnStartSeq
  }

  /** The cause of the `cancel()` clearing the inbox right now, else `undefined`. */
  get clearingCause(): CancelCause | undefined {
    return this.#clearingCause
  }

  /**
   * Calls `listener` after every `turn/end` the driver logs and its checkpoint.
   *
   * @param listener - the listener; `flushError` is the checkpoint's failure, when there is one
   * @returns a remover
   */
  onTurnEnd(listener: (notice: TurnEndNotice, flushError: FlushFailure) => void): () => void {
    this.#turnEnd.add(listener)
    return () => this.#turnEnd.delete(listener)
  }

  /**
   * Calls `listener` when the loop could not close a turn (its `turn/end` append threw, also after
   * a failed `step/end`), and whenever a driver then cannot log `turn/start` because of it: no turn
   * of this agent can claim a prompt until a resume repairs the log (the prompts stay queued in it).
   *
   * @param listener - the listener, with the failed append's error
   * @returns a remover
   */
  onUnclosedTurn(listener: (error: unknown) => void): () => void {
    this.#unclosedTurn.add(listener)
    return () => this.#unclosedTurn.delete(listener)
  }

  /**
   * Calls `listener` once the driver stopped at dispose (queued prompts stay in the log).
   *
   * @param listener - the listener
   * @returns a remover
   */
  onDisposed(listener: () => void): () => void {
    this.#disposed.add(listener)
    return () => this.#disposed.delete(listener)
  }

  /**
   * The driver logged `turn/start` at `startSeq`.
   *
   * @param startSeq - its seq
   */
  turnStarted(startSeq: number): void {
    this.#turnStartSeq = startSeq
  }

  /**
   * The driver logged `turn/end` (or failed to) and ran its checkpoint.
   *
   * @param notice - the finished turn
   * @param flushError - the append or checkpoint failure, when there is one
   */
  turnEnded(notice: TurnEndNotice, flushError: FlushFailure): void {
    this.#turnStartSeq = undefined
    for (const listener of [...this.#turnEnd]) listener(notice, flushError)
  }

  /**
   * The session holds a turn the loop could not close.
   *
   * @param error - the failed append's error
   */
  unclosedTurn(error: unknown): void {
    for (const listener of [...this.#unclosedTurn]) listener(error)
  }

  /** The driver stopped at dispose; the listeners are called once and dropped. */
  disposed(): void {
    for (const listener of [...this.#disposed]) listener()
    this.#disposed.clear()
  }

  /**
   * Runs `clear` (a `cancel()` emptying the inbox) with `cause` readable as {@link clearingCause}.
   *
   * @param cause - the cancel's cause
   * @param clear - the clearing
   */
  clearing(cause: CancelCause, clear: () => void): void {
    this.#clearingCause = cause
    try {
      clear()
    } finally {
      this.#clearingCause = undefined
    }
  }
}
