import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  createHarness,
  createInitiator,
  defineTool,
  type Harness,
  type Initiator,
  InitiatorError,
  InvalidArgumentError,
} from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text, tool } from 'yoke/testing'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'

/** A stand-in for the `Agent` handle: only identity matters to the initiator. */
interface FakeAgent {
  readonly id: string
}

const agent = (id: string): FakeAgent => Object.freeze({ id })

/** A promise with its resolver exposed. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {}
  const promise = new Promise<T>((settle) => {
    resolve = settle
  })
  return { promise, resolve }
}

/** A tool body: awaits a timer, a microtask and an immediate, reading `current()` after each. */
async function toolBody(initiator: Initiator<FakeAgent>): Promise<(string | undefined)[]> {
  const seen = [initiator.current()?.id]
  await sleep(1)
  seen.push(initiator.current()?.id)
  await Promise.resolve()
  seen.push(initiator.current()?.id)
  await new Promise<void>((resolve) => setImmediate(resolve))
  seen.push(initiator.current()?.id)
  return seen
}

describe('run, current, require, runDetached', () => {
  test('run returns exactly what the operation returns', async () => {
    const initiator = createInitiator<FakeAgent>()
    const A = agent('A')
    expect(initiator.run(A, () => initiator.current())).toBe(A)
    const pending = initiator.run(A, async () => 7)
    expect(pending).toBeInstanceOf(Promise)
    expect(await pending).toBe(7)
    const value = { nested: true }
    expect(initiator.run(A, () => value)).toBe(value)
    expect(initiator.current()).toBeUndefined()
  })

  test('require() outside any frame throws InitiatorError NO_INITIATOR; inside it returns the agent', () => {
    const initiator = createInitiator<FakeAgent>()
    const error = thrownBy(() => initiator.require())
    expect(InitiatorError.is(error)).toBe(true)
    expect((error as InitiatorError).code).toBe('NO_INITIATOR')
    const A = agent('A')
    expect(initiator.run(A, () => initiator.require())).toBe(A)
  })

  test("a tool body in A's frame reads A across timers, microtasks and immediates", async () => {
    const initiator = createInitiator<FakeAgent>()
    const A = agent('A')
    expect(await initiator.run(A, () => toolBody(initiator))).toEqual(['A', 'A', 'A', 'A'])
    expect(initiator.current()).toBeUndefined()
  })

  test("runDetached inside A's frame clears it, also for its async continuations, and A is back afterwards", async () => {
    const initiator = createInitiator<FakeAgent>()
    const A = agent('A')
    const seen = await initiator.run(A, async () => {
      const detached = initiator.runDetached(() => initiator.current())
      const detachedLater = await initiator.runDetached(async () => {
        await sleep(1)
        return [initiator.current(), thrownBy(() => initiator.require())]
      })
      return { detached, detachedLater, after: initiator.current() }
    })
    expect(seen.detached).toBeUndefined()
    expect(seen.detachedLater[0]).toBeUndefined()
    expect((seen.detachedLater[1] as InitiatorError).code).toBe('NO_INITIATOR')
    expect(seen.after).toBe(A)
  })

  test('a throwing operation propagates unchanged and leaves no frame behind', async () => {
    const initiator = createInitiator<FakeAgent>()
    const failure = new Error('tool failed')
    expect(
      thrownBy(() =>
        initiator.run(agent('A'), () => {
          throw failure
        }),
      ),
    ).toBe(failure)
    expect(await rejectionOf(initiator.run(agent('A'), async () => Promise.reject(failure)))).toBe(failure)
    expect(initiator.current()).toBeUndefined()
  })

  test('a non-object agent or a non-function operation is an InvalidArgumentError and runs nothing', () => {
    const initiator = createInitiator<FakeAgent>()
    const calls: string[] = []
    const badAgent = thrownBy(() => initiator.run(null as unknown as FakeAgent, () => calls.push('run')))
    expect(InvalidArgumentError.is(badAgent)).toBe(true)
    expect((badAgent as InvalidArgumentError).argument).toBe('agent')
    const badOperation = thrownBy(() => initiator.run(agent('A'), 'op' as unknown as () => void))
    expect((badOperation as InvalidArgumentError).argument).toBe('operation')
    expect((thrownBy(() => initiator.runDetached(42 as unknown as () => void)) as InvalidArgumentError).argument).toBe(
      'operation',
    )
    expect(calls).toEqual([])
  })
})

describe('two initiators never see each other’s frames', () => {
  test("inside h1's run(A), h2.current() is undefined, across awaits too", async () => {
    const h1 = createInitiator<FakeAgent>()
    const h2 = createInitiator<FakeAgent>()
    const A = agent('A')
    const B = agent('B')
    const seen = await h1.run(A, async () => {
      const before = h2.current()
      await sleep(1)
      const inner = await h2.run(B, async () => {
        await Promise.resolve()
        return [h1.current(), h2.current()]
      })
      return { before, after: h2.current(), inner }
    })
    expect(seen).toEqual({ before: undefined, after: undefined, inner: [A, B] })
  })
})

describe('a child agent started in a parent tool', () => {
  test("C's setup sees A; C's turn sees C; after awaiting C, A's tool sees A again", async () => {
    const initiator = createInitiator<FakeAgent>()
    const A = agent('A')
    const C = agent('C')
    const log: string[] = []
    const note = (where: string): void => {
      log.push(`${where}:${initiator.current()?.id ?? 'none'}`)
    }
    const turnOfC = deferred<void>()
    let childTurn: Promise<void> | undefined
    await initiator.run(A, async () => {
      note('parent-tool-start')
      // createAgent(C): the setup runs in the caller's frame.
      note('child-setup')
      // The loop runs C's driver in C's own frame; the parent tool awaits it.
      childTurn = initiator.run(C, async () => {
        await turnOfC.promise
        note('child-tool')
        await sleep(1)
        note('child-tool-after-await')
      })
      setTimeout(() => turnOfC.resolve(), 1)
      await childTurn
      note('parent-tool-after-child')
    })
    expect(log).toEqual([
      'parent-tool-start:A',
      'child-setup:A',
      'child-tool:C',
      'child-tool-after-await:C',
      'parent-tool-after-child:A',
    ])
  })

  test('overlapping frames keep their own identity while interleaved', async () => {
    const initiator = createInitiator<FakeAgent>()
    const [gateA, gateB] = [deferred<void>(), deferred<void>()]
    const seen: string[] = []
    const drive = (id: string, gate: Promise<void>): Promise<void> =>
      initiator.run(agent(id), async () => {
        await gate
        seen.push(`${id}:${initiator.current()?.id}`)
      })
    const first = drive('A', gateA.promise)
    const second = drive('B', gateB.promise)
    gateB.resolve()
    await second
    gateA.resolve()
    await first
    expect(seen).toEqual(['B:B', 'A:A'])
  })
})

describe('close', () => {
  test('after close, run throws INITIATOR_CLOSED without calling the operation; a running frame completes', async () => {
    const initiator = createInitiator<FakeAgent>()
    const A = agent('A')
    const gate = deferred<void>()
    const running = initiator.run(A, async () => {
      await gate.promise
      return { current: initiator.current(), required: initiator.require() }
    })
    expect(initiator.closed).toBe(false)
    initiator.close()
    expect(initiator.closed).toBe(true)
    const calls: string[] = []
    const error = thrownBy(() => initiator.run(A, () => calls.push('op')))
    expect(InitiatorError.is(error)).toBe(true)
    expect((error as InitiatorError).code).toBe('INITIATOR_CLOSED')
    expect((error as InitiatorError).message).toBe('the harness is closing: no new agent frames can start')
    expect(calls).toEqual([])
    gate.resolve()
    expect(await running).toEqual({ current: A, required: A })
    initiator.close()
    expect(initiator.runDetached(() => 'detached still runs')).toBe('detached still runs')
  })

  test('closing one initiator leaves another open', () => {
    const h1 = createInitiator<FakeAgent>()
    const h2 = createInitiator<FakeAgent>()
    h1.close()
    expect(h2.run(agent('A'), () => h2.current()?.id)).toBe('A')
  })
})

describe('the harness initiator, agents.initiator (21, 23 through createHarness)', () => {
  const open: Harness[] = []
  afterEach(async () => {
    for (const harness of open.splice(0).reverse()) await harness.close()
  })

  async function harnessWith(options: Parameters<typeof createHarness>[0] = {}): Promise<Harness> {
    const harness = await createHarness({ clock: fakeClock(), ids: fakeIds(), ...options })
    open.push(harness)
    return harness
  }

  test('run, current, require, runDetached and a tool body in A’s turn', async () => {
    const seen: unknown[] = []
    let harness: Harness | undefined
    const probe = defineTool({
      name: 'probe',
      description: 'records the initiator',
      input: z.object({}),
      execute: async () => {
        const initiator = (harness as Harness).agents.initiator
        seen.push(initiator.current())
        await sleep(1)
        seen.push(initiator.current())
        return 'probed'
      },
    })
    harness = await harnessWith({ model: scriptedModel([tool('probe', {}), text('done')]), tools: [probe] })
    const initiator = harness.agents.initiator
    const A = await harness.createAgent()
    expect(initiator.run(A, () => initiator.current())).toBe(A)
    expect(await initiator.run(A, async () => 7)).toBe(7)
    const error = thrownBy(() => initiator.require())
    expect(InitiatorError.is(error)).toBe(true)
    expect((error as InitiatorError).code).toBe('NO_INITIATOR')
    expect(initiator.run(A, () => initiator.runDetached(() => initiator.current()))).toBeUndefined()
    expect(initiator.run(A, () => [initiator.runDetached(() => initiator.current()), initiator.current()])).toEqual([
      undefined,
      A,
    ])
    expect(await A.run('go')).toMatchObject({ reason: { kind: 'completed' } })
    expect(seen).toHaveLength(2)
    expect(seen[0]).toBe(A)
    expect(seen[1]).toBe(A)
    expect(initiator.current()).toBeUndefined()
  })

  test('inside h1.agents.initiator.run(A, …), h2.agents.initiator.current() is undefined', async () => {
    const h1 = await harnessWith()
    const h2 = await harnessWith()
    expect(h1.agents.initiator).not.toBe(h2.agents.initiator)
    const A = await h1.createAgent()
    const seen = await h1.agents.initiator.run(A, async () => {
      const before = h2.agents.initiator.current()
      await sleep(1)
      return { before, after: h2.agents.initiator.current(), own: h1.agents.initiator.current() }
    })
    expect(seen).toEqual({ before: undefined, after: undefined, own: A })
  })

  test('during harness.close(), run throws INITIATOR_CLOSED without calling op; a running frame completes', async () => {
    const harness = await harnessWith()
    const initiator = harness.agents.initiator
    const A = await harness.createAgent()
    const gate = deferred<void>()
    const running = initiator.run(A, async () => {
      await gate.promise
      return initiator.current()
    })
    const closing = harness.close()
    const calls: string[] = []
    const error = thrownBy(() => initiator.run(A, () => calls.push('op')))
    expect(InitiatorError.is(error)).toBe(true)
    expect((error as InitiatorError).code).toBe('INITIATOR_CLOSED')
    expect(calls).toEqual([])
    gate.resolve()
    expect(await running).toBe(A)
    await closing
  })
})
