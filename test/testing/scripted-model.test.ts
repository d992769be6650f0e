import { describe, expect, test } from 'vitest'
import {
  type Clock,
  createAssembler,
  InvalidArgumentError,
  InvalidOptionsError,
  LlmError,
  type ModelRequest,
  ScriptedModelError,
  type StreamChunk,
} from 'yoke'
import { call, cut, fail, fakeClock, hang, type ScriptedModel, scriptedModel, text, tool } from 'yoke/testing'

const request = (controller = new AbortController()): ModelRequest => ({
  provider: 'mock',
  model: 'mock',
  messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
  metadata: { purpose: 'conversation' },
  signal: controller.signal,
})

const collect = async (model: ScriptedModel, controller = new AbortController()): Promise<StreamChunk[]> => {
  const chunks: StreamChunk[] = []
  for await (const chunk of model.stream(request(controller), { signal: controller.signal })) chunks.push(chunk)
  return chunks
}

/** A clock that counts every timer set on it. */
const countingClock = (inner: Clock): Clock & { readonly timers: number } => {
  let timers = 0
  return {
    now: () => inner.now(),
    setTimer(callback, delayMs) {
      timers++
      return inner.setTimer(callback, delayMs)
    },
    get timers() {
      return timers
    },
  }
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('scriptedModel: emission (acceptance 10)', () => {
  test('10. reasoning, text, tool call, usage and finish, exactly', async () => {
    const model = scriptedModel([
      {
        reasoning: 'think',
        text: 'hi',
        toolCalls: [{ name: 'echo', arguments: { x: 1 } }],
        usage: { inputTokens: 3, outputTokens: 4 },
      },
    ])
    const controller = new AbortController()
    const sent = request(controller)
    const chunks: StreamChunk[] = []
    for await (const chunk of model.stream(sent, { signal: controller.signal })) chunks.push(chunk)
    expect(chunks).toStrictEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'think' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'think' } },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, text: 'hi' },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'hi' } },
      { type: 'block-start', index: 2, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 2, id: 'call_1', name: 'echo', argumentsDelta: '{"x":1}' },
      { type: 'block-end', index: 2, block: { type: 'tool-call', id: 'call_1', name: 'echo', arguments: '{"x":1}' } },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 4 } },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(model.requests).toHaveLength(1)
    expect(model.requests[0]).toBe(sent)
    expect(model.remaining).toBe(0)
    expect(() => model.assertComplete()).not.toThrow()
  })

  test('10. the chunks assemble into the reply', async () => {
    const model = scriptedModel([
      {
        reasoning: 'think',
        text: 'hi',
        toolCalls: [{ name: 'echo', arguments: { x: 1 } }],
        usage: { inputTokens: 3, outputTokens: 4 },
      },
    ])
    const assembler = createAssembler()
    for (const chunk of await collect(model)) assembler.push(chunk)
    expect(assembler.outcome()).toStrictEqual({
      kind: 'message',
      content: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'hi' },
        { type: 'tool-call', id: 'call_1', name: 'echo', arguments: '{"x":1}' },
      ],
      finishReason: 'tool-calls',
      usage: { inputTokens: 3, outputTokens: 4 },
    })
  })

  test('provider and model default to mock; describeModel returns info for any model', () => {
    const plain = scriptedModel([])
    expect(plain.provider).toBe('mock')
    expect(plain.defaultModel).toBe('mock')
    expect(plain.describeModel('anything')).toBeUndefined()
    const info = { contextWindow: 1000, reasoningEfforts: ['low'] }
    const named = scriptedModel([], { provider: 'acme', model: 'm1', info })
    expect(named.provider).toBe('acme')
    expect(named.defaultModel).toBe('m1')
    expect(named.describeModel('m1')).toBe(info)
    expect(named.describeModel('other')).toBe(info)
  })

  test('chunkSize splits deltas by code points, never inside an emoji', async () => {
    const model = scriptedModel([
      { text: 'a😀bc😀', chunkSize: 2, toolCalls: [{ name: 't', arguments: '{"e":"😀"}' }] },
    ])
    const chunks = await collect(model)
    expect(chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.text] : []))).toEqual(['a😀', 'bc', '😀'])
    expect(chunks.flatMap((chunk) => (chunk.type === 'tool-call-delta' ? [chunk.argumentsDelta] : []))).toEqual([
      '{"',
      'e"',
      ':"',
      '😀"',
      '}',
    ])
    expect(
      chunks
        .filter((chunk) => chunk.type === 'tool-call-delta')
        .every((chunk) => chunk.id === 'call_1' && chunk.name === 't'),
    ).toBe(true)
    expect(chunks.find((chunk) => chunk.type === 'block-end' && chunk.index === 0)).toEqual({
      type: 'block-end',
      index: 0,
      block: { type: 'text', text: 'a😀bc😀' },
    })
  })

  test('call ids count every tool call across the whole script from 1; arguments default to {}', async () => {
    const model = scriptedModel([
      tool('a', { n: 1 }),
      {
        toolCalls: [
          { id: 'own', name: 'b' },
          { name: 'c', arguments: 'raw text' },
        ],
      },
      () => tool('d', {}),
    ])
    const ends = async () =>
      (await collect(model)).flatMap((chunk) => (chunk.type === 'block-end' ? [chunk.block] : []))
    expect(await ends()).toEqual([{ type: 'tool-call', id: 'call_1', name: 'a', arguments: '{"n":1}' }])
    expect(await ends()).toEqual([
      { type: 'tool-call', id: 'own', name: 'b', arguments: '{}' },
      { type: 'tool-call', id: 'call_3', name: 'c', arguments: 'raw text' },
    ])
    expect(await ends()).toEqual([{ type: 'tool-call', id: 'call_4', name: 'd', arguments: '{}' }])
  })

  test.each<[string, Parameters<typeof scriptedModel>[0][number], string]>([
    ['text only', { text: 'x' }, 'stop'],
    ['tool calls', { toolCalls: [{ name: 'x' }] }, 'tool-calls'],
    ['an empty tool-call list', { text: 'x', toolCalls: [] }, 'stop'],
    ['an explicit finish', { text: 'x', toolCalls: [{ name: 'x' }], finish: 'stop' }, 'stop'],
    ['max-tokens', { text: 'x', finish: 'max-tokens' }, 'max-tokens'],
    ['nothing at all', {}, 'stop'],
  ])('finish reason for %s', async (_name, reply, reason) => {
    expect((await collect(scriptedModel([reply]))).at(-1)).toStrictEqual({ type: 'finish', reason })
  })

  test('an empty text gives a block with no delta', async () => {
    expect(await collect(scriptedModel([{ text: '' }]))).toStrictEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'block-end', index: 0, block: { type: 'text', text: '' } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  test('a failure finishes with error: table defaults, response phase without blocks, streaming with', async () => {
    expect(await collect(scriptedModel([fail('RATE_LIMIT')]))).toStrictEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: { code: 'RATE_LIMIT', message: 'scripted failure RATE_LIMIT', retryable: true, phase: 'response' },
      },
    ])
    const usage = { inputTokens: 1, outputTokens: 1 }
    const chunks = await collect(scriptedModel([{ text: 'so far', usage, failure: { code: 'AUTH', status: 401 } }]))
    expect(chunks.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'block-end', 'usage', 'finish'])
    expect(chunks.at(-1)).toStrictEqual({
      type: 'finish',
      reason: 'error',
      failure: { code: 'AUTH', message: 'scripted failure AUTH', retryable: false, phase: 'streaming', status: 401 },
    })
  })

  test('given failure fields override the defaults', async () => {
    const chunks = await collect(
      scriptedModel([
        fail('SERVER', 'custom', {
          failure: { code: 'SERVER', message: 'custom', retryable: false, phase: 'connect', retryAfterMs: 5 },
        }),
      ]),
    )
    expect(chunks).toStrictEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: { code: 'SERVER', message: 'custom', retryable: false, phase: 'connect', retryAfterMs: 5 },
      },
    ])
    expect(
      await collect(scriptedModel([fail('RATE_LIMIT', 'slow', { retryAfterMs: 2000, status: 429 })])),
    ).toStrictEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: {
          code: 'RATE_LIMIT',
          message: 'slow',
          retryable: true,
          phase: 'response',
          retryAfterMs: 2000,
          status: 429,
        },
      },
    ])
    expect((await collect(scriptedModel([fail('TIMEOUT', 'took too long')])))[0]).toMatchObject({
      failure: { message: 'took too long', retryable: true },
    })
  })

  test('chunks are emitted verbatim, even out of protocol', async () => {
    const chunks: StreamChunk[] = [
      { type: 'finish', reason: 'stop' },
      { type: 'text-delta', index: 7, text: 'after' },
    ]
    const emitted = await collect(
      scriptedModel([{ chunks, text: 'ignored', toolCalls: [{ name: 'ignored' }] }, tool('next', {})]),
    )
    expect(emitted).toStrictEqual(chunks)
  })
})

describe('scriptedModel: timing and aborts', () => {
  test('no timer is created when the reply has no delays', async () => {
    const clock = countingClock(fakeClock())
    const model = scriptedModel([{ text: 'abc', chunkSize: 1, delayMs: 0 }, hang('x')], { clock })
    const chunks = await collect(model)
    expect(chunks).toHaveLength(6)
    const controller = new AbortController()
    const iterator = model.stream(request(controller), { signal: controller.signal })[Symbol.asyncIterator]()
    await iterator.next()
    await iterator.next()
    const pending = iterator.next()
    controller.abort()
    expect((await pending).value).toMatchObject({ type: 'finish', reason: 'aborted' })
    expect(clock.timers).toBe(0)
  })

  test('delayMs waits before the first chunk and chunkDelayMs between chunks, on the clock', async () => {
    const clock = fakeClock()
    const model = scriptedModel([{ text: 'ab', chunkSize: 1, delayMs: 100, chunkDelayMs: 10 }], { clock })
    const controller = new AbortController()
    const iterator = model.stream(request(controller), { signal: controller.signal })[Symbol.asyncIterator]()
    const times: number[] = []
    const types: string[] = []
    let done = false
    const drain = (async () => {
      for (let step = await iterator.next(); step.done !== true; step = await iterator.next()) {
        times.push(clock.now())
        types.push(step.value.type)
      }
      done = true
    })()
    await flush()
    expect(clock.pending()).toEqual([{ dueAt: 100, delayMs: 100 }])
    expect(types).toEqual([])
    await clock.advance(99)
    expect(types).toEqual([])
    await clock.advance(1)
    expect(types).toEqual(['block-start'])
    expect(clock.pending()).toEqual([{ dueAt: 110, delayMs: 10 }])
    await clock.advance(40)
    await drain
    expect(done).toBe(true)
    expect(types).toEqual(['block-start', 'text-delta', 'text-delta', 'block-end', 'finish'])
    expect(times).toEqual([100, 110, 120, 130, 140])
  })

  test('the default clock is real timers', async () => {
    const model = scriptedModel([{ text: 'ok', delayMs: 5, chunkDelayMs: 1 }])
    const started = Date.now()
    expect((await collect(model)).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(4)
  })

  test('an abort during delayMs ends the stream at once with ABORTED in the response phase and cancels the timer', async () => {
    const clock = fakeClock()
    const model = scriptedModel([{ text: 'never', delayMs: 1_000 }], { clock })
    const controller = new AbortController()
    const chunks = collect(model, controller)
    await flush()
    expect(clock.pending()).toHaveLength(1)
    controller.abort()
    expect(await chunks).toStrictEqual([
      {
        type: 'finish',
        reason: 'aborted',
        failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'response' },
      },
    ])
    expect(clock.pending()).toEqual([])
  })

  test('an abort during chunkDelayMs ends the stream in the streaming phase', async () => {
    const clock = fakeClock()
    const model = scriptedModel([{ text: 'ab', chunkSize: 1, chunkDelayMs: 50 }], { clock })
    const controller = new AbortController()
    const chunks = collect(model, controller)
    await clock.advance(50)
    controller.abort()
    expect(await chunks).toStrictEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'a' },
      {
        type: 'finish',
        reason: 'aborted',
        failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'streaming' },
      },
    ])
    expect(clock.pending()).toEqual([])
  })

  test('an abort between chunks without delays ends the stream before the next chunk', async () => {
    const model = scriptedModel([{ text: 'hello' }])
    const controller = new AbortController()
    const iterator = model.stream(request(controller), { signal: controller.signal })[Symbol.asyncIterator]()
    expect((await iterator.next()).value).toEqual({ type: 'block-start', index: 0, blockType: 'text' })
    controller.abort()
    expect((await iterator.next()).value).toMatchObject({
      type: 'finish',
      reason: 'aborted',
      failure: { code: 'ABORTED', phase: 'streaming' },
    })
    expect((await iterator.next()).done).toBe(true)
  })

  test('an already aborted signal gives only the aborted finish', async () => {
    const controller = new AbortController()
    controller.abort()
    const model = scriptedModel([text('x'), () => text('y')])
    const aborted = {
      type: 'finish',
      reason: 'aborted',
      failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'response' },
    }
    expect(await collect(model, controller)).toStrictEqual([aborted])
    expect(await collect(model, controller)).toStrictEqual([aborted])
  })

  test('hang emits starts and deltas, then waits for the abort', async () => {
    const model = scriptedModel([{ reasoning: 'r', ...hang() }])
    const controller = new AbortController()
    const chunks: StreamChunk[] = []
    const assembler = createAssembler()
    const drain = (async () => {
      for await (const chunk of model.stream(request(controller), { signal: controller.signal })) {
        chunks.push(chunk)
        assembler.push(chunk)
      }
    })()
    await flush()
    await flush()
    expect(chunks).toStrictEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'r' },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, text: 'partial' },
    ])
    controller.abort()
    await drain
    expect(chunks.at(-1)).toStrictEqual({
      type: 'finish',
      reason: 'aborted',
      failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'streaming' },
    })
    expect(assembler.interruptedContent()).toStrictEqual([
      { type: 'reasoning', text: 'r' },
      { type: 'text', text: 'partial' },
    ])
    expect(assembler.outcome()).toMatchObject({ kind: 'failure', reason: 'aborted', failure: { code: 'ABORTED' } })
  })

  test('hang with tool calls emits their starts and deltas without block-ends, usage or finish', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'slow', arguments: { a: 1 } }], usage: { inputTokens: 1, outputTokens: 1 }, hang: true },
    ])
    const controller = new AbortController()
    const pending = collect(model, controller)
    await flush()
    controller.abort()
    expect((await pending).map((chunk) => chunk.type)).toEqual(['block-start', 'tool-call-delta', 'finish'])
  })
})

describe('scriptedModel: script use', () => {
  test('exhaustion finishes with SCRIPT_EXHAUSTED and assertComplete reports the overrun', async () => {
    const model = scriptedModel([text('one')])
    await collect(model)
    expect(model.remaining).toBe(0)
    expect(await collect(model)).toStrictEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: {
          code: 'SCRIPT_EXHAUSTED',
          message: 'scripted model has no reply for request #2',
          retryable: false,
          phase: 'pre-request',
        },
      },
    ])
    expect((await collect(model))[0]).toMatchObject({
      failure: { message: 'scripted model has no reply for request #3' },
    })
    expect(model.requests).toHaveLength(3)
    const error = (() => {
      try {
        model.assertComplete()
      } catch (thrown) {
        return thrown
      }
      return undefined
    })()
    expect(ScriptedModelError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SCRIPT_OVERRUN', overrun: 2 })
  })

  test('assertComplete reports unused entries as SCRIPT_INCOMPLETE', async () => {
    const model = scriptedModel([text('one'), text('two'), text('three')])
    expect(model.remaining).toBe(3)
    expect(() => model.assertComplete()).toThrow(expect.objectContaining({ code: 'SCRIPT_INCOMPLETE', remaining: 3 }))
    await collect(model)
    expect(model.remaining).toBe(2)
    expect(() => model.assertComplete()).toThrow(expect.objectContaining({ code: 'SCRIPT_INCOMPLETE', remaining: 2 }))
  })

  test('stream() records the request and consumes the entry before iteration', () => {
    const model = scriptedModel([text('one')])
    const controller = new AbortController()
    const sent = request(controller)
    model.stream(sent, { signal: controller.signal })
    expect(model.requests).toEqual([sent])
    expect(model.requests[0]).toBe(sent)
    expect(model.remaining).toBe(0)
  })

  test('function entries get the request and their 0-based index; sync and async', async () => {
    const seen: [ModelRequest, number][] = []
    const model = scriptedModel([
      text('static'),
      (received, index) => {
        seen.push([received, index])
        return text(`sync ${index}`)
      },
      async (received, index) => {
        seen.push([received, index])
        await flush()
        return { text: `async ${index}`, chunkSize: 3 }
      },
    ])
    const deltas = async () =>
      (await collect(model)).flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.text] : []))
    expect(await deltas()).toEqual(['static'])
    expect(await deltas()).toEqual(['sync 1'])
    expect(await deltas()).toEqual(['asy', 'nc ', '2'])
    expect(seen.map(([, index]) => index)).toEqual([1, 2])
    expect(seen[0]?.[0]).toBe(model.requests[1])
    expect(seen[1]?.[0]).toBe(model.requests[2])
    model.assertComplete()
  })

  test('a function entry that throws or rejects rejects the iterator with that value', async () => {
    const thrown = new LlmError({ code: 'SERVER', message: 'from the script', retryable: true, phase: 'streaming' })
    const model = scriptedModel([
      () => {
        throw thrown
      },
      async () => {
        throw new Error('async boom')
      },
    ])
    await expect(collect(model)).rejects.toBe(thrown)
    await expect(collect(model)).rejects.toThrow('async boom')
  })

  test('an abort while a function entry is pending ends the stream as aborted', async () => {
    let settle: (reply: ReturnType<typeof text>) => void = () => {}
    const model = scriptedModel([() => new Promise((resolve) => (settle = resolve))])
    const controller = new AbortController()
    const chunks = collect(model, controller)
    await flush()
    controller.abort()
    expect(await chunks).toStrictEqual([
      {
        type: 'finish',
        reason: 'aborted',
        failure: { code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'response' },
      },
    ])
    settle(text('too late'))
  })

  test('malformed replies are refused: static ones at construction, returned ones by the iterator', async () => {
    expect(() => scriptedModel([{ text: 'x', chunkSize: 0 }])).toThrow(InvalidArgumentError)
    expect(() => scriptedModel([text('ok'), { delayMs: -1 }])).toThrow(
      'invalid script[1].delayMs: must be a finite, non-negative number',
    )
    expect(() => scriptedModel([{ toolCalls: [{ name: '' }] }])).toThrow('invalid script[0].toolCalls[0].name')
    expect(() => scriptedModel([{ failure: { code: '' } }])).toThrow(InvalidArgumentError)
    expect(() => scriptedModel('nope' as unknown as [])).toThrow(InvalidArgumentError)
    const model = scriptedModel([() => ({ finish: 'done' }) as unknown as ReturnType<typeof text>])
    await expect(collect(model)).rejects.toThrow('invalid reply of script[0].finish')
  })
})

describe('script builders', () => {
  test('each builder returns its reply, extra merged in last', () => {
    const usage = { inputTokens: 1, outputTokens: 2 }
    expect(text('hi')).toStrictEqual({ text: 'hi' })
    expect(text('hi', { usage })).toStrictEqual({ text: 'hi', usage })
    expect(call('c1', 'echo', '{"a":1}')).toStrictEqual({
      toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"a":1}' }],
    })
    expect(call('c1', 'echo', '{', { text: 'calling' })).toStrictEqual({
      toolCalls: [{ id: 'c1', name: 'echo', arguments: '{' }],
      text: 'calling',
    })
    expect(tool('echo', { x: 1 })).toStrictEqual({ toolCalls: [{ name: 'echo', arguments: { x: 1 } }] })
    expect(tool('echo', '{}', { finish: 'stop' })).toStrictEqual({
      toolCalls: [{ name: 'echo', arguments: '{}' }],
      finish: 'stop',
    })
    expect(cut('part')).toStrictEqual({ text: 'part', finish: 'max-tokens' })
    expect(cut('part', { finish: 'stop' })).toStrictEqual({ text: 'part', finish: 'stop' })
    expect(fail('AUTH')).toStrictEqual({ failure: { code: 'AUTH' } })
    expect(fail('AUTH', 'bad key', { usage })).toStrictEqual({ failure: { code: 'AUTH', message: 'bad key' }, usage })
    expect(fail('RATE_LIMIT', 'slow', { retryAfterMs: 2000, status: 429, delayMs: 5 })).toStrictEqual({
      failure: { code: 'RATE_LIMIT', message: 'slow', retryAfterMs: 2000, status: 429 },
      delayMs: 5,
    })
    expect(
      fail('SERVER', undefined, { retryable: false, phase: 'connect', requestId: 'r1', detail: { a: 1 } }),
    ).toStrictEqual({
      failure: { code: 'SERVER', retryable: false, phase: 'connect', requestId: 'r1', detail: { a: 1 } },
    })
    expect(hang()).toStrictEqual({ text: 'partial', hang: true })
    expect(hang('wait')).toStrictEqual({ text: 'wait', hang: true })
  })

  test('builders drive the scripted model', async () => {
    const model = scriptedModel([call('c7', 'echo', '{"a":1}'), cut('trunc'), fail('SERVER')])
    expect((await collect(model)).filter((chunk) => chunk.type !== 'block-start')).toStrictEqual([
      { type: 'tool-call-delta', index: 0, id: 'c7', name: 'echo', argumentsDelta: '{"a":1}' },
      { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'c7', name: 'echo', arguments: '{"a":1}' } },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect((await collect(model)).at(-1)).toStrictEqual({ type: 'finish', reason: 'max-tokens' })
    expect((await collect(model)).at(-1)).toMatchObject({
      type: 'finish',
      reason: 'error',
      failure: { code: 'SERVER', retryable: true, phase: 'response' },
    })
    model.assertComplete()
  })
})

describe('scriptedModel options', () => {
  test.each([
    [{ provider: 'BAD ID' }, 'provider'],
    [{ model: '' }, 'model'],
    [{ info: 5 }, 'info'],
    [{ clock: 5 }, 'clock'],
    [{ clock: { now: () => 0 } }, 'clock'],
    [{ bogus: true }, 'bogus'],
    [null, ''],
  ])('%j → InvalidOptionsError at %s', (options, field) => {
    let error: unknown
    try {
      scriptedModel([], options as never)
    } catch (thrown) {
      error = thrown
    }
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ field })
  })

  test('valid options are taken', () => {
    const model = scriptedModel([], {
      provider: 'my-mock',
      model: 'm1',
      info: { contextWindow: 10 },
      clock: fakeClock(),
    })
    expect([model.provider, model.defaultModel, model.describeModel('x')]).toEqual([
      'my-mock',
      'm1',
      { contextWindow: 10 },
    ])
  })
})
