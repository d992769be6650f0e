/**
 * `aiSdkProvider`: one route for every model of an AI SDK provider (the AI SDK's own
 * `MockProviderV3`) or provider registry (`createProviderRegistry` from `ai`), models resolved per
 * request id; unknown ids and non-providers are typed failures.
 *
 * @module
 */
import { createProviderRegistry } from 'ai'
import { MockProviderV3 } from 'ai/test'
import { expect, test } from 'vitest'
import { createHarness, InvalidArgumentError } from 'yoke'
import { fakeIds } from 'yoke/testing'
import { aiSdkProvider } from '../../src/ai-sdk/index.js'
import { mockV3, textParts } from './models.js'

function provider() {
  const small = mockV3([textParts('from small'), textParts('small again')])
  const large = mockV3([textParts('from large')])
  return { small, large, provider: new MockProviderV3({ languageModels: { small, large } }) }
}

test('the route default and an agent override pick the model by id', async () => {
  const { small, large, provider: mock } = provider()
  const harness = await createHarness({
    model: aiSdkProvider(mock, { provider: 'mock', defaultModel: 'small' }),
    ids: fakeIds(),
  })
  const first = await harness.createAgent()
  expect((await first.run('hi')).text).toBe('from small')
  const second = await harness.createAgent({ options: { model: 'large' } })
  expect((await second.run('hi')).text).toBe('from large')
  expect((await first.run('again')).text).toBe('small again')
  expect(small.doStreamCalls).toHaveLength(2)
  expect(large.doStreamCalls).toHaveLength(1)
  await harness.close()
})

test('a provider registry resolves "provider:model" ids', async () => {
  const { large, provider: mock } = provider()
  // The registry's ProviderV3 type is stricter than the mock's optional members; the shapes match.
  const registry = createProviderRegistry({ mock: mock as never })
  const harness = await createHarness({
    model: aiSdkProvider(registry, { provider: 'registry', defaultModel: 'mock:large' }),
    ids: fakeIds(),
  })
  const agent = await harness.createAgent()
  expect((await agent.run('hi')).text).toBe('from large')
  expect(large.doStreamCalls).toHaveLength(1)
  await harness.close()
})

test('an id the provider does not know fails the turn with UNKNOWN_MODEL, not retried; the next turn works', async () => {
  const { provider: mock } = provider()
  const harness = await createHarness({
    model: aiSdkProvider(mock, { provider: 'mock', defaultModel: 'nope' }),
    ids: fakeIds(),
  })
  const agent = await harness.createAgent()
  const result = await agent.run('hi')
  expect(JSON.stringify(result.reason)).toContain('UNKNOWN_MODEL')
  const good = await harness.createAgent({ options: { model: 'small' } })
  expect((await good.run('hi')).text).toBe('from small')
  await harness.close()
})

test.each([
  ['null', null],
  ['an object without languageModel', { chat: () => undefined }],
  ['a language model instead of a provider', mockV3([])],
])('%s is refused with INVALID_ARGUMENT', (_name, value) => {
  expect(() => aiSdkProvider(value as never, { provider: 'p' })).toThrow(InvalidArgumentError)
})

test('a missing or empty route id is refused', () => {
  const { provider: mock } = provider()
  expect(() => aiSdkProvider(mock, { provider: '' })).toThrow(/options\.provider/)
  expect(() => aiSdkProvider(mock, undefined as never)).toThrow(/options\.provider/)
  expect(() => aiSdkProvider(mock, { provider: 'p', defaultModel: '' })).toThrow(/options\.defaultModel/)
})

test('call-level providerOptions go with every model of the route; a bad entry is refused naming it', async () => {
  const { small, large, provider: mock } = provider()
  const providerOptions = { mock: { seed: 7 } }
  const harness = await createHarness({
    model: aiSdkProvider(mock, { provider: 'mock', defaultModel: 'small', providerOptions }),
    ids: fakeIds(),
  })
  await (await harness.createAgent()).run('hi')
  await (await harness.createAgent({ options: { model: 'large' } })).run('hi')
  expect(small.doStreamCalls[0]?.providerOptions).toEqual(providerOptions)
  expect(large.doStreamCalls[0]?.providerOptions).toEqual(providerOptions)
  await harness.close()
  expect(() => aiSdkProvider(mock, { provider: 'p', providerOptions: { mock: [] as never } })).toThrow(
    expect.objectContaining({ code: 'INVALID_ARGUMENT', argument: 'options.providerOptions.mock' }),
  )
})
