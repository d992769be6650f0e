/**
 * A storage call that never returns, through an agent turn: the turn's checkpoints race the turn
 * signal, so `cancel()` ends a turn whose flush hangs; `dispose()` and `harness.close()` return
 * within the write timeout; once storage answers the log is complete, valid and has every seq
 * once. Both adapters are real (memory, and JSONL files in a temp directory), wrapped by
 * `faultyPersistence` to hold their appends.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  createHarness,
  defineTool,
  type Harness,
  HarnessCloseError,
  jsonlPersistence,
  memoryPersistence,
  type PersistenceAdapter,
  PersistenceError,
  type SessionEvent,
} from 'yoke'
import { call, type FaultyPersistence, fakeIds, faultyPersistence, scriptedModel, text } from 'yoke/testing'
import { gate, openAllGates, until } from '../helpers/gates.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

let dir: string
let harnesses: Harness[]

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-hung-storage-'))
  harnesses = []
})

afterEach(async () => {
  openAllGates()
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

/** How long `promise` takes to settle, in real milliseconds, and how it settled. */
async function timed<T>(
  promise: Promise<T>,
): Promise<{ readonly ms: number; readonly outcome: PromiseSettledResult<T> }> {
  const started = Date.now()
  const [outcome] = await Promise.allSettled([promise])
  return { ms: Date.now() - started, outcome: outcome as PromiseSettledResult<T> }
}

const kinds = {
  memory: () => memoryPersistence(),
  jsonl: () => jsonlPersistence({ dir }),
} satisfies Record<string, () => PersistenceAdapter>

/** The seqs of every append the adapter saw, flattened. */
const appendedSeqs = (adapter: FaultyPersistence): number[] =>
  adapter.calls.filter((entry) => entry.method === 'append').flatMap((entry) => [...entry.seqs])

/** The stored events of `id` as a second reader sees them (JSONL: a fresh adapter; memory: the same store). */
async function stored(kind: keyof typeof kinds, adapter: FaultyPersistence, id: string): Promise<SessionEvent[]> {
  const reader = kind === 'jsonl' ? jsonlPersistence({ dir }) : adapter.inner
  try {
    const suffix = await (reader.readFrom as NonNullable<PersistenceAdapter['readFrom']>)(id, 0)
    return [...suffix.events]
  } catch (error) {
    // Both adapters store a log with its first append.
    if (PersistenceError.is(error) && error.code === 'SESSION_NOT_FOUND') return []
    throw error
  } finally {
    if (kind === 'jsonl') await reader.close()
  }
}

/** Every seq from 0 once, in order. */
function expectValidSeqs(events: readonly SessionEvent[]): void {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index))
}

describe.each(Object.keys(kinds) as (keyof typeof kinds)[])('hung storage through an agent (%s)', (kind) => {
  /** A harness whose appends hang, once `holding` is set, until `held` opens. */
  async function rig(options: { readonly writeTimeoutMs?: number; readonly tools?: boolean } = {}) {
    const held = gate()
    const state = { holding: false, heldCalls: 0 }
    const adapter = faultyPersistence(kinds[kind](), {
      hold: (entry) => {
        if (!state.holding || entry.method !== 'append') return undefined
        state.heldCalls++
        return held.promise
      },
    })
    let bodies = 0
    const echo = defineTool({
      name: 'echo',
      description: 'Echo',
      input: z.object({ text: z.string() }),
      execute: ({ text: said }) => {
        bodies++
        return said
      },
    })
    const model = scriptedModel(
      options.tools === true ? [call('c1', 'echo', '{"text":"ping"}'), text('done')] : [text('hello')],
    )
    const harness = await createHarness({
      model,
      persistence: adapter,
      ids: fakeIds(),
      logger: recordingLogger(),
      ...(options.tools === true ? { tools: [echo] } : {}),
      ...(options.writeTimeoutMs === undefined ? {} : { writeTimeoutMs: options.writeTimeoutMs }),
    })
    harnesses.push(harness)
    const agent = await harness.createAgent()
    return { harness, agent, adapter, model, held, state, bodies: () => bodies }
  }

  test('cancel() ends a turn whose checkpoint flush hangs, at once; the log is complete once storage answers', async () => {
    const { agent, adapter, model, held, state } = await rig()
    state.holding = true
    const running = agent.run('hi')
    await until(() => state.heldCalls === 1, 'the held append')
    expect(agent.status).toBe('running')
    agent.cancel()
    const { ms, outcome } = await timed(running)
    // The default write timeout is 30 s: the turn ended on the cancel, not on a timeout.
    expect(ms).toBeLessThan(1000)
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { reason: { kind: 'aborted' } } })
    expect(agent.status).toBe('idle')
    expect(model.requests).toHaveLength(0)
    const last = agent.session.events.at(-1)
    expect(last?.type).toBe('turn/end')
    held.open()
    await until(async () => (await stored(kind, adapter, agent.session.id)).length === agent.session.length, 'the log')
    const events = await stored(kind, adapter, agent.session.id)
    expect(events.map((event) => JSON.stringify(event))).toEqual(
      agent.session.events.map((event) => JSON.stringify(event)),
    )
    expectValidSeqs(events)
    expect(appendedSeqs(adapter)).toEqual(events.map((event) => event.seq))
    await agent.dispose()
  })

  test('a cancel while the flush before a tool hangs: the tool never runs and its call ends aborted, not failed', async () => {
    const { harness, agent, held, state, bodies } = await rig({ tools: true })
    harness.on('session/event', ({ event }) => {
      if (event.type === 'tool/call') state.holding = true
    })
    const running = agent.run('go')
    await until(() => state.heldCalls === 1, 'the held append')
    agent.cancel()
    const { ms, outcome } = await timed(running)
    expect(ms).toBeLessThan(1000)
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { reason: { kind: 'aborted' } } })
    expect(bodies()).toBe(0)
    const result = agent.session.events.find((event) => event.type === 'tool/result')
    expect((result?.data as { error?: { code: string } } | undefined)?.error?.code).toBe('TOOL_ABORTED_BEFORE_DISPATCH')
    held.open()
    await agent.dispose()
  })

  test('a cancel while the flush between steps hangs ends the turn at once', async () => {
    const { harness, agent, model, held, state, bodies } = await rig({ tools: true })
    harness.on('session/event', ({ event }) => {
      if (event.type === 'tool/result') state.holding = true
    })
    const running = agent.run('go')
    await until(() => state.heldCalls === 1, 'the held append')
    expect(bodies()).toBe(1)
    agent.cancel()
    const { ms, outcome } = await timed(running)
    expect(ms).toBeLessThan(1000)
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { reason: { kind: 'aborted' } } })
    // The second step's request was never sent.
    expect(model.requests).toHaveLength(1)
    held.open()
    await agent.dispose()
  })

  test('a database that goes away mid-turn: the turn fails at its checkpoint with a typed error; once back, nothing is lost or doubled', async () => {
    let down = false
    const adapter = faultyPersistence(kinds[kind](), {
      fail: (entry) => (down && entry.method === 'append' ? new Error('connection terminated') : undefined),
    })
    const harness = await createHarness({
      model: scriptedModel([text('one'), text('two')]),
      persistence: adapter,
      ids: fakeIds(),
      logger: recordingLogger(),
    })
    harnesses.push(harness)
    const agent = await harness.createAgent()
    down = true
    const error = await rejectionOf(agent.run('first'))
    expect(error).toMatchObject({ code: 'FLUSH_FAILED', cause: { code: 'WRITE_FAILED', sessionId: agent.session.id } })
    expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: { kind: 'error' } })
    down = false
    const second = await agent.run('second')
    expect(second.reason).toEqual({ kind: 'completed' })
    const events = await stored(kind, adapter, agent.session.id)
    expect(events.map((event) => JSON.stringify(event))).toEqual(
      agent.session.events.map((event) => JSON.stringify(event)),
    )
    expectValidSeqs(events)
  })

  test('dispose() and harness.close() return within the write timeout; close names the unflushed session', async () => {
    const { harness, agent, adapter, held, state } = await rig({ writeTimeoutMs: 250 })
    state.holding = true
    const running = agent.run('hi')
    await until(() => state.heldCalls === 1, 'the held append')
    const disposed = await timed(agent.dispose())
    expect(disposed.ms).toBeLessThan(2000)
    // The agent is gone, its last events still queued for the close: the dispose reports the timeout.
    expect(disposed.outcome.status).toBe('rejected')
    expect((disposed.outcome as PromiseRejectedResult).reason).toMatchObject({
      code: 'DISPOSE_FAILED',
      cause: { code: 'WRITE_TIMEOUT', sessionId: agent.session.id, operation: 'append', timeoutMs: 250 },
    })
    const ran = await timed(running)
    expect(ran.outcome).toMatchObject({ status: 'fulfilled', value: { reason: { kind: 'aborted' } } })
    const closed = await timed(harness.close())
    expect(closed.ms).toBeLessThan(2000)
    expect(closed.outcome.status).toBe('rejected')
    const error = (closed.outcome as PromiseRejectedResult).reason as unknown
    expect(error).toBeInstanceOf(HarnessCloseError)
    expect((error as HarnessCloseError).unflushedSessions).toEqual([agent.session.id])
    const closeFailed = (error as HarnessCloseError).errors
      .map((failure) => failure.error)
      .find((failure) => PersistenceError.is(failure) && failure.code === 'CLOSE_FAILED') as PersistenceError
    expect(closeFailed.errors).toContainEqual(
      expect.objectContaining({ code: 'WRITE_TIMEOUT', sessionId: agent.session.id, operation: 'append' }),
    )
    // Storage answers after the harness gave up: whatever it stored is valid, with no seq twice.
    held.open()
    if (kind === 'jsonl') {
      await until(() => adapter.calls.some((entry) => entry.method === 'close'), 'the adapter close')
      // The held append ran after the adapter closed, so it stored nothing: what is stored is a prefix.
      const events = await stored(kind, adapter, agent.session.id)
      expectValidSeqs(events)
      expect(events.map((event) => JSON.stringify(event))).toEqual(
        agent.session.events.slice(0, events.length).map((event) => JSON.stringify(event)),
      )
    }
  })

  test('released before dispose: dispose and close succeed and the log holds every event once', async () => {
    const { harness, agent, adapter, held, state } = await rig({ writeTimeoutMs: 250 })
    state.holding = true
    const running = agent.run('hi')
    await until(() => state.heldCalls === 1, 'the held append')
    agent.cancel()
    await running
    // The checkpoint's append outlives its 250 ms timeout, then completes: nothing is written twice.
    await new Promise((resolve) => setTimeout(resolve, 400))
    held.open()
    await agent.dispose()
    await harness.close()
    if (kind === 'jsonl') {
      const events = await stored(kind, adapter, agent.session.id)
      expect(events.map((event) => JSON.stringify(event))).toEqual(
        agent.session.events.map((event) => JSON.stringify(event)),
      )
    }
    expect(appendedSeqs(adapter)).toEqual(agent.session.events.map((event) => event.seq))
  })

  test('without a cancel, a hung checkpoint fails the turn with WRITE_TIMEOUT, and the next turn, storage back, loses nothing', async () => {
    const { agent, adapter, held, state } = await rig({ writeTimeoutMs: 250 })
    state.holding = true
    const error = await rejectionOf(agent.run('hi'))
    expect(error).toMatchObject({ code: 'FLUSH_FAILED' })
    const timeout = (error as { cause?: unknown }).cause
    expect(timeout).toBeInstanceOf(PersistenceError)
    expect(timeout).toMatchObject({
      code: 'WRITE_TIMEOUT',
      sessionId: agent.session.id,
      operation: 'append',
      timeoutMs: 250,
    })
    expect(String((timeout as Error).message)).toContain(agent.session.id)
    expect(agent.status).toBe('idle')
    state.holding = false
    held.open()
    // The timed-out append completes late; the queue resumes and writes the rest, each seq once.
    await until(
      async () => (await stored(kind, adapter, agent.session.id)).length === agent.session.length,
      'the log after the late append',
    )
    expectValidSeqs(await stored(kind, adapter, agent.session.id))
    expect(appendedSeqs(adapter)).toEqual(agent.session.events.map((event) => event.seq))
    await agent.dispose()
  })
})
