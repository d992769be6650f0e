import { afterEach, describe, expect, test } from 'vitest'
import { type Harness, InvalidArgumentError, LlmError, type ModelRegistry, type StreamChunk, services } from 'yoke'
import { adapterBoundary, normalizeThrown } from '../../src/model/index.js'
import type { RecordingLogger } from '../helpers/recording-logger.js'
import { collect, fakeAdapter, modelHarness, req } from './registry-helpers.js'

const open: Harness[] = []
let reg: ModelRegistry
let logger: RecordingLogger

async function start(): Promise<void> {
  const started = await modelHarness()
  open.push(started.harness)
  logger = started.logger
  reg = started.harness.ctx.get(services.models)
}

afterEach(async () => {
  for (const running of open.splice(0)) await running.close()
})

/** An adapter iterator that yields `chunks`, then rejects or ends, and records `return()` calls. */
function scriptedIterator(chunks: readonly unknown[], end: { reject?: unknown } = {}) {
  const calls = { next: 0, return: 0 }
  let position = 0
  const iterator: AsyncIterator<unknown> & AsyncIterable<unknown> = {
    next() {
      calls.next++
      if (position < chunks.length) return Promise.resolve({ done: false, value: chunks[position++] })
      if ('reject' in end) return Promise.reject(end.reject)
      return Promise.resolve({ done: true, value: undefined })
    },
    return() {
      calls.return++
      return Promise.resolve({ done: true, value: undefined })
    },
    [Symbol.asyncIterator]() {
      return this
    },
  }
  return { iterator, calls }
}

const delta = (text: string): StreamChunk => ({ type: 'text-delta', index: 0, text })

describe('boundary normalization', () => {
  test('stream() throwing Error("boom") → one finish error UNKNOWN, phase connect', async () => {
    await start()
    reg.register({
      provider: 'a',
      stream() {
        throw new Error('boom')
      },
    })
    expect(await collect(reg.stream(req()))).toEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: { code: 'UNKNOWN', message: 'boom', retryable: false, phase: 'connect' },
      },
    ])
  })

  test('a text delta, then a rejection → [text-delta, finish error UNKNOWN phase streaming]', async () => {
    await start()
    const { iterator } = scriptedIterator([delta('x')], { reject: new Error('reset') })
    reg.register(fakeAdapter('a', () => iterator))
    expect(await collect(reg.stream(req()))).toEqual([
      delta('x'),
      {
        type: 'finish',
        reason: 'error',
        failure: { code: 'UNKNOWN', message: 'reset', retryable: false, phase: 'streaming' },
      },
    ])
  })

  test('ending without finish → the last chunk is finish error STREAM_CLOSED', async () => {
    await start()
    reg.register(fakeAdapter('a', () => [delta('x')]))
    const chunks = await collect(reg.stream(req()))
    expect(chunks).toEqual([
      delta('x'),
      {
        type: 'finish',
        reason: 'error',
        failure: {
          code: 'STREAM_CLOSED',
          message: 'the adapter stream ended without a finish chunk',
          retryable: false,
          phase: 'streaming',
        },
      },
    ])
  })

  test('finish then a text-delta → the delta is not received and return() was called', async () => {
    await start()
    const { iterator, calls } = scriptedIterator([{ type: 'finish', reason: 'stop' }, delta('late')])
    reg.register(fakeAdapter('a', () => iterator))
    expect(await collect(reg.stream(req()))).toEqual([{ type: 'finish', reason: 'stop' }])
    expect(calls).toEqual({ next: 1, return: 1 })
  })

  test('a chunk with text: 1n → finish error MALFORMED_RESPONSE, that chunk not received, the iterator closed', async () => {
    await start()
    const { iterator, calls } = scriptedIterator([
      delta('ok'),
      { type: 'text-delta', index: 0, text: 1n },
      delta('never'),
    ])
    reg.register(fakeAdapter('a', () => iterator))
    const chunks = await collect(reg.stream(req()))
    expect(chunks).toHaveLength(2)
    expect(chunks[0]).toEqual(delta('ok'))
    expect(chunks[1]).toMatchObject({
      type: 'finish',
      reason: 'error',
      failure: { code: 'MALFORMED_RESPONSE', retryable: false, phase: 'streaming', detail: { chunk: 'text-delta' } },
    })
    expect(calls).toEqual({ next: 2, return: 1 })
  })

  test('AbortError thrown after the signal aborted → finish aborted ABORTED', async () => {
    await start()
    const controller = new AbortController()
    reg.register(
      fakeAdapter('a', (request) =>
        (async function* aborting() {
          yield delta('partial')
          controller.abort()
          if (request.signal.aborted) throw new DOMException('This operation was aborted', 'AbortError')
        })(),
      ),
    )
    expect(await collect(reg.stream(req({ signal: controller.signal })))).toEqual([
      delta('partial'),
      {
        type: 'finish',
        reason: 'aborted',
        failure: { code: 'ABORTED', message: 'the request was aborted', retryable: false, phase: 'streaming' },
      },
    ])
  })
})

describe('the boundary table, further cases', () => {
  test.each([
    ['a non-object chunk', 'text', null],
    ['an unknown chunk type', { type: 'thinking', index: 0 }, 'thinking'],
    ['an extra key', { type: 'text-delta', index: 0, text: 'x', extra: true }, 'text-delta'],
    ['a negative index', { type: 'text-delta', index: -1, text: 'x' }, 'text-delta'],
    ['finish error without failure', { type: 'finish', reason: 'error' }, 'finish'],
    ['finish stop with a failure', { type: 'finish', reason: 'stop', failure: { code: 'X', message: '' } }, 'finish'],
    [
      'usage raw that is not JSON',
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1, raw: { at: new Date(0) } } },
      'usage',
    ],
    ['a NaN token count', { type: 'usage', usage: { inputTokens: Number.NaN, outputTokens: 1 } }, 'usage'],
  ])('%s → MALFORMED_RESPONSE with detail.chunk = its type', async (_name, bad, type) => {
    await start()
    const { iterator, calls } = scriptedIterator([bad, { type: 'finish', reason: 'stop' }])
    reg.register(fakeAdapter('a', () => iterator))
    const chunks = await collect(reg.stream(req()))
    expect(chunks).toHaveLength(1)
    expect(chunks[0]).toMatchObject({
      type: 'finish',
      reason: 'error',
      failure: { code: 'MALFORMED_RESPONSE', detail: { chunk: type } },
    })
    expect(calls.return).toBe(1)
  })

  test('forwarded chunks are frozen copies: the adapter mutating its object later changes nothing', async () => {
    await start()
    const shared = { type: 'text-delta', index: 0, text: 'first' }
    reg.register(
      fakeAdapter('a', () =>
        (async function* reuse() {
          yield shared
          shared.text = 'second'
          yield shared
          yield { type: 'finish', reason: 'stop' }
        })(),
      ),
    )
    const chunks = await collect(reg.stream(req()))
    expect(chunks).toEqual([delta('first'), delta('second'), { type: 'finish', reason: 'stop' }])
    expect(chunks.every((chunk) => Object.isFrozen(chunk))).toBe(true)
    expect(Object.isFrozen(shared)).toBe(false)
  })

  test('a consumer breaking out early calls the adapter iterator return()', async () => {
    await start()
    const { iterator, calls } = scriptedIterator([delta('a'), delta('b'), { type: 'finish', reason: 'stop' }])
    reg.register(fakeAdapter('a', () => iterator))
    for await (const chunk of reg.stream(req())) {
      expect(chunk).toEqual(delta('a'))
      break
    }
    expect(calls).toEqual({ next: 1, return: 1 })
  })

  test('a consumer throwing closes the adapter generator (its finally runs) and the throw stays thrown', async () => {
    await start()
    let cleaned = false
    reg.register(
      fakeAdapter('a', () =>
        (async function* guarded() {
          try {
            yield delta('a')
            yield delta('b')
          } finally {
            cleaned = true
          }
        })(),
      ),
    )
    const consumerBug = new Error('consumer bug')
    const consume = async (): Promise<void> => {
      for await (const _chunk of reg.stream(req())) throw consumerBug
    }
    await expect(consume()).rejects.toBe(consumerBug)
    expect(cleaned).toBe(true)
  })

  test('a failing return() is reported to the logger and the finish still arrives', async () => {
    await start()
    const { iterator } = scriptedIterator([{ type: 'finish', reason: 'stop' }])
    iterator.return = () => Promise.reject(new Error('close failed'))
    reg.register(fakeAdapter('a', () => iterator))
    expect(await collect(reg.stream(req()))).toEqual([{ type: 'finish', reason: 'stop' }])
    await new Promise((resolve) => setImmediate(resolve))
    expect(logger.at('warn').map((record) => record.message)).toEqual(['closing the stream of provider "a" failed'])
  })

  test('stream() returning something that is not async-iterable → finish error UNKNOWN phase connect', async () => {
    await start()
    reg.register(fakeAdapter('a', () => 42 as never))
    const chunks = await collect(reg.stream(req()))
    expect(chunks).toHaveLength(1)
    expect(chunks[0]).toMatchObject({
      type: 'finish',
      reason: 'error',
      failure: { code: 'UNKNOWN', phase: 'connect', retryable: false },
    })
  })

  test('adapterBoundary passes options.signal === request.signal', async () => {
    const adapter = fakeAdapter('a', () => [{ type: 'finish', reason: 'stop' }])
    const request = req()
    expect(await collect(adapterBoundary(adapter, request))).toEqual([{ type: 'finish', reason: 'stop' }])
    expect(adapter.options[0]?.signal).toBe(request.signal)
    expect(adapter.requests[0]).toBe(request)
  })
})

describe('an adapter failure without retryable or phase', () => {
  test('the registry fills retryable from the code table and phase from how far the stream got', async () => {
    const bare = (code: string) => ({ type: 'finish', reason: 'error', failure: { code, message: 'x' } })
    const early = fakeAdapter('a', () => [bare('RATE_LIMIT')])
    expect(await collect(adapterBoundary(early, req()))).toEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: { code: 'RATE_LIMIT', message: 'x', retryable: true, phase: 'response' },
      },
    ])
    const late = fakeAdapter('a', () => [delta('hi'), bare('AUTH')])
    const chunks = await collect(adapterBoundary(late, req()))
    expect(chunks.at(-1)).toEqual({
      type: 'finish',
      reason: 'error',
      failure: { code: 'AUTH', message: 'x', retryable: false, phase: 'streaming' },
    })
    expect(Object.isFrozen(chunks.at(-1))).toBe(true)
  })

  test("an adapter's own retryable and phase are kept", async () => {
    const own = {
      type: 'finish',
      reason: 'error',
      failure: { code: 'SERVER', message: 'x', retryable: false, phase: 'connect' },
    }
    expect(
      await collect(
        adapterBoundary(
          fakeAdapter('a', () => [own]),
          req(),
        ),
      ),
    ).toEqual([own])
  })
})

describe('normalizeThrown', () => {
  const live = { signal: new AbortController().signal, streamed: false }

  test('an LlmError gives its failure; retryable false unless it says otherwise; phase kept or defaulted', () => {
    const rateLimit = new LlmError({
      code: 'RATE_LIMIT',
      message: 'slow down',
      retryable: true,
      status: 429,
      phase: 'response',
      retryAfterMs: 2000,
    })
    expect(normalizeThrown(rateLimit, live)).toEqual({
      type: 'finish',
      reason: 'error',
      failure: {
        code: 'RATE_LIMIT',
        message: 'slow down',
        retryable: true,
        status: 429,
        phase: 'response',
        retryAfterMs: 2000,
      },
    })
    expect(normalizeThrown(new LlmError({ code: 'SERVER', message: 'down' }), { ...live, streamed: true })).toEqual({
      type: 'finish',
      reason: 'error',
      failure: { code: 'SERVER', message: 'down', retryable: false, phase: 'streaming' },
    })
  })

  test('an LlmError with non-JSON detail or a bad status keeps only its valid fields', () => {
    const error = new LlmError({ code: 'X', message: 'm', status: 42, detail: { when: new Date(0) } as never })
    expect(normalizeThrown(error, live).failure).toEqual({
      code: 'X',
      message: 'm',
      retryable: false,
      phase: 'connect',
    })
  })

  test('another HarnessError gives { code, message }', () => {
    const error = new InvalidArgumentError({ argument: 'x', reason: 'bad' })
    expect(normalizeThrown(error, live).failure).toEqual({
      code: error.code,
      message: error.message,
      retryable: false,
      phase: 'connect',
    })
  })

  test('anything else is UNKNOWN: own message data property, String(value), or unprintable', () => {
    expect(normalizeThrown('plain', live).failure?.message).toBe('plain')
    expect(normalizeThrown(42, live).failure?.message).toBe('42')
    const getter = new Error('hidden')
    Object.defineProperty(getter, 'message', { get: () => 'from a getter' })
    expect(normalizeThrown(getter, live).failure?.message).toBe('(unprintable thrown value)')
    const hostile = {
      toString() {
        throw new Error('no')
      },
    }
    expect(normalizeThrown(hostile, live).failure).toEqual({
      code: 'UNKNOWN',
      message: '(unprintable thrown value)',
      retryable: false,
      phase: 'connect',
    })
    expect(normalizeThrown(Object.create(null), live).failure?.message).toBe('(unprintable thrown value)')
  })

  test('an AbortError while the signal is not aborted is finish error ABORTED', () => {
    const chunk = normalizeThrown(new DOMException('timed out', 'AbortError'), live)
    expect(chunk).toEqual({
      type: 'finish',
      reason: 'error',
      failure: { code: 'ABORTED', message: 'the adapter aborted: timed out', retryable: false, phase: 'connect' },
    })
  })

  test('any value thrown after the signal aborted is finish aborted ABORTED', () => {
    const controller = new AbortController()
    controller.abort()
    const chunk = normalizeThrown(new LlmError({ code: 'SERVER', message: 'x', retryable: true }), {
      signal: controller.signal,
      streamed: true,
    })
    expect(chunk).toEqual({
      type: 'finish',
      reason: 'aborted',
      failure: { code: 'ABORTED', message: 'the request was aborted', retryable: false, phase: 'streaming' },
    })
    expect(Object.isFrozen(chunk)).toBe(true)
  })
})
