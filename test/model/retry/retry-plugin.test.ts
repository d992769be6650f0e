/**
 * The `retry` entry on `agent/request-error` (its events): the
 * waterfall is dispatched directly on a harness with a fake clock, against a session holding an
 * open turn and step, and the appended `llm/retry` / `llm/retry-started` events are checked.
 *
 * @module
 */
import { afterEach, describe, expect, test, vi } from 'vitest'
import {
  createHarness,
  type Harness,
  type JsonObject,
  type LlmFailure,
  type RequestErrorPayload,
  type RequestErrorResult,
  type Session,
} from 'yoke'
import { type FakeClock, fakeClock, fakeIds } from 'yoke/testing'
import { recordingLogger } from '../../helpers/recording-logger.js'
import { SE, SS, TE, TS } from '../../session/builders.js'
import { append, appendAll } from '../../session/session-helpers.js'
import { referenceDelay } from './reference-fnv.js'

const rateLimit: LlmFailure = {
  code: 'RATE_LIMIT',
  message: 'slow down',
  retryable: true,
  status: 429,
  phase: 'response',
}
const server: LlmFailure = { code: 'SERVER', message: 'down', retryable: true, status: 503, phase: 'response' }
const auth: LlmFailure = { code: 'AUTH', message: 'provider 401', retryable: false, status: 401, phase: 'response' }

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()))
})

interface Setup {
  readonly clock: FakeClock
  readonly harness: Harness
  readonly session: Session
}

/**
 * A harness (fake clock at 1000, fake ids) whose retry entry gets `merge`, and a session with turn 1
 * step 1 open. The persistence entry is disabled so the only clock timers are the retry's own.
 */
async function setup(merge?: JsonObject): Promise<Setup> {
  const clock = fakeClock({ now: 1000 })
  const harness = await createHarness({
    clock,
    ids: fakeIds(),
    logger: recordingLogger(),
    patches: [{ id: 'persistence', disabled: true }, ...(merge === undefined ? [] : [{ id: 'retry', merge }])],
  })
  harnesses.push(harness)
  const session = appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
  return { clock, harness, session }
}

/** Logs a failed attempt's finish chunk, as the loop would. */
function failedAttempt(session: Session, turn: number, step: number, failure: LlmFailure): void {
  append(session, {
    type: 'assistant/chunk',
    data: { turn, step, chunk: { type: 'finish', reason: 'error', failure: { ...failure } } },
    options: {},
  })
}

function payload(
  session: Session,
  fields: Partial<RequestErrorPayload> & { readonly failure: LlmFailure },
): RequestErrorPayload {
  return {
    agent: { id: session.id, session },
    turn: 1,
    step: 1,
    attempt: 1,
    signal: new AbortController().signal,
    ...fields,
  }
}

function dispatch(
  harness: Harness,
  request: RequestErrorPayload,
  inner: () => RequestErrorResult = () => undefined,
): Promise<RequestErrorResult> {
  return harness.ctx.waterfall('agent/request-error', request, inner)
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** The events from `from` on, as `{ type, data }`. */
function since(session: Session, from: number): { type: string; data: unknown }[] {
  return session.events.slice(from).map((event) => ({ type: event.type, data: event.data }))
}

describe('registration', () => {
  test('the entry registers llm/retry and llm/retry-started in the session catalog; disabling it removes them', async () => {
    const { harness } = await setup()
    expect(harness.sessions.eventTypes()).toEqual(expect.arrayContaining(['llm/retry', 'llm/retry-started']))
    const disabled = await createHarness({ patches: [{ id: 'retry', disabled: true }] })
    harnesses.push(disabled)
    expect(disabled.sessions.eventTypes()).not.toContain('llm/retry')
    expect(disabled.sessions.eventTypes()).not.toContain('llm/retry-started')
  })
})

describe('retry in the step', () => {
  test('attempt 1 → llm/retry {attempt 1, delayMs 500, maxRetries 5} before the wait, llm/retry-started after it, result retry; attempt 2 waits 1000', async () => {
    const { clock, harness, session } = await setup({ jitter: 0 })
    const inner = vi.fn((): RequestErrorResult => undefined)
    failedAttempt(session, 1, 1, rateLimit)
    const first = dispatch(harness, payload(session, { attempt: 1, failure: rateLimit }), inner)
    await flush()
    expect(since(session, 3)).toEqual([
      {
        type: 'llm/retry',
        data: { retryId: 'r1', turn: 1, step: 1, attempt: 1, maxRetries: 5, delayMs: 500, failure: rateLimit },
      },
    ])
    expect(session.at(3)?.time).toBe(1000)
    expect(clock.pending()).toEqual([{ dueAt: 1500, delayMs: 500 }])
    await clock.advance(499)
    expect(session.length).toBe(4)
    await clock.advance(1)
    await expect(first).resolves.toEqual({ kind: 'retry' })
    expect(since(session, 4)).toEqual([
      { type: 'llm/retry-started', data: { retryId: 'r1', turn: 1, step: 1, attempt: 1 } },
    ])
    expect(session.at(4)?.time).toBe(1500)

    failedAttempt(session, 1, 1, server)
    const second = dispatch(harness, payload(session, { attempt: 2, failure: server }), inner)
    await flush()
    expect(since(session, 6)).toEqual([
      {
        type: 'llm/retry',
        data: { retryId: 'r2', turn: 1, step: 1, attempt: 2, maxRetries: 5, delayMs: 1000, failure: server },
      },
    ])
    await clock.advance(999)
    expect(session.length).toBe(7)
    await clock.advance(1)
    await expect(second).resolves.toEqual({ kind: 'retry' })
    expect(since(session, 7)).toEqual([
      { type: 'llm/retry-started', data: { retryId: 'r2', turn: 1, step: 1, attempt: 2 } },
    ])
    expect(session.events.map((event) => event.type)).toEqual([
      'turn/start',
      'step/start',
      'assistant/chunk',
      'llm/retry',
      'llm/retry-started',
      'assistant/chunk',
      'llm/retry',
      'llm/retry-started',
    ])
    expect(inner).not.toHaveBeenCalled()
  })

  test('with the default jitter the delay is the FNV-1a-seeded one for "s1:1:1:1"', async () => {
    const { clock, harness, session } = await setup()
    const result = dispatch(harness, payload(session, { failure: rateLimit }))
    await flush()
    const expected = referenceDelay(500, 0.1, 10000, 's1:1:1:1')
    expect(expected).toBe(460)
    expect(session.at(2)?.data).toMatchObject({ attempt: 1, delayMs: expected, maxRetries: 5 })
    await clock.advance(expected)
    await expect(result).resolves.toEqual({ kind: 'retry' })
  })
})

describe('when the failure stands', () => {
  test('a non-retryable failure calls next(): the inner default runs and its result is returned; nothing is appended', async () => {
    const { clock, harness, session } = await setup({ jitter: 0 })
    const inner = vi.fn((): RequestErrorResult => ({ kind: 'retry' }))
    const request = payload(session, { failure: auth })
    await expect(dispatch(harness, request, inner)).resolves.toEqual({ kind: 'retry' })
    expect(inner).toHaveBeenCalledTimes(1)
    expect(inner).toHaveBeenCalledWith(request)
    expect(session.length).toBe(2)
    expect(clock.pending()).toEqual([])
  })

  test('a failure without retryable is not retried', async () => {
    const { harness, session } = await setup()
    const inner = vi.fn((): RequestErrorResult => undefined)
    await expect(
      dispatch(harness, payload(session, { failure: { code: 'SERVER', message: 'x' } }), inner),
    ).resolves.toBeUndefined()
    expect(inner).toHaveBeenCalledTimes(1)
    expect(session.length).toBe(2)
  })

  test('more than maxRetries retries in the step → next(), nothing appended', async () => {
    const { clock, harness, session } = await setup({ maxRetries: 1, jitter: 0 })
    const inner = vi.fn((): RequestErrorResult => undefined)
    const first = dispatch(harness, payload(session, { failure: rateLimit }), inner)
    await clock.advance(500)
    await expect(first).resolves.toEqual({ kind: 'retry' })
    expect(session.length).toBe(4)
    await expect(
      dispatch(harness, payload(session, { attempt: 2, failure: rateLimit }), inner),
    ).resolves.toBeUndefined()
    expect(inner).toHaveBeenCalledTimes(1)
    expect(session.length).toBe(4)
    expect(clock.pending()).toEqual([])
  })

  test('maxRetries 0 never retries', async () => {
    const { harness, session } = await setup({ maxRetries: 0 })
    const inner = vi.fn((): RequestErrorResult => undefined)
    await expect(dispatch(harness, payload(session, { failure: rateLimit }), inner)).resolves.toBeUndefined()
    expect(inner).toHaveBeenCalledTimes(1)
    expect(session.length).toBe(2)
  })

  test('a retryAfterMs above maxDelayMs gives up → next(), nothing appended', async () => {
    const { clock, harness, session } = await setup()
    const inner = vi.fn((): RequestErrorResult => undefined)
    await expect(
      dispatch(harness, payload(session, { failure: { ...rateLimit, retryAfterMs: 10001 } }), inner),
    ).resolves.toBeUndefined()
    expect(inner).toHaveBeenCalledTimes(1)
    expect(session.length).toBe(2)
    expect(clock.pending()).toEqual([])
  })
})

describe('counting and delays', () => {
  test('n counts only this step’s llm/retry events: a new step and a new turn start again at attempt 1', async () => {
    const { clock, harness, session } = await setup({ maxRetries: 1, jitter: 0 })
    const retryOnce = async (turn: number, step: number): Promise<unknown> => {
      const from = session.length
      const result = dispatch(harness, payload(session, { turn, step, attempt: 9, failure: rateLimit }))
      await clock.advance(500)
      await expect(result).resolves.toEqual({ kind: 'retry' })
      return since(session, from).map((event) => event.data)
    }
    expect(await retryOnce(1, 1)).toEqual([
      { retryId: 'r1', turn: 1, step: 1, attempt: 1, maxRetries: 1, delayMs: 500, failure: rateLimit },
      { retryId: 'r1', turn: 1, step: 1, attempt: 1 },
    ])
    appendAll(session, [SE(1, 1), SS(1, 2)])
    expect(await retryOnce(1, 2)).toEqual([
      { retryId: 'r2', turn: 1, step: 2, attempt: 1, maxRetries: 1, delayMs: 500, failure: rateLimit },
      { retryId: 'r2', turn: 1, step: 2, attempt: 1 },
    ])
    appendAll(session, [SE(1, 2), TE(1, 'completed'), TS(2), SS(2, 1)])
    expect(await retryOnce(2, 1)).toEqual([
      { retryId: 'r3', turn: 2, step: 1, attempt: 1, maxRetries: 1, delayMs: 500, failure: rateLimit },
      { retryId: 'r3', turn: 2, step: 1, attempt: 1 },
    ])
  })

  test('counting scans back only to the step’s step/start (O(step), not O(log))', async () => {
    const { clock, harness, session } = await setup({ jitter: 0 })
    for (let index = 0; index < 40; index++) failedAttempt(session, 1, 1, rateLimit)
    appendAll(session, [SE(1, 1), TE(1, 'completed'), TS(2), SS(2, 1)])
    failedAttempt(session, 2, 1, rateLimit)
    failedAttempt(session, 2, 1, rateLimit)
    const at = vi.spyOn(session, 'at')
    const result = dispatch(harness, payload(session, { turn: 2, step: 1, failure: rateLimit }))
    await flush()
    // The two chunks, then step/start {2, 1}: three reads, none of turn 1's 44 events.
    expect(at.mock.calls.map(([seq]) => seq)).toEqual([47, 46, 45])
    await clock.advance(500)
    await expect(result).resolves.toEqual({ kind: 'retry' })
  })

  test('a Retry-After within the cap is waited exactly', async () => {
    const { clock, harness, session } = await setup()
    const failure = { ...rateLimit, retryAfterMs: 2000 }
    const result = dispatch(harness, payload(session, { failure }))
    await flush()
    expect(session.at(2)?.data).toMatchObject({ attempt: 1, delayMs: 2000 })
    await clock.advance(1999)
    expect(session.length).toBe(3)
    await clock.advance(1)
    await expect(result).resolves.toEqual({ kind: 'retry' })
  })

  test('with honorRetryAfter false a large Retry-After is ignored', async () => {
    const { clock, harness, session } = await setup({ honorRetryAfter: false, jitter: 0 })
    const result = dispatch(harness, payload(session, { failure: { ...rateLimit, retryAfterMs: 60000 } }))
    await flush()
    expect(session.at(2)?.data).toMatchObject({ delayMs: 500 })
    await clock.advance(500)
    await expect(result).resolves.toEqual({ kind: 'retry' })
  })

  test('retryableCodes overrides failure.retryable both ways', async () => {
    const { clock, harness, session } = await setup({ retryableCodes: ['AUTH'], jitter: 0 })
    const inner = vi.fn((): RequestErrorResult => undefined)
    await expect(dispatch(harness, payload(session, { failure: rateLimit }), inner)).resolves.toBeUndefined()
    expect(inner).toHaveBeenCalledTimes(1)
    expect(session.length).toBe(2)
    const result = dispatch(harness, payload(session, { failure: auth }), inner)
    await clock.advance(500)
    await expect(result).resolves.toEqual({ kind: 'retry' })
    expect(since(session, 2).map((event) => event.type)).toEqual(['llm/retry', 'llm/retry-started'])
    expect(session.at(2)?.data).toMatchObject({ failure: auth, delayMs: 500 })
    expect(inner).toHaveBeenCalledTimes(1)
  })
})

describe('cancellation', () => {
  test('a signal already aborted → no opinion: nothing appended, no timer, the default passes through', async () => {
    const { clock, harness, session } = await setup()
    const controller = new AbortController()
    controller.abort()
    const inner = vi.fn((): RequestErrorResult => undefined)
    await expect(
      dispatch(harness, payload(session, { failure: rateLimit, signal: controller.signal }), inner),
    ).resolves.toBeUndefined()
    expect(session.length).toBe(2)
    expect(clock.pending()).toEqual([])
    expect(inner).toHaveBeenCalledTimes(1)
  })

  test('an abort during the wait → only llm/retry is appended, the timer is cancelled, the result is undefined', async () => {
    const { clock, harness, session } = await setup({ jitter: 0 })
    const controller = new AbortController()
    const result = dispatch(harness, payload(session, { failure: rateLimit, signal: controller.signal }))
    await clock.advance(200)
    expect(since(session, 2).map((event) => event.type)).toEqual(['llm/retry'])
    controller.abort()
    await expect(result).resolves.toBeUndefined()
    expect(clock.pending()).toEqual([])
    await clock.advance(10000)
    expect(since(session, 2).map((event) => event.type)).toEqual(['llm/retry'])
  })

  test('closing the harness during the wait → only llm/retry is appended, the result is undefined', async () => {
    const { clock, harness, session } = await setup({ jitter: 0 })
    const result = dispatch(harness, payload(session, { failure: server }))
    await flush()
    expect(clock.pending()).toEqual([{ dueAt: 1500, delayMs: 500 }])
    await harness.close()
    await expect(result).resolves.toBeUndefined()
    expect(clock.pending()).toEqual([])
    expect(session.events.map((event) => event.type)).toEqual(['turn/start', 'step/start', 'llm/retry'])
  })
})
