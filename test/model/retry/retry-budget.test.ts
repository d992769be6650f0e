/**
 * The retry budget: `maxTotalDelayMs` caps the waits of one step (or one `withRetry` call), set in
 * one place on the harness `model` route (`{ adapter, retry }`). A dead endpoint is a loopback port
 * that refuses connections; the harness runs on a fake clock.
 *
 * @module
 */
import { createServer } from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import {
  type Agent,
  type Clock,
  createHarness,
  type Harness,
  InvalidOptionsError,
  type ModelAdapter,
  openaiCompatible,
  type RetryPolicy,
  withRetry,
} from 'yoke'
import { type FakeClock, fail, fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { defaultRetryPolicy, retryPolicySchema } from '../../../src/model/index.js'
import { rejectionOf } from '../../helpers/outcomes.js'

const open: Harness[] = []
afterEach(async () => {
  for (const harness of open.splice(0)) await harness.close()
})

/** Real time for the adapter's idle watchdog, so firing the harness fake clock never trips it. */
const realClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, delayMs) => {
    const timer = setTimeout(callback, delayMs)
    return () => clearTimeout(timer)
  },
}

/** A loopback port nothing listens on: bound, then closed, so a connection is refused. */
async function refusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return address.port
}

/** Waits on real 1 ms ticks until `pending` settles, firing the fake clock's due timers (the retry waits). */
async function pumped<T>(clock: FakeClock, pending: Promise<T>): Promise<T> {
  let done = false
  const tracked = pending.finally(() => {
    done = true
  })
  for (let round = 0; round < 3000 && !done; round++) {
    await new Promise<void>((resolve) => setTimeout(resolve, 1))
    if (clock.pending().length > 0) await clock.runAll()
  }
  return tracked
}

function retryDelays(agent: Agent): number[] {
  return agent.session.events
    .filter((event) => event.type === 'llm/retry')
    .map((event) => (event.data as { delayMs: number }).delayMs)
}

async function harnessWith(
  adapter: ModelAdapter,
  retry?: Partial<RetryPolicy>,
): Promise<{ harness: Harness; clock: FakeClock }> {
  const clock = fakeClock({ now: 0 })
  const harness = await createHarness({
    model: retry === undefined ? adapter : { adapter, retry },
    clock,
    ids: fakeIds(),
  })
  open.push(harness)
  return { harness, clock }
}

describe('the default budget', () => {
  test('5 retries, waits 500 → 8000 ms (±10 %), about 15.5 s in all, no total cap', () => {
    expect(defaultRetryPolicy).toMatchObject({ maxRetries: 5, initialDelayMs: 500, maxDelayMs: 10_000, jitter: 0.1 })
    expect(defaultRetryPolicy.maxTotalDelayMs).toBeUndefined()
  })

  test('a dead endpoint without a budget: 5 retries with the doubling waits, then the turn fails TRANSPORT', async () => {
    const port = await refusedPort()
    const adapter = openaiCompatible({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'm', clock: realClock })
    const { harness, clock } = await harnessWith(adapter, { jitter: 0 })
    const agent = await harness.createAgent()
    const result = await pumped(clock, agent.run('hi'))
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'TRANSPORT' } })
    expect(retryDelays(agent)).toEqual([500, 1000, 2000, 4000, 8000])
    expect(clock.now()).toBe(15_500)
  })
})

describe('maxTotalDelayMs on the harness model route', () => {
  test('a dead endpoint with { maxTotalDelayMs: 1500 } fails after the 500 and 1000 ms waits', async () => {
    const port = await refusedPort()
    const adapter = openaiCompatible({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'm', clock: realClock })
    const { harness, clock } = await harnessWith(adapter, { maxTotalDelayMs: 1500, jitter: 0 })
    const agent = await harness.createAgent()
    const result = await pumped(clock, agent.run('hi'))
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'TRANSPORT', retryable: true } })
    expect(retryDelays(agent)).toEqual([500, 1000])
    expect(clock.now()).toBe(1500)
    const end = agent.session.events.find((event) => event.type === 'turn/end')
    expect(end?.data).toMatchObject({ reason: { kind: 'error', error: { code: 'TRANSPORT' } } })
  })

  test('{ maxRetries: 0 } never retries', async () => {
    const port = await refusedPort()
    const adapter = openaiCompatible({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'm', clock: realClock })
    const { harness, clock } = await harnessWith(adapter, { maxRetries: 0 })
    const agent = await harness.createAgent()
    expect((await pumped(clock, agent.run('hi'))).reason).toMatchObject({ kind: 'error' })
    expect(retryDelays(agent)).toEqual([])
    expect(clock.now()).toBe(0)
  })

  test('a Retry-After beyond the remaining budget ends the retries; one within it is waited', async () => {
    const model = scriptedModel([
      fail('RATE_LIMIT', 'slow', { retryAfterMs: 700 }),
      fail('RATE_LIMIT', 'slow', { retryAfterMs: 400 }),
      text('never'),
    ])
    const { harness, clock } = await harnessWith(model, { maxTotalDelayMs: 1000 })
    const agent = await harness.createAgent()
    const result = await pumped(clock, agent.run('hi'))
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'RATE_LIMIT', retryAfterMs: 400 } })
    expect(retryDelays(agent)).toEqual([700])
  })

  test('a patch of the retry entry merges over the route policy', async () => {
    const model = scriptedModel([fail('SERVER'), fail('SERVER'), text('ok')])
    const clock = fakeClock({ now: 0 })
    const harness = await createHarness({
      model: { adapter: model, retry: { maxTotalDelayMs: 500, jitter: 0 } },
      patches: [{ id: 'retry', merge: { maxTotalDelayMs: 5000 } }],
      clock,
      ids: fakeIds(),
    })
    open.push(harness)
    const agent = await harness.createAgent()
    expect(await pumped(clock, agent.run('hi'))).toMatchObject({ reason: { kind: 'completed' }, text: 'ok' })
    expect(retryDelays(agent)).toEqual([500, 1000])
  })
})

describe('bad budgets are typed errors', () => {
  test.each([0, -1, 1.5, '1000', null])(
    'maxTotalDelayMs %j: createHarness → InvalidOptionsError at model.retry.maxTotalDelayMs',
    async (value) => {
      const error = await rejectionOf(
        createHarness({ model: { adapter: scriptedModel([]), retry: { maxTotalDelayMs: value as number } } }),
      )
      expect(error).toBeInstanceOf(InvalidOptionsError)
      expect(error).toMatchObject({ field: 'model.retry.maxTotalDelayMs' })
      expect(retryPolicySchema.safeParse({ maxTotalDelayMs: value }).success).toBe(false)
    },
  )

  test('an unknown retry field and a non-object retry are refused at model.retry', async () => {
    expect(
      await rejectionOf(createHarness({ model: { adapter: scriptedModel([]), retry: { maxRetrys: 2 } as never } })),
    ).toMatchObject({ code: 'INVALID_OPTIONS', field: 'model.retry.maxRetrys' })
    expect(
      await rejectionOf(createHarness({ model: { adapter: scriptedModel([]), retry: 3 as never } })),
    ).toMatchObject({ code: 'INVALID_OPTIONS', field: 'model.retry' })
  })

  test("an agent's route cannot set retry (the policy is the harness's)", async () => {
    const harness = await createHarness({ clock: fakeClock(), ids: fakeIds() })
    open.push(harness)
    const error = await rejectionOf(
      harness.createAgent({ model: { adapter: scriptedModel([]), retry: { maxRetries: 1 } } }),
    )
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field: 'model.retry' })
    expect(String((error as Error).message)).toContain('harness model option only')
  })

  test('withRetry: an invalid budget is InvalidOptionsError at maxTotalDelayMs', async () => {
    const harness = await createHarness({ clock: fakeClock(), ids: fakeIds() })
    open.push(harness)
    expect(() => withRetry(harness.ctx.models, { maxTotalDelayMs: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', field: 'maxTotalDelayMs' }),
    )
  })
})

describe('withRetry honours the budget', () => {
  test('with { maxTotalDelayMs: 1500, jitter: 0 } a failing call makes 3 attempts, waiting 500 and 1000 ms', async () => {
    const model = scriptedModel([fail('SERVER'), fail('SERVER'), fail('SERVER'), text('late')])
    const clock = fakeClock({ now: 0 })
    const harness = await createHarness({ model, clock, ids: fakeIds() })
    open.push(harness)
    const waits: number[] = []
    const pending = withRetry(harness.ctx.models, { maxTotalDelayMs: 1500, jitter: 0 }, { clock }).complete(
      {
        provider: 'mock',
        model: 'mock',
        messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
        metadata: { purpose: 'title' },
        signal: new AbortController().signal,
      },
      { onRetry: ({ delayMs }) => waits.push(delayMs) },
    )
    const error = await pumped(
      clock,
      pending.then(
        () => undefined,
        (caught: unknown) => caught,
      ),
    )
    expect(error).toMatchObject({ code: 'SERVER', attempts: 3 })
    expect(waits).toEqual([500, 1000])
  })
})
