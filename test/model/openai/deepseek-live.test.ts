/**
 * The live DeepSeek suite: runs only with `DEEPSEEK_API_KEY` and
 * `YOKE_TEST_LIVE=1`, and is reported as skipped otherwise, so `npm test` needs no network.
 */
import { describe, expect, test } from 'vitest'
import { createHarness, deepseek } from 'yoke'

const live = (process.env['DEEPSEEK_API_KEY'] ?? '') !== '' && process.env['YOKE_TEST_LIVE'] === '1'

describe.skipIf(!live)('live DeepSeek (needs DEEPSEEK_API_KEY and YOKE_TEST_LIVE=1)', () => {
  test('one turn against the real endpoint completes with a text answer', async () => {
    const harness = await createHarness({ model: deepseek() })
    try {
      const agent = await harness.createAgent()
      const result = await agent.run('Reply with the single word: pong')
      expect(result.reason).toEqual({ kind: 'completed' })
      expect(result.text.trim()).not.toBe('')
      expect(result.usage.inputTokens).toBeGreaterThan(0)
    } finally {
      await harness.close()
    }
  }, 60_000)
})
