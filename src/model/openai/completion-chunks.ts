/**
 * The chunks of one call, served one by one from the batches its body reads produce.
 *
 * @module
 */
import type { StreamChunk } from '../../session/stream-chunk.js'

type Result = IteratorResult<StreamChunk, undefined>

const DONE: Result = Object.freeze({ value: undefined, done: true })

/**
 * Flattens a generator of chunk batches (one batch per body read) into a chunk iterator. It does
 * what an `async function*` looping over the batches would do, without an async generator hop for
 * every chunk: a chunk already read is served with one resolved promise. After a `finish` chunk the
 * batches are closed (the call's cleanup runs) and the iterator is done; a batch generator that
 * throws ends in the chunk `failed` makes of the error (once, and only before a `finish`);
 * `return()` closes the batches. Calls are served in order, as an async generator's are.
 *
 * @internal
 */
export class CompletionChunks implements AsyncIterableIterator<StreamChunk, undefined> {
  readonly #batches: AsyncGenerator<readonly StreamChunk[], void, undefined>
  readonly #failed: (error: unknown, started: boolean) => StreamChunk
  #buffer: readonly StreamChunk[] = []
  #at = 0
  #started = false
  #done = false
  /** The batches' `return()`, once called: `done` is reported after it settled. */
  #closing: Promise<unknown> | undefined
  /** The call in progress, when it waits for a batch (later calls queue behind it). */
  #busy: Promise<Result> | undefined

  /**
   * @param batches - the call's batches, in order
   * @param failed - the `finish` chunk for an error the batches threw, given whether a chunk went out
   */
  constructor(
    batches: AsyncGenerator<readonly StreamChunk[], void, undefined>,
    failed: (error: unknown, started: boolean) => StreamChunk,
  ) {
    this.#batches = batches
    this.#failed = failed
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  /**
   * The next chunk.
   *
   * @returns the next chunk, or done after the `finish`
   */
  next(): Promise<Result> {
    if (this.#busy === undefined) {
      if (this.#at < this.#buffer.length) return Promise.resolve(this.#serve(this.#buffer[this.#at++] as StreamChunk))
      if (this.#done && this.#closing === undefined) return Promise.resolve(DONE)
    }
    return this.#enqueue(() => this.#nextInTurn())
  }

  /**
   * Stops early: closes the batches (the call's cleanup runs) and is done.
   *
   * @returns done, once the batches closed
   */
  return(): Promise<Result> {
    return this.#enqueue(async () => {
      this.#close()
      await this.#closing
      return DONE
    })
  }

  /** Runs `call` once every earlier call has settled. */
  #enqueue(call: () => Promise<Result>): Promise<Result> {
    const previous = this.#busy
    const current = previous === undefined ? call() : previous.then(call, call)
    this.#busy = current
    const settled = (): void => {
      if (this.#busy === current) this.#busy = undefined
    }
    current.then(settled, settled)
    return current
  }

  async #nextInTurn(): Promise<Result> {
    if (this.#at < this.#buffer.length) return this.#serve(this.#buffer[this.#at++] as StreamChunk)
    if (this.#done) {
      await this.#closing
      return DONE
    }
    return this.#pull()
  }

  async #pull(): Promise<Result> {
    for (;;) {
      let batch: IteratorResult<readonly StreamChunk[], void>
      try {
        batch = await this.#batches.next()
      } catch (error) {
        this.#done = true
        this.#buffer = []
        return { value: this.#failed(error, this.#started), done: false }
      }
      if (batch.done === true) {
        this.#done = true
        return DONE
      }
      if (batch.value.length === 0) continue
      this.#buffer = batch.value
      this.#at = 1
      return this.#serve(batch.value[0] as StreamChunk)
    }
  }

  #serve(chunk: StreamChunk): Result {
    if (chunk.type === 'finish') this.#close()
    else this.#started = true
    return { value: chunk, done: false }
  }

  #close(): void {
    this.#done = true
    this.#buffer = []
    this.#at = 0
    this.#closing ??= this.#batches.return(undefined).catch(() => undefined)
  }
}
