import { describe, expect, it } from 'vitest'
import { RelayedStream } from '../../src/model/relayed-stream.js'
import type { StreamChunk } from '../../src/session/stream-chunk.js'

const text = (value: string): StreamChunk => ({ type: 'text-delta', index: 0, text: value })

async function* chunks(...values: StreamChunk[]): AsyncGenerator<StreamChunk, void, undefined> {
  yield* values
}

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const seen: StreamChunk[] = []
  for await (const chunk of stream) seen.push(chunk)
  return seen
}

describe('RelayedStream: the waterfall stream, passed through', () => {
  it('yields what the resolved stream yields, then stays done', async () => {
    const stream = new RelayedStream(Promise.resolve(chunks(text('a'), text('b'))))
    expect(await collect(stream)).toEqual([text('a'), text('b')])
    expect(await stream.next()).toEqual({ value: undefined, done: true })
  })

  it('rejects the first next with the rejection of the waterfall, then is done', async () => {
    const failure = new Error('middleware threw')
    const source = Promise.reject(failure)
    source.catch(() => {})
    const stream = new RelayedStream(source)
    await expect(stream.next()).rejects.toBe(failure)
    expect(await stream.next()).toEqual({ value: undefined, done: true })
  })

  it('reads a sync iterable as yield* does', async () => {
    const stream = new RelayedStream(Promise.resolve([text('x')] as unknown as AsyncIterable<StreamChunk>))
    expect(await collect(stream)).toEqual([text('x')])
  })

  it('ends at return() before the first next without opening the stream; after it, closes the inner one', async () => {
    let opened = false
    const lazy = new RelayedStream(
      Promise.resolve({
        [Symbol.asyncIterator]: () => {
          opened = true
          return chunks(text('never'))
        },
      }),
    )
    expect(await lazy.return()).toEqual({ value: undefined, done: true })
    expect(await lazy.next()).toEqual({ value: undefined, done: true })
    expect(opened).toBe(false)

    let closed = false
    async function* closing(): AsyncGenerator<StreamChunk, void, undefined> {
      try {
        yield text('a')
        yield text('b')
      } finally {
        closed = true
      }
    }
    const stream = new RelayedStream(Promise.resolve(closing()))
    for await (const chunk of stream) {
      expect(chunk).toEqual(text('a'))
      break
    }
    expect(closed).toBe(true)
    expect(await stream.next()).toEqual({ value: undefined, done: true })
  })

  it('rethrows what the inner stream threw, then is done', async () => {
    const failure = new Error('inner failed')
    async function* failing(): AsyncGenerator<StreamChunk, void, undefined> {
      yield text('a')
      throw failure
    }
    const stream = new RelayedStream(Promise.resolve(failing()))
    await expect(collect(stream)).rejects.toBe(failure)
    expect(await stream.next()).toEqual({ value: undefined, done: true })
  })
})
