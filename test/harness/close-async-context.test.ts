/**
 * Closing a harness leaves the process as it found it: the async context storage its agents' turns
 * used is released, so promises created afterwards carry no slot for it, however many harnesses
 * came and went. Checked by counting the symbol slots async hooks put on a new promise (no timing).
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { createHarness, defineTool, type Harness } from 'yoke'
import { call, scriptedModel, text } from 'yoke/testing'
import { z } from 'zod'

/** The async-context slots a promise created now carries (one per enabled storage, plus the hooks' own ids). */
function promiseSlots(): number {
  return Object.getOwnPropertySymbols(new Promise<void>(() => {})).length
}

/** A tool that reports which agent the harness's initiator says is running it, before and after an await. */
function whoAmI(seen: string[], harnessOf: () => Harness): ReturnType<typeof defineTool> {
  return defineTool({
    name: 'who_am_i',
    description: 'Name the calling agent',
    input: z.object({}),
    execute: async (_args, context) => {
      const initiator = harnessOf().agents.initiator
      const before = initiator.current()
      await new Promise<void>((resolve) => setImmediate(resolve))
      const after = initiator.current()
      seen.push(`${context.agent.id}:${before === context.agent}:${after === context.agent}`)
      return 'checked'
    },
  })
}

describe('closing a harness releases its async context', () => {
  test('100 harnesses created, run and closed leave a new promise with as many slots as before', async () => {
    const before = promiseSlots()
    for (let index = 0; index < 100; index++) {
      const harness = await createHarness({ model: scriptedModel([text('hi')]) })
      const agent = await harness.createAgent()
      expect((await agent.run('hello')).reason).toEqual({ kind: 'completed' })
      await harness.close()
      expect(promiseSlots()).toBe(before)
    }
  })

  test('a harness keeps attributing its tool calls after another harness in the process is closed', async () => {
    const seen: string[] = []
    const first = await createHarness({
      model: scriptedModel([call('c1', 'who_am_i', '{}'), text('first done')]),
    })
    const second = await createHarness({
      model: scriptedModel([
        call('c2', 'who_am_i', '{}'),
        text('second done'),
        call('c3', 'who_am_i', '{}'),
        text('second again'),
      ]),
    })
    first.tools.register(whoAmI(seen, () => first))
    second.tools.register(whoAmI(seen, () => second))
    const a = await first.createAgent({ sessionId: 'a' })
    const b = await second.createAgent({ sessionId: 'b' })
    await Promise.all([a.run('go'), b.run('go')])
    await first.close()
    expect((await b.run('again')).reason).toEqual({ kind: 'completed' })
    expect(seen.sort()).toEqual(['a:true:true', 'b:true:true', 'b:true:true'])
    expect(second.agents.initiator.current()).toBeUndefined()
    await second.close()
  })

  test('a harness that never ran a turn, and one closed twice, leave nothing behind either', async () => {
    const before = promiseSlots()
    const idle = await createHarness({})
    await idle.close()
    const twice = await createHarness({ model: scriptedModel([text('hi')]) })
    await (await twice.createAgent()).run('hello')
    await twice.close()
    await twice.close()
    expect(promiseSlots()).toBe(before)
  })
})
