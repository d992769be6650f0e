/**
 * Model failures through the loop: an empty stop is retried as
 * `EMPTY_RESPONSE`, never anchored; the retry plugin inside one step (event order and
 * fields); and transport recovery through the loop: the `deepseek`
 * adapter against the mock OpenAI-compatible server, with the retry plugin at `jitter: 0`. The
 * harness runs on a fake clock (the retry waits), the adapter's idle watchdog on the system
 * clock; every agent has `verifyReconstruction: true`.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import {
  type Agent,
  createHarness,
  deepseek,
  type Harness,
  type ModelAdapter,
  type SessionEvent,
  type StreamChunk,
  type TurnResult,
} from 'yoke'
import {
  type FakeClock,
  fail,
  fakeClock,
  fakeIds,
  type MockOpenAIServer,
  type MockStep,
  type ScriptEntry,
  scriptedModel,
  startMockOpenAIServer,
  text,
} from 'yoke/testing'

const open: { close(): Promise<void> }[] = []

afterEach(async () => {
  for (const closable of open.splice(0).reverse()) await closable.close()
})

interface World {
  readonly clock: FakeClock
  readonly harness: Harness
  readonly agent: Agent
}

async function world(model: ModelAdapter): Promise<World> {
  const clock = fakeClock({ now: 0 })
  const harness = await createHarness({
    model,
    clock,
    ids: fakeIds(),
    patches: [{ id: 'retry', merge: { jitter: 0 } }],
  })
  open.push(harness)
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  return { clock, harness, agent }
}

/** Waits on real 1 ms ticks until `pending` settles, firing the harness fake clock's timers (the retry waits) whenever some are due. */
async function pumped<T>(clock: FakeClock, pending: Promise<T>): Promise<T> {
  let done = false
  const tracked = pending.finally(() => {
    done = true
  })
  for (let round = 0; round < 2000 && !done; round++) {
    await new Promise<void>((resolve) => setTimeout(resolve, 1))
    if (clock.pending().length > 0) await clock.runAll()
  }
  return tracked
}

/** Runs a prompt to its turn result through {@link pumped}. */
function runPumped({ agent, clock }: World, input: string): Promise<TurnResult> {
  return pumped(clock, agent.run(input))
}

/** Waits on real 1 ms ticks until `condition()` holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let round = 0; round < 2000; round++) {
    if (condition()) return
    await new Promise<void>((resolve) => setTimeout(resolve, 1))
  }
  throw new Error(`timed out waiting for ${what}`)
}

function eventsOf(agent: Agent, type: string): SessionEvent[] {
  return agent.session.events.filter((event) => event.type === type)
}

/** `[attempt, delayMs, failure.code]` of each `llm/retry`. */
function retries(agent: Agent): unknown[] {
  return eventsOf(agent, 'llm/retry').map((event) => {
    const data = event.data as { attempt: number; delayMs: number; failure: { code: string } }
    return [data.attempt, data.delayMs, data.failure.code]
  })
}

/** The failure of the first `llm/retry`. */
function firstRetryFailure(agent: Agent): unknown {
  const first = eventsOf(agent, 'llm/retry')[0]
  if (first === undefined) throw new Error('no llm/retry')
  return (first.data as { failure: unknown }).failure
}

/** The content of each `assistant/message`. */
function anchors(agent: Agent): unknown[] {
  return eventsOf(agent, 'assistant/message').map(
    (event) => (event.data as { message: { content: unknown } }).message.content,
  )
}

describe('retry in the loop', () => {
  test('M[fail RATE_LIMIT, fail SERVER, text recovered]: step 1 holds the attempts and the retry events in order; the anchor cites attempt 3 only', async () => {
    const model = scriptedModel([fail('RATE_LIMIT'), fail('SERVER'), text('recovered')])
    const loop = await world(model)
    const statuses: string[] = []
    loop.harness.on('agent/status', (payload) => {
      statuses.push(payload.status)
    })
    const result = await runPumped(loop, 'go')
    expect(result).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'recovered' })
    const events = loop.agent.session.events
    expect(eventsOf(loop.agent, 'step/start').map((event) => event.data)).toEqual([{ turn: 1, step: 1 }])
    const start = eventsOf(loop.agent, 'step/start')[0]?.seq ?? -1
    const end = eventsOf(loop.agent, 'step/end')[0]?.seq ?? -1
    // The model-side events of the step (request/header, request/context and user/message are the loop's own).
    const modelSide = new Set(['assistant/chunk', 'llm/retry', 'llm/retry-started', 'assistant/message'])
    const inStep = events.filter((event) => event.seq > start && event.seq < end && modelSide.has(event.type))
    // Group each run of assistant/chunk events into one entry naming its chunk types.
    const shape: unknown[] = []
    for (const event of inStep) {
      if (event.type === 'assistant/chunk') {
        const chunk = (event.data as unknown as { chunk: StreamChunk }).chunk
        const last = shape.at(-1)
        if (Array.isArray(last)) last.push(chunk.type)
        else shape.push([chunk.type])
      } else shape.push(event.type)
    }
    expect(shape).toEqual([
      ['finish'],
      'llm/retry',
      'llm/retry-started',
      ['finish'],
      'llm/retry',
      'llm/retry-started',
      ['block-start', 'text-delta', 'block-end', 'finish'],
      'assistant/message',
    ])
    const retryEvents = eventsOf(loop.agent, 'llm/retry').map(
      (event) =>
        event.data as {
          attempt: number
          delayMs: number
          maxRetries: number
          failure: { code: string }
          retryId: string
          turn: number
          step: number
        },
    )
    expect(retryEvents).toMatchObject([
      { turn: 1, step: 1, attempt: 1, delayMs: 500, maxRetries: 5, failure: { code: 'RATE_LIMIT' } },
      { turn: 1, step: 1, attempt: 2, delayMs: 1000, maxRetries: 5, failure: { code: 'SERVER' } },
    ])
    expect(eventsOf(loop.agent, 'llm/retry-started').map((event) => event.data)).toEqual([
      { retryId: retryEvents[0]?.retryId, turn: 1, step: 1, attempt: 1 },
      { retryId: retryEvents[1]?.retryId, turn: 1, step: 1, attempt: 2 },
    ])
    const lastStarted = eventsOf(loop.agent, 'llm/retry-started').at(-1)?.seq ?? Number.POSITIVE_INFINITY
    const attempt3 = eventsOf(loop.agent, 'assistant/chunk')
      .filter((event) => event.seq > lastStarted)
      .map((event) => event.seq)
    expect(attempt3).toHaveLength(4)
    expect(anchors(loop.agent)).toEqual([[{ type: 'text', text: 'recovered' }]])
    expect(eventsOf(loop.agent, 'assistant/message')[0]?.sourceEventSeqs).toEqual(attempt3)
    expect(statuses).toEqual(['running', 'idle'])
    model.assertComplete()
  })
})

describe('empty stop through the loop', () => {
  const emptyStops: [string, readonly StreamChunk[]][] = [
    ['[finish stop]', [{ type: 'finish', reason: 'stop' }]],
    [
      '[block-start text, block-end {text: ""}, finish stop]',
      [
        { type: 'block-start', index: 0, blockType: 'text' },
        { type: 'block-end', index: 0, block: { type: 'text', text: '' } },
        { type: 'finish', reason: 'stop' },
      ],
    ],
  ]
  test.each(emptyStops)(
    '%s, then text ok: one llm/retry EMPTY_RESPONSE, then one assistant/message ok; no empty anchor',
    async (_name, chunks) => {
      const script: ScriptEntry[] = [{ chunks }, text('ok')]
      const model = scriptedModel(script)
      const loop = await world(model)
      const result = await runPumped(loop, 'go')
      expect(result).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'ok' })
      expect(retries(loop.agent)).toEqual([[1, 500, 'EMPTY_RESPONSE']])
      expect(firstRetryFailure(loop.agent)).toMatchObject({
        code: 'EMPTY_RESPONSE',
        retryable: true,
        phase: 'streaming',
      })
      expect(anchors(loop.agent)).toEqual([[{ type: 'text', text: 'ok' }]])
      expect(eventsOf(loop.agent, 'step/start')).toHaveLength(1)
      // The anchor cites only the second attempt's chunks.
      const started = eventsOf(loop.agent, 'llm/retry-started')[0]?.seq ?? Number.POSITIVE_INFINITY
      const secondAttempt = eventsOf(loop.agent, 'assistant/chunk')
        .filter((event) => event.seq > started)
        .map((event) => event.seq)
      expect(eventsOf(loop.agent, 'assistant/message')[0]?.sourceEventSeqs).toEqual(secondAttempt)
      expect(model.requests).toHaveLength(2)
      expect(loop.agent.session.deriveMessages().map((message) => message.role)).toEqual(['user', 'assistant'])
    },
  )
})

/**
 * A loop over `deepseek` against a mock server. The adapter's idle watchdog gets its own fake
 * clock (`watchdog`), advanced only by the stall test, so a slow connect on a busy machine never
 * times out and the stall times out exactly when the test says.
 */
async function deepseekWorld(
  script: readonly MockStep[],
): Promise<World & { readonly server: MockOpenAIServer; readonly watchdog: FakeClock }> {
  const server = await startMockOpenAIServer({ script })
  open.push(server)
  const watchdog = fakeClock({ now: 0 })
  const loop = await world(
    deepseek({ baseURL: server.baseURL, apiKey: 'k', model: 'deepseek-v4-flash', idleTimeoutMs: 50, clock: watchdog }),
  )
  return { ...loop, server, watchdog }
}

describe('transport recovery through the loop', () => {
  test('[connection-reset, text ok]: one llm/retry TRANSPORT, the turn completes', async () => {
    const loop = await deepseekWorld([{ fault: 'connection-reset' }, { text: 'ok' }])
    const result = await runPumped(loop, 'go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'ok' })
    expect(retries(loop.agent)).toEqual([[1, 500, 'TRANSPORT']])
    expect(firstRetryFailure(loop.agent)).toMatchObject({ code: 'TRANSPORT', retryable: true, phase: 'connect' })
    expect(anchors(loop.agent)).toEqual([[{ type: 'text', text: 'ok' }]])
    expect(loop.server.requests).toHaveLength(2)
    expect(loop.server.requests[1]?.body).toMatchObject({ model: 'deepseek-v4-flash', stream: true })
    loop.server.assertComplete()
  })

  test('[empty, text ok]: one llm/retry EMPTY_RESPONSE, no empty assistant message', async () => {
    const loop = await deepseekWorld([{ fault: 'empty' }, { text: 'ok' }])
    const result = await runPumped(loop, 'go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'ok' })
    expect(retries(loop.agent)).toEqual([[1, 500, 'EMPTY_RESPONSE']])
    expect(anchors(loop.agent)).toEqual([[{ type: 'text', text: 'ok' }]])
    loop.server.assertComplete()
  })

  test('[partial-eof]: no retry, turn/end {error: STREAM_CLOSED}', async () => {
    const loop = await deepseekWorld([{ fault: 'partial-eof' }])
    const result = await runPumped(loop, 'go')
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'STREAM_CLOSED', retryable: false } })
    expect(retries(loop.agent)).toEqual([])
    expect(anchors(loop.agent)).toEqual([])
    const end = eventsOf(loop.agent, 'turn/end')[0]?.data as {
      turn: number
      reason: { kind: string; error: { code: string } }
    }
    expect(end.turn).toBe(1)
    expect(end.reason).toMatchObject({ kind: 'error', error: { code: 'STREAM_CLOSED' } })
    expect(loop.server.requests).toHaveLength(1)
  })

  test('[stall, text ok] with idleTimeoutMs 50: llm/retry TIMEOUT (streaming), then the turn completes', async () => {
    const loop = await deepseekWorld([{ fault: 'stall', afterEvents: 2, text: 'partial' }, { text: 'ok' }])
    const pending = loop.agent.run('go')
    // The stall sent its two events: the first attempt's text delta is logged, then silence.
    await until(
      () =>
        eventsOf(loop.agent, 'assistant/chunk').some(
          (event) => (event.data as unknown as { chunk: StreamChunk }).chunk.type === 'text-delta',
        ),
      'the first delta',
    )
    await new Promise<void>((resolve) => setTimeout(resolve, 5))
    expect(eventsOf(loop.agent, 'llm/retry')).toEqual([])
    await loop.watchdog.advance(49)
    await new Promise<void>((resolve) => setTimeout(resolve, 5))
    expect(eventsOf(loop.agent, 'llm/retry')).toEqual([])
    await loop.watchdog.advance(1)
    const result = await pumped(loop.clock, pending)
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'ok' })
    expect(retries(loop.agent)).toEqual([[1, 500, 'TIMEOUT']])
    expect(firstRetryFailure(loop.agent)).toEqual({
      code: 'TIMEOUT',
      message: 'no data from the provider for 50 ms',
      retryable: true,
      phase: 'streaming',
    })
    expect(anchors(loop.agent)).toEqual([[{ type: 'text', text: 'ok' }]])
    loop.server.assertComplete()
  })
})

describe('a scripted failure keeps its retry hint', () => {
  test("fail('RATE_LIMIT', …, { retryAfterMs, status }): the failure carries both and the retry waits exactly retryAfterMs", async () => {
    const model = scriptedModel([fail('RATE_LIMIT', 'slow down', { retryAfterMs: 1234, status: 429 }), text('ok')])
    const loop = await world(model)
    const result = await runPumped(loop, 'go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'ok' })
    expect(retries(loop.agent)).toEqual([[1, 1234, 'RATE_LIMIT']])
    expect(firstRetryFailure(loop.agent)).toMatchObject({
      code: 'RATE_LIMIT',
      message: 'slow down',
      retryAfterMs: 1234,
      status: 429,
      retryable: true,
    })
  })
})
