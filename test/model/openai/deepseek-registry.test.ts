/**
 * A DeepSeek adapter routed by the harness `model`
 * option, reached through `services.models`.
 */
import { afterEach, expect, test } from 'vitest'
import { createHarness, deepseek, type Harness, LlmError } from 'yoke'
import { collect, mockServer, req } from './adapter-helpers.js'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

async function routed(): Promise<{ harness: Harness; requests: () => number }> {
  const srv = await mockServer([])
  harness = await createHarness({ model: deepseek({ baseURL: srv.baseURL, apiKey: 'k', model: 'deepseek-v4-flash' }) })
  return { harness, requests: () => srv.requests.length }
}

test("reg.stream with effort 'medium' finishes UNSUPPORTED_REASONING_EFFORT (pre-request) and sends nothing", async () => {
  const { harness, requests } = await routed()
  const models = harness.ctx.models
  const chunks = await collect(
    { provider: 'deepseek', stream: (request) => models.stream(request) },
    req({ provider: 'deepseek', model: 'deepseek-v4-flash', reasoningEffort: 'medium' }),
  )
  expect(chunks).toHaveLength(1)
  expect(chunks[0]).toMatchObject({
    type: 'finish',
    reason: 'error',
    failure: { code: 'UNSUPPORTED_REASONING_EFFORT', phase: 'pre-request', retryable: false },
  })
  expect(requests()).toBe(0)
})

test("reg.prepareCall with effort 'medium' throws that LlmError, naming the allowed efforts", async () => {
  const { harness } = await routed()
  let thrown: unknown
  try {
    harness.ctx.models.prepareCall({ provider: 'deepseek', model: 'deepseek-v4-flash', reasoningEffort: 'medium' })
  } catch (error) {
    thrown = error
  }
  expect(LlmError.is(thrown)).toBe(true)
  expect((thrown as LlmError).code).toBe('UNSUPPORTED_REASONING_EFFORT')
  expect((thrown as LlmError).failure.detail).toMatchObject({ allowed: ['off', 'low', 'high', 'max'] })
})

test('reg.prepareCall fills the catalog default effort and marks it an adapter default', async () => {
  const { harness } = await routed()
  const prepared = harness.ctx.models.prepareCall({ provider: 'deepseek', model: 'deepseek-v4-flash' })
  expect(prepared.config).toEqual({ provider: 'deepseek', model: 'deepseek-v4-flash', reasoningEffort: 'high' })
  expect(prepared.adapterDefaults).toEqual({ reasoningEffort: true })
})

test("reg.describe('deepseek', 'deepseek-v4-flash').contextWindow is 1,000,000", async () => {
  const { harness } = await routed()
  expect(harness.ctx.models.describe('deepseek', 'deepseek-v4-flash')?.contextWindow).toBe(1_000_000)
  expect(harness.ctx.models.describe('deepseek', 'deepseek-v4-pro')?.contextWindow).toBe(1_000_000)
  expect(harness.ctx.models.describe('deepseek', 'deepseek-other')?.contextWindow).toBeUndefined()
})
