/**
 * A turn the loop could not close: a `turn/end` or `step/end` append that
 * throws leaves the turn open in the session, so no later `turn/start` can be logged. Every
 * `run()` / `stream()` still settles (the "settle exactly once"), the log stays a valid,
 * crash-shaped one, `dispose()` and `close()` complete, and a resume repairs it.
 */
import { afterEach, describe, expect, test } from 'vitest'
import {
  type AgentErrorPayload,
  createHarness,
  ErrorCode,
  type Harness,
  interruptedTurnClosers,
  memoryPersistence,
  RunDiscardedError,
  type SessionEvent,
  SessionVetoError,
  StructureError,
  type TurnResult,
} from 'yoke'
import { fail, fakeClock, fakeIds, faultyPersistence, hang, scriptedModel, text } from 'yoke/testing'
import { untilStreaming } from './scenario-harness.js'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close().catch(() => undefined)
  harness = undefined
})

/** A harness whose commit guard vetoes the first append of `type` (once). */
async function vetoingOnce(type: string, script = [text('one'), text('two'), text('three')]) {
  const model = scriptedModel(script)
  harness = await createHarness({ model, clock: fakeClock(), ids: fakeIds() })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  const errors: AgentErrorPayload[] = []
  agent.ctx.on('agent/error', (payload) => {
    errors.push(payload)
  })
  const boom = new Error(`no ${type}`)
  let vetoes = 0
  harness.sessions.addCommitGuard(
    (event) => {
      if (event.type !== type || vetoes > 0) return
      vetoes++
      throw boom
    },
    { label: 'once' },
  )
  return { harness, model, agent, errors, boom }
}

type Outcome = { readonly resolved: TurnResult } | { readonly rejected: unknown } | 'pending'

/** Reads how a promise settled after every queued task ran (a pending one stays `'pending'`). */
async function outcomeOf(promise: Promise<TurnResult>): Promise<Outcome> {
  let outcome: Outcome = 'pending'
  promise.then(
    (resolved) => {
      outcome = { resolved }
    },
    (rejected: unknown) => {
      outcome = { rejected }
    },
  )
  for (let round = 0; round < 20; round++) await new Promise((resolve) => setImmediate(resolve))
  return outcome
}

function types(events: readonly SessionEvent[]): string[] {
  return events.map((event) => event.type).filter((type) => type !== 'assistant/chunk')
}

describe('a turn/end append that throws', () => {
  test('rejects its run and the run queued behind it with the append error; every later run or stream rejects TURN_OPEN', async () => {
    const { agent, errors, boom } = await vetoingOnce('turn/end')
    const [firstOutcome, queuedOutcome] = await Promise.all([outcomeOf(agent.run('a')), outcomeOf(agent.run('b'))])
    expect(firstOutcome).toEqual({ rejected: expect.any(SessionVetoError) })
    expect(firstOutcome).toMatchObject({ rejected: { code: ErrorCode.APPEND_VETOED, guard: 'once', cause: boom } })
    // The prompt queued behind it can never be claimed: the session still holds turn 1.
    expect(queuedOutcome).toEqual({ rejected: (firstOutcome as { rejected: unknown }).rejected })
    expect(agent.status).toBe('idle')
    expect(errors.map((error) => [error.turn, error.failure.code])).toEqual([
      [1, ErrorCode.APPEND_VETOED],
      [undefined, ErrorCode.TURN_OPEN],
    ])

    const later = await outcomeOf(agent.run('c'))
    expect(later).toEqual({ rejected: expect.any(StructureError) })
    expect(later).toMatchObject({ rejected: { code: ErrorCode.TURN_OPEN } })
    const run = agent.stream('d')
    const iterated = (async () => {
      for await (const _event of run) {
        // nothing is yielded: no turn claims 'd'
      }
    })()
    await expect(run.result).rejects.toMatchObject({ code: ErrorCode.TURN_OPEN })
    await expect(iterated).rejects.toMatchObject({ code: ErrorCode.TURN_OPEN })

    // The log is valid and crash-shaped: turn 1 is open, its closer is a turn/end; the prompts stay queued.
    expect(agent.session.turnState().openTurn).toBe(1)
    expect(types(interruptedTurnClosers(agent.session.events))).toEqual(['turn/end'])
    expect(agent.inbox.nextTurn.map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'b' }],
      [{ type: 'text', text: 'c' }],
      [{ type: 'text', text: 'd' }],
    ])
    await agent.dispose()
  })

  test('dispose and resume repair the turn (interrupted) and the queued prompt runs', async () => {
    const { harness: world, agent } = await vetoingOnce('turn/end')
    const [first, queued] = await Promise.allSettled([agent.run('a'), agent.run('b')])
    expect(first).toMatchObject({ status: 'rejected', reason: expect.any(SessionVetoError) })
    expect(queued).toMatchObject({ status: 'rejected', reason: expect.any(SessionVetoError) })
    await agent.dispose()
    const resumed = await world.resumeAgent(agent.id, { options: { verifyReconstruction: true } })
    const ends = () =>
      resumed.session.events
        .filter((event) => event.type === 'turn/end')
        .map((event) => (event.data as { reason: { kind: string } }).reason.kind)
    expect(ends()).toEqual(['interrupted'])
    expect(resumed.wake()).toBe(true)
    await resumed.whenIdle()
    expect(ends()).toEqual(['interrupted', 'completed'])
    await world.close()
  })

  test('after an error turn (the driver stops, 8.3) the queued run rejects at once instead of waiting for a wake', async () => {
    const { agent, errors } = await vetoingOnce('turn/end', [fail('AUTH', 'provider 401'), text('never')])
    const [first, queued] = await Promise.all([outcomeOf(agent.run('a')), outcomeOf(agent.run('b'))])
    expect(first).toMatchObject({ rejected: { code: ErrorCode.APPEND_VETOED } })
    expect(queued).toMatchObject({ rejected: { code: ErrorCode.APPEND_VETOED } })
    expect(errors.map((error) => error.failure.code)).toEqual([ErrorCode.APPEND_VETOED, 'AUTH'])
    expect(agent.status).toBe('idle')
    expect(await outcomeOf(agent.run('c'))).toMatchObject({ rejected: { code: ErrorCode.TURN_OPEN } })
  })

  test("a turn/end vetoed while disposing: its run rejects with the veto, a queued run is discarded 'disposed'; dispose and close complete", async () => {
    const { harness: world, agent } = await vetoingOnce('turn/end', [hang()])
    const running = Promise.allSettled([agent.run('a')])
    await untilStreaming(world)
    const queued = Promise.allSettled([agent.run('q')])
    await agent.dispose()
    expect(await running).toEqual([{ status: 'rejected', reason: expect.any(SessionVetoError) }])
    expect(await queued).toEqual([{ status: 'rejected', reason: expect.any(RunDiscardedError) }])
    expect(await queued).toMatchObject([{ reason: { reason: 'disposed' } }])
    await world.close()
  })

  test('a failed turn-end checkpoint leaves no open turn: its run rejects with the flush error, the queued run still runs', async () => {
    let failing = false
    const adapter = faultyPersistence(memoryPersistence(), {
      fail: (entry) => {
        if (!failing || entry.method !== 'append') return undefined
        failing = false
        return new Error('disk full once')
      },
    })
    harness = await createHarness({
      model: scriptedModel([text('one'), text('two')]),
      persistence: adapter,
      clock: fakeClock(),
      ids: fakeIds(),
    })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    harness.on('session/event', ({ event }) => {
      if (event.type === 'turn/end' && (event.data as { turn: number }).turn === 1) failing = true
    })
    const [first, queued] = await Promise.all([outcomeOf(agent.run('a')), outcomeOf(agent.run('b'))])
    expect(first).toMatchObject({ rejected: { code: ErrorCode.FLUSH_FAILED } })
    expect(queued).toMatchObject({ resolved: { turn: 2, reason: { kind: 'completed' }, text: 'two' } })
  })
})

describe('a step/end append that throws', () => {
  test('the run rejects (the turn cannot close), a later run rejects TURN_OPEN, dispose and close complete', async () => {
    const { harness: world, agent, errors } = await vetoingOnce('step/end')
    const firstOutcome = await outcomeOf(agent.run('a'))
    expect(firstOutcome).toMatchObject({ rejected: { code: ErrorCode.STEP_OPEN } })
    // The turn's own error (the vetoed step/end) is reported too.
    expect(errors.map((error) => error.failure.code)).toEqual([ErrorCode.STEP_OPEN, ErrorCode.APPEND_VETOED])
    expect(await outcomeOf(agent.run('b'))).toMatchObject({ rejected: { code: ErrorCode.TURN_OPEN } })
    expect(agent.status).toBe('idle')
    expect(types(interruptedTurnClosers(agent.session.events))).toEqual(['step/end', 'turn/end'])
    await agent.dispose()
    await world.close()
  })
})

describe('other failed appends end the turn error and leave the agent usable', () => {
  test.each(['step/start', 'assistant/message', 'user/message'])(
    'a vetoed %s: the run resolves error APPEND_VETOED; the next run completes',
    async (type) => {
      const { agent } = await vetoingOnce(type)
      const result = await agent.run('a')
      expect(result.reason).toMatchObject({ kind: 'error', error: { code: ErrorCode.APPEND_VETOED } })
      expect(agent.session.turnState().openTurn).toBeNull()
      const next = await agent.run('b')
      expect(next.reason).toEqual({ kind: 'completed' })
    },
  )

  test('a vetoed turn/start keeps the prompt queued and its run pending; the next waking send runs both', async () => {
    const { agent, errors } = await vetoingOnce('turn/start')
    const first = agent.run('a')
    expect(await outcomeOf(first)).toBe('pending')
    expect(errors.map((error) => error.failure.code)).toEqual([ErrorCode.APPEND_VETOED])
    const second = agent.run('b')
    expect((await first).turn).toBe(1)
    expect((await second).turn).toBe(2)
  })
})
