/**
 * The queued policy of a resume, over the memory and the JSONL adapters (a restart is a second
 * harness over the same store or directory): `run()` prompts queued behind a running turn when
 * the agent is disposed reject `RunDiscardedError` `'disposed'` with the cause `{ kind: 'disposed' }`
 * and stay queued in the log; `queued: 'keep'` runs them, `'discard'` cancels them durably; bad
 * values are typed errors that change nothing. Also `agent.inbox.list()` ages on a fake clock, and
 * the `timeout` cancel cause of a run signal.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import {
  type Agent,
  createHarness,
  type Harness,
  InvalidOptionsError,
  jsonlPersistence,
  memoryPersistence,
  type PersistenceAdapter,
  PersistenceError,
  RunDiscardedError,
  type SessionEvent,
  type UserMessage,
} from 'yoke'
import { type FakeClock, fakeClock, faultyPersistence, fakeIds, scriptedModel, text } from 'yoke/testing'
import { createMemoryStore } from '../../src/persistence/index.js'
import { rejectionOf } from '../helpers/outcomes.js'

const harnesses: Harness[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** A storage that outlives one harness: a shared memory store, or a JSONL directory. */
interface Storage {
  readonly name: string
  /** A fresh storage; `adapter()` gives each harness its own adapter over it. */
  make(): Promise<{ adapter(): PersistenceAdapter | { dir: string } }>
}

const storages: readonly Storage[] = [
  {
    name: 'memory',
    make: async () => {
      const store = createMemoryStore()
      return { adapter: () => memoryPersistence({ store }) }
    },
  },
  {
    name: 'jsonl',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'yoke-queued-policy-'))
      dirs.push(dir)
      return { adapter: () => ({ dir }) }
    },
  },
]

function textOf(message: UserMessage | undefined): string | undefined {
  const block = message?.content[0]
  return block?.type === 'text' ? block.text : undefined
}

/** Resolves once the session commits an event of `type`. */
function nextEvent(harness: Harness, type: string): Promise<SessionEvent> {
  return new Promise((resolve) => {
    const off = harness.on('session/event', ({ event }) => {
      if (event.type !== type) return
      off()
      resolve(event)
    })
  })
}

describe.each(storages)('over $name', (storage) => {
  /** One "process": a harness over the storage with its own fake clock. */
  async function open(
    persistence: PersistenceAdapter | { dir: string },
    replies: readonly Parameters<typeof scriptedModel>[0][number][],
    clock: FakeClock,
  ): Promise<{ harness: Harness; model: ReturnType<typeof scriptedModel> }> {
    const model = scriptedModel(replies)
    const harness = await createHarness({ persistence, model, clock, ids: fakeIds() })
    harnesses.push(harness)
    return { harness, model }
  }

  /** Turn 1 hangs; `run('q1')` and `run('q2')` queue behind it; then the agent is disposed. */
  async function queueAndDispose(adapter: () => PersistenceAdapter | { dir: string }) {
    const clock = fakeClock({ now: 10_000 })
    const { harness } = await open(adapter(), [{ text: 'thinking', hang: true }], clock)
    const agent = await harness.createAgent({ sessionId: 'chat' })
    const streaming = nextEvent(harness, 'assistant/chunk')
    const first = agent.run('first')
    await streaming
    await clock.advance(250)
    const q1 = rejectionOf(agent.run('q1'))
    await clock.advance(250)
    const q2 = rejectionOf(agent.run('q2'))
    await agent.dispose()
    const errors = [await q1, await q2]
    await harness.close()
    return { first: await first, errors }
  }

  test("a run queued behind a running turn rejects 'disposed' with the cause { kind: 'disposed' }; a 'keep' resume runs it", async () => {
    const { adapter } = await storage.make()
    const { first, errors } = await queueAndDispose(adapter)
    expect(first.reason).toEqual({ kind: 'aborted', reason: { kind: 'disposed' } })
    for (const error of errors) {
      expect(RunDiscardedError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'RUN_DISCARDED', reason: 'disposed', cause: { kind: 'disposed' } })
    }
    const ids = errors.map((error) => (error as RunDiscardedError).messageId)

    const { harness, model } = await open(adapter(), [text('a1'), text('a2'), text('a3')], fakeClock({ now: 70_000 }))
    const agent = await harness.resumeAgent('chat', { queued: 'keep' })
    // The discarded runs' prompts survived for the resume: same ids, same queue times.
    expect(agent.inbox.list().map((entry) => [entry.message.id, textOf(entry.message), entry.queuedAt])).toEqual([
      [ids[0], 'q1', 10_250],
      [ids[1], 'q2', 10_500],
    ])
    expect(agent.inbox.list().map((entry) => entry.ageMs)).toEqual([59_750, 59_500])
    expect(await agent.run('new')).toMatchObject({ turn: 4, text: 'a3' })
    expect(model.requests.map((request) => textOf(request.messages.at(-1) as UserMessage))).toEqual(['q1', 'q2', 'new'])
  })

  test("'discard' cancels them durably: no turn runs them, a second resume (even 'keep') does not see them", async () => {
    const { adapter } = await storage.make()
    await queueAndDispose(adapter)
    const { harness, model } = await open(adapter(), [text('fresh')], fakeClock({ now: 70_000 }))
    const agent = await harness.resumeAgent('chat', { queued: 'discard' })
    expect(agent.inbox.list()).toEqual([])
    const splice = agent.session.events.at(-1)
    expect(splice).toMatchObject({
      type: 'agent/inbox/spliced',
      time: 70_000,
      data: { target: 'next-turn', start: 0, removedCount: 2, inserted: [], outcome: 'canceled' },
    })
    expect(await agent.run('new')).toMatchObject({ turn: 2, text: 'fresh' })
    // The aborted turn 1 keeps its partial answer; q1 and q2 are gone.
    expect(model.requests[0]?.messages.map((message) => textOf(message as UserMessage))).toEqual([
      'first',
      'thinking',
      'new',
    ])
    await harness.close()

    for (const queued of ['keep', undefined] as const) {
      const next = await open(adapter(), [], fakeClock({ now: 80_000 }))
      const resumed = await next.harness.openAgent('chat', queued === undefined ? {} : { queued })
      expect(resumed.inbox.hasPending).toBe(false)
      // Nothing new to discard, nothing logged: the last spliced event is the earlier discard.
      expect(
        resumed.session.events.filter((event) => event.type === 'agent/inbox/spliced' && event.seq > splice!.seq),
      ).toHaveLength(2)
      await next.harness.close()
    }
  })

  test("'discard' with nothing queued appends nothing; openAgent passes it to the resume and ignores it for a create", async () => {
    const { adapter } = await storage.make()
    const first = await open(adapter(), [text('a')], fakeClock())
    await (await first.harness.createAgent({ sessionId: 'quiet' })).run('hi')
    await first.harness.close()
    const { harness } = await open(adapter(), [], fakeClock())
    const resumed = await harness.openAgent('quiet', { queued: 'discard' })
    expect(resumed.session.events.at(-1)?.type).toBe('session/end-seed')
    const created = await harness.openAgent('brand-new', { queued: 'discard' })
    expect(created.session.length).toBe(0)
  })

  test('a discard whose write fails rejects with the flush error, publishes nothing, and is written once the storage recovers', async () => {
    const { adapter } = await storage.make()
    await queueAndDispose(adapter)
    let failing = true
    const inner = adapter()
    const faulty = faultyPersistence('dir' in inner ? jsonlPersistence(inner) : inner, {
      fail: (call) => (failing && call.method === 'append' ? new Error('disk full') : undefined),
    })
    const { harness } = await open(faulty, [], fakeClock())
    const error = await rejectionOf(harness.resumeAgent('chat', { queued: 'discard' }))
    failing = false
    expect(error).toMatchObject({
      code: 'FLUSH_FAILED',
      sessionId: 'chat',
      cause: { code: 'WRITE_FAILED', cause: { message: 'disk full' } },
    })
    expect(PersistenceError.is((error as Error).cause)).toBe(true)
    expect(harness.agents.get('chat')).toBeUndefined()
    expect(harness.sessions.get('chat')).toBeUndefined()
    await harness.close()
    const next = await open(adapter(), [], fakeClock())
    expect((await next.harness.resumeAgent('chat')).inbox.hasPending).toBe(false)
  })

  test('a queued value other than keep or discard is InvalidOptionsError at path queued; nothing is opened or written', async () => {
    const { adapter } = await storage.make()
    await queueAndDispose(adapter)
    const { harness } = await open(adapter(), [], fakeClock())
    for (const bad of ['drop', 'KEEP', '', 1, null, true, { keep: true }]) {
      for (const call of [
        () => harness.resumeAgent('chat', { queued: bad as never }),
        () => harness.openAgent('chat', { queued: bad as never }),
        () => harness.agents.resume('chat', { queued: bad as never }),
      ]) {
        const error = await rejectionOf(call())
        expect(InvalidOptionsError.is(error)).toBe(true)
        expect(error).toMatchObject({ code: 'INVALID_OPTIONS', issues: [{ path: ['queued'] }] })
        expect((error as InvalidOptionsError).issues[0]?.message).toContain("must be 'keep' or 'discard'")
      }
    }
    expect(harness.agents.get('chat')).toBeUndefined()
    // queued is a resume option: a create refuses it as unknown.
    for (const call of [
      () => harness.createAgent({ sessionId: 'other', queued: 'discard' } as never),
      () => harness.agents.create({ id: 'other', queued: 'discard' } as never),
    ]) {
      expect(await rejectionOf(call())).toMatchObject({ code: 'INVALID_OPTIONS', issues: [{ path: ['queued'] }] })
    }
    // The log is as the first harness left it: both prompts are still queued.
    const agent = await harness.resumeAgent('chat')
    expect(agent.inbox.nextTurn.map(textOf)).toEqual(['q1', 'q2'])
    // A live agent still refuses a bad value (its overrides are checked even when unused).
    expect(await rejectionOf(harness.openAgent('chat', { queued: 'later' as never }))).toMatchObject({
      code: 'INVALID_OPTIONS',
    })
    expect(await harness.openAgent('chat', { queued: 'discard' })).toBe(agent)
    expect(agent.inbox.nextTurn).toHaveLength(2)
  })
})

describe.each(storages)('a stored timeout cause over $name', (storage) => {
  test('a turn ended { kind: timeout } is stored, read back and resumed like any other cause', async () => {
    const { adapter } = await storage.make()
    const first = await createHarness({
      persistence: adapter(),
      model: scriptedModel([{ text: 'slow', hang: true }]),
      ids: fakeIds(),
    })
    harnesses.push(first)
    const agent = await first.createAgent({ sessionId: 'deadline' })
    expect((await agent.run('late', { signal: AbortSignal.timeout(30) })).reason).toEqual({
      kind: 'aborted',
      reason: { kind: 'timeout' },
    })
    await first.close()
    const second = await createHarness({
      persistence: adapter(),
      model: scriptedModel([text('on time')]),
      ids: fakeIds(),
    })
    harnesses.push(second)
    const history = await second.readSession('deadline')
    expect(history.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { turn: 1, reason: { kind: 'aborted', reason: { kind: 'timeout' } } },
    })
    const resumed = await second.resumeAgent('deadline')
    expect(await resumed.run('again')).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'on time' })
  })
})

describe('agent.inbox.list()', () => {
  test('every pending message with its list, queue time and age on the harness clock, in claim order', async () => {
    const clock = fakeClock({ now: 5000 })
    const harness = await createHarness({ model: scriptedModel([]), clock, ids: fakeIds() })
    harnesses.push(harness)
    const agent: Agent = await harness.createAgent()
    expect(agent.inbox.list()).toEqual([])
    const a = agent.send('a', 'next-turn', false)
    await clock.advance(100)
    const b = agent.inject('b')
    await clock.advance(50)
    const entries = agent.inbox.list()
    expect(entries).toEqual([
      { message: b, target: 'next-step', queuedAt: 5100, ageMs: 50 },
      { message: a, target: 'next-turn', queuedAt: 5000, ageMs: 150 },
    ])
    expect(Object.isFrozen(entries[0])).toBe(true)
    // A replacement is queued anew; the removed message leaves the list.
    await clock.advance(1000)
    const c = agent.inbox.replace(a.id, 'c')
    expect(agent.inbox.list().map((entry) => [entry.message, entry.queuedAt, entry.ageMs])).toEqual([
      [b, 5100, 1050],
      [c, 6150, 0],
    ])
    agent.inbox.clear()
    expect(agent.inbox.list()).toEqual([])
  })
})

describe('the timeout cancel cause', () => {
  async function hangingAgent(): Promise<{ harness: Harness; agent: Agent }> {
    const harness = await createHarness({
      model: scriptedModel(Array.from({ length: 3 }, () => ({ text: 'slow', hang: true }))),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    harnesses.push(harness)
    return { harness, agent: await harness.createAgent() }
  }

  test('a run whose signal is AbortSignal.timeout ends aborted { kind: timeout } in the result and in turn/end', async () => {
    const { agent } = await hangingAgent()
    const result = await agent.run('late', { signal: AbortSignal.timeout(30) })
    expect(result.reason).toEqual({ kind: 'aborted', reason: { kind: 'timeout' } })
    expect(agent.session.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: { kind: 'aborted', reason: { kind: 'timeout' } } },
    })
  })

  test('a deadline combined with AbortSignal.any is still a timeout; a plain abort stays { kind: user }', async () => {
    const { agent } = await hangingAgent()
    const manual = new AbortController()
    const deadline = agent.run('one', { signal: AbortSignal.any([manual.signal, AbortSignal.timeout(30)]) })
    expect((await deadline).reason).toEqual({ kind: 'aborted', reason: { kind: 'timeout' } })
    const controller = new AbortController()
    const plain = agent.run('two', { signal: controller.signal })
    await new Promise((resolve) => setTimeout(resolve, 20))
    controller.abort()
    expect((await plain).reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
  })

  test('a queued run whose deadline passes before a claim rejects canceled with the cause { kind: timeout }', async () => {
    const { agent } = await hangingAgent()
    const running = agent.run('holds the agent')
    const queued = rejectionOf(agent.run('waits', { signal: AbortSignal.timeout(30) }))
    const error = await queued
    expect(RunDiscardedError.is(error)).toBe(true)
    expect(error).toMatchObject({ reason: 'canceled', cause: { kind: 'timeout' } })
    const early = await rejectionOf(
      agent.run('already late', { signal: AbortSignal.abort(new DOMException('deadline', 'TimeoutError')) }),
    )
    expect(early).toMatchObject({ reason: 'canceled', cause: { kind: 'timeout' } })
    agent.cancel()
    expect((await running).reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
  })

  test("agent.cancel({ kind: 'timeout' }) is accepted; an unknown kind is still refused naming timeout among the kinds", async () => {
    const { agent } = await hangingAgent()
    const running = agent.run('x')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(() => agent.cancel({ kind: 'deadline' } as never)).toThrow(/'timeout'/)
    agent.cancel({ kind: 'timeout' })
    expect((await running).reason).toEqual({ kind: 'aborted', reason: { kind: 'timeout' } })
  })
})
