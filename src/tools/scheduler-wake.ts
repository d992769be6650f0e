/**
 * The scheduler's "something settled" latch: a settlement that happens while
 * nobody waits is remembered, so a wait that starts after it returns at once and no wake-up is
 * lost. One waiter at a time (the scheduler loop).
 *
 * @internal
 */
export class SchedulerWake {
  #pending = false
  #waiter: (() => void) | undefined

  /** Forgets earlier settlements: the caller is about to look at the current state anyway. */
  reset(): void {
    this.#pending = false
  }

  /** Records a settlement and wakes the waiter, if any. */
  notify(): void {
    const waiter = this.#waiter
    if (waiter === undefined) {
      this.#pending = true
      return
    }
    this.#waiter = undefined
    waiter()
  }

  /**
   * Waits for the next settlement (or returns at once if one happened since the last reset).
   *
   * @returns resolves on the settlement
   */
  wait(): Promise<void> {
    if (this.#pending) {
      this.#pending = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      this.#waiter = resolve
    })
  }
}
