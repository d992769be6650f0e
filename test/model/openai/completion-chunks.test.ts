/**
 * `CompletionChunks` (src/model/openai/completion-chunks.ts): the adapter's chunk iterator over
 * batch reads. It must behave as the `async function*` it replaced: chunks in order, the batches
 * closed (the call's cleanup run) by the time the iterator reports done, a thrown batch error
 * turned into one failure `finish`, calls served in order.
 */
import { describe, expect, test } from 'vitest'
import type { StreamChunk } from 'yoke'
import { CompletionChunks } from '../../../src/model/openai/completion-chunks.js'

const delta = (text: string): StreamChunk => ({ type: 'text-delta', index: 0, text })
const stop: StreamChunk = { type: 'finish', reason: 'stop' }
const failedWith = (error: unknown, started: boolean): StreamChunk => ({
  type: 'finish',
  reason: 'error',
  failure: {
    code: 'UNKNOWN',
    message: `${String(error)} started=${started}`,
    retryable: false,
    phase: started ? 'streaming' : 'connect',
  },
})

/** A batch generator that records whether its cleanup (`finally`) ran and how far it got. */
function recorded(
  batches: readonly (readonly StreamChunk[])[],
  thenThrow?: unknown,
): {
  readonly generator: AsyncGenerator<readonly StreamChunk[], void, undefined>
  readonly log: string[]
} {
  const log: string[] = []
  async function* generator(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
    try {
      for (const [index, batch] of batches.entries()) {
        log.push(`batch ${index}`)
        yield batch
      }
      if (thenThrow !== undefined) throw thenThrow
    } finally {
      log.push('cleanup')
    }
  }
  return { generator: generator(), log }
}

async function drain(chunks: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const chunk of chunks) out.push(chunk)
  return out
}

describe('CompletionChunks', () => {
  test('serves every chunk in order across batches, skipping empty ones', async () => {
    const { generator } = recorded([[delta('a'), delta('b')], [], [delta('c')], [stop]])
    expect(await drain(new CompletionChunks(generator, failedWith))).toEqual([delta('a'), delta('b'), delta('c'), stop])
  })

  test('a finish ends the iteration and runs the cleanup before done is reported; later batches are never read', async () => {
    const { generator, log } = recorded([[delta('a'), stop, delta('never')], [delta('never either')]])
    const chunks = new CompletionChunks(generator, failedWith)
    expect((await chunks.next()).value).toEqual(delta('a'))
    expect((await chunks.next()).value).toEqual(stop)
    expect(await chunks.next()).toEqual({ value: undefined, done: true })
    expect(log).toEqual(['batch 0', 'cleanup'])
    expect(await chunks.next()).toEqual({ value: undefined, done: true })
  })

  test('a batch error becomes one failure finish; started tells whether a chunk went out', async () => {
    const before = recorded([], new Error('boom'))
    expect(await drain(new CompletionChunks(before.generator, failedWith))).toEqual([
      failedWith(new Error('boom'), false),
    ])
    const after = recorded([[delta('a')]], new Error('boom'))
    expect(await drain(new CompletionChunks(after.generator, failedWith))).toEqual([
      delta('a'),
      failedWith(new Error('boom'), true),
    ])
    expect(after.log).toEqual(['batch 0', 'cleanup'])
  })

  test('batches that end without a finish end the iteration as they are', async () => {
    const { generator, log } = recorded([[delta('a')]])
    expect(await drain(new CompletionChunks(generator, failedWith))).toEqual([delta('a')])
    expect(log).toEqual(['batch 0', 'cleanup'])
  })

  test('breaking out of for await closes the batches', async () => {
    const { generator, log } = recorded([[delta('a'), delta('b')], [delta('c')], [stop]])
    for await (const chunk of new CompletionChunks(generator, failedWith)) {
      expect(chunk).toEqual(delta('a'))
      break
    }
    expect(log).toEqual(['batch 0', 'cleanup'])
  })

  test('calls made without waiting are served in order, a return() after them included', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const log: string[] = []
    async function* slow(): AsyncGenerator<readonly StreamChunk[], void, undefined> {
      try {
        await gate
        yield [delta('a')]
        yield [delta('b'), stop]
      } finally {
        log.push('cleanup')
      }
    }
    const chunks = new CompletionChunks(slow(), failedWith)
    const first = chunks.next()
    const second = chunks.next()
    const closed = chunks.return()
    const afterClose = chunks.next()
    release()
    expect(await first).toEqual({ value: delta('a'), done: false })
    expect(await second).toEqual({ value: delta('b'), done: false })
    expect(await closed).toEqual({ value: undefined, done: true })
    expect(await afterClose).toEqual({ value: undefined, done: true })
    expect(log).toEqual(['cleanup'])
  })

  test('is its own async iterator', () => {
    const chunks = new CompletionChunks(recorded([]).generator, failedWith)
    expect(chunks[Symbol.asyncIterator]()).toBe(chunks)
  })
})
