/**
 * `agent.run`, `agent.stream` and `agent.runMaintenance`, the last group over both the memory and
 * the JSONL adapter.
 */
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  createHarness,
  defineTool,
  ErrorCode,
  type Harness,
  RunDiscardedError,
  type SessionEvent,
  StreamOverflowError,
  type TurnResult,
} from 'yoke'
import { fail, fakeClock, fakeIds, hang, scriptedModel, text, tool } from 'yoke/testing'
import { adapterKinds, dataOf, ofType, untilStreaming, useScenarios, userTexts } from './scenario-harness.js'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close().catch(() => undefined)
  harness = undefined
})

const usage = { inputTokens: 10, outputTokens: 11 }

async function start(
  script: Parameters<typeof scriptedModel>[0],
  extra: Omit<NonNullable<Parameters<typeof createHarness>[0]>, 'model'> = {},
) {
  const model = scriptedModel(script)
  harness = await createHarness({ model, clock: fakeClock(), ids: fakeIds(), ...extra })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  return { model, agent, harness }
}

function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: unknown) => error,
  )
}

/** Resolves once the scripted model received `count` requests. */
async function requestsReach(model: { readonly requests: readonly unknown[] }, count: number): Promise<void> {
  for (let round = 0; round < 1000 && model.requests.length < count; round++)
    await new Promise((resolve) => setImmediate(resolve))
  expect(model.requests.length).toBeGreaterThanOrEqual(count)
}

describe('agent.run', () => {
  test('one text turn → turn 1, completed, text, messages, usage', async () => {
    const { agent } = await start([text('hello', { usage })])
    const result = await agent.run('hi')
    expect(result).toEqual({
      turn: 1,
      reason: { kind: 'completed' },
      text: 'hello',
      messages: [expect.objectContaining({ role: 'user' }), expect.objectContaining({ role: 'assistant' })],
      usage,
    })
    expect(JSON.parse(JSON.stringify(result))).toEqual(result)
  })

  test('a tool turn → text of the last answer, four messages, summed usage', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'Echo',
      input: z.object({ text: z.string() }),
      execute: ({ text: said }) => `echo: ${said}`,
    })
    const { agent } = await start([tool('echo', { text: 'ping' }, { usage }), text('done', { usage })], {
      tools: [echo],
    })
    const result = await agent.run('go')
    expect(result.text).toBe('done')
    // The tool result travels as a user-role message holding one tool-result block.
    expect(result.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(result.messages[2]?.content[0]).toMatchObject({
      type: 'tool-result',
      isError: false,
      content: [{ type: 'text', text: 'echo: ping' }],
    })
    expect(result.usage.inputTokens).toBe(20)
  })

  test('concurrent runs get turns 1 and 2', async () => {
    const { agent } = await start([text('one'), text('two')])
    const [first, second] = await Promise.all([agent.run('a'), agent.run('b')])
    expect([first.turn, first.text, second.turn, second.text]).toEqual([1, 'one', 2, 'two'])
  })

  test('a model error resolves as a result', async () => {
    const { agent } = await start([{ failure: { code: 'AUTH', message: 'provider 401', status: 401 } }])
    const result = await agent.run('hi')
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'AUTH', message: 'provider 401' } })
    expect(result.text).toBe('')
  })

  test('with the retry entry disabled a model failure still ends the turn with its own failure', async () => {
    const model = scriptedModel([fail('AUTH', 'provider 401')])
    harness = await createHarness({
      model,
      clock: fakeClock(),
      ids: fakeIds(),
      patches: [{ id: 'retry', disabled: true }],
    })
    const agent = await harness.createAgent()
    const result = await agent.run('hi')
    expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'AUTH', message: 'provider 401' } })
  })

  test("inbox.remove discards a queued run with reason 'removed' and no cause", async () => {
    const { model, agent } = await start([hang()])
    void agent.run('a')
    const queued = agent.run('b')
    await requestsReach(model, 1)
    const pending = agent.inbox.nextTurn[0]
    expect(agent.inbox.remove(pending?.id ?? '')).toBe(true)
    const error = (await rejection(queued)) as { reason: string; cause?: unknown }
    expect(error.reason).toBe('removed')
    expect(error.cause).toBeUndefined()
    agent.cancel()
  })

  test('a run sent after an abort latches like followup and runs at convergence', async () => {
    const { model, agent } = await start([hang(), text('after')])
    const first = agent.run('a')
    await requestsReach(model, 1)
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    const second = agent.run('b')
    expect((await first).reason.kind).toBe('aborted')
    const result = await second
    expect([result.turn, result.text]).toEqual([2, 'after'])
  })

  test('bad input rejects InvalidMessageError and queues nothing; a disposed agent rejects AgentDisposedError', async () => {
    const { agent } = await start([text('x')])
    const error = await rejection(agent.run({ content: [{ type: 'text', text: 1n as unknown as string }] }))
    expect(error).toMatchObject({ code: ErrorCode.INVALID_MESSAGE, field: 'content[0].text' })
    expect(agent.session.length).toBe(0)
    const aborted = new AbortController()
    aborted.abort()
    expect(await rejection(agent.run('late', { signal: aborted.signal }))).toMatchObject({
      code: ErrorCode.RUN_DISCARDED,
      reason: 'canceled',
    })
    expect(agent.session.length).toBe(0)
    await agent.dispose()
    expect(await rejection(agent.run('hi'))).toMatchObject({ code: ErrorCode.AGENT_DISPOSED })
  })
})

describe('agent.stream', () => {
  test('the events equal the log from turn/start to turn/end; result equals run', async () => {
    const { agent, harness: live } = await start([text('abc', { usage }), text('abc', { usage })])
    const other = await live.createAgent()
    other.inject('noise')
    const run = agent.stream('go')
    const collected: SessionEvent[] = []
    for await (const event of run) collected.push(event)
    const events = agent.session.events
    const from = events.findIndex((event) => event.type === 'turn/start')
    const to = events.findIndex((event) => event.type === 'turn/end')
    expect(collected).toEqual(events.slice(from, to + 1))
    expect(collected.every((event) => agent.session.at(event.seq) === event)).toBe(true)
    expect(JSON.parse(JSON.stringify(collected))).toEqual(collected)
    const streamed: TurnResult = await run.result
    const ran = await agent.run('go')
    expect({ ...ran, turn: 1, messages: ran.messages.map((message) => message.role) }).toEqual({
      ...streamed,
      messages: streamed.messages.map((message) => message.role),
    })
    expect(run.message.content).toEqual([{ type: 'text', text: 'go' }])
  })

  test('highWaterMark 4 read after the turn → 4 events, then StreamOverflowError; result completes', async () => {
    const { agent } = await start([text('abc')])
    const run = agent.stream('go', { highWaterMark: 4 })
    const result = await run.result
    expect(result.reason).toEqual({ kind: 'completed' })
    const seen: SessionEvent[] = []
    const error = await (async () => {
      try {
        for await (const event of run) seen.push(event)
      } catch (caught) {
        return caught
      }
      return undefined
    })()
    expect(seen).toHaveLength(4)
    expect(error).toMatchObject({ code: ErrorCode.STREAM_OVERFLOW, limit: 4, lastYieldedSeq: seen[3]?.seq })
    expect(agent.session.events.at(-1)?.type).toBe('turn/end')
  })

  test('breaking out unsubscribes without cancelling the turn', async () => {
    const { agent } = await start([text('abc')])
    const run = agent.stream('go')
    for await (const event of run) if (event.type === 'turn/start') break
    expect((await run.result).reason).toEqual({ kind: 'completed' })
    await agent.whenIdle()
  })

  test('a discarded stream throws RunDiscardedError from iteration and result', async () => {
    const { model, agent } = await start([hang()])
    void agent.run('a')
    await requestsReach(model, 1)
    const run = agent.stream('b')
    agent.cancel()
    await expect(run.result).rejects.toMatchObject({ code: ErrorCode.RUN_DISCARDED })
    await expect(
      (async () => {
        for await (const _event of run) {
          // nothing: the prompt was never claimed
        }
      })(),
    ).rejects.toMatchObject({ code: ErrorCode.RUN_DISCARDED })
  })

  test('an AgentRun iterates once: a second iterator throws InvalidArgumentError', async () => {
    const { agent } = await start([text('abc')])
    const run = agent.stream('go')
    const first = run[Symbol.asyncIterator]()
    expect(() => run[Symbol.asyncIterator]()).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument: 'iterator' }),
    )
    await first.return?.()
    expect((await run.result).reason).toEqual({ kind: 'completed' })
  })

  test('a bad highWaterMark throws InvalidArgumentError and queues nothing', async () => {
    const { agent } = await start([text('abc')])
    expect(() => agent.stream('go', { highWaterMark: 0 })).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument: 'highWaterMark' }),
    )
    expect(agent.session.length).toBe(0)
  })
})

describe('agent.runMaintenance', () => {
  test('cancel aborts the task signal; a rejection comes back unchanged; busy and disposed throw typed errors', async () => {
    const { model, agent } = await start([hang()])
    const failure = new Error('task broke')
    const task = agent.runMaintenance(
      (signal) =>
        new Promise<never>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(failure), { once: true })
        }),
    )
    expect(() => agent.runMaintenance(async () => 1)).toThrow(
      expect.objectContaining({ code: ErrorCode.AGENT_BUSY, phase: 'maintenance' }),
    )
    expect(() => agent.runMaintenance('not a task' as unknown as () => Promise<number>)).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument: 'task' }),
    )
    agent.cancel()
    expect(await rejection(task)).toBe(failure)
    agent.followup('go')
    await requestsReach(model, 1)
    expect(() => agent.runMaintenance(async () => 1)).toThrow(
      expect.objectContaining({ code: ErrorCode.AGENT_BUSY, phase: 'running' }),
    )
    await agent.dispose()
    expect(() => agent.runMaintenance(async () => 1)).toThrow(
      expect.objectContaining({ code: ErrorCode.AGENT_DISPOSED }),
    )
  })
})

describe.each(adapterKinds)('run, stream and maintenance end to end (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test('a followup during maintenance latches (status stays idle, no turn); after the task one turn and 1 request; a removed one runs nothing', async () => {
    const { model, agent, statuses } = await scenarios.agent({ script: [text('done')] })
    let release: (value: string) => void = () => undefined
    const task = agent.runMaintenance(() => new Promise<string>((resolve) => (release = resolve)))
    agent.followup('m')
    expect(agent.status).toBe('idle')
    expect(agent.phase).toBe('maintenance')
    expect(statuses).toEqual([])
    const idle = agent.whenIdle()
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(ofType(agent.session.events, 'turn/start')).toHaveLength(0)
    expect(model.requests).toHaveLength(0)
    release('value')
    expect(await task).toBe('value')
    await idle
    expect(dataOf(agent.session.events, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }])
    expect(userTexts(agent.session.events)).toEqual(['m'])
    expect(model.requests).toHaveLength(1)
    expect(statuses).toEqual(['running', 'idle'])

    let releaseSecond: () => void = () => undefined
    const second = agent.runMaintenance(() => new Promise<void>((resolve) => (releaseSecond = resolve)))
    const removed = agent.followup('gone')
    expect(agent.inbox.remove(removed.id)).toBe(true)
    releaseSecond()
    await second
    await agent.whenIdle()
    expect(ofType(agent.session.events, 'turn/start')).toHaveLength(1)
    expect(model.requests).toHaveLength(1)
    expect(statuses).toEqual(['running', 'idle'])
  })

  test("cancel() rejects the queued run('b') RUN_DISCARDED canceled, run('a') resolves aborted {user}; at dispose run('q') rejects 'disposed' with no canceling splice; each settles once", async () => {
    const { harness, agent } = await scenarios.agent({ script: [hang(), hang()] })
    const settled = { a: 0, b: 0, c: 0, q: 0 }
    let streaming = untilStreaming(harness)
    const a = agent.run('a').finally(() => settled.a++)
    const b = agent.run('b').finally(() => settled.b++)
    await streaming
    agent.cancel()
    const discarded = await rejection(b)
    expect(discarded).toBeInstanceOf(RunDiscardedError)
    expect(discarded).toMatchObject({ code: ErrorCode.RUN_DISCARDED, reason: 'canceled', cause: { kind: 'user' } })
    expect((await a).reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    await agent.whenIdle()
    expect(userTexts(agent.session.events)).toEqual(['a'])

    streaming = untilStreaming(harness)
    const c = agent.run('c').finally(() => settled.c++)
    await streaming
    const q = agent.run('q').finally(() => settled.q++)
    // Handled from the start: dispose rejects it before the test gets to look.
    const qRejected = rejection(q)
    const cancelingBefore = dataOf(agent.session.events, 'agent/inbox/spliced').filter(
      (data) => data['outcome'] === 'canceled',
    ).length
    await agent.dispose()
    expect((await c).reason).toEqual({ kind: 'aborted', reason: { kind: 'disposed' } })
    expect(await qRejected).toMatchObject({ code: ErrorCode.RUN_DISCARDED, reason: 'disposed' })
    expect(
      dataOf(agent.session.events, 'agent/inbox/spliced').filter((data) => data['outcome'] === 'canceled'),
    ).toHaveLength(cancelingBefore)
    expect(agent.inbox.nextTurn.map((message) => message.content)).toEqual([[{ type: 'text', text: 'q' }]])
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(settled).toEqual({ a: 1, b: 1, c: 1, q: 1 })
  })

  test("aborting a queued run's signal logs x's canceling splice and rejects it canceled {user}; the hang continues; aborting x's own turn ends it aborted {user} and the prompt behind still runs", async () => {
    const { harness, agent } = await scenarios.agent({ script: [hang(), hang(), text('behind')] })
    let streaming = untilStreaming(harness)
    const first = agent.run('first')
    await streaming
    const controller = new AbortController()
    const x = agent.run('x', { signal: controller.signal })
    const queuedId = agent.inbox.nextTurn[0]?.id
    controller.abort()
    const discarded = await rejection(x)
    expect(discarded).toBeInstanceOf(RunDiscardedError)
    expect(discarded).toMatchObject({ code: ErrorCode.RUN_DISCARDED, reason: 'canceled', cause: { kind: 'user' } })
    const canceling = dataOf<{ inserted: unknown[]; outcome?: string; removedCount?: number }>(
      agent.session.events,
      'agent/inbox/spliced',
    ).at(-1)
    expect(canceling).toEqual({ target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' })
    expect(queuedId).toBeTypeOf('string')
    expect(agent.status).toBe('running')
    expect(ofType(agent.session.events, 'turn/end')).toHaveLength(0)
    agent.cancel()
    expect((await first).reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    await agent.whenIdle()
    // The hanging turn was the only one, and the discarded 'x' never reached the log.
    expect(ofType(agent.session.events, 'turn/start')).toHaveLength(1)
    expect(userTexts(agent.session.events)).toEqual(['first'])

    streaming = untilStreaming(harness)
    const own = new AbortController()
    const running = agent.run('x2', { signal: own.signal })
    const behind = agent.run('behind')
    await streaming
    own.abort()
    const result = await running
    expect(result.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    expect(agent.inbox.nextTurn.map((message) => message.content)).toEqual([[{ type: 'text', text: 'behind' }]])
    // keepInbox parked 'behind': it runs on the next waking send or wake().
    expect(agent.wake()).toBe(true)
    expect(await behind).toMatchObject({ turn: 3, reason: { kind: 'completed' }, text: 'behind' })
  })
})

describe('run and stream, step by step as the API documents them', () => {
  const extra: Harness[] = []
  afterEach(async () => {
    for (const other of extra.splice(0)) await other.close().catch(() => undefined)
  })

  test('the messages are the prompt, the assistant tool call, the tool result and the final answer', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'Echo',
      input: z.object({ text: z.string() }),
      execute: ({ text: said }) => `echo: ${said}`,
    })
    const { agent } = await start([tool('echo', { text: 'ping' }, { usage }), text('done', { usage })], {
      tools: [echo],
    })
    const result = await agent.run('go')
    expect(result.messages).toHaveLength(4)
    expect(result.messages[0]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'go' }] })
    expect(result.messages[1]).toMatchObject({
      role: 'assistant',
      content: [{ type: 'tool-call', name: 'echo', arguments: '{"text":"ping"}' }],
    })
    expect(typeof (result.messages[1]?.content[0] as { readonly id?: unknown } | undefined)?.id).toBe('string')
    const callId = (result.messages[1]?.content[0] as { readonly id: string } | undefined)?.id
    expect(result.messages[2]?.content).toEqual([
      expect.objectContaining({
        type: 'tool-result',
        toolCallId: callId,
        content: [{ type: 'text', text: 'echo: ping' }],
      }),
    ])
    expect(result.messages[3]).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'done' }] })
    expect(result.usage).toEqual({ inputTokens: 20, outputTokens: 22 })
  })

  test('the queued run rejects RunDiscardedError; once the hanging turn 1 is released the agent goes idle with no second turn', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const { model, agent } = await start([
      async () => {
        await gate
        return text('one')
      },
      text('never'),
    ])
    const first = agent.run('a')
    await requestsReach(model, 1)
    const controller = new AbortController()
    const queued = agent.run('b', { signal: controller.signal })
    controller.abort()
    const error = await rejection(queued)
    expect(RunDiscardedError.is(error)).toBe(true)
    expect(error).toBeInstanceOf(RunDiscardedError)
    expect(error).toMatchObject({ name: 'RunDiscardedError', code: 'RUN_DISCARDED', cause: { kind: 'user' } })
    release()
    expect(await first).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'one' })
    await agent.whenIdle()
    expect(agent.status).toBe('idle')
    expect(model.requests).toHaveLength(1)
    expect(agent.session.events.filter((event) => event.type === 'turn/start')).toHaveLength(1)
    expect(userTexts(agent.session.events)).toEqual(['a'])
  })

  test("another agent's concurrent turn never appears in the stream", async () => {
    const { agent, harness: live } = await start([text('abc', { usage })])
    const other = await live.createAgent({ model: scriptedModel([text('other', { usage })]) })
    const run = agent.stream('go')
    const otherRun = other.run('noise')
    const collected: SessionEvent[] = []
    for await (const event of run) collected.push(event)
    expect((await otherRun).reason).toEqual({ kind: 'completed' })
    const events = agent.session.events
    const from = events.findIndex((event) => event.type === 'turn/start')
    const to = events.findIndex((event) => event.type === 'turn/end')
    expect(collected).toEqual(events.slice(from, to + 1))
    expect(collected.every((event) => agent.session.at(event.seq) === event)).toBe(true)
    const otherEvents = new Set<SessionEvent>(other.session.events)
    expect(other.session.events.some((event) => event.type === 'turn/start')).toBe(true)
    expect(collected.some((event) => otherEvents.has(event))).toBe(false)
  })

  test('run.result deep-equals what run returns for the same script in a fresh harness; both are lossless JSON', async () => {
    const { agent } = await start([text('abc', { usage })])
    const run = agent.stream('go')
    const collected: SessionEvent[] = []
    for await (const event of run) collected.push(event)
    const streamed = await run.result
    const twin = await createHarness({
      model: scriptedModel([text('abc', { usage })]),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    extra.push(twin)
    const ran = await (await twin.createAgent({ options: { verifyReconstruction: true } })).run('go')
    expect(streamed).toEqual(ran)
    expect(JSON.parse(JSON.stringify(streamed))).toEqual(streamed)
    expect(JSON.parse(JSON.stringify(collected))).toEqual(collected)
  })

  test('the overflow is a StreamOverflowError (class and code)', async () => {
    const { agent } = await start([text('abc')])
    const run = agent.stream('go', { highWaterMark: 4 })
    expect((await run.result).reason).toEqual({ kind: 'completed' })
    const seen: SessionEvent[] = []
    let error: unknown
    try {
      for await (const event of run) seen.push(event)
    } catch (caught) {
      error = caught
    }
    expect(seen).toEqual(agent.session.events.filter((event) => event.seq >= (seen[0]?.seq ?? 0)).slice(0, 4))
    expect(seen[0]?.type).toBe('turn/start')
    expect(StreamOverflowError.is(error)).toBe(true)
    expect(error).toBeInstanceOf(StreamOverflowError)
    expect(error).toMatchObject({
      name: 'StreamOverflowError',
      code: 'STREAM_OVERFLOW',
      limit: 4,
      lastYieldedSeq: seen[3]?.seq,
    })
    const ends = agent.session.events.filter((event) => event.type === 'turn/end')
    expect(ends).toHaveLength(1)
  })
})
