/**
 * The bad input of issue #8 through the whole loop, over the memory and the JSONL adapter, with
 * `verifyReconstruction: true`: `run()`/`stream()` on a disposed agent, non-JSON messages, a second
 * `runMaintenance` while busy, every fault of the mock OpenAI-compatible server, a throwing tool, a
 * throwing pre-step listener and failing durability checkpoints. Each ends in the documented
 * `TurnEndReason` or typed error, the stored
 * log is balanced and equals the session, and every `run()`/`stream()` settles exactly once.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  type Agent,
  AgentBusyError,
  AgentDisposedError,
  createHarness,
  deepseek,
  defineTool,
  type Harness,
  InvalidMessageError,
  interruptedTurnClosers,
  jsonlPersistence,
  memoryPersistence,
  type PersistenceAdapter,
  type SessionEvent,
  type ToolDefinition,
  type TurnResult,
  type UserMessageInput,
} from 'yoke'
import {
  call,
  fakeClock,
  fakeIds,
  faultyPersistence,
  type MockStep,
  scriptedModel,
  startMockOpenAIServer,
  text,
} from 'yoke/testing'
import { thrownBy } from '../../helpers/outcomes.js'
import { recordingLogger } from '../../helpers/recording-logger.js'
import { type AdapterKind, adapterKinds, dataOf, ofType, useScenarios } from './scenario-harness.js'

/** How a promise settled, counted: a second settlement would show as `count: 2`. */
interface Settled<T> {
  readonly promise: Promise<void>
  readonly count: () => number
  readonly value: () => { readonly resolved: T } | { readonly rejected: unknown } | undefined
}

function settled<T>(promise: Promise<T>): Settled<T> {
  let count = 0
  let value: { readonly resolved: T } | { readonly rejected: unknown } | undefined
  const done = promise.then(
    (resolved) => {
      count++
      value = { resolved }
    },
    (rejected: unknown) => {
      count++
      value = { rejected }
    },
  )
  return { promise: done, count: () => count, value: () => value }
}

/** Drains an `AgentRun`; returns the yielded events or the iteration error. */
async function drain(run: AsyncIterable<SessionEvent>): Promise<{ events: SessionEvent[]; error?: unknown }> {
  const events: SessionEvent[] = []
  try {
    for await (const event of run) events.push(event)
  } catch (error) {
    return { events, error }
  }
  return { events }
}

/** The log is balanced in memory, and after dispose the stored log equals it and needs no repair. */
async function expectValidLog(harness: Harness, agent: Agent): Promise<void> {
  const events = agent.session.events
  expect(interruptedTurnClosers(events)).toEqual([])
  expect(agent.session.turnState().openTurn).toBeNull()
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index))
  await agent.dispose()
  const stored = await harness.persistence.inspect(agent.id)
  expect(stored.repairPending).toBe(false)
  expect(stored.events).toEqual(events)
}

/** The turn's events in the log, from its `turn/start` to its `turn/end`. */
function turnEvents(events: readonly SessionEvent[], turn: number): SessionEvent[] {
  const from = events.findIndex(
    (event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === turn,
  )
  const to = events.findIndex((event) => event.type === 'turn/end' && (event.data as { turn: number }).turn === turn)
  return events.slice(from, to + 1)
}

/** Streams `input` to its end: the drained events, which must be exactly turn `turn`'s, and the settled result. */
async function streamedTurn(
  agent: Agent,
  input: string,
  turn: number,
): Promise<{ drained: { events: SessionEvent[]; error?: unknown }; result: Settled<TurnResult> }> {
  const stream = agent.stream(input)
  const result = settled(stream.result)
  const drained = await drain(stream)
  await result.promise
  expect(drained.error).toBeUndefined()
  expect(drained.events).toEqual(turnEvents(agent.session.events, turn))
  return { drained, result }
}

describe.each(adapterKinds)('bad input through the loop (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test('run() and stream() on a disposed agent reject AgentDisposedError; nothing is logged', async () => {
    const { agent } = await scenarios.agent({ script: [text('never')] })
    await agent.dispose()
    const run = settled(agent.run('hi'))
    await run.promise
    expect(run.value()).toEqual({ rejected: expect.any(AgentDisposedError) })
    expect(run.value()).toMatchObject({ rejected: { code: 'AGENT_DISPOSED' } })
    const streamed = thrownBy(() => agent.stream('hi'))
    expect(streamed).toBeInstanceOf(AgentDisposedError)
    for (const send of [
      () => agent.followup('x'),
      () => agent.steer('x'),
      () => agent.inject('x'),
      () => agent.send('x', 'next-turn', true),
    ]) {
      expect(thrownBy(send)).toBeInstanceOf(AgentDisposedError)
    }
    expect(agent.session.length).toBe(0)
    expect(run.count()).toBe(1)
  })

  test.each<{ name: string; input: unknown; field: string }>([
    { name: 'a bigint text', input: { content: [{ type: 'text', text: 1n }] }, field: 'content[0].text' },
    { name: 'a NaN text', input: { content: [{ type: 'text', text: Number.NaN }] }, field: 'content[0].text' },
    { name: 'a Date text', input: { content: [{ type: 'text', text: new Date(0) }] }, field: 'content[0].text' },
    { name: 'a function block', input: { content: [() => 'x'] }, field: 'content[0]' },
    { name: 'a number input', input: 42, field: '' },
  ])(
    'a non-JSON message ($name) throws or rejects InvalidMessageError from every entry point; nothing is queued or logged',
    async ({ input, field }) => {
      const { model, agent, statuses } = await scenarios.agent({ script: [text('ok')] })
      const bad = input as UserMessageInput
      for (const send of [
        () => agent.followup(bad),
        () => agent.steer(bad),
        () => agent.inject(bad),
        () => agent.stream(bad),
      ]) {
        const error = thrownBy(send)
        expect(error).toBeInstanceOf(InvalidMessageError)
        expect(error).toMatchObject({ code: 'INVALID_MESSAGE', field })
      }
      const run = settled(agent.run(bad))
      await run.promise
      expect(run.value()).toEqual({ rejected: expect.any(InvalidMessageError) })
      expect(agent.session.length).toBe(0)
      expect(agent.inbox.hasPending).toBe(false)
      expect(agent.status).toBe('idle')
      expect(statuses).toEqual([])
      const next = await agent.run('fine')
      expect(next).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'ok' })
      expect(model.requests).toHaveLength(1)
      expect(run.count()).toBe(1)
    },
  )

  test('a second runMaintenance while busy throws AgentBusyError; the first task settles once and the latched run follows', async () => {
    const { harness, agent } = await scenarios.agent({ script: [text('after')] })
    let release: (value: string) => void = () => undefined
    const task = settled(agent.runMaintenance(() => new Promise<string>((resolve) => (release = resolve))))
    const busy = thrownBy(() => agent.runMaintenance(async () => 'second'))
    expect(busy).toBeInstanceOf(AgentBusyError)
    expect(busy).toMatchObject({ code: 'AGENT_BUSY', phase: 'maintenance' })
    const run = settled(agent.run('queued'))
    expect(agent.status).toBe('idle')
    expect(ofType(agent.session.events, 'turn/start')).toHaveLength(0)
    release('done')
    await task.promise
    await run.promise
    expect(task.value()).toEqual({ resolved: 'done' })
    expect(run.value()).toMatchObject({ resolved: { turn: 1, reason: { kind: 'completed' }, text: 'after' } })
    await agent.whenIdle()
    expect([task.count(), run.count()]).toEqual([1, 1])
    await expectValidLog(harness, agent)
  })

  test('a throwing tool: an error tool/result (TOOL_FAILED), the follow-up request answers it, the turn completes; run and stream settle once', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'always throws',
      input: z.object({}),
      execute: () => {
        throw new Error('tool body broke')
      },
    })
    const { harness, model, agent, errors } = await scenarios.agent({
      tools: [broken],
      script: [call('c1', 'broken', '{}'), text('sorry'), call('c2', 'broken', '{}'), text('again')],
    })
    const run = settled(agent.run('go'))
    await run.promise
    expect(run.value()).toMatchObject({ resolved: { turn: 1, reason: { kind: 'completed' }, text: 'sorry' } })
    const results = dataOf<{
      message: { content: { toolCallId: string; isError: boolean; content: { text: string }[] }[] }
      error: { code: string }
    }>(agent.session.events, 'tool/result')
    expect(
      results.map((data) => [data.message.content[0]?.toolCallId, data.message.content[0]?.isError, data.error.code]),
    ).toEqual([['c1', true, 'TOOL_FAILED']])
    expect(results[0]?.message.content[0]?.content[0]?.text).toContain('tool body broke')
    expect(model.requests).toHaveLength(2)
    expect(model.requests[1]?.messages.at(-1)?.content[0]).toMatchObject({
      type: 'tool-result',
      toolCallId: 'c1',
      isError: true,
    })
    expect(errors).toEqual([])

    const { result } = await streamedTurn(agent, 'once more', 2)
    expect(result.value()).toMatchObject({ resolved: { turn: 2, reason: { kind: 'completed' }, text: 'again' } })
    expect([run.count(), result.count()]).toEqual([1, 1])
    await expectValidLog(harness, agent)
  })

  test('a throwing pre-step listener: run resolves error UNKNOWN, the driver stops, the run queued behind it waits for wake(); stream settles the same way', async () => {
    const { harness, model, agent, errors } = await scenarios.agent({ script: [text('b'), text('d')] })
    harness.on('agent/pre-step', (payload, next) => {
      if (payload.turn !== 2) throw new Error('prompt hook broke')
      return next()
    })
    const failing = settled(agent.run('a'))
    const queued = settled(agent.run('b'))
    await failing.promise
    await agent.whenIdle()
    const reason = { kind: 'error', error: { message: 'prompt hook broke', code: 'UNKNOWN' } }
    expect(failing.value()).toMatchObject({ resolved: { turn: 1, reason, text: '' } })
    expect(queued.value()).toBeUndefined()
    expect(errors.map((error) => error.queued)).toEqual([{ nextTurn: 1, nextStep: 0 }])
    expect(agent.wake()).toBe(true)
    await queued.promise
    expect(queued.value()).toMatchObject({ resolved: { turn: 2, reason: { kind: 'completed' }, text: 'b' } })

    const { drained, result } = await streamedTurn(agent, 'c', 3)
    expect(drained.events.map((event) => event.type)).toEqual(['turn/start', 'agent/inbox/spliced', 'turn/end'])
    expect(result.value()).toMatchObject({ resolved: { turn: 3, reason } })
    expect(model.requests).toHaveLength(1)
    expect([failing.count(), queued.count(), result.count()]).toEqual([1, 1, 1])
    await expectValidLog(harness, agent)
  })
})

/**
 * Every fault step of the mock server, and the `TurnEndReason` error code it ends the turn with when
 * nothing retries. `summaries` counts the extra requests of the
 * compaction trigger: on `CONTEXT_WINDOW_EXCEEDED` with history to compact it asks
 * the model for a summary (which fails here too), then lets the error through.
 */
const faults: readonly {
  readonly name: string
  readonly step: MockStep
  readonly code: string
  readonly summaries?: number
  readonly stalls?: true
}[] = [
  { name: 'connection-reset', step: { fault: 'connection-reset' }, code: 'TRANSPORT' },
  { name: 'connection-reset after 3 events', step: { fault: 'connection-reset', afterEvents: 3 }, code: 'TRANSPORT' },
  { name: 'stall', step: { fault: 'stall', afterEvents: 2 }, code: 'TIMEOUT', stalls: true },
  { name: 'partial-eof', step: { fault: 'partial-eof', afterEvents: 3 }, code: 'STREAM_CLOSED' },
  { name: 'malformed-json', step: { fault: 'malformed-json', afterEvents: 1 }, code: 'MALFORMED_RESPONSE' },
  { name: 'rate-limit', step: { fault: 'rate-limit' }, code: 'RATE_LIMIT' },
  { name: 'server-error', step: { fault: 'server-error', status: 503 }, code: 'SERVER' },
  { name: 'context-overflow', step: { fault: 'context-overflow' }, code: 'CONTEXT_WINDOW_EXCEEDED', summaries: 1 },
  { name: 'quota', step: { fault: 'quota' }, code: 'QUOTA' },
  { name: 'auth', step: { fault: 'auth' }, code: 'AUTH' },
  { name: 'empty', step: { fault: 'empty' }, code: 'EMPTY_RESPONSE' },
  { name: 'wrong-content-type', step: { fault: 'wrong-content-type' }, code: 'MALFORMED_RESPONSE' },
  { name: 'http 418', step: { fault: 'http', status: 418, body: '{}' }, code: 'HTTP_418' },
]

describe.each(adapterKinds)('every mock-server fault through the loop, retry disabled (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)
  const servers: { close(): Promise<void> }[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close()
  })

  test.each(faults)(
    '$name → run resolves error $code, stream settles with the same reason; no anchor; the log is valid',
    async ({ step, code, summaries = 0, stalls }) => {
      const server = await startMockOpenAIServer({
        script: [...Array.from({ length: 2 + summaries }, () => step), { text: 'ok' }],
      })
      servers.push(server)
      const { harness } = await scenarios.world({ wiring: 'registry', patches: [{ id: 'retry', disabled: true }] })
      // The idle watchdog runs on its own fake clock, advanced while a turn is pending for the stall fault only
      // (advancing it for the others would race their own failure with a TIMEOUT).
      const watchdog = fakeClock({ now: 0 })
      const pumped = async <T>(pending: Promise<T>): Promise<T> => {
        let done = false
        const tracked = pending.finally(() => {
          done = true
        })
        for (let round = 0; round < 2000 && !done; round++) {
          await new Promise<void>((resolve) => setTimeout(resolve, 1))
          if (!done && stalls === true) await watchdog.advance(10)
        }
        return tracked
      }
      const model = deepseek({
        baseURL: server.baseURL,
        apiKey: 'k',
        model: 'deepseek-v4-flash',
        idleTimeoutMs: 50,
        clock: watchdog,
      })
      const agent = await harness.createAgent({ model, options: { verifyReconstruction: true } })
      const errors: unknown[] = []
      agent.ctx.on('agent/error', (payload) => {
        errors.push(payload.failure.code)
      })
      const run = settled(agent.run('go'))
      await pumped(run.promise)
      expect(run.value()).toMatchObject({ resolved: { turn: 1, reason: { kind: 'error', error: { code } }, text: '' } })
      const stream = agent.stream('again')
      const result = settled(stream.result)
      const drained = await pumped(drain(stream))
      await result.promise
      expect(drained.error).toBeUndefined()
      expect(drained.events).toEqual(turnEvents(agent.session.events, 2))
      expect(result.value()).toMatchObject({ resolved: { turn: 2, reason: { kind: 'error', error: { code } } } })
      const events = agent.session.events
      expect(ofType(events, 'assistant/message')).toHaveLength(0)
      expect(dataOf(events, 'step/end')).toEqual([
        { turn: 1, step: 1 },
        { turn: 2, step: 1 },
      ])
      expect(errors).toEqual([code, code])
      expect(server.requests).toHaveLength(2 + summaries)
      // The agent is still usable: the next turn completes.
      expect(await agent.run('third')).toMatchObject({ turn: 3, reason: { kind: 'completed' }, text: 'ok' })
      expect([run.count(), result.count()]).toEqual([1, 1])
      await expectValidLog(harness, agent)
    },
  )
})

describe.each(adapterKinds)('a failing durability checkpoint through the loop (%s adapter)', (kind: AdapterKind) => {
  const harnesses: Harness[] = []
  const dirs: string[] = []
  afterEach(async () => {
    for (const harness of harnesses.splice(0)) await harness.close().catch(() => undefined)
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
  })

  /** A harness whose adapter fails the next `append` once `arm()` was called (once). */
  async function failingOnce(script: Parameters<typeof scriptedModel>[0], tools: readonly ToolDefinition[] = []) {
    let armed = false
    let failures = 0
    let inner: PersistenceAdapter = memoryPersistence()
    if (kind === 'jsonl') {
      const dir = await mkdtemp(join(tmpdir(), 'yoke-bad-input-'))
      dirs.push(dir)
      inner = jsonlPersistence({ dir })
    }
    const adapter = faultyPersistence(inner, {
      fail: (entry) => {
        if (!armed || entry.method !== 'append') return undefined
        armed = false
        failures++
        return new Error('disk full once')
      },
    })
    const model = scriptedModel(script)
    const harness = await createHarness({
      model,
      persistence: adapter,
      tools,
      clock: fakeClock({ now: 0 }),
      ids: fakeIds(),
      logger: recordingLogger(),
    })
    harnesses.push(harness)
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    return { harness, model, agent, arm: () => (armed = true), failures: () => failures }
  }

  test('the flush before the model request failing once: the model is not called, the turn ends error FLUSH_FAILED, run resolves once (the turn-end flush retries the buffered events); the next run completes', async () => {
    const { harness, model, agent, arm, failures } = await failingOnce([text('ok')])
    harness.on('session/event', ({ event }) => {
      if (event.type === 'request/context') arm()
    })
    const run = settled(agent.run('hi'))
    await run.promise
    expect(failures()).toBe(1)
    expect(model.requests).toHaveLength(0)
    expect(run.value()).toMatchObject({
      resolved: { turn: 1, reason: { kind: 'error', error: { code: 'FLUSH_FAILED' } } },
    })
    const types = agent.session.events.map((event) => event.type)
    expect(types.slice(-3)).toEqual(['request/context', 'step/end', 'turn/end'])
    expect(types).not.toContain('assistant/chunk')
    const next: TurnResult = await agent.run('again')
    expect(next).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'ok' })
    expect(run.count()).toBe(1)
    await expectValidLog(harness, agent)
  })

  test('the flush between steps failing once (before step 2 is derived): no second step, the turn ends error FLUSH_FAILED, run resolves once; the owed result reaches the next request', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'Echo',
      input: z.object({ text: z.string() }),
      execute: ({ text: said }) => `echo: ${said}`,
    })
    const { harness, model, agent, arm, failures } = await failingOnce(
      [call('c1', 'echo', '{"text":"x"}'), text('later')],
      [echo],
    )
    harness.on('session/event', ({ event }) => {
      if (
        event.type === 'step/end' &&
        (event.data as { step: number }).step === 1 &&
        (event.data as { turn: number }).turn === 1
      )
        arm()
    })
    const run = settled(agent.run('go'))
    await run.promise
    expect(failures()).toBe(1)
    expect(model.requests).toHaveLength(1)
    expect(run.value()).toMatchObject({
      resolved: { turn: 1, reason: { kind: 'error', error: { code: 'FLUSH_FAILED' } } },
    })
    const events = agent.session.events
    expect(dataOf(events, 'step/start')).toEqual([{ turn: 1, step: 1 }])
    expect(
      events
        .map((event) => event.type)
        .filter((type) => type !== 'assistant/chunk')
        .slice(-4),
    ).toEqual(['tool/call', 'tool/result', 'step/end', 'turn/end'])
    const next = await agent.run('next')
    expect(next).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'later' })
    expect(model.requests[1]?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'user'])
    expect(run.count()).toBe(1)
    await expectValidLog(harness, agent)
  })
})
