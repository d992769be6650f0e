/** `textStream`: only the text deltas of a run, in order. */
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool, type Harness, textStream } from 'yoke'
import { scriptedModel, text, tool } from 'yoke/testing'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const echo = defineTool({
  name: 'echo',
  description: 'Echo',
  input: z.object({ text: z.string() }),
  execute: ({ text: said }) => `echo: ${said}`,
})

describe('textStream', () => {
  test('yields the text deltas of every step, without reasoning or tool calls, and they join to the answer', async () => {
    const model = scriptedModel([
      tool('echo', { text: 'ping' }, { text: 'Let me check. ', reasoning: 'thinking hard', chunkSize: 4 }),
      text('The echo said ping.', { reasoning: 'done thinking', chunkSize: 3 }),
    ])
    harness = await createHarness({ model, tools: [echo] })
    const agent = await harness.createAgent()
    const run = agent.stream('go')
    const deltas: string[] = []
    for await (const delta of textStream(run)) deltas.push(delta)
    expect(deltas.join('')).toBe('Let me check. The echo said ping.')
    expect(deltas.slice(0, 4)).toEqual(['Let ', 'me c', 'heck', '. '])
    expect(deltas.every((delta) => !delta.includes('think'))).toBe(true)
    expect((await run.result).text).toBe('Let me check. \nThe echo said ping.')
  })

  test('breaking out stops the run iteration without cancelling the turn', async () => {
    const model = scriptedModel([text('one two three', { chunkSize: 4 })])
    harness = await createHarness({ model })
    const agent = await harness.createAgent()
    const run = agent.stream('go')
    for await (const delta of textStream(run)) {
      expect(delta).toBe('one ')
      break
    }
    expect((await run.result).reason).toEqual({ kind: 'completed' })
  })

  test('a turn with no text yields nothing', async () => {
    const model = scriptedModel([text('')])
    harness = await createHarness({ model })
    const agent = await harness.createAgent()
    const deltas: string[] = []
    for await (const delta of textStream(agent.stream('go'))) deltas.push(delta)
    expect(deltas).toEqual([])
  })
})
