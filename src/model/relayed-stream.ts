import type { StreamChunk } from '../session/stream-chunk.js'

type Result = IteratorResult<StreamChunk, undefined>

const DONE: Result = Object.freeze({ value: undefined, done: true })

/** The iterator of what the `llm/stream` waterfall resolved to: async, or a sync iterable as `yield*` takes it. */
function iteratorOf(source: AsyncIterable<StreamChunk>): AsyncIterator<StreamChunk> {
  if (typeof source[Symbol.asyncIterator] === 'function') return source[Symbol.asyncIterator]()
  // `yield*` reads a sync iterable too (each value awaited): left to a generator, as rare as it is.
  return (async function* relay() {
    yield* source as unknown as Iterable<StreamChunk>
  })()
}

/**
 * The stream of a dispatched call: the waterfall's stream once it resolves, each `next` handed
 * straight to it, as `async function* () { yield* await source }` would, without a generator
 * resumption and its promises per chunk. A rejected `source` rejects the first `next`; `return`
 * before the first `next` ends the stream without waiting for `source`; once the inner stream is
 * done (or threw), `next` answers done without calling it again.
 *
 * @internal
 */
export class RelayedStream implements AsyncIterableIterator<StreamChunk, undefined> {
  readonly #source: Promise<AsyncIterable<StreamChunk>>
  #inner: AsyncIterator<StreamChunk> | undefined
  #opening: Promise<AsyncIterator<StreamChunk>> | undefined
  #done = false

  /** @param source - the waterfall's result (its rejection surfaces at the first `next`) */
  constructor(source: Promise<AsyncIterable<StreamChunk>>) {
    this.#source = source
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<Result> {
    if (this.#done) return Promise.resolve(DONE)
    const inner = this.#inner
    if (inner !== undefined) return this.#settle(inner.next())
    return this.#open().then((opened) => this.#settle(opened.next()))
  }

  return(value?: undefined): Promise<Result> {
    if (this.#done) return Promise.resolve({ value, done: true })
    if (this.#inner === undefined && this.#opening === undefined) {
      this.#done = true
      return Promise.resolve({ value, done: true })
    }
    return this.#open().then(async (opened) => {
      this.#done = true
      if (opened.return === undefined) return { value, done: true }
      const result = await opened.return(value)
      return { value: result.value, done: true }
    })
  }

  #open(): Promise<AsyncIterator<StreamChunk>> {
    if (this.#inner !== undefined) return Promise.resolve(this.#inner)
    this.#opening ??= this.#source.then(
      (source) => {
        this.#inner = iteratorOf(source)
        return this.#inner
      },
      (error: unknown) => {
        this.#done = true
        throw error
      },
    )
    return this.#opening
  }

  /** Passes a result on; a done or failed inner stream ends this one. */
  #settle(result: Promise<Result>): Promise<Result> {
    return result.then(
      (settled) => {
        if (settled.done === true) {
          this.#done = true
          return DONE
        }
        return settled
      },
      (error: unknown) => {
        this.#done = true
        throw error
      },
    )
  }
}
