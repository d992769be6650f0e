/**
 * The loop's own frames (`enter`): the async context storage is on only while one runs, so a
 * finished turn leaves new promises without a slot for it, while tools still read their agent.
 * Checked by counting the symbol slots async hooks put on a new promise (no timing).
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, createInitiator, defineTool, type Harness } from 'yoke'
import { scriptedModel, text, tool } from 'yoke/testing'

function promiseSlots(): number {
  return Object.getOwnPropertySymbols(new Promise<void>(() => {})).length
}

/** Node switches the promise hooks off in a microtask after the storage is disabled: let it run. */
const settle = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve))

const agent: { readonly id: string } = Object.freeze({ id: 'a' })

describe('createInitiator().enter', () => {
  test('the frame holds across awaits; once it settles the storage is off again', async () => {
    const before = promiseSlots()
    const initiator = createInitiator<typeof agent>()
    const seen = await initiator.enter(agent, async () => {
      const first = initiator.current()
      await sleep(1)
      return [first, initiator.current(), initiator.runDetached(() => initiator.current())]
    })
    expect(seen).toEqual([agent, agent, undefined])
    expect(initiator.current()).toBeUndefined()
    await settle()
    expect(promiseSlots()).toBe(before)
    initiator.dispose()
  })

  test('a synchronous or throwing operation leaves no frame and no storage on', async () => {
    const before = promiseSlots()
    const initiator = createInitiator<typeof agent>()
    expect(initiator.enter(agent, () => initiator.require())).toBe(agent)
    const failure = new Error('broke')
    expect(() =>
      initiator.enter(agent, () => {
        throw failure
      }),
    ).toThrow(failure)
    await settle()
    expect(promiseSlots()).toBe(before)
    expect(initiator.current()).toBeUndefined()
    initiator.dispose()
  })

  test('a frame of run keeps the storage on after an entered frame ends', async () => {
    const initiator = createInitiator<typeof agent>()
    const pinned = initiator.run(agent, () => promiseSlots())
    await initiator.enter(agent, async () => undefined)
    expect(promiseSlots()).toBe(pinned)
    initiator.dispose()
  })

  test('after close it still runs (a running turn finishes); after dispose it runs without a frame', () => {
    const initiator = createInitiator<typeof agent>()
    initiator.close()
    expect(initiator.enter(agent, () => initiator.current())).toBe(agent)
    initiator.dispose()
    expect(initiator.enter(agent, () => initiator.current() ?? 'none')).toBe('none')
  })
})

describe('the agent loop', () => {
  test('a tool reads its agent across an await; after the turn new promises carry no slot', async () => {
    const before = promiseSlots()
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
    harness = await createHarness({ model: scriptedModel([tool('probe', {}), text('done')]), tools: [probe] })
    const a = await harness.createAgent()
    harness.on('agent/request', (payload, next) => {
      seen.push(harness?.agents.initiator.current() === payload.agent)
      return next()
    })
    expect((await a.run('go')).reason).toEqual({ kind: 'completed' })
    expect(seen).toEqual([true, a, a, true])
    await settle()
    expect(promiseSlots()).toBe(before)
    await harness.close()
  })
})
