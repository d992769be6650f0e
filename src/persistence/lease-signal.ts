/**
 * The `signal` of a lease, made on first read: most leases are released without anyone reading
 * it, and then neither the controller nor the `LeaseLostError` reason is ever built.
 *
 * @internal
 */
export class LeaseSignal {
  #controller: AbortController | undefined
  #reason: (() => unknown) | undefined

  /** The lease's signal; aborted at once when the lease already ended. The same object on every read. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#reason !== undefined) this.#controller.abort(this.#reason())
    }
    return this.#controller.signal
  }

  /**
   * Ends the lease: aborts the signal if it was read, else records how to build the reason for a
   * later read. Only the first call counts.
   *
   * @param reason - builds the abort reason (a `LeaseLostError`)
   */
  abort(reason: () => unknown): void {
    if (this.#reason !== undefined) return
    this.#reason = reason
    this.#controller?.abort(reason())
  }
}
