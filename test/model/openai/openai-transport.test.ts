import { createServer } from 'node:net'
import { describe, expect, test } from 'vitest'
import type { StreamChunk } from 'yoke'
import type { FetchFunction } from '../../../src/model/index.js'
import { assemble, collect, failureOf, mockServer, oa, req } from './adapter-helpers.js'

describe('transport faults', () => {
  test('connection-reset before the headers is TRANSPORT in the connect phase', async () => {
    const srv = await mockServer([{ fault: 'connection-reset' }])
    const chunks = await collect(oa(srv), req())
    expect(chunks).toHaveLength(1)
    expect(failureOf(chunks)).toMatchObject({ code: 'TRANSPORT', retryable: true, phase: 'connect' })
  })

  test('connection-reset after 3 events: the first deltas arrive, then TRANSPORT in the streaming phase', async () => {
    const srv = await mockServer([{ fault: 'connection-reset', afterEvents: 3, text: 'abcdef', chunkSize: 2 }])
    const chunks = await collect(oa(srv), req())
    expect(chunks.slice(0, -1)).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'ab' },
      { type: 'text-delta', index: 0, text: 'cd' },
    ])
    expect(failureOf(chunks)).toMatchObject({ code: 'TRANSPORT', retryable: true, phase: 'streaming' })
  })

  test('partial-eof is STREAM_CLOSED, not retryable', async () => {
    const srv = await mockServer([{ fault: 'partial-eof', afterEvents: 3, text: 'abcdef', chunkSize: 2 }])
    const chunks = await collect(oa(srv), req())
    expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'text-delta', 'finish'])
    expect(failureOf(chunks)).toEqual({
      code: 'STREAM_CLOSED',
      message: 'the stream ended before the model finished',
      retryable: false,
      phase: 'streaming',
    })
  })

  test('malformed-json is MALFORMED_RESPONSE', async () => {
    const srv = await mockServer([{ fault: 'malformed-json', afterEvents: 2 }])
    const chunks = await collect(oa(srv), req())
    expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(failureOf(chunks)).toMatchObject({ code: 'MALFORMED_RESPONSE', retryable: false, phase: 'streaming' })
  })

  test('stall with idleTimeoutMs 50 is TIMEOUT in the streaming phase, and the connection is closed', async () => {
    const srv = await mockServer([{ fault: 'stall', afterEvents: 2 }])
    const chunks = await collect(oa(srv, { idleTimeoutMs: 50 }), req())
    expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(failureOf(chunks)).toEqual({
      code: 'TIMEOUT',
      message: 'no data from the provider for 50 ms',
      retryable: true,
      phase: 'streaming',
    })
    expect(await srv.clientClosed(0)).toBe(true)
  })

  test('a silent connect is TIMEOUT in the connect phase, even with a fetch that ignores the signal', async () => {
    const hangingFetch: FetchFunction = () => new Promise(() => {})
    const srv = await mockServer([])
    expect(failureOf(await collect(oa(srv, { idleTimeoutMs: 30, fetch: hangingFetch }), req()))).toEqual({
      code: 'TIMEOUT',
      message: 'no data from the provider for 30 ms',
      retryable: true,
      phase: 'connect',
    })
  })

  /** A fetch whose body sends one text event, then never another byte, and ignores cancellation. */
  const stuckBodyFetch: FetchFunction = async () => {
    let sent = false
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return new Promise<void>(() => {})
        sent = true
        controller.enqueue(
          new TextEncoder().encode(
            `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' } }] })}\n\n`,
          ),
        )
        return undefined
      },
      cancel: () => new Promise<void>(() => {}),
    })
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
  }

  test('a body that stops and ignores cancellation still ends TIMEOUT in the streaming phase', async () => {
    const srv = await mockServer([])
    const chunks = await collect(oa(srv, { idleTimeoutMs: 30, fetch: stuckBodyFetch }), req())
    expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(failureOf(chunks)).toEqual({
      code: 'TIMEOUT',
      message: 'no data from the provider for 30 ms',
      retryable: true,
      phase: 'streaming',
    })
  })

  test('a caller abort ends a body that stops and ignores cancellation: ABORTED in the streaming phase', async () => {
    const srv = await mockServer([])
    const controller = new AbortController()
    const request = req({ signal: controller.signal })
    const chunks: StreamChunk[] = []
    for await (const chunk of oa(srv, { fetch: stuckBodyFetch }).stream(request, { signal: request.signal })) {
      chunks.push(chunk)
      if (chunk.type === 'text-delta') setTimeout(() => controller.abort(), 10)
    }
    expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(chunks.at(-1)).toMatchObject({
      type: 'finish',
      reason: 'aborted',
      failure: { code: 'ABORTED', phase: 'streaming' },
    })
  })

  test('wrong-content-type is MALFORMED_RESPONSE in the response phase', async () => {
    const srv = await mockServer([{ fault: 'wrong-content-type' }])
    expect(failureOf(await collect(oa(srv), req()))).toMatchObject({ code: 'MALFORMED_RESPONSE', phase: 'response' })
  })

  test('empty gives [finish stop]; the assembler makes it EMPTY_RESPONSE', async () => {
    const srv = await mockServer([{ fault: 'empty' }])
    const chunks = await collect(oa(srv), req())
    expect(chunks).toEqual([{ type: 'finish', reason: 'stop', providerFinishReason: 'stop' }])
    expect(assemble(chunks)).toMatchObject({
      kind: 'failure',
      failure: { code: 'EMPTY_RESPONSE', retryable: true, phase: 'streaming' },
    })
  })

  test('a refused connection is TRANSPORT naming ECONNREFUSED', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer()
      probe.listen(0, '127.0.0.1', () => {
        const address = probe.address()
        probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
      })
    })
    const srv = await mockServer([])
    const failure = failureOf(await collect(oa(srv, { baseURL: `http://127.0.0.1:${port}/v1` }), req()))
    expect(failure).toMatchObject({
      code: 'TRANSPORT',
      retryable: true,
      phase: 'connect',
      detail: { cause: 'ECONNREFUSED' },
    })
    expect(failure.message).toContain('ECONNREFUSED')
  })
})

describe('abort', () => {
  test('a caller abort mid-stream finishes aborted ABORTED and closes the connection', async () => {
    const srv = await mockServer([{ fault: 'stall', afterEvents: 2 }])
    const controller = new AbortController()
    const request = req({ signal: controller.signal })
    const chunks: StreamChunk[] = []
    for await (const chunk of oa(srv).stream(request, { signal: request.signal })) {
      chunks.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(chunks.at(-1)).toEqual({
      type: 'finish',
      reason: 'aborted',
      failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'streaming' },
    })
    expect(await srv.clientClosed(0)).toBe(true)
  })

  test('an abort while waiting for the headers finishes aborted in the connect phase', async () => {
    const srv = await mockServer([{ text: 'late', delayMs: 5000 }])
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 30)
    const chunks = await collect(oa(srv), req({ signal: controller.signal }))
    expect(chunks).toEqual([
      {
        type: 'finish',
        reason: 'aborted',
        failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'connect' },
      },
    ])
  })

  test('an abort while a key function hangs finishes aborted before any request', async () => {
    const srv = await mockServer([])
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 20)
    const adapter = oa(srv, { apiKey: () => new Promise<string>(() => {}) })
    expect(await collect(adapter, req({ signal: controller.signal }))).toEqual([
      {
        type: 'finish',
        reason: 'aborted',
        failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'pre-request' },
      },
    ])
    expect(srv.requests).toEqual([])
  })

  test('an already aborted signal sends nothing', async () => {
    const srv = await mockServer([])
    const controller = new AbortController()
    controller.abort()
    expect(await collect(oa(srv), req({ signal: controller.signal }))).toEqual([
      {
        type: 'finish',
        reason: 'aborted',
        failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'pre-request' },
      },
    ])
    expect(srv.requests).toEqual([])
  })

  test('a consumer that stops early closes the connection', async () => {
    const srv = await mockServer([{ fault: 'stall', afterEvents: 2 }])
    const request = req()
    for await (const chunk of oa(srv).stream(request, { signal: request.signal }))
      if (chunk.type === 'text-delta') break
    expect(await srv.clientClosed(0)).toBe(true)
  })
})

describe('idle watchdog', () => {
  test('every received byte re-arms it: a slow but steady stream completes', async () => {
    const srv = await mockServer([{ text: 'abcdefgh', chunkSize: 1, chunkDelayMs: 25 }])
    const chunks = await collect(oa(srv, { idleTimeoutMs: 120 }), req())
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop', providerFinishReason: 'stop' })
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(8)
  })

  test('SSE comments re-arm it too', async () => {
    const encoder = new TextEncoder()
    const commentFetch: FetchFunction = async () => {
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 20))
          sent += 1
          if (sent <= 8) controller.enqueue(encoder.encode(': keep-alive\n\n'))
          else {
            controller.enqueue(
              encoder.encode(
                'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
              ),
            )
            controller.close()
          }
        },
      })
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
    }
    const srv = await mockServer([])
    const chunks = await collect(oa(srv, { idleTimeoutMs: 80, fetch: commentFetch }), req())
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop', providerFinishReason: 'stop' })
  })

  test('time the consumer holds a chunk does not count as silence', async () => {
    const srv = await mockServer([{ text: 'abcd', chunkSize: 1, chunkDelayMs: 20 }])
    const request = req()
    const chunks: StreamChunk[] = []
    for await (const chunk of oa(srv, { idleTimeoutMs: 80 }).stream(request, { signal: request.signal })) {
      chunks.push(chunk)
      await new Promise((resolve) => setTimeout(resolve, 120))
    }
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop', providerFinishReason: 'stop' })
  })
})

test('the adapter never throws out of stream(): a fetch that throws synchronously is a finish', async () => {
  const srv = await mockServer([])
  const throwing: FetchFunction = () => {
    throw new TypeError('boom')
  }
  expect(failureOf(await collect(oa(srv, { fetch: throwing }), req()))).toMatchObject({
    code: 'TRANSPORT',
    phase: 'connect',
  })
})

test('the adapter never throws out of stream(): unserializable tools and a fetch resolving to a non-Response are finishes', async () => {
  const srv = await mockServer([])
  const bigTool = req({ tools: [{ name: 'x', description: 'd', parameters: { big: 1n } as never }] })
  expect(failureOf(await collect(oa(srv), bigTool))).toMatchObject({
    code: 'UNKNOWN',
    retryable: false,
    phase: 'connect',
  })
  const notAResponse: FetchFunction = async () => ({}) as never
  expect(failureOf(await collect(oa(srv, { fetch: notAResponse }), req()))).toMatchObject({
    code: 'UNKNOWN',
    retryable: false,
  })
  expect(srv.requests).toEqual([])
})

test('a body read failure mid-stream is TRANSPORT in the streaming phase, the key redacted from its message', async () => {
  const srv = await mockServer([])
  const breaking: FetchFunction = async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'))
          setTimeout(() => controller.error(new Error('read broke near test-key')), 5)
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream' } },
    )
  const chunks = await collect(oa(srv, { fetch: breaking }), req())
  expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'finish'])
  const failure = failureOf(chunks)
  expect(failure).toMatchObject({ code: 'TRANSPORT', retryable: true, phase: 'streaming' })
  expect(JSON.stringify(failure)).not.toContain('test-key')
})
