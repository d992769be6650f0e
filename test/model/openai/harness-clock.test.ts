/**
 * A `retry-after` HTTP date is measured against the harness clock. Called by the
 * harness's model registry, the adapter gets the harness clock as `options.clock`; its own
 * `clock` option, when given, still wins.
 */
import { afterEach, expect, test } from 'vitest'
import { createHarness, type Harness, openaiCompatible } from 'yoke'
import { fakeClock } from 'yoke/testing'
import { collect, req } from './adapter-helpers.js'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const now = Date.UTC(2030, 0, 1, 12, 0, 0)

/** A `fetch` that answers 429 with `Retry-After` five seconds after the harness's "now". */
const rateLimited = async (): Promise<Response> =>
  new Response(JSON.stringify({ error: { message: 'slow down' } }), {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': new Date(now + 5_000).toUTCString() },
  })

test('through the harness, an HTTP-date retry-after counts from the harness clock', async () => {
  harness = await createHarness({
    model: openaiCompatible({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k', model: 'm', fetch: rateLimited }),
    clock: fakeClock({ now }),
  })
  const models = harness.ctx.models
  const chunks = await collect(
    { provider: 'openai-compatible', stream: (request) => models.stream(request) },
    req({ provider: 'openai-compatible', model: 'm' }),
  )
  expect(chunks.at(-1)).toMatchObject({
    type: 'finish',
    reason: 'error',
    failure: { code: 'RATE_LIMIT', retryAfterMs: 5_000 },
  })
})

test("the adapter's own clock option wins over the harness clock", async () => {
  const own = fakeClock({ now: now + 2_000 })
  harness = await createHarness({
    model: openaiCompatible({
      baseURL: 'http://127.0.0.1:9/v1',
      apiKey: 'k',
      model: 'm',
      fetch: rateLimited,
      clock: own,
    }),
    clock: fakeClock({ now }),
  })
  const models = harness.ctx.models
  const chunks = await collect(
    { provider: 'openai-compatible', stream: (request) => models.stream(request) },
    req({ provider: 'openai-compatible', model: 'm' }),
  )
  expect(chunks.at(-1)).toMatchObject({ type: 'finish', failure: { code: 'RATE_LIMIT', retryAfterMs: 3_000 } })
})
