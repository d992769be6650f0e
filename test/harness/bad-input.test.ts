/**
 * Bad input to harness methods (options → `InvalidOptionsError` with the path):
 * `openAgent` checks its overrides even when the agent is live, and `fork` refuses a non-string
 * child id instead of generating one.
 */
import { afterEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, InvalidOptionsError } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'

const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
})

async function harnessWithLiveAgent(): Promise<Harness> {
  const harness = await createHarness({ model: scriptedModel([text('one')]), clock: fakeClock(), ids: fakeIds() })
  harnesses.push(harness)
  const agent = await harness.createAgent({ sessionId: 'base' })
  await agent.run('hi')
  return harness
}

describe('openAgent overrides', () => {
  test.each([
    ['a number', 42, []],
    ['null', null, []],
    ['an unknown key', { bogus: 1 }, ['bogus']],
    ['tools that are not an array', { tools: 'x' }, ['tools']],
  ])('%s is refused even for a live agent', async (_name, overrides, path) => {
    const harness = await harnessWithLiveAgent()
    const error = await rejectionOf(harness.openAgent('base', overrides as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', issues: [{ path }] })
  })

  test('matching overrides still return the live agent; other valid ones are refused, not dropped', async () => {
    const harness = await harnessWithLiveAgent()
    const live = harness.agents.get('base')
    expect(await harness.openAgent('base', { options: {} })).toBe(live)
    expect(await rejectionOf(harness.openAgent('base', { options: { maxTokens: 10 } }))).toMatchObject({
      code: 'AGENT_OVERRIDES_MISMATCH',
      fields: ['options.maxTokens'],
    })
  })
})

describe('fork child id', () => {
  test.each([
    ['null', null],
    ['a number', 7],
  ])('%s is refused, no child is created', async (_name, id) => {
    const harness = await harnessWithLiveAgent()
    const before = (await harness.listSessions()).length
    const error = await rejectionOf(harness.fork('base', { id: id as never }))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', issues: [{ path: ['id'], message: 'must be a string' }] })
    expect((await harness.listSessions()).length).toBe(before)
  })
})
