/**
 * `withRetry`: attempts through an assembler, backoff on the given
 * clock, `onRetry`, the failure that stands, aborts, argument checks; first against a tiny inline
 * registry, then through the harness's real registry with a scripted model.
 *
 * @module
 */
import { afterEach, describe, expect, test, vi } from 'vitest'
import {
  createHarness,
  type Harness,
  InvalidArgumentError,
  InvalidOptionsError,
  LlmError,
  type ModelRegistry,
  type ModelRequest,
  type SessionEvent,
  services,
  type StreamChunk,
  withRetry,
  type WithRetryOptions,
} from 'yoke'
import type { RetryNotice } from '../../../src/model/index.js'
import { fail, fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { rejectionOf, thrownBy } from '../../helpers/outcomes.js'
import { expectError } from '../../session/session-helpers.js'
import { failureChunks, inlineRegistry, textChunks } from './inline-registry.js'
import { referenceDelay } from './reference-fnv.js'

function req(fields: Partial<ModelRequest> = {}): ModelRequest {
  return {
    provider: 'mock',
    model: 'mock',
    messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
    metadata: { purpose: 'conversation' },
    signal: new AbortController().signal,
    ...fields,
  }
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Records the notices `onRetry` gets, with the clock time of each call. */
function recorder(clock: { now(): number }) {
  const notices: (RetryNotice & { readonly at: number })[] = []
  return { notices, onRetry: (notice: RetryNotice) => notices.push({ ...notice, at: clock.now() }) }
}

describe('withRetry against an inline registry', () => {
  test('a first-time success resolves { content, finishReason, usage, attempts: 1, provider, model }, frozen', async () => {
    const registry = inlineRegistry([textChunks('hello')])
    const completion = await withRetry(registry, undefined, { clock: fakeClock() }).complete(
      req({ provider: 'p', model: 'm' }),
    )
    expect(completion).toEqual({
      content: [{ type: 'text', text: 'hello' }],
      finishReason: 'stop',
      usage: { inputTokens: 3, outputTokens: 1 },
      attempts: 1,
      provider: 'p',
      model: 'm',
    })
    expect(Object.isFrozen(completion)).toBe(true)
    expect(registry.calls).toHaveLength(1)
    expect(registry.calls[0]?.options).toEqual({})
  })

  test('every attempt is a fresh models.stream(request, { scope }) with the same request', async () => {
    const clock = fakeClock()
    const registry = inlineRegistry([failureChunks('SERVER', true), textChunks('ok')])
    const scope = {}
    const request = req()
    const result = withRetry(registry, { jitter: 0 }, { clock }).complete(request, { scope })
    await clock.advance(500)
    await expect(result).resolves.toMatchObject({ attempts: 2 })
    expect(registry.calls.map((call) => call.request)).toEqual([request, request])
    expect(registry.calls[0]?.request).toBe(request)
    expect(registry.calls.every((call) => call.options?.scope === scope)).toBe(true)
  })

  test('TIMEOUT then ok → waits 500 ms on the clock, then onRetry once, then resolves attempts 2', async () => {
    const clock = fakeClock({ now: 0 })
    const registry = inlineRegistry([failureChunks('TIMEOUT', true), textChunks('ok')])
    const { notices, onRetry } = recorder(clock)
    const result = withRetry(registry, { jitter: 0 }, { clock }).complete(req(), { onRetry })
    await flush()
    expect(clock.pending()).toEqual([{ dueAt: 500, delayMs: 500 }])
    expect(registry.calls).toHaveLength(1)
    expect(notices).toEqual([])
    await clock.advance(499)
    expect(registry.calls).toHaveLength(1)
    await clock.advance(1)
    await expect(result).resolves.toMatchObject({
      content: [{ type: 'text', text: 'ok' }],
      finishReason: 'stop',
      attempts: 2,
    })
    expect(notices).toEqual([
      { attempt: 1, delayMs: 500, failure: expect.objectContaining({ code: 'TIMEOUT' }), at: 500 },
    ])
  })

  test('a non-retryable failure rejects LlmError with that failure and attempts 1, without waiting', async () => {
    const clock = fakeClock()
    const registry = inlineRegistry([failureChunks('AUTH', false)])
    const onRetry = vi.fn()
    const error = expectError(
      await rejectionOf(withRetry(registry, {}, { clock }).complete(req(), { onRetry })),
      LlmError,
      'AUTH',
      { attempts: 1 },
    )
    expect(error.failure).toEqual({ code: 'AUTH', message: 'failed AUTH', retryable: false, phase: 'response' })
    expect(clock.pending()).toEqual([])
    expect(onRetry).not.toHaveBeenCalled()
  })

  test('after maxRetries retries the last failure stands: 1 + maxRetries calls, backoff 500 then 1000', async () => {
    const clock = fakeClock({ now: 0 })
    const registry = inlineRegistry([
      failureChunks('RATE_LIMIT', true),
      failureChunks('SERVER', true),
      failureChunks('TRANSPORT', true),
      textChunks('late'),
    ])
    const { notices, onRetry } = recorder(clock)
    const result = withRetry(registry, { maxRetries: 2, jitter: 0 }, { clock }).complete(req(), { onRetry })
    const settled = rejectionOf(result)
    await clock.runAll()
    expectError(await settled, LlmError, 'TRANSPORT', { attempts: 3 })
    expect(registry.calls).toHaveLength(3)
    expect(notices.map(({ attempt, delayMs, failure, at }) => ({ attempt, delayMs, code: failure.code, at }))).toEqual([
      { attempt: 1, delayMs: 500, code: 'RATE_LIMIT', at: 500 },
      { attempt: 2, delayMs: 1000, code: 'SERVER', at: 1500 },
    ])
  })

  test('maxRetries 0 never retries', async () => {
    const registry = inlineRegistry([failureChunks('SERVER', true), textChunks('ok')])
    expectError(
      await rejectionOf(withRetry(registry, { maxRetries: 0 }, { clock: fakeClock() }).complete(req())),
      LlmError,
      'SERVER',
      { attempts: 1 },
    )
    expect(registry.calls).toHaveLength(1)
  })

  test('a Retry-After within the cap is the delay; above it the failure stands at once', async () => {
    const clock = fakeClock({ now: 0 })
    const { notices, onRetry } = recorder(clock)
    const within = withRetry(
      inlineRegistry([failureChunks('RATE_LIMIT', true, { retryAfterMs: 2000 }), textChunks('ok')]),
      {},
      { clock },
    )
    const result = within.complete(req(), { onRetry })
    await flush()
    expect(clock.pending()).toEqual([{ dueAt: 2000, delayMs: 2000 }])
    await clock.advance(2000)
    await expect(result).resolves.toMatchObject({ attempts: 2 })
    expect(notices.map((notice) => notice.delayMs)).toEqual([2000])

    const above = inlineRegistry([failureChunks('RATE_LIMIT', true, { retryAfterMs: 10001 }), textChunks('ok')])
    expectError(await rejectionOf(withRetry(above, {}, { clock }).complete(req())), LlmError, 'RATE_LIMIT', {
      attempts: 1,
    })
    expect(above.calls).toHaveLength(1)
  })

  test('retryableCodes decides instead of failure.retryable', async () => {
    const clock = fakeClock()
    const retried = inlineRegistry([failureChunks('AUTH', false), textChunks('ok')])
    const result = withRetry(retried, { retryableCodes: ['AUTH'], jitter: 0 }, { clock }).complete(req())
    await clock.advance(500)
    await expect(result).resolves.toMatchObject({ attempts: 2 })
    const refused = inlineRegistry([failureChunks('SERVER', true), textChunks('ok')])
    expectError(
      await rejectionOf(withRetry(refused, { retryableCodes: ['AUTH'] }, { clock }).complete(req())),
      LlmError,
      'SERVER',
      { attempts: 1 },
    )
  })

  test.each([
    ['s9', 'compaction', 's9:compaction:1'],
    [undefined, 'compaction', ':compaction:1'],
    [undefined, 'title', ':title:1'],
  ] as const)(
    'the jitter is seeded by "<sessionId>:<purpose>:<n>" (sessionId %j, purpose %s → %s)',
    async (sessionId, purpose, seed) => {
      const clock = fakeClock({ now: 0 })
      const { notices, onRetry } = recorder(clock)
      const request = req({ metadata: { purpose, ...(sessionId === undefined ? {} : { sessionId }) } })
      const result = withRetry(
        inlineRegistry([failureChunks('SERVER', true), textChunks('ok')]),
        {},
        { clock },
      ).complete(request, { onRetry })
      await clock.runAll()
      await result
      expect(notices[0]?.delayMs).toBe(referenceDelay(500, 0.1, 10000, seed))
      if (seed === ':compaction:1') expect(notices[0]?.delayMs).toBe(473)
    },
  )

  test('without a clock option the system clock waits', async () => {
    const result = withRetry(inlineRegistry([failureChunks('SERVER', true), textChunks('ok')]), {
      initialDelayMs: 1,
      maxDelayMs: 1,
    }).complete(req())
    await expect(result).resolves.toMatchObject({ attempts: 2 })
  })
})

describe('aborts', () => {
  test('an abort during the wait rejects LlmError ABORTED (attempts 1), clears the timer and makes no further call', async () => {
    const clock = fakeClock({ now: 0 })
    const controller = new AbortController()
    const registry = inlineRegistry([failureChunks('TIMEOUT', true), textChunks('ok')])
    const onRetry = vi.fn()
    const result = withRetry(registry, {}, { clock }).complete(req({ signal: controller.signal }), { onRetry })
    await flush()
    expect(clock.pending()).toHaveLength(1)
    controller.abort('stop')
    const error = expectError(await rejectionOf(result), LlmError, 'ABORTED', { attempts: 1 })
    expect(error.failure).toEqual({
      code: 'ABORTED',
      message: 'request aborted',
      retryable: false,
      phase: 'pre-request',
    })
    expect(error.cause).toBe('stop')
    expect(clock.pending()).toEqual([])
    await clock.runAll()
    expect(registry.calls).toHaveLength(1)
    expect(onRetry).not.toHaveBeenCalled()
  })

  test('a signal aborted before the call rejects ABORTED with attempts 0 and no call', async () => {
    const controller = new AbortController()
    controller.abort()
    const registry = inlineRegistry([textChunks('ok')])
    expectError(
      await rejectionOf(withRetry(registry).complete(req({ signal: controller.signal }))),
      LlmError,
      'ABORTED',
      { attempts: 0 },
    )
    expect(registry.calls).toHaveLength(0)
  })

  test('a retryable failure after the signal aborted is not retried: ABORTED, keeping the failure’s phase', async () => {
    const controller = new AbortController()
    const registry: ModelRegistry = {
      ...inlineRegistry([]),
      stream: async function* (): AsyncIterable<StreamChunk> {
        controller.abort()
        yield {
          type: 'finish',
          reason: 'error',
          failure: { code: 'TRANSPORT', message: 'reset', retryable: true, phase: 'streaming' },
        }
      },
    }
    const error = expectError(
      await rejectionOf(withRetry(registry, {}, { clock: fakeClock() }).complete(req({ signal: controller.signal }))),
      LlmError,
      'ABORTED',
      {
        attempts: 1,
      },
    )
    expect(error.failure).toEqual({ code: 'ABORTED', message: 'request aborted', retryable: false, phase: 'streaming' })
  })

  test('an aborted finish keeps its own ABORTED failure', async () => {
    const controller = new AbortController()
    const aborted = { code: 'ABORTED', message: 'adapter saw the abort', retryable: false, phase: 'streaming' } as const
    const registry: ModelRegistry = {
      ...inlineRegistry([]),
      stream: async function* (): AsyncIterable<StreamChunk> {
        controller.abort()
        yield { type: 'finish', reason: 'aborted', failure: aborted }
      },
    }
    const error = expectError(
      await rejectionOf(withRetry(registry).complete(req({ signal: controller.signal }))),
      LlmError,
      'ABORTED',
      { attempts: 1 },
    )
    expect(error.failure).toEqual(aborted)
  })
})

describe('callback and argument contracts', () => {
  test('a throwing onRetry rejects complete with its error; no further attempt', async () => {
    const clock = fakeClock()
    const registry = inlineRegistry([failureChunks('SERVER', true), textChunks('ok')])
    const boom = new Error('onRetry failed')
    const result = withRetry(registry, {}, { clock }).complete(req(), {
      onRetry: () => {
        throw boom
      },
    })
    const settled = rejectionOf(result)
    await clock.runAll()
    expect(await settled).toBe(boom)
    expect(registry.calls).toHaveLength(1)
  })

  test.each([undefined, null, {}, { stream: 'no' }])('models %j → InvalidArgumentError argument "models"', (models) => {
    expectError(
      thrownBy(() => withRetry(models as unknown as ModelRegistry)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'models' },
    )
  })

  test.each([
    [{ clock: {} }, 'clock'],
    [{ clock: { now: () => 0 } }, 'clock'],
    [{ clock: null }, 'clock'],
    [{ timer: 1 }, 'timer'],
    ['fast', ''],
  ])('options %j → InvalidOptionsError field %j', (options, field) => {
    expectError(
      thrownBy(() => withRetry(inlineRegistry([]), {}, options as unknown as WithRetryOptions)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      { field },
    )
  })

  test('a request that is not an object, or has no AbortSignal, and a non-function onRetry reject InvalidArgumentError', async () => {
    const model = withRetry(inlineRegistry([textChunks('ok')]))
    expectError(
      await rejectionOf(model.complete(null as unknown as ModelRequest)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'request' },
    )
    expectError(
      await rejectionOf(model.complete({ ...req(), signal: {} } as unknown as ModelRequest)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'request.signal',
      },
    )
    expectError(
      await rejectionOf(model.complete(req(), { onRetry: 'x' } as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'options.onRetry' },
    )
  })
})

describe('withRetry through the harness registry', () => {
  const harnesses: Harness[] = []
  afterEach(async () => {
    await Promise.all(harnesses.splice(0).map((harness) => harness.close()))
  })

  async function start(script: Parameters<typeof scriptedModel>[0]) {
    const clock = fakeClock({ now: 0 })
    const model = scriptedModel(script)
    const harness = await createHarness({ clock, ids: fakeIds(), model })
    harnesses.push(harness)
    const written: SessionEvent[] = []
    harness.on('session/event', ({ event }) => {
      written.push(event)
    })
    const session = harness.sessions.create()
    const retrying = withRetry(harness.ctx.get(services.models), { jitter: 0 }, { clock })
    return { clock, model, session, written, retrying }
  }

  test('[fail(TIMEOUT), text(ok)] resolves { content: [text ok], finishReason stop, attempts 2, provider, model }; onRetry once; no session event', async () => {
    const { clock, model, session, written, retrying } = await start([fail('TIMEOUT'), text('ok')])
    const { notices, onRetry } = recorder(clock)
    const result = retrying.complete(req({ metadata: { sessionId: session.id, purpose: 'compaction' } }), { onRetry })
    await flush()
    expect(notices).toEqual([])
    await clock.advance(500)
    expect(await result).toEqual({
      content: [{ type: 'text', text: 'ok' }],
      finishReason: 'stop',
      attempts: 2,
      provider: 'mock',
      model: 'mock',
    })
    expect(notices).toEqual([
      { attempt: 1, delayMs: 500, failure: expect.objectContaining({ code: 'TIMEOUT', retryable: true }), at: 500 },
    ])
    model.assertComplete()
    expect(model.requests).toHaveLength(2)
    expect(written).toEqual([])
    expect(session.length).toBe(0)
  })

  test('[fail(AUTH)] rejects LlmError AUTH with attempts 1', async () => {
    const { model, retrying } = await start([fail('AUTH')])
    const error = expectError(await rejectionOf(retrying.complete(req())), LlmError, 'AUTH', { attempts: 1 })
    expect(error.failure).toMatchObject({ code: 'AUTH', retryable: false })
    model.assertComplete()
  })

  test('an abort during the wait rejects LlmError ABORTED; the second entry is never requested', async () => {
    const { clock, model, written, retrying } = await start([fail('TIMEOUT'), text('never')])
    const controller = new AbortController()
    const result = retrying.complete(req({ signal: controller.signal }))
    await flush()
    expect(clock.pending()).toEqual([{ dueAt: 500, delayMs: 500 }])
    controller.abort()
    expectError(await rejectionOf(result), LlmError, 'ABORTED', { attempts: 1 })
    expect(model.requests).toHaveLength(1)
    expect(model.remaining).toBe(1)
    expect(written).toEqual([])
  })
})
