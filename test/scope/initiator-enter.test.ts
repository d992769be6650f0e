/**
 * The counted frames (`enter`): the async context storage is on only while one runs (checked by
 * counting the symbol slots async hooks put on a new promise, no timing); and the agent loop, whose
 * driver runs in its agent's frame, so tools, loop listeners, the model adapter and log observers
 * all attribute their work to it.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, createInitiator, defineTool, type Harness, type ModelAdapter } from 'yoke'
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
  test('a tool, a loop listener, the model adapter and a log observer all read the agent, across awaits', async () => {
    const seen: unknown[] = []
    let harness: Harness | undefined
    const current = (): unknown => (harness as Harness).agents.initiator.current()
    const probe = defineTool({
      name: 'probe',
      description: 'records the initiator',
      input: z.object({}),
      execute: async () => {
        seen.push(['tool', current()])
        await sleep(1)
        seen.push(['tool after await', current()])
        return 'probed'
      },
    })
    const script = scriptedModel([tool('probe', {}), text('done')])
    const model: ModelAdapter = {
      ...script,
      stream(request, options) {
        seen.push(['model', current()])
        return script.stream(request, options)
      },
    }
    harness = await createHarness({ model, tools: [probe] })
    const a = await harness.createAgent()
    harness.on('agent/request', (payload, next) => {
      seen.push(['listener', current() === payload.agent ? payload.agent : current()])
      return next()
    })
    let observed: unknown
    harness.on('session/event', ({ event }) => {
      if (event.type === 'turn/end') observed = current()
    })
    expect((await a.run('go')).reason).toEqual({ kind: 'completed' })
    expect(seen).toEqual([
      ['listener', a],
      ['model', a],
      ['tool', a],
      ['tool after await', a],
      ['listener', a],
      ['model', a],
    ])
    expect(observed).toBe(a)
    await harness.close()
  })
})
